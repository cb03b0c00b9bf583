"""Entailment direction by length (GaussCSE, Figure 2): log(len(entailing) / len(entailed)) of a
test set's direction pairs, and a run's direction accuracy per bin of that ratio (notebook 32)."""

import numpy as np
import pandas as pd

from defsent_lite.evaluation import nli
from defsent_lite.repro.gausscse_data import direction_pairs


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
    entailing, entailed = direction_pairs(name, rows, sick_full)[:2]
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
