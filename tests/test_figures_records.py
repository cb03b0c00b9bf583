"""Figures saved with provenance, the ours-minus-paper dot plot, and the named records notebooks read."""
import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd
import pytest

from defsent_lite import checks
from defsent_lite.runtime import config
from defsent_lite.evaluation import nli
from defsent_lite.paper import plots, results
from defsent_lite.repro import gausscse_protocol, preflight, defsentplus_protocol


def test_save_figure_keeps_provenance(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_RESULTS", str(tmp_path))
    fig = plots.loss_curves({"a": [3.0, 2.0, 1.0]}, chance=3.0)
    shown = results.save_figure(fig, "x/loss.png", model="m", scale="smoke", seeds=[0, 1])
    assert shown == "results/x/loss.png"
    meta = results.figure_provenance(tmp_path / "x" / "loss.png")
    assert meta["model"] == "m" and meta["scale"] == "smoke" and meta["seeds"] == "[0, 1]"
    assert meta["torch"] == results.versions()["torch"]


def test_ours_minus_paper_plots_the_differences():
    paper = pd.DataFrame({"a": [70.0, 60.0], "avg": [65.0, 55.0]}, index=["p1", "p2"])
    ours = pd.DataFrame({"a": [71.5, 50.0, 40.0], "avg": [64.0, 56.0, 45.0]}, index=["o1", "o2", "o3"])
    table = results.side_by_side(paper, ours, {"first": ("p1", "o1"), "second": ("p2", "o2"), "new": (None, "o3")})
    fig = plots.ours_minus_paper(table, ["a", "avg"])
    ax = fig.axes[0]
    got = {c.get_label(): np.ma.filled(c.get_offsets()[:, 0].astype(float), np.nan) for c in ax.collections}
    # rows run top to bottom: first, second, new (no paper row: NaN, not plotted as 0)
    np.testing.assert_allclose(got["a"][:2], [1.5, -10.0])
    np.testing.assert_allclose(got["avg"][:2], [-1.0, 1.0])
    assert np.isnan(got["a"][2]) and np.isnan(got["avg"][2])
    labels = [t.get_text() for t in ax.get_yticklabels()]
    assert sorted(labels) == sorted(["first", "second", "new (no paper row)"])


def test_ours_minus_paper_wraps_long_row_names_and_takes_numbers():
    """Long names wrap at spaces (never inside "BERT-base"); a grid's rows are batch sizes (ints)."""
    long = "DefSent+ 1st Training vs Table 6: DefSent+ simcse-BERT-base 1st-(CLS,AMP)-a"
    paper = pd.DataFrame({"avg": [65.0, 55.0]}, index=["p1", "p2"])
    ours = pd.DataFrame({"avg": [64.0, 56.0]}, index=["o1", "o2"])
    table = results.side_by_side(paper, ours, {long: ("p1", "o1"), 16: ("p2", "o2")})
    labels = [t.get_text() for t in plots.ours_minus_paper(table, ["avg"]).axes[0].get_yticklabels()]
    assert "16" in labels and all(len(line) <= 36 for label in labels for line in label.split("\n"))
    assert " ".join(next(label for label in labels if "Table 6" in label).split("\n")) == long


def test_best_pooling_scores_picks_the_best_average():
    sts = {p: {c: float(i) for c in results.STS_COLS} for i, p in enumerate(["cls", "mean", "prompt"])}
    sts["mean"]["avg"] = 9.0
    pooling, row = defsentplus_protocol.best_pooling_scores(sts)
    assert pooling == "mean" and len(row) == len(results.STS_COLS) and row[-1] == 9.0
    sts["mean"]["avg"] = float("nan")
    with pytest.raises(checks.NonFinite, match="inference pooling by STS avg"):
        defsentplus_protocol.best_pooling_scores(sts)


def test_direction_pairs_record():
    rows = [dict(pair_id=1, label="entailment"), dict(pair_id=2, label="entailment"), dict(pair_id=3, label="neutral"),
            dict(pair_id=4, label="entailment")]   # 4: absent from SICK.txt, counted as missing
    sick = [dict(pair_id=1, sentence_a="a b", sentence_b="a", ab="A_entails_B", ba="B_neutral_A"),
            dict(pair_id=2, sentence_a="c", sentence_b="c d", ab="A_entails_B", ba="B_entails_A"),
            dict(pair_id=3, sentence_a="e", sentence_b="f", ab="A_neutral_B", ba="B_entails_A")]
    got = gausscse_protocol.direction_pairs("SICK", rows, sick)
    assert got == nli.DirectionPairs(["a b"], ["a"], 1, missing=1)
    snli = [dict(premise="p", hypothesis="h", label="entailment"), dict(premise="q", hypothesis="i", label="neutral")]
    assert gausscse_protocol.direction_pairs("SNLI", snli, sick) == nli.DirectionPairs(["p"], ["h"], 0)


def test_preflight_start_gives_the_scale_and_its_model():
    S, model = preflight.start("20", "smoke", log=lambda *_: None)
    assert S == config.scale("smoke") and model == config.MINI_BERT
    assert preflight.start("20", "smoke", model=config.OFFLINE_MODEL, log=lambda *_: None).model == config.OFFLINE_MODEL
    with pytest.raises(preflight.PreflightFailed, match="no-such-model"):
        preflight.start("20", "smoke", model="/no-such-model", log=lambda *_: None)
