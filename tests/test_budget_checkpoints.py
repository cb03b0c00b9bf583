"""Issue 14, point 6: the plan printed before paper-scale training counts exactly the trainings
the run functions will ask for, and its time comes from a measurement on this device; only
checkpoints that a later step loads are kept (the others are dropped once scored)."""
import math
import time
from pathlib import Path

import pytest
import torch
from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

from defsent_lite.runtime import cache, config, defsent_model
from defsent_lite.repro import plans, defsent_protocol, defsent_scores, eval_sizes, gausscse_protocol, preflight, defsentplus_protocol
from defsent_lite.evaluation import senteval
from defsent_lite.evaluation import sts
from tiny_root import gausscse_root, tiny_pst_setup


def test_a_plan_adds_its_parts_and_says_what_it_rests_on():
    p = plans.Plan("x", 2, 100, 640, 0.5, 0.2, 64, "cpu (2 threads, fp32)")
    assert p.seconds == pytest.approx(100 * 0.5 + 10 * 0.2)
    text = str(p)
    assert "2 trainings, 100 steps, 640 sentences" in text and "about 1 min on cpu" in text
    assert "0.500 s per training step" in text
    assert text.startswith("WARNING: no GPU: this plan alone is about 1 min of CPU time here")
    assert not str(p._replace(device="Tesla T4 (fp16)")).startswith("WARNING")
    assert plans.hours(7200) == "2.0 h"


def test_time_per_call_is_measured_wall_time():
    t = plans.seconds_per_call(lambda: time.sleep(0.02), "cpu", warmup=0, repeats=3)
    assert 0.015 < t < 0.5


def test_paper_scale_on_a_cpu_warns_first(capsys, monkeypatch):
    from defsent_lite.data import sources
    from defsent_lite.repro import preflight
    assert preflight.paper_cpu_warning("smoke", "cpu") is None
    assert "paper scale on a CPU" in preflight.paper_cpu_warning("paper", "cpu")
    monkeypatch.setattr(sources, "check_data", lambda *a, **k: sources.DataCheck([], []))
    preflight.check("30", "paper", None, [])
    assert capsys.readouterr().out.startswith("WARNING: paper scale on a CPU")


@pytest.fixture(scope="module")
def tiny_mlm(tmp_path_factory):
    """A tiny BERT with an MLM head and the offline (bert-base-uncased) vocabulary, saved."""
    path = tmp_path_factory.mktemp("tiny") / "mlm"
    tok = AutoTokenizer.from_pretrained(defsent_protocol.models.resolve("offline"))
    torch.manual_seed(0)
    BertForMaskedLM(BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=32)).save_pretrained(path)
    tok.save_pretrained(path)
    return str(path), tok


def tiny_defsent_dataset(tok, n=96):
    words = ["cat", "dog", "house", "tree", "water", "light", "music", "stone", "river", "cloud", "bread", "glass"]
    rows = [(w, f"definition {i} of the word in plain terms", tok.convert_tokens_to_ids(w))
            for i, w in enumerate(words * (n // len(words)))]
    return dict(train=rows, dev=rows[:24], test=rows[24:48]), dict(source="tiny", prep=defsent_protocol.VARIANTS["official"]["data"])


def tiny_scoring_scale():
    """The smoke scale with evaluations small enough for a unit test."""
    return dict(config.scale("smoke"), sts_max_pairs=20, transfer_max_examples=60, transfer_max_eval=20,
                transfer_kfold=2)


def test_defsent_keeps_only_the_first_seeds_checkpoint_and_the_others_scores(tiny_mlm, tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    path, tok = tiny_mlm
    dataset = tiny_defsent_dataset(tok)
    scale = tiny_scoring_scale()
    base = dict(defsent_scores.base_config(scale, path), train_max=None, eval_max=None)
    xs, seeds = [1.0, 5.0, 9.0], [0, 1, 2, 3]
    planned = defsent_scores.plan(base, ["cls"], xs, seeds, dataset)
    trained, scored = [], []
    original = defsent_model.load
    monkeypatch.setattr(defsent_model, "load", lambda name, **kw: trained.append(name) or original(name, **kw))
    original_score = defsent_scores.score_trained
    monkeypatch.setattr(defsent_scores, "score_trained", lambda r, *a: scored.append(r["path"]) or original_score(r, *a))
    on_disk_after_each_run, original_run = [], defsent_protocol.run

    def counting_run(*a, **kw):
        r = original_run(*a, **kw)
        on_disk_after_each_run.append(len(list((tmp_path / "cache" / "defsent").glob("*/files-*/model/config.json"))))
        return r
    monkeypatch.setattr(defsent_protocol, "run", counting_run)
    best, search, runs = defsent_scores.final_runs(base, "cls", xs, seeds, dataset)  # unpacks as (lr, search, runs)
    assert max(on_disk_after_each_run) <= 2  # a rate's checkpoint goes as soon as a better one is seen
    assert len(trained) == planned.trainings == len(xs) + len(seeds) - 1
    assert planned.steps == planned.trainings * math.ceil(96 / 16) \
        == sum(r["steps"] for r in search.values()) + sum(r["steps"] for r in runs[1:])
    sts_n, transfer_n = eval_sizes.sts_sentences(None, 20), eval_sizes.transfer_sentences(None, senteval.transfer_settings(scale))
    sts_n += eval_sizes.sts_sentences(None, scale["dsp_sts_max_pairs"])   # and as DefSent+ scores STS
    # dev+test of each run; seeds 1-3 scored on STS, SentEval only for the first three seeds (Table 9)
    assert defsent_scores.SENTEVAL_SEEDS == 3 and planned.encoded == planned.trainings * 48 + 3 * sts_n + 2 * transfer_n
    assert (Path(runs[0]["path"]) / "config.json").is_file() and [r["path"] for r in runs[1:]] == [None] * 3
    assert len(scored) == 3 and all(scored)  # scored from their checkpoints, before these were dropped
    dropped = [lr for lr in search if lr != best]
    assert len(dropped) == 2 and all(search[lr]["path"] is None for lr in dropped) and search[best]["path"] == runs[0]["path"]
    on_disk = [str(p.parent) for p in (tmp_path / "cache" / "defsent").glob("*/files-*/model/config.json")]
    assert on_disk == [runs[0]["path"]]  # 6 trainings, 1 checkpoint left: the first seed's final run
    before = len(trained)
    again = defsent_scores.final_runs(base, "cls", xs, seeds, dataset)  # nb 11/12 ask again: nothing retrains
    assert len(trained) == before and again.lr == best and [r["path"] for r in again.runs] == [r["path"] for r in runs]
    settings = senteval.transfer_settings(scale)
    sts_seed1 = sts.trained_sts(again.runs[1], "cls", 20, None)  # what nb 11 reads: the cached scores
    assert set(sts_seed1) >= {"STS12", "avg"} and len(trained) == before
    assert "avg" in senteval.trained_transfer(again.runs[2], "cls", settings, None)
    assert "avg" in sts.trained_sts(again.runs[3], "cls", 20, None)
    as_dsp = sts.trained_sts(again.runs[3], "cls", scale["dsp_sts_max_pairs"], None, files="senteval")
    assert "avg" in as_dsp and len(trained) == before   # notebook 22's DefSent row: scored when trained
    with pytest.raises(FileNotFoundError, match="checkpoint was dropped"):
        senteval.trained_transfer(again.runs[3], "cls", settings, None)  # the 4th seed is not a SentEval seed
    with pytest.raises(FileNotFoundError, match="checkpoint was dropped"):
        sts.trained_sts(again.runs[1], "cls", 21, None)  # scores never computed for this setting


def test_notebook_10_keeps_later_seeds_until_11_scores_them(tiny_mlm, tmp_path, monkeypatch):
    """Issue 83: notebook 10 trains without the scoring (it loads no STS or SentEval), so its later
    seeds keep their checkpoints; notebook 11 then scores them without training and drops them, and
    notebook 10 or 13 asking again trains nothing."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    path, tok = tiny_mlm
    dataset = tiny_defsent_dataset(tok)
    trained_base = dict(defsent_protocol.base_config(tiny_scoring_scale(), path), train_max=None, eval_max=None)
    assert "scoring" not in trained_base
    on_disk = lambda: len(list((tmp_path / "cache" / "defsent").glob("*/files-*/model/config.json")))  # noqa: E731
    runs = defsent_protocol.final_runs(trained_base, "cls", [5.0], [0, 1, 2], dataset).runs
    assert all(r["path"] for r in runs) and on_disk() == 3   # every seed's checkpoint kept
    trained = []
    original = defsent_model.load
    monkeypatch.setattr(defsent_model, "load", lambda name, **kw: trained.append(name) or original(name, **kw))
    scored_base = dict(trained_base, scoring=defsent_scores.base_config(tiny_scoring_scale(), path)["scoring"])
    scored = defsent_scores.final_runs(scored_base, "cls", [5.0], [0, 1, 2], dataset).runs
    assert [r["key"] for r in scored] == [r["key"] for r in runs] and trained == []   # scored, not trained
    assert scored[0]["path"] == runs[0]["path"] and [r["path"] for r in scored[1:]] == [None, None]
    assert on_disk() == 1 and "avg" in sts.trained_sts(scored[2], "cls", 20, None)
    again = defsent_protocol.final_runs(trained_base, "cls", [5.0], [0, 1, 2], dataset).runs
    assert trained == [] and [r["test"] for r in again] == [r["test"] for r in runs]


def test_a_later_seed_whose_scores_are_missing_is_trained_again_and_scored(tiny_mlm, tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    path, tok = tiny_mlm
    dataset = tiny_defsent_dataset(tok)
    base = dict(defsent_scores.base_config(tiny_scoring_scale(), path), train_max=None, eval_max=None)
    runs = defsent_scores.final_runs(base, "cls", [5.0], [0, 1], dataset).runs
    other = dict(base, scoring=dict(base["scoring"], sts_max_pairs=10))  # another STS size: not cached yet
    trained = []
    original = defsent_model.load
    monkeypatch.setattr(defsent_model, "load", lambda name, **kw: trained.append(name) or original(name, **kw))
    again = defsent_scores.final_runs(other, "cls", [5.0], [0, 1], dataset).runs
    assert len(trained) == 1 and again[1]["key"] == runs[1]["key"] and again[1]["path"] is None
    assert "avg" in sts.trained_sts(again[1], "cls", 10, None)


def test_a_dropped_checkpoint_is_recomputed_only_when_its_files_are_needed(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    calls = []

    def compute(folder):
        calls.append(folder)
        (folder / "weights.bin").write_bytes(b"w" * 100)
        return dict(score=1.0)
    entry = cache.cached_run("k", dict(a=1), compute)
    assert cache.drop_files("k", dict(a=1)) and not entry.folder.exists()
    kept = cache.cached_run("k", dict(a=1), compute, need_files=False)
    assert kept.result == dict(score=1.0) and kept.folder is None and len(calls) == 1
    again = cache.cached_run("k", dict(a=1), compute)  # needs the files: trained again, not a corrupt entry
    assert len(calls) == 2 and (again.folder / "weights.bin").is_file()
    assert not cache.drop_files("missing", dict(a=1))


def test_pst_keeps_the_best_run_of_each_step_only(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    tiny, ds = tiny_pst_setup(tmp_path)
    cfg = dict(model=tiny, dataset="a", pooling="cls", entry_pooling="mean", lrs=[1e-3, 1e-3],
               seeds=[0, 1], batch_size=16, ica=True, ica_max_iter=50, inference_poolings=["cls"], sts_max_pairs=20)
    planned = defsentplus_protocol.plan(cfg, ds)
    steps = defsentplus_protocol.run_pst(cfg, ds, "tiny-data")
    runs = [r for st in steps for r in st["runs"].values()]
    assert planned.trainings == len(runs) == 6 and planned.steps == sum(r["steps"] for r in runs)
    with_files = [r for r in runs if r["path"] is not None]
    assert with_files == [st["best_run"] for st in steps]
    on_disk = sorted(str(p.parent) for p in (tmp_path / "cache" / "defsentplus").glob("*/files-*/model/config.json"))
    assert on_disk == sorted(r["path"] for r in with_files)  # 6 trainings, 2 checkpoints left
    again = defsentplus_protocol.run_pst(cfg, ds, "tiny-data")  # cached: the same bests, their checkpoints still there
    assert [st["best_run"]["path"] for st in again] == [r["path"] for r in with_files]


def test_gausscse_plan_counts_the_runs_and_steps_it_will_train(tmp_path, monkeypatch):
    root = gausscse_root(tmp_path / "data", triplets=40, pairs=30)
    base = dict(gausscse_protocol.base_config(config.scale("smoke"), "offline", root), train_max=None, batch_size=8,
                dev_max=None, test_max=None)
    # the counts are the point here (the seconds beside the clock: the GPU self-check's plan rows)
    monkeypatch.setattr(plans, "measure", lambda model, step, batches, infer, encoded: (0.1, 0.1))
    planned = gausscse_protocol.plan(base, [0, 1], root)
    asked = []
    monkeypatch.setattr(gausscse_protocol, "run", lambda cfg, data_dir=None, keep_model=False: asked.append(cfg) or dict(n=1.0))
    monkeypatch.setattr(gausscse_protocol, "average_runs", lambda results: results[0])
    gausscse_protocol.run_settings(base, [0, 1], root)
    assert planned.trainings == len(asked) == 8 and planned.steps == 8 * (40 // 8)
    # issue 72: a plan refuses what its runs refuse (it accepted 0 steps; eval_every=0 divided by 0)
    with pytest.raises(ValueError, match="GaussCSE eval_every=0"):
        gausscse_protocol.plan(dict(base, eval_every=0), [0], root)
    with pytest.raises(ValueError, match="no training batches: 40 training triplets make no batch"):
        gausscse_protocol.plan(dict(base, batch_size=64), [0], root)


def test_evaluation_sizes_and_an_encoding_only_plan():
    shared = config.data_root()
    assert eval_sizes.transfer_sentences(shared) == (5331 * 2 + 3775 + 10000 + 10606) + (67349 + 872 + 1821) \
        + (5452 + 500) + 2 * (4076 + 1725)  # SentEval's counts (../shared/data/senteval/SOURCES.md)
    capped = dict(max_examples=1000, max_eval=500)
    assert eval_sizes.transfer_sentences(shared, capped) == 4 * 1000 + (1000 + 500 + 500) + (1000 + 500) + 2 * (1000 + 500)
    assert eval_sizes.sts_sentences(shared, max_pairs=10) == 7 * 2 * 10
    p = eval_sizes.encoding_plan("untrained", "offline", 640, shared)
    assert p.trainings == 0 and p.steps == 0 and p.batch_s > 0 and p.seconds == pytest.approx(10 * p.batch_s)


def test_a_plan_prints_at_the_protocol_scales_only(capsys):
    asked = []
    for name in ("smoke", "cpu", "rehearsal", "colab", "paper"):
        plans.print_plan(config.scale(name), lambda: asked.append(name) or f"plan of {name}")
    assert asked == ["rehearsal", "colab", "paper"]
    assert capsys.readouterr().out.split("\n")[:3] == ["plan of rehearsal", "plan of colab", "plan of paper"]
