"""Issue 15, point 3: every notebook at the rehearsal scale (the paper protocol with tiny stand-in
models, capped trainings and evaluations) on a data root downloaded through the local mirror.

These runs check structure and aggregation, never numbers: each notebook runs top to bottom, each
result table it saves says `scale: rehearsal`, every paper row has a finite ours row beside it,
and every row averaged over seeds averages the scale's seeds (10 for DefSent and DefSent+, DefSent's
SentEval 3 as its Table 9 says, GaussCSE 5). The notebooks run one after another in one shared
kernel (`run_notebooks.SharedKernel`: each from an empty namespace, its imports paid once); the
smoke run under nbval is where each notebook gets a fresh kernel, as a reader's. The executed notebooks and their result tables (results/NN/) are written to
DEFSENT_REHEARSAL_OUT when it is set (else to a temporary folder), to be read after a failure.
"""
import ast
import math
import os
import re
import signal
import time
from pathlib import Path

import pytest

import run_notebooks
from defsent_lite.runtime import config
from defsent_lite.data import sources
from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.paper import results
from defsent_lite.repro import defsent_scores, gausscse_protocol, launch
from defsent_lite.runtime import cache

S = config.scale("rehearsal")


def seeds_averaged(notebook, scale=S):
    """How many seeds a notebook's rows average: GaussCSE 5, DefSent's SentEval 3 (Table 9), else 10
    (at the colab scale: one)."""
    if notebook.startswith("3"):
        return len(scale["gauss_seeds"])
    return min(defsent_scores.SENTEVAL_SEEDS, len(scale["seeds"])) if notebook == "12" else len(scale["seeds"])


@pytest.fixture(scope="module")
def rehearsal(mirrored, standin_folders, tmp_path_factory):
    """The environment every rehearsal kernel inherits: the mirrored root, stand-ins on, a cache
    and results folder of its own (not the smoke run's)."""
    _, _, root, _ = mirrored
    scratch = tmp_path_factory.mktemp("rehearsal")
    out = os.environ.get("DEFSENT_REHEARSAL_OUT") or str(scratch)
    os.makedirs(out, exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in dict(DEFSENT_SCALE="rehearsal", DEFSENT_STANDINS="1", DEFSENT_DATA=str(root),
                               DEFSENT_MODEL_FOLDERS=standin_folders["setting"],
                               NLTK_DATA=str(root / "dictionary" / "wordnet" / "nltk_data"),
                               DEFSENT_CACHE=str(scratch / "cache"), DEFSENT_PROGRESS="0").items():
            mp.setenv(key, value)
        kernel = run_notebooks.SharedKernel()   # every rehearsal notebook runs in it, one at a time
        try:
            yield dict(out=out, results=Path(out) / "results", mp=mp, kernel=kernel)
        finally:
            kernel.close()


def execute(name, env, parameters=""):
    """Run notebook `name` (NN) in the rehearsal's shared kernel, from an empty namespace (the
    smoke run under nbval gives each notebook a fresh kernel); its result CSVs land in their own
    folder."""
    py = next(run_notebooks.NOTEBOOKS.glob(f"{name}_*.py"))
    results = env["results"] / (name + ("-" + re.sub(r"\W+", "_", parameters) if parameters else ""))
    env["mp"].setenv("DEFSENT_RESULTS", str(results))
    nb_path, _ = run_notebooks.run(py, timeout=900, out=f"{env['out']}/{py.stem}{'-' if parameters else ''}"
                                   f"{re.sub(r'[^A-Za-z0-9]+', '_', parameters)}.ipynb", parameters=parameters,
                                   kernel=env["kernel"])
    return nb_path, sorted(results.glob("*.csv"))


def side_by_side(table):
    """A results.side_by_side table: columns row and source (paper or paper (context) / ours / diff,
    the paper's std and z where it publishes one)."""
    sources = {"paper", "paper (context)", "ours", "diff", "paper std", "paper std (context)", "z"}
    return {"row", "source"} <= set(table.columns) and set(table["source"]) <= sources


def ours_rows(table):
    """Rows that hold our numbers: source 'ours' (side-by-side tables) or a label starting 'ours'."""
    if side_by_side(table):
        return table[table["source"] == "ours"]
    first = table.columns[0]
    labelled = table[table[first].astype(str).str.startswith("ours")]
    return labelled if len(labelled) else table


DATA_ONLY = ("00", "20")   # dataset statistics: a diff row wherever the data is the paper's (Oxford's train split there)


def check_table(path, name, scale=S):
    header, table = results.read_csv(path)
    assert header.get("scale") == scale["name"], (path.name, header)
    numbers = ours_rows(table).select_dtypes("number")
    bad = [(r, c) for r in numbers.index for c in numbers.columns if not math.isfinite(numbers.at[r, c])]
    assert not bad, f"{path.name}: non-finite ours cells {bad[:5]}"
    if side_by_side(table):  # every paper row stands beside an ours row
        labels = table["row"].ffill()
        assert set(labels[table["source"].str.startswith("paper")]) <= set(labels[table["source"] == "ours"]), path.name
        if name not in DATA_ONLY:   # a model's numbers: a stand-in's are never differenced with the paper's
            assert "diff" not in set(table["source"]), f"{path.name}: a difference taken against a stand-in's numbers"
    if "runs" in header:  # the rows were averaged over the scale's seeds
        runs = ast.literal_eval(header["runs"])  # a dict written by save_csv
        assert runs and set(runs.values()) == {seeds_averaged(name, scale)}, (path.name, runs)
        return True
    return False


# 90 has no scale (benchmarks of the offline model, run under nbval at smoke scale): not rehearsed.
REHEARSED = [nb for nb in sources.NOTEBOOKS if nb != "90"]


LAUNCHED = ("10", "21", "22", "23", "24", "25", "30", "40")   # their trainings are run by the launcher first


@pytest.fixture(scope="module")
def launched(rehearsal, tmp_path_factory):
    """The LAUNCHED notebooks' trainings run by the launcher (submitit's local executor, 2 workers,
    one thread each; DefSent+'s PST a step at a time) into the rehearsal cache, before those
    notebooks run; a relaunch then trains nothing."""
    pytest.importorskip("submitit")
    outcome = launch.launch(LAUNCHED, kind="local", workers=2, folder=str(tmp_path_factory.mktemp("launch")))
    assert not outcome.failed, outcome.failed
    assert {r["status"] for r in outcome.records} == {"trained"}
    again = launch.launch(("10", "30"), kind="local", workers=2, folder=str(tmp_path_factory.mktemp("relaunch")))
    assert again.records == [], "a relaunch ran trainings that were cached"
    return outcome


def training_entries():
    """{result.json: (size, mtime)} of every cached DefSent, DefSent+, GaussCSE and comparison
    training."""
    root = config.cache_dir()
    return {p: (p.stat().st_size, p.stat().st_mtime_ns)
            for kind in launch.KINDS.values() for p in (root / kind).glob("*/result.json")}


@pytest.mark.parametrize("name", REHEARSED)
def test_notebook_runs_at_rehearsal_scale(rehearsal, name, request):
    if name in LAUNCHED:   # the launcher trained them: the notebook finds every run in the cache
        request.getfixturevalue("launched")
        before = training_entries()
    nb_path, csvs = execute(name, rehearsal)
    if name in LAUNCHED:   # no new entry; 10's and 30's unchanged (PST drops checkpoints: its entries say so)
        after = training_entries()
        assert set(after) == set(before), f"notebook {name} trained {len(set(after) - set(before))} run(s)"
        if name in ("10", "30", "40"):
            assert after == before, f"notebook {name} rewrote a run the launcher had cached"
    assert "stand-in models: hub names" in nb_path.read_text()
    assert bool(csvs) == (name != "32"), f"notebook {name}: {[p.name for p in csvs]}"  # 32: a figure, no table
    averaged = [check_table(p, name) for p in csvs]
    if name in ("10", "11", "12", "22", "23", "30", "31"):  # these average over seeds
        assert any(averaged), f"notebook {name} saved no table with its run counts"


COLAB = config.scale("colab_rehearsal")


@pytest.mark.parametrize("name", ["10", "12", "21", "30", "33"])
def test_notebook_runs_at_the_colab_scale_structure(rehearsal, name):
    """The one-Colab-session scale (one seed, pinned rates, autocast training, the batched SentEval
    classifier, GaussCSE's capped triplets) at rehearsal size: each planned notebook runs top to
    bottom and its tables average one seed."""
    rehearsal["mp"].setenv("DEFSENT_SCALE", COLAB["name"])
    try:
        nb_path, csvs = execute(name, dict(rehearsal, results=rehearsal["results"] / "colab"))
    finally:
        rehearsal["mp"].setenv("DEFSENT_SCALE", S["name"])
    assert COLAB["name"] in nb_path.read_text() and csvs, name
    averaged = [check_table(p, name, COLAB) for p in csvs]   # scale colab_rehearsal, one seed averaged
    assert any(averaged) or name in ("21", "33"), f"notebook {name} saved no table with its run counts"


def test_roberta_base_shows_its_own_paper_rows(rehearsal):
    """MODEL = "roberta-base": the RoBERTa stand-in runs (notebook 23: DefSent+ with RoBERTa's pooler
    swap, 4 combinations, one seed each at the colab scale's rehearsal: the seeds' averaging is
    rehearsed with BERT above) and the paper's RoBERTa-base row of Table 8 stands beside ours, never
    BERT-base's. (DefSent on the RoBERTa stand-in: tests/test_standins.py.)"""
    rehearsal["mp"].setenv("DEFSENT_SCALE", COLAB["name"])
    try:
        nb_path, csvs = execute("23", dict(rehearsal, results=rehearsal["results"] / "colab"),
                                parameters='MODEL = "roberta-base"')
    finally:
        rehearsal["mp"].setenv("DEFSENT_SCALE", S["name"])
    assert "paper rows: RoBERTa-base (roberta-base)" in nb_path.read_text()
    header, table = results.read_csv(next(p for p in csvs if p.name == "23_defsentplus_table8.csv"), index_col=0)
    assert header["model"] == "roberta-base" and set(ast.literal_eval(header["runs"]).values()) == {1}
    assert list(table.loc["RoBERTa-base"]) == paper_defsentplus.TABLE8["RoBERTa-base"]
    assert table.loc["ours: roberta-base"].notna().all()
    assert not any(str(k).startswith("ours - ") for k in table.index)   # a stand-in: the paper's rows are context


def test_the_runner_never_overwrites_the_stored_smoke_outputs_at_another_scale(monkeypatch):
    monkeypatch.setenv("DEFSENT_SCALE", "rehearsal")
    with pytest.raises(SystemExit, match="leave out --stored"):
        run_notebooks.main(["10", "--stored"])
    with pytest.raises(SystemExit, match="--out needs a folder"):
        run_notebooks.main(["10", "--out"])


def test_a_worker_killed_mid_training_leaves_nothing_done_and_is_redone_on_relaunch(rehearsal, tmp_path):
    """Issue 49: SIGKILL the process training notebook 32's run (on 300 triplets: time to catch
    it) as soon as its files folder appears: no result.json, the run still to train; relaunched, it
    is trained and the killed writer's folder removed."""
    pytest.importorskip("submitit")
    shared = os.environ["DEFSENT_CACHE"]
    rehearsal["mp"].setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    try:
        (t,) = launch.trainings("32")
        target, kwargs = t.call
        cfg = dict(kwargs["cfg"], train_max=300)
        t = t._replace(call=(target, dict(kwargs, cfg=cfg)), key=cache.config_key(gausscse_protocol.run_key(cfg)))
        parent = config.cache_dir() / "gausscse" / t.key
        started = launch.start([t], "local", 1, str(tmp_path / "logs"))
        folder, deadline = None, time.time() + 120
        while folder is None and time.time() < deadline:
            folder = next((f for f in parent.glob("files-*") if f.suffix != ".lease"), None)
            time.sleep(0.01)
        assert folder is not None, "the job never started training"
        os.kill(int(folder.name.split("-")[2]), signal.SIGKILL)
        outcome = launch.collect(started)
        assert [r["status"] for r in outcome.records] == ["failed"] and "died" in outcome.records[0]["error"]
        assert not (parent / "result.json").exists() and gausscse_protocol.needs_training(cfg)
        outcome = launch.collect(launch.start([t], "local", 1, str(tmp_path / "logs")))
        assert [r["status"] for r in outcome.records] == ["trained"], outcome.records
        assert not gausscse_protocol.needs_training(cfg) and not folder.exists()
    finally:
        rehearsal["mp"].setenv("DEFSENT_CACHE", shared)
