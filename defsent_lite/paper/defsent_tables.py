"""DefSent's tables as its notebooks show them, one call each: our rows (untrained, and DefSent's
mean over seeds, per pooling) beside the paper's rows of the same model, with the paper's std
and our spread where they compare: word prediction (Tables 2 and 5) and the untrained baselines
(notebook 01); the STS and SentEval tables are defsent_eval_tables'."""

from typing import NamedTuple

import pandas as pd

from defsent_lite.paper import aggregate, results
from defsent_lite.paper import defsent as paper_defsent
from defsent_lite.paper.aggregate import POOLING_LABELS


class Beside(NamedTuple):
    """A table of ours beside the paper's, and what it was built from."""

    table: pd.DataFrame  # results.side_by_side: the paper's row above ours, per pair
    ours: pd.DataFrame  # our rows, indexed (kind, pooling)
    pairs: dict  # {label: (the paper's row or None, our row)}
    seeds: aggregate.SeedTable  # DefSent's metrics over seeds, indexed by pooling
    reference: str  # the model whose paper rows stand beside ours
    note: str  # aggregate.reference_model's line: whose rows, and why
    verdict: str  # results.spread_verdict: which rows lie outside the paper's spread


def ours_per_pooling(untrained, seeds, columns, untrained_kind):
    """Our rows: (untrained_kind, pooling) from `untrained` ({pooling: {metric: value}}) and
    ("DefSent", pooling), the mean over seeds."""
    rows = {}
    for p in seeds.mean.index:
        rows[(untrained_kind, p)] = [untrained[p][c] for c in columns]
        rows[("DefSent", p)] = seeds.mean.loc[p].tolist()
    return results.paper_table(rows, columns)


def beside(
    paper_rows, paper_std, columns, ours, pairs, seeds, reference, note, model, scale, digits=2
):
    """The paper's rows beside ours; compared (a difference, its z) only for the paper's own model
    under its protocol (aggregate.comparable), else context."""
    table = results.side_by_side(
        results.paper_table(paper_rows, columns),
        ours,
        pairs,
        digits=digits,
        compare=aggregate.comparable(model, scale),
        std=results.paper_table(paper_std, columns),
        runs=int(seeds.n.min()),
    )
    return Beside(table, ours, pairs, seeds, reference, note, results.spread_verdict(table))


def table2(untrained, final, model, scale):
    """Table 2, word prediction on the test words: per pooling the untrained encoder ("no
    fine-tuning") and DefSent's final runs (mean over seeds), beside the paper's rows of the
    model with Table 5's std. untrained: {pooling: metrics}; final: {pooling: FinalRuns}."""
    cols = paper_defsent.TABLE2_COLS
    per_seed = {p: [[r["test"][c] for c in cols] for r in f.runs] for p, f in final.items()}
    seeds = aggregate.table_over_seeds(per_seed, cols, "DefSent word prediction")
    ours = ours_per_pooling(untrained, seeds, cols, "no fine-tuning")
    reference, note = aggregate.reference_model(model)
    pairs = {}
    for p in final:
        label = POOLING_LABELS[p]
        untrained_key = aggregate.paper_row(
            paper_defsent.TABLE2, reference, label, "no fine-tuning"
        )
        trained_key = aggregate.paper_row(
            paper_defsent.TABLE2, reference, label, exclude=("no fine-tuning",)
        )
        pairs[f"no fine-tuning / {label}"] = (untrained_key, ("no fine-tuning", p))
        pairs[f"DefSent / {label}"] = (trained_key, ("DefSent", p))
    return beside(
        paper_defsent.TABLE2,
        paper_defsent.TABLE5_STD,
        cols,
        ours,
        pairs,
        seeds,
        reference,
        note,
        model,
        scale,
        digits=4,
    )


class Baselines(NamedTuple):
    """Notebook 01's rows of the model as loaded beside the paper's untrained baselines."""

    table: pd.DataFrame  # results.side_by_side: the paper's row above ours, per pooling
    reference: str  # the model whose paper rows stand beside ours
    note: str  # aggregate.reference_model's line: whose rows, and why


def baselines(untrained, paper_table, columns, model, scale):
    """The CLS vector and the averaged token embeddings of the model as loaded (untrained:
    {pooling: {metric: value}} for cls and mean) beside the paper's rows of those baselines in
    `paper_table` (Table 3: STS, Table 4: SentEval), which it reports for BERT-base only."""
    reference, note = aggregate.reference_model(model)
    keys = paper_defsent.UNTRAINED_ROWS.get(reference, {})  # none for another model
    pairs = {
        "CLS vector": (keys.get("cls"), "cls"),
        "Avg. token embeddings": (keys.get("mean"), "mean"),
    }
    ours = pd.DataFrame(untrained).T[columns]
    paper = results.paper_table(paper_table, columns)
    compare = aggregate.comparable(model, scale)
    return Baselines(results.side_by_side(paper, ours, pairs, compare=compare), reference, note)


def lr_search(final):
    """The learning-rate search of Table 5: dev MRR and final loss of every (pooling, rate
    2^x * 1e-6) run. final: {pooling: FinalRuns}."""
    rows = {
        (p, f"2^{x:g}e-6"): {"dev MRR": r["dev"]["mrr"], "final loss": r["final_loss"]}
        for p, f in final.items()
        for x, r in f.search.items()
    }
    return pd.DataFrame(rows).T


def whole_table2(t2):
    """The paper's whole Table 2, every model's rows, with each of ours below the row it stands
    beside (t2: table2's result)."""
    ours = t2.ours.copy()
    ours.index = [f"{kind}, {p}" for kind, p in t2.ours.index]
    pairs = {f"{kind}, {p}": key for key, (kind, p) in t2.pairs.values()}
    return results.whole_paper_table(paper_defsent.TABLE2, paper_defsent.TABLE2_COLS, ours, pairs)


def table5(lr_x, seeds, model):
    """DefSent's Table 5 beside ours, one row per pooling: the learning rate (2^x x 1e-6) the search
    chose and the paper's, then each metric as "mean ± std" over seeds, ours and the paper's (the
    paper's columns are empty for a model it did not run). lr_x: {pooling: x}; seeds: a SeedTable
    of the test metrics indexed by pooling."""
    label = aggregate.paper_model_label(model)
    rows = {}
    for p, x in lr_x.items():
        key = (label, POOLING_LABELS[p])
        row = {
            "lr (ours)": f"2^{x:g}e-6",
            "lr (paper)": f"2^{paper_defsent.TABLE5_LR_X[key]:g}e-6"
            if key in paper_defsent.TABLE5_LR_X
            else "",
        }
        for i, c in enumerate(paper_defsent.TABLE2_COLS):
            n = seeds.n[p]
            m, s = seeds.mean.at[p, c], seeds.std.at[p, c]
            row[c] = f"{m:.4f}" if n < 2 else f"{m:.4f} ± {s:.4f}"
            row[f"{c} (paper)"] = (
                f"{paper_defsent.TABLE2[key][i]:.4f} ± {paper_defsent.TABLE5_STD[key][i]:.4f}"
                if key in paper_defsent.TABLE5_STD
                else ""
            )
        rows[POOLING_LABELS[p]] = row
    return pd.DataFrame(rows).T
