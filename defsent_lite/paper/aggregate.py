"""Results over seeds as the papers report them: the mean (and standard deviation) of the runs,
and the paper's row for a model found from data, never from a hard-coded key.

DefSent reports means of 10 seeds (Tables 2, 3, 5, 8; SentEval: 3 seeds), with std in Tables 5,
8 and 9; DefSent+ reports "statistical results" (mean and std of 10 runs) for raw models and the
best of 10 runs for data-augmented ones; GaussCSE averages 5 seeds. None says which standard
deviation it uses: ours is the population one (ddof=0, numpy's default), `STD_DDOF`.
"""

import math
import re
from typing import NamedTuple

import numpy as np
import pandas as pd

from defsent_lite.paper import results
from defsent_lite.runtime import models

STD_DDOF = 0

PAPER_MODEL_LABELS = {  # hub names -> the papers' model labels
    "bert-base-uncased": "BERT-base",
    "bert-large-uncased": "BERT-large",
    "roberta-base": "RoBERTa-base",
    "roberta-large": "RoBERTa-large",
}
POOLING_LABELS = {"cls": "CLS", "mean": "Mean", "max": "Max", "prompt": "Prompt"}  # ours -> papers'


class SeedStats(NamedTuple):
    mean: float
    std: float
    n: int


def over_seeds(values, what="result", ddof=STD_DDOF):
    """Mean and std of one number over seeds; empty or non-finite values are an error naming
    `what`."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError(f"{what}: no runs to aggregate")
    bad = [i for i, v in enumerate(values) if not math.isfinite(v)]
    if bad:
        raise ValueError(
            f"{what}: run {bad[0]} of {len(values)} is {values[bad[0]]}; nothing non-finite is "
            "averaged"
        )
    return SeedStats(
        float(np.mean(values)),
        float(np.std(values, ddof=ddof)) if len(values) > ddof else math.nan,
        len(values),
    )


class SeedTable(NamedTuple):
    mean: pd.DataFrame
    std: pd.DataFrame
    n: pd.Series


def table_over_seeds(runs, columns, what="table", ddof=STD_DDOF):
    """{row label: [one list of `columns` values per seed]} -> SeedTable of mean, std and run count
    per row."""
    means, stds, counts = {}, {}, {}
    for label, per_seed in runs.items():
        if any(len(v) != len(columns) for v in per_seed):
            raise ValueError(f"{what} / {label}: every run needs {len(columns)} values ({columns})")
        stats = [
            over_seeds([v[j] for v in per_seed], f"{what} / {label} / {c}", ddof)
            for j, c in enumerate(columns)
        ]
        means[label], stds[label] = [s.mean for s in stats], [s.std for s in stats]
        counts[label] = len(per_seed)
    frame = lambda d: pd.DataFrame.from_dict(d, orient="index", columns=list(columns))  # noqa: E731
    return SeedTable(frame(means), frame(stds), pd.Series(counts, name="runs"))


def mean_pm_std(table, digits=2):
    """Display strings "mean ± std" (just the mean for a row of one run)."""

    def cell(m, s, n):
        return f"{m:.{digits}f}" if n < 2 else f"{m:.{digits}f} ± {s:.{digits}f}"

    return pd.DataFrame(
        {
            c: [cell(table.mean.at[i, c], table.std.at[i, c], table.n[i]) for i in table.mean.index]
            for c in table.mean.columns
        },
        index=table.mean.index,
    )


def reference_model(model):
    """(hub model whose paper rows stand beside ours, or None; a line saying so). The repository's
    mini-BERT and the offline all-MiniLM-L6-v2 stand in for bert-base-uncased; with
    stand-in models on (rehearsal) the line says ours is a random stand-in."""
    if paper_model_label(model) and models.is_standin(model):
        return str(model), (
            f"paper rows: {paper_model_label(model)} ({model}); ours: its tiny random stand-in "
            "(rehearsal): the structure is checked, the numbers mean nothing"
        )
    if paper_model_label(model):
        return str(model), f"paper rows: {paper_model_label(model)} ({model})"
    if model in models.OFFLINE_ALIASES:
        return "bert-base-uncased", (
            "paper rows: BERT-base, as context; the offline all-MiniLM-L6-v2 stands in for it "
            "(its vocabulary, 6 layers instead of 12; already tuned for similarity): no "
            "difference is taken"
        )
    if model in models.MINI_BERT_ALIASES:
        return "bert-base-uncased", (
            "paper rows: BERT-base, as context; the repository's raw mini-BERT stands in for it "
            "(its vocabulary and kind of MLM head, 4 layers of 128 pre-trained on 1.9M tokens of "
            "dictionary and NLI text, docs/mini_bert.md): no difference is taken"
        )
    return None, f"paper rows: none (the papers report no {model})"


def comparable(model, scale, paper_model=None):
    """Whether ours and the paper's rows can be differenced: the paper's own model (not a stand-in)
    under the paper's protocol. Otherwise the paper's rows are context beside ours (no diff).
    paper_model: the model the paper's rows are of (default: `model`, if the papers ran it)."""
    same = (
        str(model) == str(paper_model)
        if paper_model is not None
        else paper_model_label(model) is not None
    )
    return bool(scale["paper_protocol"]) and same and not models.is_standin(model)


def paper_model_label(model):
    """The papers' label of a hub model name ("bert-base-uncased" -> "BERT-base"), or None."""
    return PAPER_MODEL_LABELS.get(str(model))


def paper_row(table, model, *parts, exclude=()):
    """The key of `table` for `model` whose text also contains every one of `parts` and none of
    `exclude` (keys are strings or tuples of strings), or None when the paper has no such row (a
    model it did not run). The model label matches as a name: "BERT-base" never inside
    "RoBERTa-base"."""
    label = paper_model_label(model)
    if label is None:
        return None
    name = re.compile(rf"(?<![A-Za-z]){re.escape(label)}(?![A-Za-z-])")
    text = {k: " ".join(k) if isinstance(k, tuple) else k for k in table}
    found = [
        k
        for k, t in text.items()
        if name.search(t) and all(p in t for p in parts) and not any(x in t for x in exclude)
    ]
    if len(found) > 1:
        raise ValueError(
            f"{len(found)} paper rows match {model} {parts} (exclude {exclude}): {found}"
        )
    return found[0] if found else None


class Baselines(NamedTuple):
    """Notebook 01's rows of the model as loaded beside the paper's untrained baselines."""

    table: pd.DataFrame  # results.side_by_side: the paper's row above ours, per pooling
    reference: str  # the model whose paper rows stand beside ours
    note: str  # reference_model's line: whose rows, and why


def baselines(untrained, paper_table, untrained_rows, columns, model, scale):
    """The CLS vector and the averaged token embeddings of the model as loaded (untrained:
    {pooling: {metric: value}} for cls and mean) beside the paper's rows of those baselines in
    `paper_table` (DefSent's Table 3: STS, Table 4: SentEval), which it reports for BERT-base only
    (untrained_rows: {model: {pooling: row}}, DefSent's UNTRAINED_ROWS)."""
    reference, note = reference_model(model)
    keys = untrained_rows.get(reference, {})  # none for another model
    pairs = {
        "CLS vector": (keys.get("cls"), "cls"),
        "Avg. token embeddings": (keys.get("mean"), "mean"),
    }
    ours = pd.DataFrame(untrained).T[columns]
    paper = results.paper_table(paper_table, columns)
    compare = comparable(model, scale)
    return Baselines(results.side_by_side(paper, ours, pairs, compare=compare), reference, note)


def differences_table(
    rows, columns=("setting", "paper text", "official code (default)", 'variant="paper"')
):
    """A method's settings where the released code and the paper text differ, (setting, ...) rows
    as a DataFrame indexed by setting; a notebook shows it `whole`."""
    return pd.DataFrame(rows, columns=list(columns)).set_index(columns[0])


class whole:
    """A table displayed without cutting long cells to '...' (HTML in notebooks, plain text
    elsewhere)."""

    def __init__(self, df):
        self.df = df

    def _repr_html_(self):
        return self.df.to_html()

    def __repr__(self):
        return self.df.to_string()
