"""Notebook 40's tables and figure from a comparison.Comparison: the protocol card, what differs
between the methods, every benchmark over the seeds (mean, std, min, max), the differences larger
than the seeds' spread, and a row of dots per method."""

import os
import platform
import textwrap

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from defsent_lite.evaluation import senteval
from defsent_lite.paper import results
from defsent_lite.repro.comparison import DIRECTION, METHODS

BENCHMARKS = {  # a column of the summary: the metrics it averages
    "STS avg": ["avg STS"],
    "SentEval avg": ["avg transfer"],
    "NLI AUPRC avg": ["SNLI AUPRC", "MNLI AUPRC", "SICK AUPRC"],
    "direction avg": ["SNLI direction", "MNLI direction", "SICK direction"],
}


def protocol_card(c, scale):
    """What produced the table, as text printed above it: encoder, files and counts, pooling,
    similarity, aggregation, selection, seeds, updates, libraries, machine."""
    s, counts = c.setup, c.counts
    sts_counts = ", ".join(
        f"{k.split()[0]} {v:,}" for k, v in counts.items() if "STS" in k or "SICKR" in k
    )
    nli_counts = ", ".join(f"{k.split()[0]} {v:,}" for k, v in counts.items() if "NLI pairs" in k)
    direction = ", ".join(
        f"{k.split()[0]} {v:,} (length baseline {c.length_baseline[k.split()[0]]:.2f})"
        for k, v in counts.items()
        if "direction" in k
    )
    card = {
        "encoder": s["model"],
        "seeds": ", ".join(map(str, s["seeds"])),
        "updates per training": f"{s['steps']:,} of batch {s['batch_size']} (PST: each of its 3 "
        "trainings, each from the original weights)",
        "STS (raw files)": f"Spearman x100 of cosine, 'all' (each year's subsets concatenated); "
        f"pairs: {sts_counts}",
        "SentEval": f"MR, CR, SUBJ, MPQA, SST2, TREC, MRPC; {senteval.transfer_text(scale)}, "
        f"classifier {scale['transfer_classifier']}",
        "NLI": f"AUPRC x100 (scikit-learn's curve) of sim(hypothesis||premise); pairs: {nli_counts}",
        "entailment direction": f"sim(B||A) > sim(A||B) over the entailment pairs: {direction}",
        "pooling and similarity": "per method (the table below)",
        "selection": "the last step for every method; a paper's own rule beside it (own rule)",
        "libraries": ", ".join(f"{k} {v}" for k, v in results.versions().items()),
        "machine": f"{platform.machine()} {platform.processor() or ''}, {os.cpu_count()} CPUs, "
        f"{torch.get_num_threads()} torch threads, "
        f"{torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU'}",
    }
    return "\n".join(
        textwrap.fill(f"{k + ':':<23} {v}", 100, subsequent_indent=" " * 24)
        for k, v in card.items()
    )


def differences():
    """What differs between the rows (each method's own data, loss, pooling, rate, rule)."""
    table = pd.DataFrame([m._asdict() for m in METHODS.values()], index=list(METHODS))
    return table.drop(columns="training")


def benchmark_values(c):
    """{benchmark: {row: [value per seed]}}: each benchmark the mean of its metrics; a row the
    benchmark does not apply to is left out."""
    out = {}
    for bench, metrics in BENCHMARKS.items():
        out[bench] = {
            row: [float(np.mean([s[m] for m in metrics])) for s in runs]
            for row, runs in c.scores.items()
            if all(m in runs[0] for m in metrics)
        }
    return out


def summary(c, scale_name):
    """Rows: methods; a column per benchmark, "mean ± std (min to max)" over the seeds (the raw
    encoder: its one value), then the own rule's STS average and step (means over the seeds). The
    numbers are saved as results/40_comparison.csv, a row per method and quantity that applies."""
    values = benchmark_values(c)
    for row, own in c.own.items():
        values.setdefault("own rule STS avg", {})[row] = [sts for _, sts in own]
        if METHODS[row].training is not None:
            values.setdefault("own rule step", {})[row] = [float(step) for step, _ in own]
    numbers = [
        dict(method=row, quantity=q, **{k: f(v) for k, f in STATS.items()}, seeds=len(v))
        for q, rows in values.items()
        for row, v in rows.items()
    ]
    meta = dict(model=c.setup["model"], scale=scale_name, seeds=c.setup["seeds"])
    print("saved", results.save_csv(pd.DataFrame(numbers).round(4), "40_comparison.csv", **meta))
    shown = {
        row: {
            q: f"{np.mean(v):.2f} ± {np.std(v):.2f} ({min(v):.2f} to {max(v):.2f})"
            if METHODS[row].training and q in BENCHMARKS
            else f"{np.mean(v):.{0 if q == 'own rule step' else 2}f}"
            for q, rows in values.items()
            for r, v in rows.items()
            if r == row
        }
        for row in METHODS
    }
    columns = [*BENCHMARKS, "own rule STS avg", "own rule step"]
    return pd.DataFrame.from_dict(shown, orient="index").reindex(columns=columns).fillna("-")


STATS = {"mean": np.mean, "std": np.std, "min": np.min, "max": np.max}


def per_metric(c, digits=2):
    """Every metric's mean over the seeds (STS and SentEval per task, NLI and direction per set),
    a row per metric and a column per method."""
    metrics = list(c.scores["raw encoder CLS"][0]) + [
        m for m in c.scores[DIRECTION][0] if "direction" in m
    ]
    rows = {
        row: {m: np.mean([s[m] for s in runs]) if m in runs[0] else np.nan for m in metrics}
        for row, runs in c.scores.items()
    }
    return pd.DataFrame.from_dict(rows, orient="index")[metrics].T.round(digits)


MIN_SEEDS = (
    3  # fewer seeds name no difference: two seeds' ranges miss each other a third of the time
)


def clear_differences(c, min_seeds=MIN_SEEDS):
    """The pairs of rows a benchmark tells apart: every seed of one above every seed of the other,
    and the gap between their means larger than either row's range over the seeds (the raw encoder,
    untrained, has one value and no range). The only differences the text names; none with fewer
    than min_seeds seeds."""
    found = []
    for bench, rows in benchmark_values(c).items():
        for a, va in rows.items():
            for b, vb in rows.items():
                enough = all(
                    len(v) >= min_seeds or METHODS[r].training is None
                    for r, v in ((a, va), (b, vb))
                )
                gap, spread = np.mean(va) - np.mean(vb), max(np.ptp(va), np.ptp(vb))
                if a != b and enough and min(va) > max(vb) and gap > spread:
                    found.append((bench, a, b, gap, spread))
    columns = ["benchmark", "higher", "lower", "mean gap", "larger range"]
    return (
        pd.DataFrame(found, columns=columns)
        .sort_values(["benchmark", "mean gap"], ascending=[True, False])
        .round(2)
        .reset_index(drop=True)
    )


def spread_figure(c):
    """One panel per benchmark, a row per method, a dot per seed: a difference shows where the rows'
    dots do not overlap (saved as results/40_spread.png)."""
    values = benchmark_values(c)
    fig, axes = plt.subplots(1, len(values), figsize=(4 * len(values), 0.35 * len(METHODS) + 1.2))
    for ax, (bench, rows) in zip(axes, values.items()):
        for y, row in enumerate(METHODS):
            if row in rows:
                ax.plot(rows[row], [y] * len(rows[row]), "o", alpha=0.7, color=f"C{y}")
        ax.set(title=bench, yticks=range(len(METHODS)), ylim=(len(METHODS) - 0.5, -0.5))
        ax.set_yticklabels(list(METHODS) if ax is axes[0] else [])
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    meta = dict(model=c.setup["model"], seeds=c.setup["seeds"])
    print("saved", results.save_figure(fig, "40_spread.png", **meta))
    return fig
