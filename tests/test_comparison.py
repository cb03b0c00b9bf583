"""Notebook 40's pieces: SimCSE's loss (the one objective the core gained), the frozen evaluator's
file counts, and the rule that names a difference only when it exceeds the seeds' spread."""

import math

import numpy as np
import pytest
import torch

from defsent_lite import simcse
from defsent_lite.repro import comparison, comparison_tables
from defsent_lite.runtime import config


def reference_loss(anchor, positive, negative=None, tau=simcse.TEMPERATURE):
    """SimCSE's Eq. 1 / Eq. 5 written out row by row."""
    unit = lambda x: x / np.linalg.norm(x, axis=1, keepdims=True)  # noqa: E731
    a, p = unit(anchor.numpy()), unit(positive.numpy())
    candidates = p if negative is None else np.concatenate([p, unit(negative.numpy())])
    logits = a @ candidates.T / tau
    return np.mean([np.log(np.exp(row).sum()) - row[i] for i, row in enumerate(logits)])


def test_simcse_loss_is_eq1_and_eq5_row_by_row():
    g = torch.Generator().manual_seed(0)
    anchor, positive, negative = (torch.randn(5, 8, generator=g, dtype=torch.float64) for _ in range(3))
    assert float(simcse.contrastive_loss(anchor, positive)) == pytest.approx(
        reference_loss(anchor, positive), rel=1e-6)
    assert float(simcse.contrastive_loss(anchor, positive, negative)) == pytest.approx(
        reference_loss(anchor, positive, negative), rel=1e-6)
    # a positive equal to its anchor and orthogonal to the rest: nearly no loss
    eye = torch.eye(4)
    assert float(simcse.contrastive_loss(eye, eye)) < 1e-6
    assert float(simcse.contrastive_loss(eye, eye, eye)) == pytest.approx(math.log(2), rel=1e-4)


def test_simcse_unsupervised_positive_is_the_sentence_under_other_dropout():
    """In training mode a sentence's two encodings differ (dropout), so the loss is positive;
    with dropout off they are equal and each row's positive is its own sentence."""
    from defsent_lite.runtime import models

    encoder, tokenizer = models.load(config.MINI_BERT)
    config.set_seed(0)
    model = simcse.SimCSEModel(encoder)
    sentences = ["a dog runs in the park .", "the stock market fell today .", "she reads a book ."]
    model.train()
    assert float(simcse.loss(model, tokenizer, sentences).detach()) > 0
    model.eval()
    with torch.no_grad():
        batch = dict(simcse.tokenize_batch(tokenizer, sentences + sentences, "cls", 32))
        z = model(batch)
    assert torch.allclose(z[:3], z[3:], atol=1e-6)
    with pytest.raises(ValueError, match="at least 2"):
        simcse.loss(model, tokenizer, sentences[:1])


def fake(rows, steps=16):
    """A Comparison whose "avg STS" of each row is given per seed."""
    scores = {r: [{"avg STS": v} for v in vals] for r, vals in rows.items()}
    own = {r: [(steps, v) for v in vals] for r, vals in rows.items()}
    return comparison.Comparison(scores, own, dict(steps=steps), {}, {})


def test_a_difference_is_named_only_beyond_the_spread():
    base = {r: [40.0] for r in comparison.METHODS if comparison.METHODS[r].training is None}
    trained = [r for r in comparison.METHODS if comparison.METHODS[r].training]
    rows = dict(base, **{r: [39.9, 40.1, 40.2] for r in trained})
    rows["DefSent"] = [42.0, 42.3, 42.6]  # above everything, gap 2.2 > range 0.6
    rows["sup SimCSE"] = [40.25, 40.3, 40.35]  # above the raw rows' 40.0, gap 0.3 > range 0.1
    named = comparison_tables.clear_differences(fake(rows))
    pairs = set(zip(named["higher"], named["lower"]))
    assert ("DefSent", "raw encoder CLS") in pairs and ("DefSent", "unsup SimCSE") in pairs
    assert ("sup SimCSE", "raw encoder mean") in pairs
    # seeds apart (40.25 > 40.2) but a gap (0.23) below a range (0.3): not named
    assert ("sup SimCSE", "unsup SimCSE") not in pairs
    assert ("raw encoder CLS", "unsup SimCSE") not in pairs  # seeds on both sides
    # two seeds name nothing, however far apart
    two = dict(base, **{r: [40.0, 40.1] for r in trained})
    two["DefSent"] = [50.0, 50.1]
    assert comparison_tables.clear_differences(fake(two)).empty


def test_the_evaluator_scores_the_whole_files_and_refuses_others(tmp_path, monkeypatch):
    """At the cpu scale every pair of every file: the counts the protocol card prints; a file
    set with a pair missing is refused naming it."""
    ev = comparison.Evaluator(config.scale("cpu"))
    counts = ev.counts()
    assert {k.split()[0]: v for k, v in counts.items() if "NLI" not in k and "direction" not in k} == comparison.PAIRS
    assert counts["SNLI direction pairs"] == 3368 and counts["SICK direction pairs"] == 794
    assert ev.length_baseline["SNLI"] == pytest.approx(92.64, abs=0.005)
    from defsent_lite.evaluation import sts

    real = sts.load_tasks
    cut = lambda *a, **k: {t: (s1[:-1], s2[:-1], g[:-1]) for t, (s1, s2, g) in real(*a, **k).items()}  # noqa: E731
    monkeypatch.setattr(sts, "load_tasks", cut)
    with pytest.raises(ValueError, match="STS12: 3107 pairs where the evaluator's files give 3108"):
        comparison.Evaluator(config.scale("cpu"))


def test_the_papers_scales_take_bert_bases_published_rates_and_plan_first():
    """At paper scale every rate is the published BERT-base one (the transcribed tables), the
    updates are one pass over nli_for_simcse at batch 16, and the plan counts PST's three
    trainings a seed."""
    from defsent_lite.paper import defsent as paper_defsent, defsentplus as paper_defsentplus
    from defsent_lite.repro import gausscse_protocol

    setup = comparison.settings(config.scale("paper"))
    rates = setup["rates"]
    assert rates["DefSent"] == pytest.approx(2 ** paper_defsent.TABLE5_LR_X[("BERT-base", "Mean")] * 1e-6)
    assert tuple(rates["DefSent+"]) == paper_defsentplus.table5_rates("BERT-base")
    assert (16, rates["GaussCSE"]) == gausscse_protocol.paper_hyperparameters("bert-base-uncased")
    assert (rates["unsup SimCSE"], rates["sup SimCSE"]) == (3e-5, 5e-5)   # SimCSE's Appendix A
    assert setup["steps"] == 275_601 // 16 and setup["seeds"] == [0, 1, 2, 3, 4]
    plan = comparison.plan(setup)
    assert "35 trainings" in plan and f"{7 * 5 * 17_225:,} in all" in plan, plan
    # the smoke and cpu scales keep mini-BERT's (notebooks 10 and 21 measured them)
    assert comparison.settings(config.scale("cpu"))["rates"]["DefSent"] == 2 ** 7 * 1e-6


def test_the_published_numbers_stand_beside_ours_with_the_protocol_that_made_them():
    """The transcriptions as the papers print them (GaussCSE's AUPRC the mean of its three sets)."""
    rows = dict.fromkeys(comparison.METHODS, [30.0, 32.0])
    c = fake(rows)
    c = c._replace(scores={r: [dict(v, **{m: v["avg STS"] for m in
                                         ("avg transfer", "SNLI AUPRC", "MNLI AUPRC", "SICK AUPRC",
                                          "SNLI direction", "MNLI direction", "SICK direction")})
                               for v in runs] for r, runs in c.scores.items()},
                   setup=dict(c.setup, model="mini", seeds=[0, 1]))
    table = comparison_tables.beside_published(c)
    published = table["published (BERT-base)"]
    assert published[("DefSent", "STS avg")] == 75.11 and published[("DefSent", "SentEval avg")] == 86.62
    assert published[("DefSent+ 1st", "STS avg")] == 77.88 and published[("DefSent+ PST", "STS avg")] == 78.42
    assert published[("GaussCSE KL", "NLI AUPRC avg")] == round((67.07 + 71.34 + 79.45) / 3, 2) == 72.62
    assert published[("GaussCSE KL", "direction avg")] == 91.84
    assert published[("unsup SimCSE", "STS avg")] == 76.25
    assert published[("sup SimCSE", "NLI AUPRC avg")] == round((66.76 + 75.88 + 81.41) / 3, 2) == 74.68
    assert set(table["ours (mini, 2 seeds' mean)"]) == {31.0}
    assert table["published under"].str.contains("Table").all()


def test_the_launcher_lists_each_method_and_seed_under_the_key_the_notebook_reads(tmp_path, monkeypatch):
    """`launch 40`: the raw encoder's scoring and every (method, seed); a worker's run lands where
    notebook 40's run() looks it up, which then computes nothing."""
    from defsent_lite.repro import launch

    pytest.importorskip("submitit")
    paper = launch.trainings("40", "paper", log=lambda *a: None)   # no BERT-base here: counted
    assert len(paper) == 1 + 5 * 5 and sum(t.steps for t in paper) == 7 * 5 * 17_225
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    listed = launch.trainings("40", "smoke", log=lambda *a: None)
    assert [t.settings["training"] for t in listed[:6]] == ["raw", *comparison.TRAININGS]
    assert all(t.todo for t in listed) and len({t.key for t in listed}) == len(listed)
    monkeypatch.setattr(comparison, "Evaluator", lambda *a: None)
    monkeypatch.setattr(comparison, "training_data", lambda *a: {"loaded": True})
    monkeypatch.setattr(comparison, "score_raw", lambda *a: {"raw encoder CLS": {"scores": {"avg STS": 1.0}}})
    records = launch.work(launch.job_inputs(listed[:1]))
    assert [r["status"] for r in records] == ["trained"], records
    assert launch.trainings("40", "smoke", log=lambda *a: None)[0].todo is False
    monkeypatch.setattr(comparison, "score_raw", None)   # found in the cache: never called
    found = comparison.run_one(config.scale("smoke"), "raw", None)
    assert found == {"raw encoder CLS": {"scores": {"avg STS": 1.0}}}
