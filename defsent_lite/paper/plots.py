"""Ours minus the paper's, as a figure: one dot per number of a side_by_side table (the figures of
a method at work, entry spaces, loss curves, length ratios, are method_plots')."""

import textwrap

import matplotlib.pyplot as plt
import numpy as np


def ours_minus_paper(table, columns, title="", unit="points", label_width=36):
    """Dot plot of the 'diff' rows (ours - paper) of a side_by_side table: one line per row, one
    marker per column, a line at 0; rows the paper lacks (NaN) are listed as such. Row names
    longer than label_width characters wrap, so the plot keeps its width. None for a table
    without 'diff' rows (the paper's rows are context: there is no difference to draw)."""
    if "diff" not in table.index.get_level_values(-1):
        return None
    rows = list(dict.fromkeys(table.index.get_level_values(0)))
    labels = [
        textwrap.fill(
            str(r)
            if np.isfinite(table.loc[(r, "diff"), columns].astype(float)).any()
            else f"{r} (no paper row)",
            label_width,
            break_on_hyphens=False,
        )
        for r in rows
    ]
    lines = sum(label.count("\n") + 1 for label in labels)
    fig, ax = plt.subplots(
        figsize=(7.5, 1.2 + 0.3 * max(lines, len(rows) * max(1, len(columns) / 6)))
    )
    ys = np.arange(len(rows))[::-1]
    offsets = np.linspace(-0.25, 0.25, len(columns)) if len(columns) > 1 else [0.0]
    for offset, col in zip(offsets, columns):
        diffs = [float(table.loc[(r, "diff"), col]) for r in rows]
        ax.scatter(diffs, ys + offset, s=18, label=col, marker="o" if col == "avg" else ".")
    ax.axvline(0, color="k", lw=0.8)
    ax.set_yticks(ys, labels, fontsize=8)
    ax.set_ylim(-0.6, len(rows) - 0.4)
    ax.set_xlabel(f"ours - paper ({unit})")
    ax.set_title(textwrap.fill(title, 80, break_on_hyphens=False), fontsize=10)
    if len(columns) > 1:
        ax.legend(fontsize=7, bbox_to_anchor=(1.01, 1), loc="upper left")
    fig.tight_layout()
    return fig
