"""Matplotlib figures: paper-vs-ours bars, DefSent+ entry-space views, loss curves."""
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


def entry_space_views(views, titles, kinds=("svd", "pca_whitened")):
    """DefSent+ Figures 1-2: one column per entry space, rows = 2-d SVD (uncentered) and whitened PCA."""
    labels = {"svd": "SVD (uncentered)", "pca_whitened": "PCA, whitened"}
    fig, axes = plt.subplots(len(kinds), len(views), figsize=(3.2 * len(views), 3.0 * len(kinds)), squeeze=False)
    for j, (v, title) in enumerate(zip(views, titles)):
        for i, kind in enumerate(kinds):
            xy = np.asarray(v[kind])
            ax = axes[i][j]
            ax.scatter(xy[:, 0], xy[:, 1], s=2, alpha=0.4)
            ax.set_title(f"{title}\n{labels[kind]}" if i == 0 else labels[kind], fontsize=9)
            if kind == "pca_whitened":
                ax.add_patch(plt.Circle((0, 0), 2.0, fill=False, ls=":", color="k"))  # 2 sd
                ax.set_aspect("equal", "datalim")
    fig.tight_layout()
    return fig


def loss_curves(curves, chance=None, title="training loss"):
    """Loss per logged step for each labelled run; a dotted line at the chance loss log(n)."""
    fig, ax = plt.subplots(figsize=(5, 3))
    for label, ys in curves.items():
        ax.plot(np.linspace(0, 1, len(ys)), ys, label=label)
    if chance is not None:
        ax.axhline(chance, ls=":", color="k", label="chance log(entries)")
    ax.set_xlabel("fraction of the epoch")
    ax.set_ylabel("cross-entropy")
    ax.set_title(title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
