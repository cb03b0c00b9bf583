"""Issue 13, points 1-3: a non-finite model is never scored, cached or selected; empty work is an
error; every pooling works in every method that accepts it."""
import math

import pytest
import torch
from transformers import BertModel

from defsent_lite import checks, defsent, defsentplus, encode, forward, pooling, train
from defsent_lite.runtime import cache, config, models
from defsent_lite.evaluation import nli, sts
from defsent_lite.repro import defsent_protocol, defsentplus_protocol, gausscse_protocol
from tiny_root import gausscse_root


@pytest.fixture(scope="module")
def offline():
    return models.load("offline")


def single_token_dataset(tokenizer, n=24):
    words = ["dog", "cat", "house", "tree", "river", "car", "book", "city", "water", "fire", "king", "door"]
    ids = [tokenizer.convert_tokens_to_ids(w) for w in words]
    rows = [(w, f"a common thing called by the word number {k} in english", i) for k, (w, i) in enumerate(zip(words, ids))]
    splits = dict(train=(rows * 2)[:n], dev=rows[:6], test=rows[6:])
    return splits, dict(source="hand-made", prep=defsent_protocol.VARIANTS["official"]["data"])


def defsent_cfg(**kw):
    return dict(dict(model="offline", pooling="cls", lr=1e-5, seed=0, batch_size=8, train_max=None, eval_max=None,
                     optimizer="adam", warmup_ratio=0.0, variant="official",
                     **{k: v for k, v in defsent_protocol.VARIANTS["official"].items() if k != "data"}), **kw)


# ---------------------------------------------------------------- 1. non-finite results

def test_defsent_huge_learning_rate_is_refused_and_not_cached(offline):
    dataset = single_token_dataset(offline[1], n=8)  # one step: the loss is checked before it
    cfg = defsent_cfg(lr=1e30)
    with pytest.raises(checks.NonFinite, match="lr 1e\\+30"):
        defsent_protocol.run(cfg, dataset)
    key = dict(cfg, dataset=cache.content_digest(dataset[0]))
    assert cache.lookup_json("defsent", key) is None
    assert not list(cache.run_dir("defsent", key).glob("files-*"))  # the diverged model is not kept


def test_rank_metrics_refuse_nan_logits_that_would_rank_first():
    logits = torch.tensor([[float("nan"), 0.3, 0.1], [0.2, 0.5, 0.1]])
    with pytest.raises(checks.NonFinite, match="dev run: vocabulary logits"):
        defsent.rank_metrics(logits, torch.tensor([0, 1]), what="dev run")


def test_the_rate_search_refuses_a_nan_candidate(monkeypatch):
    fake = {2.0 ** x * 1e-6: mrr for x, mrr in ((0, float("nan")), (1, 0.4))}
    monkeypatch.setattr(defsent_protocol, "run", lambda cfg, dataset=None, data_dir=None, **kw: {"dev": {"mrr": fake[cfg["lr"]]}})
    with pytest.raises(checks.NonFinite, match="candidate 1e-06"):
        defsent_protocol.final_runs(dict(model="m"), "cls", [0, 1], [0], dataset=("splits", "report"))


def test_a_nan_first_evaluation_is_an_error_not_a_frozen_best_state():
    model = torch.nn.Linear(2, 1)
    scores = iter([float("nan"), 0.5])
    with pytest.raises(checks.NonFinite, match="evaluation score nan at step 1"):
        train.train(model, lambda m, b: m(torch.ones(1, 2)).sum() ** 2, [[1], [2]], train.Settings(lr=1e-3), eval_fn=lambda m: next(scores), eval_every=1)


def test_training_checks_the_weights_after_the_last_update():
    model = torch.nn.Linear(2, 1)  # the loss is finite before the one update; the update overflows
    with torch.no_grad():
        model.weight.fill_(-3.3e38)
    with pytest.raises(checks.NonFinite, match="after step 1 of 1"):
        train.train(model, lambda m, b: m.weight[0, 0], [[1]], train.Settings(lr=3e37, optimizer="adam", warmup_ratio=0.0))


def test_gausscse_nan_model_gives_no_cached_threshold(tmp_path):
    root = gausscse_root(tmp_path / "data")
    cfg = dict(gausscse_protocol.base_config(config.scale("smoke"), "offline"),
               setting="ent", lr=1e30, train_max=32, batch_size=32, dev_max=40, test_max=40)   # one step: a NaN model
    with pytest.raises(checks.NonFinite):
        gausscse_protocol.run(cfg, root)
    assert cache.lookup_json("gausscse", dict(cfg, data=cache.data_identity(root, "nli", "sts/raw/SICK"))) is None


@pytest.mark.parametrize("fn", [
    lambda s: nli.best_threshold(s, [1, 0, 1]),
    lambda s: nli.auprc(s, [1, 0, 1]),
    lambda s: nli.accuracy(s, [1, 0, 1], 0.5),
    lambda s: nli.direction_accuracy(s, [0.1, 0.2, 0.3]),
    lambda s: sts.spearman_x100(s, [1.0, 2.0, 3.0]),
])
def test_metrics_refuse_nan_scores(fn):
    with pytest.raises(checks.NonFinite):
        fn([0.2, float("nan"), 0.7])


def test_nothing_non_finite_is_cached():
    with pytest.raises(checks.NonFinite, match=r"result\['dev'\]\['mrr'\] = nan"):
        cache.store_json("test_nan", dict(a=1), dict(dev=dict(mrr=float("nan"))))
    with pytest.raises(checks.NonFinite):
        cache.cached_tensor("test_nan_tensor", dict(a=1), lambda: torch.tensor([1.0, float("inf")]))
    assert cache.lookup_json("test_nan", dict(a=1)) is None


def test_torch_scalars_are_cached_as_numbers_and_a_nan_one_is_refused():
    """Issue 46: {'score': torch.tensor(nan)} was stored as the string 'tensor(nan)', past the
    non-finite guard."""
    with pytest.raises(checks.NonFinite, match=r"result\['score'\] = nan"):
        cache.store_json("test_torch_nan", dict(a=1), dict(score=torch.tensor(float("nan"))))
    assert cache.lookup_json("test_torch_nan", dict(a=1)) is None
    cache.store_json("test_torch_number", dict(a=1), dict(score=torch.tensor(0.5), pair=torch.tensor([1, 2])))
    assert cache.lookup_json("test_torch_number", dict(a=1)) == dict(score=0.5, pair=[1, 2])


def test_sts_constant_gold_or_prediction_names_the_task():
    with pytest.raises(ValueError, match="STS13: every pair has the same gold score"):
        sts.spearman_x100([0.1, 0.2, 0.3], [2.0, 2.0, 2.0], "STS13")
    with pytest.raises(ValueError, match="SICKR: every pair has the same predicted similarity"):
        sts.spearman_x100([0.5, 0.5, 0.5], [1.0, 2.0, 3.0], "SICKR")


def test_pst_refuses_to_select_a_nan_run():
    runs = {("plain", 0): dict(sts={"cls": {"avg": 70.0}}), ("ica", 0): dict(sts={"cls": {"avg": float("nan")}})}
    with pytest.raises(checks.NonFinite, match="ica"):
        checks.best_of(runs, defsentplus_protocol.best_sts_avg, "PST step 3")


# ---------------------------------------------------------------- 2. empty work

def test_empty_training_data_is_an_error():
    with pytest.raises(ValueError, match="no training batches"):
        train.train(torch.nn.Linear(2, 1), lambda m, b: m.weight.sum(), [], train.Settings(lr=1e-3))
    with pytest.raises(ValueError, match="batch 2 of 2 is empty"):
        train.train(torch.nn.Linear(2, 1), lambda m, b: m.weight.sum(), [[1], []], train.Settings(lr=1e-3))


def test_defsent_empty_training_split_is_an_error(offline):
    splits, report = single_token_dataset(offline[1])
    with pytest.raises(ValueError, match="has no train definition"):   # refused before loading a model
        defsent_protocol.run(defsent_cfg(), (dict(splits, train=[]), report))
    with pytest.raises(ValueError, match="seeds"):
        defsent_protocol.final_runs(defsent_cfg(), "cls", [7.0], [], (splits, report))


def test_gausscse_run_with_zero_steps_is_not_cached_as_trained(tmp_path):
    root = gausscse_root(tmp_path / "data", triplets=1)  # one triplet: no batch with in-batch negatives
    cfg = dict(gausscse_protocol.base_config(config.scale("smoke"), "offline"),
               setting="ent", train_max=None, dev_max=40, test_max=40)
    with pytest.raises(ValueError, match="no training batches"):
        gausscse_protocol.run(cfg, root)


def test_empty_inputs_are_errors(offline):
    model, tok = offline
    with pytest.raises(ValueError, match="no sentences"):
        encode.encode(model, tok, [])
    with pytest.raises(ValueError, match="empty"):
        nli.best_threshold([], [])
    with pytest.raises(ValueError, match="empty"):
        nli.auprc([], [])
    with pytest.raises(ValueError, match="empty"):
        defsent.metrics_from_ranks(torch.tensor([]))
    with pytest.raises(ValueError, match="pairs"):
        sts.spearman_x100([], [], "STS12")


# ---------------------------------------------------------------- 3. every pooling everywhere

@pytest.mark.parametrize("name", pooling.POOLINGS)
def test_defsent_trains_and_scores_with_every_pooling(offline, name):
    splits, report = single_token_dataset(offline[1], n=8)
    result = defsent_protocol.run(defsent_cfg(pooling=name, lr=1e-5, mrr_cutoff=None), (splits, report))  # full MRR: > 0
    assert result["steps"] == 1 and math.isfinite(result["final_loss"]) and 0 < result["dev"]["mrr"] <= 1


@pytest.mark.parametrize("name", pooling.POOLINGS)
def test_defsentplus_loss_with_every_pooling(offline, name):
    model = BertModel.from_pretrained(models.resolve("offline"))  # has pooler weights
    tok = offline[1]
    space = torch.randn(5, model.config.hidden_size)
    value = defsentplus.loss(model, tok, [(0, "a small animal"), (3, "the place where one lives")], name, space)
    assert torch.isfinite(value) and value.requires_grad


def test_prompt_keeps_its_mask_token_for_a_sentence_longer_than_max_length(offline):
    tok = offline[1]
    long = " ".join(["word"] * 300)
    batch = forward.tokenize_batch(tok, [long, "short one"], "prompt", max_length=32)
    assert batch["input_ids"].shape[1] <= 32
    assert ((batch["input_ids"] == tok.mask_token_id).sum(1) == 1).all()
    short = forward.tokenize_batch(tok, ["short one"], "prompt", max_length=32)["input_ids"][0]
    assert tok.decode(short, skip_special_tokens=False).startswith('[CLS] this sentence : " short one " means [MASK]')


def test_prompt_keeps_the_start_of_a_sentence_whose_first_word_alone_is_too_long(offline):
    """Issue 46: a sentence whose one word exceeded max_length lost every word, the words that
    fit included; now it keeps its first characters, as truncation keeps its first tokens."""
    tok = offline[1]
    huge = "pneumono" * 40
    wrapped = forward.prompt_sentences(tok, [huge + " is a word", huge], max_length=32)
    for text in wrapped:
        ids = tok(text)["input_ids"]
        assert len(ids) <= 32 and ids.count(tok.mask_token_id) == 1
        assert "pneumono" in text
    with pytest.raises(ValueError, match="max_length=3 tokens leave no room"):
        forward.prompt_sentences(tok, ["a dog"], max_length=3)


def test_prompt_keeps_the_words_that_fit_before_a_word_too_long(offline):
    """Issue 72, case 6: five words then one 400-token word at max_length 64 kept only the first
    word (a cut proportional to the length); the words that fit are kept, the long one dropped."""
    tok = offline[1]
    sentence = "a small domestic animal kept " + "x." * 200  # one word, 400 tokens
    wrapped = forward.prompt_sentences(tok, [sentence], max_length=64)[0]
    assert '"a small domestic animal kept"' in wrapped and "x." not in wrapped
    assert len(tok(wrapped)["input_ids"]) <= 64
