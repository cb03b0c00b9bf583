"""Matplotlib figures: paper-vs-ours bars (more to come: entry-space scatters, histograms)."""
import matplotlib.pyplot as plt
import numpy as np


def paper_vs_ours_bars(table, columns, title=""):
    """Grouped bars of 'paper' and 'ours' for each row of a side_by_side table."""
    rows = list(dict.fromkeys(table.index.get_level_values(0)))
    fig, axes = plt.subplots(1, len(rows), figsize=(4.5 * len(rows), 3.2), squeeze=False)
    x = np.arange(len(columns))
    for ax, row in zip(axes[0], rows):
        for k, source in enumerate(("paper", "ours")):
            ax.bar(x + (k - 0.5) * 0.4, table.loc[(row, source), columns].astype(float), 0.4, label=source)
        ax.set_xticks(x, columns, rotation=45, ha="right")
        ax.set_title(row, fontsize=10)
    axes[0][0].legend()
    fig.suptitle(title)
    fig.tight_layout()
    return fig
