import re

import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from defsent_lite import defsent, train
from defsent_lite.repro import defsent_protocol


@pytest.fixture
def tiny_mlm():
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=32, max_position_embeddings=32)
    return BertForMaskedLM(cfg).eval()


def test_head_gives_exactly_the_mlm_logits_and_is_frozen(tiny_mlm):
    ids = torch.tensor([[1, 5, 7, 2]])
    head = defsent.word_prediction_head(tiny_mlm)
    hidden = tiny_mlm.bert(ids).last_hidden_state
    assert torch.allclose(head(hidden), tiny_mlm(ids).logits, atol=1e-6)
    assert not any(p.requires_grad for p in head.parameters())


def test_rank_metrics_by_hand():
    logits = torch.tensor([[0.1, 0.9, 0.5, 0.3],    # gold 2: one higher -> rank 2
                           [0.7, 0.7, 0.1, 0.0],    # gold 1: tie with 0 -> rank 1 (gold's favour)
                           [0.0, 0.1, 0.2, 0.3]])   # gold 0: rank 4
    m = defsent.rank_metrics(logits, torch.tensor([2, 1, 0]))
    assert m["mrr"] == pytest.approx((1 / 2 + 1 + 1 / 4) / 3)
    assert (m["top1"], m["top3"], m["top10"]) == pytest.approx((1 / 3, 2 / 3, 1.0))


def test_training_moves_the_encoder_but_not_head_or_word_embeddings(tiny_mlm):
    model = tiny_mlm
    head = defsent.word_prediction_head(model)
    defsent.freeze(model.get_input_embeddings())
    head_before = {k: v.clone() for k, v in head.state_dict().items()}
    emb_before = model.get_input_embeddings().weight.clone()
    layer_before = model.bert.encoder.layer[0].attention.self.query.weight.clone()
    batches = [dict(input_ids=torch.tensor([[1, 5, 7, 2], [1, 9, 2, 0]]),
                    attention_mask=torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]]),
                    targets=torch.tensor([3, 4]))] * 5
    hist = train.train(model, lambda m, b: defsent.loss(m, head, b, "mean"), batches, train.Settings(lr=1e-2, optimizer="adam"), params=defsent.trainable_parameters(model), progress=False)
    assert hist["loss"][-1] < hist["loss"][0]
    assert all(torch.equal(head.state_dict()[k], v) for k, v in head_before.items())
    assert torch.equal(model.get_input_embeddings().weight, emb_before)
    assert not torch.equal(model.bert.encoder.layer[0].attention.self.query.weight, layer_before)


def test_nan_loss_stops_with_step_number(tiny_mlm):
    calls = iter([1.0, 0.5, float("nan")])

    def loss_fn(m, b):
        return (m.bert.embeddings.position_embeddings.weight.sum() * 0 + next(calls))

    with pytest.raises(train.NonFiniteLoss, match="at step 3 of 4"):
        train.train(tiny_mlm, loss_fn, [0, 1, 2, 3], train.Settings(lr=1e-3), progress=False)


def test_losses_read_in_groups_as_on_a_gpu_name_the_step_and_change_nothing(tiny_mlm, monkeypatch):
    """Issue 44: on an accelerator the losses are read on the host every LOSS_READ_EVERY steps, not
    each step (each read waits for the GPU). Read in groups of 3 on the CPU: the same history and
    weights as reading each step, and a NaN at step 5 of 8 still stops the run naming step 5."""
    import copy
    batches = [dict(input_ids=torch.tensor([[1, 5, 7, 2], [1, 9, 2, 0]]),
                    attention_mask=torch.tensor([[1, 1, 1, 1], [1, 1, 1, 0]]),
                    targets=torch.tensor([3, 4]))] * 7
    runs = []
    for every in (1, 3):
        monkeypatch.setattr(train, "LOSS_READ_EVERY", {"cpu": every})
        model = copy.deepcopy(tiny_mlm)
        torch.manual_seed(1)   # the same dropout in both runs
        head = defsent.word_prediction_head(model)
        hist = train.train(model, lambda m, b: defsent.loss(m, head, b, "mean"), batches, train.Settings(lr=1e-2, optimizer="adam"), params=defsent.trainable_parameters(model), progress=False)
        runs.append((hist["loss"], model.state_dict()))
    assert len(runs[1][0]) == 7 and runs[0][0] == runs[1][0]
    assert all(torch.equal(v, runs[1][1][k]) for k, v in runs[0][1].items())
    calls = iter([1.0, 0.9, 0.8, 0.7, float("nan"), 0.5, 0.4, 0.3])

    def loss_fn(m, b):
        return m.bert.embeddings.position_embeddings.weight.sum() * 0 + next(calls)
    with pytest.raises(train.NonFiniteLoss, match="loss became nan at step 5 of 8 \\(batch 4\\)"):
        train.train(tiny_mlm, loss_fn, list(range(8)), train.Settings(lr=1e-3), progress=False, describe_batch=lambda b: f"batch {b}")


@pytest.mark.parametrize("value, shown", [(0.5, "float 0.5"), (torch.ones(3), "Tensor (3,)")])
def test_a_loss_that_is_not_one_number_tensor_is_named(tiny_mlm, value, shown):
    """Issue 46: a float or a vector from loss_fn crashed unclearly inside the finiteness check."""
    def loss_fn(m, b):
        return value if not torch.is_tensor(value) else value * m.bert.embeddings.position_embeddings.weight.sum()
    with pytest.raises(TypeError, match=f"train: loss_fn returned {re.escape(shown)} at step 1; it must return"):
        train.train(tiny_mlm, loss_fn, [0, 1], train.Settings(lr=1e-3), progress=False)


def test_warmup_then_constant():
    f = [train.warmup_factor(s, 2, 10, decay=False) for s in range(5)]
    assert f == [0.5, 1.0, 1.0, 1.0, 1.0]
    assert train.warmup_factor(9, 2, 10, decay=True) == pytest.approx(1 / 8)


def test_tied_fallback_head_is_u_times_embeddings():
    emb = torch.nn.Embedding(6, 3)
    head = defsent.TiedEmbeddingHead(emb)
    u = torch.randn(2, 3)
    assert torch.allclose(head(u), u @ emb.weight.T)


def test_the_rate_search_picks_best_dev_mrr_and_trains_the_seeds_at_it(monkeypatch):
    fake = {2.0 ** x * 1e-6: m for x, m in [(1, 0.1), (2, 0.3), (3, 0.2)]}
    trained = []
    monkeypatch.setattr(defsent_protocol, "run", lambda cfg, dataset=None, data_dir=None, **kw: trained.append(
        (cfg["seed"], cfg["lr"])) or {"dev": {"mrr": fake[cfg["lr"]]}})
    final = defsent_protocol.final_runs(dict(model="m"), "cls", [1, 2, 3], [0, 1], dataset=("splits", "report"))
    assert final.lr == 4e-6 and set(final.search) == set(fake) and trained[-2:] == [(0, 4e-6), (1, 4e-6)]


def test_saved_encoder_loads_in_transformers_and_sentence_transformers(tmp_path):
    from sentence_transformers import SentenceTransformer

    from defsent_lite import encode
    from defsent_lite.runtime import defsent_model, models
    model, tok, head, kind = defsent_model.load("offline", device="cpu")
    assert kind == defsent.FALLBACK
    folder = defsent_protocol.save(model, tok, kind, tmp_path / "m", dict(pooling="cls", method="DefSent"))
    sents = ["a celestial body orbiting the earth", "be expensive for someone"]
    ours = encode.encode(model, tok, sents, pooling="cls")
    reloaded, tok2 = models.load(str(folder))
    assert torch.allclose(encode.encode(reloaded, tok2, sents, pooling="cls"), ours, atol=1e-5)
    st = SentenceTransformer(str(folder), device="cpu")
    assert torch.allclose(torch.tensor(st.encode(sents)), ours, atol=1e-4)


def test_a_target_id_beyond_the_head_is_named(tiny_mlm):
    """Issue 46: a target id beyond the head failed inside cross_entropy (on a GPU: a device assert)."""
    head = defsent.word_prediction_head(tiny_mlm)
    batch = dict(input_ids=torch.tensor([[1, 5, 2]]), attention_mask=torch.ones(1, 3, dtype=torch.long),
                 targets=torch.tensor([60]))
    with pytest.raises(ValueError, match="target ids 60..60 fall outside the head's 50 words"):
        defsent.loss(tiny_mlm, head, batch, "cls")


@pytest.mark.parametrize("tokenizer_name", ["offline", "roberta-base, prefix space"])
@pytest.mark.parametrize("pooling", ["cls", "prompt"])
def test_definitions_tokenised_before_the_loop_collate_to_the_same_batches(standin_folders, tokenizer_name, pooling):
    """Issue 44: defsent_protocol tokenises every batch's definitions once before training; each batch
    collates to exactly the tensors of collate on its raw (word, definition, id) triples (the
    prompt template, a long definition cut at max_length, RoBERTa's leading space)."""
    from transformers import AutoTokenizer
    from defsent_lite.runtime import models
    if tokenizer_name == "offline":
        tok = models.load_tokenizer("offline")
    else:
        tok = AutoTokenizer.from_pretrained(standin_folders["folders"]["roberta-base"], add_prefix_space=True)
    examples = [(f"w{i}", f"a {'very ' * (3 * i)}small thing number {i}", i) for i in range(7)]
    batches = [examples[:3], examples[3:4], examples[4:]]
    ready = defsent.tokenize_definition_batches(tok, batches, max_length=16, pooling=pooling)
    assert [r.examples for r in ready] == batches
    for raw, pre in zip(batches, ready):
        a, b = defsent.collate(tok, raw, 16, pooling), defsent.collate(tok, pre, 16, pooling)
        assert sorted(a.keys()) == sorted(b.keys()) and all(torch.equal(a[k], b[k]) for k in a)
    with pytest.raises(ValueError, match="no definitions"):
        defsent.collate(tok, defsent.TokenizedDefinitions([], []))
