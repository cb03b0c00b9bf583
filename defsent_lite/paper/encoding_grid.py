"""DefSent+'s Table 8, the encoding grid (pooling x entry pooling, the 1st Training), beside the
paper's: it needs only the grid's STS scores, so it lives with the papers' numbers."""

from typing import NamedTuple

import pandas as pd

from defsent_lite.paper import aggregate, results
from defsent_lite.paper import defsentplus as paper_defsentplus


class Grid(NamedTuple):
    """Table 8, the encoding grid: our STS averages and the paper's table with our best row."""

    ours: pd.DataFrame  # STS average per combination (rows) and inference pooling, and the best
    table: pd.DataFrame  # the paper's Table 8, our best row below (and its difference, compared)
    note: str  # aggregate.reference_model's line: whose rows, and why


def table8(grid, model, scale):
    """Table 8 (mean over runs, best inference pooling): grid is {combination: pst.seed_table of
    its 1st Training}; the difference from the paper's row only for its own model and protocol."""
    ours = pd.DataFrame({combo: t.mean["avg"] for combo, t in grid.items()}).T
    ours["best"] = ours.max(axis=1)
    reference, note = aggregate.reference_model(model)
    paper = results.paper_table(paper_defsentplus.TABLE8, paper_defsentplus.TABLE8_COLS)
    key = aggregate.paper_row(paper_defsentplus.TABLE8, reference)
    mine = ours["best"].reindex(paper.columns)
    rows = {f"ours: {model.split('/')[-1]}": mine}
    if key and aggregate.comparable(model, scale):
        rows[f"ours - {key}"] = mine - paper.loc[key]
    return Grid(ours, pd.concat([paper, pd.DataFrame(rows).T]).round(2), note)
