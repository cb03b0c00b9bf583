"""Aggregation over seeds (mean ± std as the papers report) and paper rows found from data."""
import math
import statistics

import pytest

from defsent_lite.paper import aggregate, results
from defsent_lite.repro import defsent_scores, defsentplus_protocol
from defsent_lite.paper import defsent as paper_defsent
from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.repro import defsentplus_tables


def test_ten_runs_give_their_mean_and_population_std():
    runs = [70.0 + k for k in range(10)]                     # 70..79
    stats = aggregate.over_seeds(runs, "STS avg")
    assert stats.mean == pytest.approx(74.5) and stats.n == 10
    assert stats.std == pytest.approx(statistics.pstdev(runs)) == pytest.approx(math.sqrt(8.25))
    assert aggregate.over_seeds(runs, ddof=1).std == pytest.approx(statistics.stdev(runs))


def test_table_over_seeds_by_hand():
    runs = {"CLS": [[1.0, 10.0], [3.0, 10.0]], "Mean": [[5.0, 7.0]]}
    table = aggregate.table_over_seeds(runs, ["mrr", "top1"])
    assert table.mean.loc["CLS"].tolist() == [2.0, 10.0] and table.std.loc["CLS"].tolist() == [1.0, 0.0]
    assert table.n.to_dict() == {"CLS": 2, "Mean": 1}
    shown = aggregate.mean_pm_std(table)
    assert shown.at["CLS", "mrr"] == "2.00 ± 1.00" and shown.at["Mean", "mrr"] == "5.00"


@pytest.mark.parametrize("bad", [[], [1.0, float("nan")], [float("inf")]])
def test_nothing_empty_or_non_finite_is_averaged(bad):
    with pytest.raises(ValueError, match="seed 7"):
        aggregate.over_seeds(bad, "seed 7")


def test_paper_rows_found_by_model_and_setting():
    t2 = paper_defsent.TABLE2
    assert aggregate.paper_row(t2, "roberta-base", "CLS") == ("RoBERTa-base", "CLS")
    assert aggregate.paper_row(t2, "bert-base-uncased", "Max", exclude=("no fine-tuning",)) == ("BERT-base", "Max")
    assert aggregate.paper_row(t2, "bert-base-uncased", "Max", "no fine-tuning") == ("BERT-base (no fine-tuning)", "Max")
    assert aggregate.paper_row(t2, "roberta-base", "Max", "no fine-tuning") is None      # the paper has no such row
    assert aggregate.paper_row(t2, "offline", "CLS") is None                             # not a paper model
    assert aggregate.paper_row(paper_defsent.TABLE3, "bert-base-uncased", "DefSent") == "DefSent-BERT-base (CLS)"
    assert aggregate.paper_row(paper_defsent.TABLE3, "roberta-large", "DefSent") == "DefSent-RoBERTa-large (Mean)"
    t2p = paper_defsentplus.TABLE2
    assert aggregate.paper_row(t2p, "bert-base-uncased", "3rd-", exclude=("ICA",)) == "DefSent+ BERT-base 3rd-(CLS,AMP)-a"
    assert aggregate.paper_row(t2p, "bert-base-uncased", "3rd-", "ICA") == "DefSent+ BERT-base(ICA) 3rd-(CLS,AMP)-a"
    with pytest.raises(ValueError, match="2 paper rows"):
        aggregate.paper_row(t2p, "bert-base-uncased", "3rd-")


def test_reference_model_names_the_stand_in():
    assert aggregate.reference_model("roberta-large")[0] == "roberta-large"
    model, note = aggregate.reference_model("offline")
    assert model == "bert-base-uncased" and "stands in" in note
    assert aggregate.reference_model("my/own-model") == (None, "paper rows: none (the papers report no my/own-model)")


def fake_step(avgs_by_seed):
    """A PST step record whose runs hold STS scores: {seed: {pooling: avg}} (every task = avg)."""
    runs = {("plain", seed): dict(sts={p: {c: v for c in results.STS_COLS} for p, v in by_pooling.items()})
            for seed, by_pooling in avgs_by_seed.items()}
    return dict(step=1, runs=runs)


def test_pst_rows_are_the_mean_over_seeds_under_the_best_mean_pooling():
    from defsent_lite.repro import defsentplus_protocol
    step = fake_step({s: {"cls": 70.0 + s, "mean": 73.0 - s} for s in range(10)})   # cls 74.5 mean, mean 68.5
    table = defsentplus_protocol.seed_table(step, "plain")
    pooling, mean, std = defsentplus_protocol.best_pooling_row(table)
    assert pooling == "cls" and mean["avg"] == pytest.approx(74.5) and std["avg"] == pytest.approx(math.sqrt(8.25))
    assert table.n["cls"] == 10
    rows = defsentplus_protocol.steps_table([step])
    assert rows.loc[("1st Training", "plain", "mean"), "avg"] == pytest.approx(68.5)   # the mean, not the best seed


def test_a_difference_only_between_like_things(monkeypatch):
    """Ours and the paper's rows are differenced only for the paper's own model at paper scale;
    the offline model, a stand-in or a smaller scale leave the paper's rows as context."""
    from defsent_lite.runtime import config
    smoke, paper = config.scale("smoke"), config.scale("paper")
    monkeypatch.setenv("DEFSENT_STANDINS", "0")
    assert aggregate.comparable("bert-base-uncased", paper)
    assert not aggregate.comparable("bert-base-uncased", smoke)
    assert not aggregate.comparable(config.OFFLINE_MODEL, paper)
    assert aggregate.comparable("princeton-nlp/unsup-simcse-bert-base-uncased", paper,
                                paper_model="princeton-nlp/unsup-simcse-bert-base-uncased")
    assert not aggregate.comparable(config.OFFLINE_MODEL, paper, paper_model="princeton-nlp/unsup-simcse-bert-base-uncased")
    monkeypatch.setenv("DEFSENT_MODEL_FOLDERS", '{"bert-base-uncased": "standins/bert-base-uncased"}')
    assert aggregate.comparable("bert-base-uncased", paper)       # a local copy of the real model
    monkeypatch.setenv("DEFSENT_STANDINS", "1")
    assert not aggregate.comparable("bert-base-uncased", paper)   # a tiny random stand-in
    p = results.paper_table({"row": [1.0, 2.0]}, ["a", "b"])
    o = results.paper_table({"mine": [1.5, 2.5]}, ["a", "b"])
    table = results.side_by_side(p, o, {"R": ("row", "mine")}, compare=False)
    assert list(table.index) == [("R", "paper (context)"), ("R", "ours")]


def test_defsent_rows_of_defsentplus_are_at_the_models_best_pooling():
    """DefSent+ Table 2's DefSent rows are DefSent Table 8's rows of each model's best pooling."""
    assert {m: defsentplus_tables.defsent_row_pooling(m) for m in aggregate.PAPER_MODEL_LABELS} == \
        {"bert-base-uncased": "mean", "bert-large-uncased": "mean", "roberta-base": "cls", "roberta-large": "max"}


def test_smoke_reports_the_papers_pooling_not_a_noisy_selection():
    from defsent_lite.runtime import config
    dev = {"cls": 0.0476, "mean": 0.0667, "max": 0.0676}
    assert defsent_scores.reported_pooling(config.scale("smoke"), "bert-base-uncased", dev)[0] == "cls"
    assert defsent_scores.reported_pooling(config.scale("paper"), "bert-base-uncased", dev)[0] == "max"
    with pytest.raises(Exception, match="pooling by dev MRR"):
        defsent_scores.reported_pooling(config.scale("paper"), "bert-base-uncased", dict(dev, max=float("nan")))


def test_the_whole_paper_table_keeps_every_row_and_puts_ours_below_its_pair():
    """Every paper row in the paper's order; ours below the row it pairs with, unpaired ours last,
    a pair naming a row the paper lacks refused."""
    import pandas as pd
    from defsent_lite.paper import results
    table = {"SimCSE": [1.0, 2.0], ("BERT", "ent"): [3.0, 4.0], ("BERT", "rev"): [5.0, 6.0]}
    ours = pd.DataFrame({"a": [7.0, 8.0], "b": [9.0, 10.0]}, index=["ent", "cosine"])
    out = results.whole_paper_table(table, ["a", "b"], ours, {"ent": ("BERT", "ent"), "cosine": None})
    assert list(out.index) == [("SimCSE", "paper"), ("BERT, ent", "paper"), ("BERT, ent", "ours: ent"),
                               ("BERT, rev", "paper"), ("(no paper row)", "ours: cosine")]
    assert out.loc[("BERT, ent", "ours: ent"), "b"] == 9.0 and out.loc[("BERT, rev", "paper"), "a"] == 5.0
    with pytest.raises(KeyError, match="not in the table"):
        results.whole_paper_table(table, ["a", "b"], ours, {"ent": ("BERT", "con")})


def test_the_whole_table_beside_takes_the_pairs_of_side_by_side():
    """A notebook's side_by_side pairs give the whole table: our row named by its label, below its
    pair; a paper key that is a (model, number) tuple reads "model, number"."""
    import pandas as pd
    from defsent_lite.paper import results
    table = {("bert", 16): [1.0, 2.0], ("bert", 32): [3.0, 4.0]}
    ours = pd.DataFrame({"a": [7.0, 8.0], "b": [9.0, 10.0]}, index=pd.MultiIndex.from_tuples(
        [("DefSent", 16), ("DefSent", 99)]))
    out = results.whole_beside(table, ["a", "b"], ours, {"batch 32": (("bert", 32), ("DefSent", 16)),
                                                         "batch 99": (None, ("DefSent", 99))})
    assert list(out.index) == [("bert, 16", "paper"), ("bert, 32", "paper"), ("bert, 32", "ours: batch 32"),
                               ("(no paper row)", "ours: batch 99")]
    assert out.loc[("bert, 32", "ours: batch 32"), "a"] == 7.0


def test_encoding_grid_differences_only_the_papers_own_model_under_its_protocol():
    """Table 8 in one call: our best inference pooling per combination, below the paper's rows;
    a difference row (ours minus BERT-base's, by hand) only for bert-base under the protocol."""
    from types import SimpleNamespace

    import pandas as pd

    from defsent_lite.runtime import config

    grid = {combo: SimpleNamespace(mean=pd.DataFrame({"avg": {"cls": 70.0 + k, "mean": 72.0 - k}}))
            for k, combo in enumerate(paper_defsentplus.TABLE8_COLS)}
    t8 = defsentplus_protocol.table8(grid, "bert-base-uncased", config.scale("paper"))
    assert list(t8.ours["best"]) == [72.0, 71.0, 72.0, 73.0]
    diff = t8.table.loc["ours - BERT-base"]
    assert list(diff) == pytest.approx([72.0 - 77.50, 71.0 - 77.88, 72.0 - 74.62, 73.0 - 75.10], abs=0.006)
    smoke = defsentplus_protocol.table8(grid, config.OFFLINE_MODEL, config.scale("smoke"))
    assert not any(str(i).startswith("ours - ") for i in smoke.table.index)   # context only
    assert list(smoke.table.loc["ours: all-MiniLM-L6-v2"]) == [72.0, 71.0, 72.0, 73.0]


def test_untrained_baselines_stand_beside_bert_bases_rows_only():
    """Notebook 01's Table 3 rows in one call: CLS and averaged embeddings beside the paper's
    BERT CLS-vector and Avg. BERT embeddings rows, differenced (by hand here) only for bert-base
    under the protocol; for another model those rows are context."""
    from defsent_lite.runtime import config

    cols = results.STS_COLS
    untrained = {"cls": {c: 20.0 for c in cols}, "mean": {c: 50.0 for c in cols}}
    t = aggregate.baselines(untrained, paper_defsent.TABLE3, paper_defsent.UNTRAINED_ROWS, cols, "bert-base-uncased", config.scale("paper"))
    cls_row = paper_defsent.TABLE3[paper_defsent.UNTRAINED_ROWS["bert-base-uncased"]["cls"]]
    assert t.table.loc[("CLS vector", "diff"), "avg"] == pytest.approx(20.0 - cls_row[cols.index("avg")], abs=0.006)
    assert t.table.loc[("Avg. token embeddings", "ours"), "STS12"] == 50.0
    other = aggregate.baselines(untrained, paper_defsent.TABLE3, paper_defsent.UNTRAINED_ROWS, cols, config.OFFLINE_MODEL, config.scale("smoke"))
    assert set(other.table.index.get_level_values("source")) == {"paper (context)", "ours"}
