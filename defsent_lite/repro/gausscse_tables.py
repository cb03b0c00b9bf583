"""GaussCSE's tables, from the runs of gausscse_runs: Tables 1-4 (NLI accuracy / AUPRC, entailment
direction with the length baseline) beside the paper's rows, one call each, and McNemar's test
between loss settings (notebooks 30 and 31). Direction by length ratio is gausscse_lengths', the
Appendix E grid beside Table 5 gausscse_grid's, the command line gausscse_cli's."""

import itertools
from typing import NamedTuple

import pandas as pd

from defsent_lite import gausscse
from defsent_lite.evaluation import nli
from defsent_lite.paper import aggregate, results
from defsent_lite.paper import gausscse as paper_gausscse
from defsent_lite.repro import gausscse_baseline
from defsent_lite.repro.gausscse_data import NLI_TEST_SETS, length_baselines


def tables(runs, tests, sick_full, sick_pairs="one-way"):
    """(NLI table: accuracy and AUPRC per test set, direction table with the length baseline) as
    DataFrames."""
    nli_rows = {
        s: {
            f"{t} {m}": r["nli"][t][k]
            for t in NLI_TEST_SETS
            for m, k in (("acc", "acc"), ("AUPRC", "auprc"))
        }
        for s, r in runs.items()
    }
    direction = {
        "Length-baseline": length_baselines(tests, sick_full, sick_pairs),
        **{s: r["direction"] for s, r in runs.items()},
    }
    d = pd.DataFrame(direction).T[list(NLI_TEST_SETS)]
    d["avg"] = d.mean(axis=1)
    return pd.DataFrame(nli_rows).T, d


def baseline_row(baseline):
    """gausscse_baseline.cosine_baseline's scores as a row of the NLI table (its columns)."""
    return [baseline["nli"][t][k] for t in NLI_TEST_SETS for k in ("acc", "auprc")]


class Beside(NamedTuple):
    """A GaussCSE table of ours beside the paper's rows of the model, and what it was built from."""

    table: pd.DataFrame  # results.side_by_side: the paper's row above ours, per pair
    ours: pd.DataFrame  # our rows
    whole_pairs: (
        dict  # {our row: the paper's row (of any model) it stands below in the whole table}
    )
    reference: str  # the model whose paper rows stand beside ours
    note: str  # aggregate.reference_model's line: whose rows, and why


def table3(runs, baseline, baseline_encoder, tests, sick_full, model, scale):
    """Tables 1/3: NLI accuracy (SNLI-dev threshold) and AUPRC per loss setting, with the cosine
    baseline's row (baseline: gausscse_baseline.cosine_baseline's scores of baseline_encoder, a
    (model, pooling)), beside the paper's rows of the model; SimCSE's row only beside SimCSE's."""
    ours, _ = tables(runs, tests, sick_full)
    encoder, pooling = baseline_encoder
    cosine = f"cosine baseline: {encoder.split('/')[-1]} ({pooling})"
    ours.loc[cosine] = baseline_row(baseline)
    reference, note = aggregate.reference_model(model)
    label = aggregate.paper_model_label(reference)
    rows = paper_gausscse.rows_for(paper_gausscse.TABLE3, label)
    paper = results.paper_table(rows, paper_gausscse.NLI_COLS)
    simcse = tuple(baseline_encoder) == gausscse_baseline.SIMCSE_BASELINE  # the paper's baseline
    pairs = {cosine: ("SimCSE (BERT-base)" if simcse else None, cosine)}
    pairs.update({s: (s if s in paper.index else None, s) for s in gausscse.LOSS_SETTINGS})
    table = results.side_by_side(paper, ours, pairs, compare=aggregate.comparable(model, scale))
    whole = {s: (label, s) for s in gausscse.LOSS_SETTINGS}
    whole[cosine] = "SimCSE (BERT-base)" if simcse else None
    return Beside(table, ours, whole, reference, note)


def whole_table3(t3):
    """The paper's whole Table 3 (every model and the SimCSE baseline), each of ours below the row
    it stands beside (t3: table3's result)."""
    return results.whole_paper_table(
        paper_gausscse.TABLE3, paper_gausscse.NLI_COLS, t3.ours, t3.whole_pairs
    )


def table1(whole3):
    """Table 1: Table 3's accuracy columns with their average (whole3: whole_table3's result)."""
    table = whole3[[c for c in paper_gausscse.NLI_COLS if c.endswith("acc")]].copy()
    table["avg"] = table.mean(axis=1)
    return table


def table2(runs, tests, sick_full, sick_pairs, model, scale):
    """Tables 2/4: entailment-direction accuracy per loss setting and the length baseline (on
    sick_pairs' reading of SICK), beside the paper's rows of the model."""
    _, ours = tables(runs, tests, sick_full, sick_pairs)
    reference, note = aggregate.reference_model(model)
    label = aggregate.paper_model_label(reference)
    paper = results.paper_table(
        paper_gausscse.rows_for(paper_gausscse.TABLE2, label), paper_gausscse.DIR_COLS
    )
    pairs = {k: (k if k in paper.index else None, k) for k in ours.index}  # row: (paper's, ours)
    table = results.side_by_side(paper, ours, pairs, compare=aggregate.comparable(model, scale))
    whole = {}
    for row in ours.index:
        key = (label, row) if (label, row) in paper_gausscse.TABLE2 else row
        whole[row] = key if key in paper_gausscse.TABLE2 else None
    return Beside(table, ours, whole, reference, note)


def whole_table2(t2):
    """The paper's whole Table 2 / 4 (every model's block and the length baseline), each of ours
    below the row it stands beside (t2: table2's result)."""
    return results.whole_paper_table(
        paper_gausscse.TABLE2, paper_gausscse.DIR_COLS, t2.ours, t2.whole_pairs
    )


def mcnemar_table(runs):
    """McNemar's test (exact, p < 0.05) between every two loss settings, per task and test set, as
    the paper does."""
    rows = []
    for task, key in (("direction", "direction_correct"), ("NLI", "nli_correct")):
        for a, b in itertools.combinations([s for s in gausscse.LOSS_SETTINGS if s in runs], 2):
            for name in NLI_TEST_SETS:
                nb, nc, p = nli.mcnemar(runs[a][key][name], runs[b][key][name])
                rows.append(
                    dict(
                        task=task,
                        pair=f"{a} vs {b}",
                        set=name,
                        b=nb,
                        c=nc,
                        p=float(f"{p:.3g}"),
                        significant=p < 0.05,
                    )
                )
    return pd.DataFrame(rows)
