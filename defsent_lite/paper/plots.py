"""Figures: ours minus the paper's, one dot per number of a side_by_side table; and the methods at
work: the dictionaries' definitions per entry, DefSent+'s entry spaces (Figures 1-2) and PST's
loss curves, GaussCSE's length ratios (Figure 2)."""

import textwrap

import matplotlib.pyplot as plt
import numpy as np

from defsent_lite.paper import results


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


def save_ours_minus_paper(table, columns, what, model, reference, name, /, unit="points", **meta):
    """ours_minus_paper titled "`what`: ours (`model`) minus the paper's (`reference`)", saved as
    `name` in the results folder with the provenance `meta` of its CSV; nothing where the paper's
    rows are context (no difference to draw)."""
    title = f"{what}: ours ({model.split('/')[-1]}) minus the paper's ({reference})"
    fig = ours_minus_paper(table, columns, title, unit)
    if fig is not None:
        print("saved", results.save_figure(fig, name, **meta))


# ---------------------------------------------------------------- the methods at work


def entry_space_views(views, titles, kinds=("svd", "pca_whitened"), heading=None):
    """DefSent+ Figures 1-2 and 4-8: one column per entry space, rows = 2-d SVD (uncentered) and
    whitened PCA; `heading` above them (the model, and whether it stands in for the paper's)."""
    labels = {"svd": "SVD (uncentered)", "pca_whitened": "PCA, whitened"}
    fig, axes = plt.subplots(
        len(kinds), len(views), figsize=(3.2 * len(views), 3.0 * len(kinds)), squeeze=False
    )
    for j, (v, title) in enumerate(zip(views, titles)):
        for i, kind in enumerate(kinds):
            xy = np.asarray(v[kind])
            ax = axes[i][j]
            ax.scatter(xy[:, 0], xy[:, 1], s=2, alpha=0.4)
            ax.set_title(f"{title}\n{labels[kind]}" if i == 0 else labels[kind], fontsize=9)
            if kind == "pca_whitened":
                ax.add_patch(plt.Circle((0, 0), 2.0, fill=False, ls=":", color="k"))  # 2 sd
                ax.set_aspect("equal", "datalim")
    if heading:
        fig.suptitle(heading, fontsize=10)
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


def length_ratio_histograms(ratios, bins=np.linspace(-1.5, 3, 46)):
    """GaussCSE Figure 2: one histogram per test set of log(len(entailing) / len(entailed))."""
    fig, axes = plt.subplots(
        1, len(ratios), figsize=(4 * len(ratios), 3), sharex=True, squeeze=False
    )
    for ax, (name, r) in zip(axes[0], ratios.items()):
        ax.hist(r, bins=bins)
        ax.axvline(0, color="k", ls=":")
        ax.set_title(f"{name} ({len(r)} entailment pairs)")
        ax.set_xlabel("log(len(entailing) / len(entailed))")
    axes[0][0].set_ylabel("pairs")
    fig.tight_layout()
    return fig


def definitions_per_entry(ids_by_dataset, cap=20):
    """Histogram (log scale) of the number of definitions per entry of each dataset; the last
    bin holds `cap` or more, the legend each dataset's median."""
    fig, ax = plt.subplots(figsize=(5, 3))
    for name, ids in ids_by_dataset.items():
        per_entry = np.bincount(ids)
        ax.hist(
            np.clip(per_entry, 1, cap),
            bins=np.arange(1, cap + 2) - 0.5,
            histtype="step",
            label=f"{name} (median {np.median(per_entry):.0f})",
        )
    ax.set_xlabel(f"definitions per entry ({cap} = {cap} or more)")
    ax.set_ylabel("entries")
    ax.set_yscale("log")
    ax.legend()
    fig.tight_layout()
    return fig
