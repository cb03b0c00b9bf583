"""GaussCSE's Appendix E grid (batch size x learning rate, SNLI-dev AUPRC): its trainings (cached
runs of gausscse_runs), the grid beside the paper's Table 5, its best cell named, printed and
saved (notebook 33)."""

import numpy as np
import pandas as pd

from defsent_lite.paper import gausscse as paper_gausscse
from defsent_lite.paper import results
from defsent_lite.repro import gausscse_runs
from defsent_lite.repro.gausscse_settings import paper_hyperparameters


def grid_cells(base, setting, batch_sizes, lrs):
    """grid_search's trainings: one cfg per (batch size, lr) cell, the test sets not scored."""
    return {
        (b, lr): dict(base, setting=setting, batch_size=b, lr=lr, evaluate_tests=False)
        for b in batch_sizes
        for lr in lrs
    }


def grid_search(
    base, setting, batch_sizes=(16, 32, 64, 128), lrs=tuple(paper_gausscse.GRID_LRS), data_dir=None
):
    """Appendix E: SNLI-dev AUPRC x100 of the best checkpoint for each batch size (rows) and lr
    (columns); the test sets are not scored (the grid selects on SNLI dev only)."""
    cells = {
        cell: 100 * gausscse_runs.run(cfg, data_dir)["dev_auprc"]
        for cell, cfg in grid_cells(base, setting, batch_sizes, lrs).items()
    }
    grid = pd.Series(cells).unstack().rename_axis(index="batch size", columns="lr")
    return grid.rename(columns=lambda lr: f"{lr:g}")


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


def save_grid(grid, model, path, meta):
    """Print our grid (and the paper's Table 5 rows for the model, if it reports them) and save
    it."""
    print("SNLI-dev AUPRC x100 (ours):", grid.round(2).to_string(), sep="\n")
    paper = {b: row for (m, b), row in paper_gausscse.TABLE5.items() if m == model}
    if paper:
        lrs = [f"{lr:g}" for lr in paper_gausscse.GRID_LRS]
        print("paper, Table 5:", pd.DataFrame(paper, index=lrs).T.to_string(), sep="\n")
    b, lr = grid.stack().idxmax()
    print(f"best: batch size {b}, lr {lr}; saved", results.save_csv(grid.round(2), path, **meta))
    return grid
