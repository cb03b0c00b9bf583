"""GaussCSE's tables as notebooks 30-33 show them, one call each, from the runs gausscse_protocol
trains: Tables 1 and 3 (NLI), Tables 2 and 4 (entailment direction), McNemar's test, Figure 2's
direction by length ratio and Appendix E's grid (Table 5), ours beside the paper's rows."""

import itertools
from typing import NamedTuple

import numpy as np
import pandas as pd

from defsent_lite import gausscse
from defsent_lite.evaluation import nli
from defsent_lite.paper import aggregate, results
from defsent_lite.paper import gausscse as paper_gausscse
from defsent_lite.repro.gausscse_protocol import (
    NLI_TEST_SETS,
    SIMCSE_BASELINE,
    paper_hyperparameters,
)


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
        "Length-baseline": nli.length_baselines(tests, sick_full, sick_pairs),
        **{s: r["direction"] for s, r in runs.items()},
    }
    d = pd.DataFrame(direction).T[list(NLI_TEST_SETS)]
    d["avg"] = d.mean(axis=1)
    return pd.DataFrame(nli_rows).T, d


class Beside(NamedTuple):
    """A GaussCSE table of ours beside the paper's rows of the model, and the paper's whole table
    with each of ours below the row it stands beside (every model's rows, the baselines)."""

    table: pd.DataFrame  # results.side_by_side: the paper's row above ours, per pair
    whole: pd.DataFrame  # results.whole_paper_table
    reference: str  # the model whose paper rows stand beside ours
    note: str  # aggregate.reference_model's line: whose rows, and why


def table3(runs, baseline, baseline_encoder, tests, sick_full, model, scale):
    """Tables 1/3: NLI accuracy (SNLI-dev threshold) and AUPRC per loss setting, with the cosine
    baseline's row (baseline: cosine_baseline's scores of baseline_encoder, a
    (model, pooling)), beside the paper's rows of the model; SimCSE's row only beside SimCSE's."""
    ours, _ = tables(runs, tests, sick_full)
    reference, note = aggregate.reference_model(model)
    label = aggregate.paper_model_label(reference)
    paper = results.paper_table(
        paper_gausscse.rows_for(paper_gausscse.TABLE3, label), paper_gausscse.NLI_COLS
    )
    pairs = {s: (s if s in paper.index else None, s) for s in gausscse.LOSS_SETTINGS}
    places = {s: (label, s) for s in gausscse.LOSS_SETTINGS}  # in the whole table: below the row
    if baseline is not None:  # the command line shows none
        encoder, pooling = baseline_encoder
        cosine = f"cosine baseline: {encoder.split('/')[-1]} ({pooling})"
        ours.loc[cosine] = [baseline["nli"][t][k] for t in NLI_TEST_SETS for k in ("acc", "auprc")]
        # the paper's baseline is SimCSE's row
        simcse = "SimCSE (BERT-base)" if tuple(baseline_encoder) == SIMCSE_BASELINE else None
        pairs, places[cosine] = {cosine: (simcse, cosine), **pairs}, simcse
    table = results.side_by_side(paper, ours, pairs, compare=aggregate.comparable(model, scale))
    whole = results.whole_paper_table(paper_gausscse.TABLE3, paper_gausscse.NLI_COLS, ours, places)
    return Beside(table, whole, reference, note)


def table1(whole3):
    """Table 1: Table 3's accuracy columns (whole3: table3's whole) and their average: ours
    computed, a paper row's the one Table 1 prints (blank for the rows it does not print)."""
    table = whole3[[c for c in paper_gausscse.NLI_COLS if c.endswith("acc")]].copy()
    printed = {
        ", ".join(k) if isinstance(k, tuple) else k: a for k, a in paper_gausscse.TABLE1_AVG.items()
    }
    table["avg"] = [
        printed.get(row, float("nan")) if source == "paper" else mean
        for (row, source), mean in zip(table.index, table.mean(axis=1))
    ]
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
    places = {  # in the whole table: below the model's row, else the row of that name, else none
        row: next((k for k in ((label, row), row) if k in paper_gausscse.TABLE2), None)
        for row in ours.index
    }
    whole = results.whole_paper_table(paper_gausscse.TABLE2, paper_gausscse.DIR_COLS, ours, places)
    return Beside(table, whole, reference, note)


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


# -------------------------------------------------------- Figure 2: entailment direction by length

LENGTH_RATIO_BINS = {
    "< 0 (shorter)": (-np.inf, -1e-9),
    "0 (equal)": (-1e-9, 1e-9),
    "(0, 0.5]": (1e-9, 0.5),
    "(0.5, 1]": (0.5, 1.0),
    "> 1": (1.0, np.inf),
}


def log_length_ratios(name, rows, sick_full):
    """log(len(entailing) / len(entailed)) in characters for a test set's direction pairs (Figure
    2)."""
    entailing, entailed = nli.direction_pairs(name, rows, sick_full)[:2]
    return np.log(nli.sentence_lengths(entailing) / nli.sentence_lengths(entailed))


def direction_by_length(run_result, tests, sick_full, bins=LENGTH_RATIO_BINS):
    """Direction accuracy of one run per bin of log(len(entailing) / len(entailed)), lengths in
    characters: pairs, and pairs right, where the length baseline is right (> 0) or not (<= 0).
    Counts, not shares: in a bin of 3 pairs one pair flipped by float noise moves a share by
    0.33."""
    edges = [lo for lo, _ in bins.values()] + [list(bins.values())[-1][1]]
    table = {}
    for name, rows in tests.items():
        groups = pd.cut(log_length_ratios(name, rows, sick_full), edges, labels=list(bins))
        correct = pd.Series(run_result["direction_correct"][name], dtype=float)
        table[name] = (
            correct.groupby(groups, observed=False)
            .agg(["size", "sum"])
            .astype(int)
            .set_axis(["pairs", "right"], axis=1)
            .stack()
        )
    return pd.DataFrame(table)


# ------------------------------------------------------------------ Appendix E's grid (Table 5)


def grid_beside_paper(grid, model, compare=True):
    """Our Appendix E grid (SNLI-dev AUPRC x100, batch size x lr) with the paper's Table 5 rows of
    the model (hub name) and ours minus the paper's, rows (batch size, source); the paper rows are
    NaN for a model the paper did not run. compare=False: the paper's rows are context, no diff."""
    lrs = [f"{lr:g}" for lr in paper_gausscse.GRID_LRS]
    rows = {}
    for b in grid.index:
        paper = pd.Series(
            paper_gausscse.TABLE5.get((str(model), b), [np.nan] * len(lrs)), index=lrs
        )
        ours = grid.loc[b].reindex(lrs)
        rows[(b, "paper" if compare else "paper (context)")], rows[(b, "ours")] = paper, ours
        if compare:
            rows[(b, "diff")] = ours - paper
    out = pd.DataFrame(rows).T
    out.index = pd.MultiIndex.from_tuples(out.index, names=["batch size", "source"])
    return out.astype(float).round(2)


def best_grid_cell(grid, model, margin=4.0):
    """A line naming our grid's best cell (batch size, lr) where it leads the runner-up by more
    than `margin` points, and the paper's best cell of the model (Table 5)."""
    ranked = grid.stack().sort_values(ascending=False)
    lead = float(ranked.iloc[0] - ranked.iloc[1]) if len(ranked) > 1 else float("inf")
    (b, lr), paper = ranked.index[0], paper_hyperparameters(model)
    ours = (
        f"batch {b}, lr {lr} (leads by {lead:.2f} points)"
        if lead > margin
        else f"no cell leads by more than {margin:g} points (the top two differ by {lead:.2f})"
    )
    theirs = f"batch {paper[0]}, lr {paper[1]:g}" if paper else "none (not in Table 5)"
    return f"our best cell: {ours}; the paper's for {model}: {theirs}"
