"""DefSent+ on data-augmented checkpoints (Sec. 4.2): which paper rows a checkpoint has (Tables 3,
5, 6), and our rows before and after PST beside them."""
from typing import NamedTuple

import pandas as pd

from . import paper_defsentplus, pst, results
from .results import STS_COLS

FAMILIES = {"simcse": "SIMCSE", "snscse": "SNCSE"}   # label prefix -> Table 3's name of the checkpoint


class Release(NamedTuple):
    checkpoint: str      # hub name
    label: str           # the paper's, e.g. "simcse-BERT-base"
    table3_key: str      # the checkpoint's own row of Table 3
    table6_key: str      # the released DefSent+ encoder's row of Table 6 (mean of 10 runs)
    combination: tuple   # (pooling, entry pooling) of that encoder
    lrs: tuple           # Table 5: one rate per PST step

    @property
    def steps(self):
        return len(self.lrs)


def release(checkpoint):
    """The paper's rows for a data-augmented checkpoint (hub name); an unknown one is an error."""
    label = paper_defsentplus.DATA_AUGMENTED.get(str(checkpoint))
    if label is None:
        raise ValueError(f"no DefSent+ rows for checkpoint {checkpoint!r}; the tables have: "
                         f"{', '.join(paper_defsentplus.DATA_AUGMENTED)}")
    family, _, model = label.partition("-")
    table6_key, combination, _ = paper_defsentplus.released_row(label)
    return Release(str(checkpoint), label, f"{FAMILIES[family]} {model}", table6_key, combination,
                   tuple(paper_defsentplus.TABLE5[label]))


def rows(untrained, steps):
    """(our STS rows, best pooling per row, runs per row): the checkpoint itself under its best
    pooling, then each PST step's mean over seeds under the pooling with the best mean."""
    table, poolings, counts = {}, {}, {}
    poolings["checkpoint"], table["checkpoint"] = pst.best_pooling_scores(untrained)
    for st in steps:
        label = f"DefSent+ {pst.ordinal(st['step'])} Training"
        seed_table = pst.seed_table(st, "plain")
        poolings[label], mean, _ = pst.best_pooling_row(seed_table)
        table[label], counts[label] = mean.tolist(), int(seed_table.n.iloc[0])
    return pd.DataFrame.from_dict(table, orient="index", columns=STS_COLS), poolings, counts


def beside_paper(ours, rel):
    """Side-by-side with the paper: the checkpoint beside its Table 3 row, our last PST step beside
    Table 6's released encoder (its step named where it differs), earlier steps beside nothing."""
    paper = results.paper_table({rel.table3_key: paper_defsentplus.TABLE3[rel.table3_key],
                                 rel.table6_key: paper_defsentplus.TABLE6[rel.table6_key]}, STS_COLS)
    last = ours.index[-1]
    pairs = {f"checkpoint vs Table 3: {rel.table3_key}": (rel.table3_key, "checkpoint")}
    for label in ours.index[1:]:
        pairs[f"{label} vs Table 6: {rel.table6_key}" if label == last else label] = (
            rel.table6_key if label == last else None, label)
    return results.side_by_side(paper, ours, pairs)
