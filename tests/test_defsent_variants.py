"""DefSent's two variants: the released code's settings (default) and the paper's text. Each
difference is checked against a reference written from the official code's description."""
import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from defsent_lite import defsent, forward, train
from defsent_lite.runtime import config, defsent_model, models
from defsent_lite.data import dictionary
from defsent_lite.repro import defsent_protocol


# ---------------------------------------------------------------- data preparation

@pytest.mark.parametrize("raw, expected", [
    ("a five-dollar bill .", "a five-dollar bill."),
    ("hats , helmets ( and caps ) ; worn", "hats, helmets (and caps); worn"),
    ("the dog 's bone", "the dog's bone"),
    ("`` GOOD morning '' as a greeting", "Good morning as a greeting"),   # str.capitalize lower-cases the rest
    ("the ‘ big ’ one", "the ’big’ one"),                                  # the official regex's output, sic
    ("  padded .  ", "padded."),
])
def test_detokenise_by_hand(raw, expected):
    assert dictionary.detokenise(raw) == expected


def test_grouped_split_lists_words_in_shuffled_order_with_their_definitions_together():
    pairs = [(f"w{i % 7}", f"definition {i}") for i in range(40)]
    plain = dictionary.split_by_word(pairs, seed=3)
    grouped = dictionary.split_by_word(pairs, seed=3, grouped=True)
    for name in plain:
        assert sorted(plain[name]) == sorted(grouped[name])       # same members
        words = [w for w, _ in grouped[name]]
        runs = [w for i, w in enumerate(words) if i == 0 or w != words[i - 1]]
        assert len(runs) == len(set(words))                        # each word's definitions in one run
        for w in set(words):                                       # in their input order
            assert [d for x, d in grouped[name] if x == w] == [d for x, d in pairs if x == w]


def test_official_dataset_is_detokenised_keeps_repeats_and_groups_words(tmp_path):
    oxford = tmp_path / "dictionary" / "oxford"
    oxford.mkdir(parents=True)
    rows = ["word\tdefinition\texample"]
    words = ["dog", "cat", "house", "tree", "river", "car", "book", "city", "water", "fire"]
    for k, w in enumerate(words):
        rows += [f"{w}\ta thing , number {k} .\tex", f"{w}\ta thing , number {k} .\tex", f"{w}\tanother ( one )\tex"]
    (oxford / "valid.tsv").write_text("\n".join(rows) + "\n")
    (oxford / "test.tsv").write_text("word\tdefinition\texample\ndog\tlast one\tex\n")
    tok = models.load_tokenizer("offline")
    official, report = dictionary.defsent_dataset(tok, tmp_path, defsent_protocol.variant_settings("official")["data"], use_wordnet=False)
    paper, _ = dictionary.defsent_dataset(tok, tmp_path, defsent_protocol.variant_settings("paper")["data"], use_wordnet=False)
    everything = [x for s in official.values() for x in s]
    assert len(everything) == 31 and report["prep"] == defsent_protocol.VARIANTS["official"]["data"]
    assert ("dog", "a thing, number 0.", tok.convert_tokens_to_ids("dog")) in everything
    assert sum(1 for x in everything if x[0] == "dog") == 4   # repeat kept, test split's line added
    assert sum(len(s) for s in paper.values()) == 21          # the repeat dropped
    assert any(d == "a thing , number 0 ." for s in paper.values() for _, d, _ in s)


def test_run_refuses_a_dataset_prepared_for_another_variant():
    cfg = dict(defsent_protocol.base_config(config.scale("smoke"), "offline", variant="official"), pooling="cls", lr=1e-5, seed=0)
    with pytest.raises(ValueError, match=r"variant_settings\('official'\)"):
        defsent_protocol.run(cfg, ({"train": [], "dev": [], "test": []}, dict(prep=defsent_protocol.VARIANTS["paper"]["data"])))


# ---------------------------------------------------------------- metrics

def test_official_mrr_counts_only_the_top_10():
    ranks = torch.tensor([1, 4, 12, 10, 2])
    full = defsent.metrics_from_ranks(ranks)
    top10 = defsent.metrics_from_ranks(ranks, mrr_cutoff=10)
    assert full["mrr"] == pytest.approx((1 + 1 / 4 + 1 / 12 + 1 / 10 + 1 / 2) / 5)
    assert top10["mrr"] == pytest.approx((1 + 1 / 4 + 0 + 1 / 10 + 1 / 2) / 5)
    assert top10["top10"] == full["top10"] == 0.8


def test_mrr_is_over_the_whole_vocabulary_as_the_papers_numbers_were():
    """Issue 45, item 3: the paper's untrained rows cannot be top-10 MRRs (the official code's): a
    top-10 MRR is at most top1 + (top3 - top1) / 2 + (top10 - top3) / 4, and each row's MRR is
    above that. Both variants score over the whole vocabulary; the official metric stays in every
    result as mrr_top10."""
    from defsent_lite.paper import defsent as paper_defsent
    for pooling in ("CLS", "Mean", "Max"):
        mrr, top1, top3, top10 = paper_defsent.TABLE2[("BERT-base (no fine-tuning)", pooling)]
        assert mrr > top1 + (top3 - top1) / 2 + (top10 - top3) / 4, pooling
    assert [defsent_protocol.variant_settings(v)["mrr_cutoff"] for v in ("official", "paper")] == [None, None]
    m = defsent.metrics_from_ranks(torch.tensor([1, 4, 12, 10, 2]))
    assert m["mrr"] == pytest.approx((1 + 1 / 4 + 1 / 12 + 1 / 10 + 1 / 2) / 5)
    assert m["mrr_top10"] == pytest.approx((1 + 1 / 4 + 1 / 10 + 1 / 2) / 5)


def test_official_mrr_matches_the_top_k_hit_position_formula():
    """The official metric: the gold's position among logits.topk(10) (1-based), reciprocal, 0 if absent."""
    g = torch.Generator().manual_seed(0)
    logits = torch.randn(50, 30, generator=g)
    targets = torch.randint(0, 30, (50,), generator=g)
    top = logits.topk(10, dim=1).indices
    hits = [(row == t).nonzero() for row, t in zip(top, targets)]
    reference = sum(1.0 / (int(h[0]) + 1) for h in hits if len(h)) / 50
    assert defsent.rank_metrics(logits, targets, mrr_cutoff=10)["mrr"] == pytest.approx(reference)


# ---------------------------------------------------------------- training

def test_official_warmup_is_fractional_from_zero_then_constant():
    """Adam with the official LambdaLR: factor step / (0.1 * total) while below it, then 1 (25 steps: 2.5)."""
    g = torch.Generator().manual_seed(0)
    batches = [(torch.randn(4, 3, generator=g), torch.randn(4, 2, generator=g)) for _ in range(25)]

    def loss_fn(model, batch):
        return ((model(batch[0]) - batch[1]) ** 2).mean()
    torch.manual_seed(1)
    ours, reference = torch.nn.Linear(3, 2), torch.nn.Linear(3, 2)
    reference.load_state_dict(ours.state_dict())
    v = defsent_protocol.VARIANTS["official"]
    train.train(ours, loss_fn, batches, train.Settings(lr=0.01, optimizer="adam", warmup_ratio=0.1, decay=False, fractional_warmup=v["fractional_warmup"], warmup_from_zero=v["fractional_warmup"]), progress=False)
    opt = torch.optim.Adam(reference.parameters(), lr=0.01)
    warmup = 25 * 0.1
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: s / max(1.0, warmup) if s < warmup else 1.0)
    for batch in batches:
        opt.zero_grad()
        loss_fn(reference, batch).backward()
        opt.step()
        sched.step()
    for a, b in zip(ours.parameters(), reference.parameters()):
        torch.testing.assert_close(a, b)
    torch.manual_seed(1)
    floor = torch.nn.Linear(3, 2)
    train.train(floor, loss_fn, batches, train.Settings(lr=0.01, optimizer="adam", warmup_ratio=0.1, decay=False), progress=False)
    assert not torch.allclose(floor.weight, reference.weight)   # the paper variant's schedule differs


def tiny_bert(tmp_path):
    tok = models.load_tokenizer("offline")
    torch.manual_seed(0)
    model = BertForMaskedLM(BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1,
                                       num_attention_heads=2, intermediate_size=32))
    model.save_pretrained(tmp_path / "bert")
    tok.save_pretrained(tmp_path / "bert")
    return str(tmp_path / "bert")


def test_official_freezes_the_whole_embeddings_module(tmp_path):
    model, _, _, _ = defsent_model.load(tiny_bert(tmp_path))
    official = {id(p) for p in defsent.trainable_parameters(model, defsent_protocol.VARIANTS["official"]["freeze_embedding_layer"])}
    names = {n for n, p in model.base_model.named_parameters() if id(p) in official}
    assert names and not any(n.startswith("embeddings.") for n in names)
    model, _, _, _ = defsent_model.load(tiny_bert(tmp_path))
    paper = {n for n, p in model.base_model.named_parameters()
             if id(p) in {id(q) for q in defsent.trainable_parameters(model, False)}}
    assert paper - names == {"embeddings.position_embeddings.weight", "embeddings.token_type_embeddings.weight",
                             "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"}


def test_official_trains_without_autocast(monkeypatch):
    seen = []
    monkeypatch.setattr(train, "autocast_for", lambda device, enabled=True: seen.append(enabled) or forward.autocast_for(device, enabled))
    model = torch.nn.Linear(2, 1)
    batches = [(torch.ones(3, 2), torch.zeros(3, 1))]
    loss_fn = lambda m, b: ((m(b[0]) - b[1]) ** 2).mean()  # noqa: E731
    train.train(model, loss_fn, batches, train.Settings(lr=0.1, mixed_precision=defsent_protocol.VARIANTS["official"]["mixed_precision"]), progress=False)
    train.train(model, loss_fn, batches, train.Settings(lr=0.1, mixed_precision=defsent_protocol.VARIANTS["paper"]["mixed_precision"]), progress=False)
    assert seen == [False, True]


def test_official_batches_keep_the_file_order(monkeypatch, tmp_path):
    """shuffle=False: the batches are the train split in its order (a word's definitions together)."""
    seen = []
    monkeypatch.setattr(train, "train", lambda model, loss_fn, batches, settings, **kw: seen.append(batches) or dict(
        steps=len(batches), loss=[0.0]))
    tok = models.load_tokenizer("offline")
    rows = [(w, f"definition {k} of {w}", tok.convert_tokens_to_ids(w)) for w in ("dog", "cat", "tree") for k in range(3)]
    prep = defsent_protocol.VARIANTS["official"]["data"]
    cfg = dict(defsent_protocol.base_config(config.scale("smoke"), tiny_bert(tmp_path)), pooling="cls", lr=1e-5, seed=0,
               batch_size=4, train_max=None, eval_max=None)
    defsent_protocol.run(cfg, (dict(train=rows, dev=rows[:3], test=rows[3:6]), dict(prep=prep, source="hand-made")))
    assert [x for b in seen[0] for x in b.examples] == rows   # tokenised before the loop (TokenizedDefinitions)


# ---------------------------------------------------------------- RoBERTa tokenisation

def tiny_roberta(tmp_path):
    """A byte-level BPE tokenizer trained here on a few sentences, and a tiny RobertaForMaskedLM."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizer
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(["a small dog runs in the park", "the cat sleeps on a warm mat"] * 20, vocab_size=300,
                            min_frequency=1, special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"])
    folder = tmp_path / "roberta"
    folder.mkdir()
    bpe.save_model(str(folder))
    tok = RobertaTokenizer(vocab=str(folder / "vocab.json"), merges=str(folder / "merges.txt"))
    tok.save_pretrained(folder)
    RobertaForMaskedLM(RobertaConfig(vocab_size=len(tok), hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                     intermediate_size=32, max_position_embeddings=40)).save_pretrained(folder)
    return str(folder)


def test_official_roberta_tokenizer_adds_a_space_before_the_first_word(tmp_path):
    path = tiny_roberta(tmp_path)
    _, official, _, _ = defsent_model.load(path, prefix_space=defsent_protocol.VARIANTS["official"]["prefix_space"])
    _, paper, _, _ = defsent_model.load(path, prefix_space=defsent_protocol.VARIANTS["paper"]["prefix_space"])
    first = lambda tok: tok.convert_ids_to_tokens(tok("dog runs", add_special_tokens=False)["input_ids"])[0]  # noqa: E731
    assert first(official).startswith("Ġ") and not first(paper).startswith("Ġ")
    assert official(" dog", add_special_tokens=False)["input_ids"] == paper(" dog", add_special_tokens=False)["input_ids"]
    _, bert, _, _ = defsent_model.load(tiny_bert(tmp_path), prefix_space=True)   # WordPiece: no such setting
    assert bert.convert_ids_to_tokens(bert("dog runs", add_special_tokens=False)["input_ids"])[0] == "dog"


# ---------------------------------------------------------------- defaults

def test_official_is_the_default_and_every_setting_is_named():
    base = defsent_protocol.base_config(config.scale("smoke"), "offline")
    assert base["variant"] == "official"
    official = {k: v for k, v in defsent_protocol.VARIANTS["official"].items() if k != "data"}
    assert {k: base[k] for k in official} == official and "data" not in base
    assert set(defsent_protocol.VARIANTS["official"]) == set(defsent_protocol.VARIANTS["paper"])
    assert {"frozen", "batch order", "precision", "definition text", "RoBERTa input", "MRR"} <= set(defsent_protocol.differences().index)
    with pytest.raises(ValueError, match="unknown DefSent variant 'text'"):
        defsent_protocol.variant_settings("text")


# ---------------------------------------------------------------- the head is the real head or an error

def test_a_saved_mlm_head_is_recognised_part_by_part(tmp_path, monkeypatch):
    path = tiny_bert(tmp_path)
    model, _, _, kind = defsent_model.load(path, allow_fallback=False)
    assert kind == defsent.PRETRAINED and models.mlm_head_check(model) == models.HeadCheck(True, (), True)
    model.missing_keys = ["cls.predictions.decoder.bias"]          # the tied bias's other name: still the head
    assert models.mlm_head_check(model).loaded
    model.missing_keys = ["cls.predictions.transform.LayerNorm.weight", "cls.predictions.transform.LayerNorm.bias"]
    assert models.mlm_head_check(model) == models.HeadCheck(False, ("LayerNorm",), True)


def test_an_encoder_without_head_falls_back_only_where_allowed(tmp_path):
    from transformers import BertModel
    tok = models.load_tokenizer("offline")
    BertModel(BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32)).save_pretrained(tmp_path / "enc")
    tok.save_pretrained(tmp_path / "enc")
    _, _, _, kind = defsent_model.load(str(tmp_path / "enc"))
    assert kind == defsent.FALLBACK
    with pytest.raises(ValueError, match="transform, LayerNorm, bias"):
        defsent_model.load(str(tmp_path / "enc"), allow_fallback=False)
    assert defsent_protocol.base_config(config.scale("paper"), "bert-base-uncased")["allow_head_fallback"] is False
    assert defsent_protocol.base_config(config.scale("smoke"), "offline")["allow_head_fallback"] is True


def test_split_boundaries_are_the_official_floors_of_table1():
    """Issue 45: Table 1's All row is floor(0.8 n), floor(0.9 n) of 36,767 words (rounding gave
    29,414 / 3,677 / 3,676)."""
    pairs = [(f"w{i}", "a definition") for i in range(36767)]
    splits = dictionary.split_by_word(pairs, seed=0)
    assert [len(splits[k]) for k in ("train", "dev", "test")] == [29413, 3677, 3677]


def test_words_are_split_before_the_single_token_filter(tmp_path):
    """Issue 45: as the official code, all words are split first and each split keeps its words of
    one token, so a word's split does not depend on the tokenizer (Table 1's BERT rows, 7,732 /
    936 / 979 words, are not 8:1:1)."""
    oxford = tmp_path / "dictionary" / "oxford"
    oxford.mkdir(parents=True)
    words = [f"zq{i}x" for i in range(60)] + ["dog", "cat", "house", "tree", "river", "car", "book",
                                                "city", "water", "fire", "stone", "bird", "road", "king"]
    rows = ["word\tdefinition\texample"] + [f"{w}\ta thing called {w} .\tex" for w in words]
    (oxford / "valid.tsv").write_text("\n".join(rows) + "\n")
    tok = models.load_tokenizer("offline")
    splits, _ = dictionary.defsent_dataset(tok, tmp_path, defsent_protocol.variant_settings("official")["data"], use_wordnet=False)
    all_words = dictionary.split_by_word(dictionary.detokenised([(w, "x") for w in words]),
                                         dictionary.SPLIT_SEED)
    for name in ("train", "dev", "test"):
        kept = {w for w, _, _ in splits[name]}
        assert kept <= {w for w, _ in all_words[name]}, name
    assert sum(len({w for w, _, _ in v}) for v in splits.values()) == 14   # the one-token words
