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
from defsent_lite.paper import defsent as paper_defsent
from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.paper import gausscse as paper_gausscse
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


def differences(c):
    """What differs between the rows (each method's own data, loss, pooling, rate, rule); the rates
    are the run's (its scale's `compare_rates`)."""
    rates = c.setup["rates"]

    def rate(row, training):
        if training is None:
            return "-"
        if training == "DefSent+":  # PST's rows: its 1st Training's rate, or all three
            return ", ".join(f"{r:.3g}" for r in rates[training][: 1 if "1st" in row else None])
        return f"{rates[training]:.3g}"

    table = pd.DataFrame([m._asdict() for m in METHODS.values()], index=list(METHODS))
    table.insert(5, "lr", [rate(row, m.training) for row, m in METHODS.items()])
    return table.drop(columns="training")


DEFSENT = "DefSent Table {}: 1 epoch at batch 16, its last step, 10 seeds' mean"
DSP = "DefSent+ Table {}: PST on dataset a at batch 32, 10 runs' mean"
GAUSSCSE = "GaussCSE Table {}: SNLI+MNLI at batch 16, best SNLI-dev AUPRC, 5 seeds' mean"
NLI_AUPRC = slice(1, None, 2)  # GaussCSE Table 3's rows: (accuracy, AUPRC) per test set
# Each row's published BERT-base numbers and the protocol that produced them: context beside ours,
# never a difference (another protocol: its own data size, batch, steps, seeds and rule)
PUBLISHED = {
    "DefSent": {
        "STS avg": (paper_defsent.TABLE8[("BERT-base", "Mean")][-1], DEFSENT.format(8)),
        "SentEval avg": (paper_defsent.TABLE9[("BERT-base", "Mean")][-1], DEFSENT.format(9)),
    },
    "DefSent+ 1st": {
        "STS avg": (
            paper_defsentplus.TABLE2["DefSent+ BERT-base 1st-(CLS,AMP)-a"][-1],
            DSP.format(2) + ", its 1st Training",
        ),
    },
    "DefSent+ PST": {
        "STS avg": (
            paper_defsentplus.TABLE2["DefSent+ BERT-base 3rd-(CLS,AMP)-a"][-1],
            DSP.format(2) + ", its 3rd Training",
        ),
        "SentEval avg": (
            paper_defsentplus.TABLE4["DefSent+ BERT-base(ICA) 3rd-(CLS,AMP)-a"][-1],
            "DefSent+ Table 4: its 3rd Training, after ICA",
        ),
    },
    "GaussCSE KL": {
        "NLI AUPRC avg": (
            float(np.mean(paper_gausscse.TABLE3[("BERT-base", "ent+con+rev")][NLI_AUPRC])),
            GAUSSCSE.format(3),
        ),
        "direction avg": (
            paper_gausscse.TABLE2[("BERT-base", "ent+con+rev")][-1],
            GAUSSCSE.format(2),
        ),
    },
    "unsup SimCSE": {
        "STS avg": (
            paper_defsentplus.TABLE3["SIMCSE BERT-base"][-1],
            "DefSent+ Table 3: SimCSE's released encoder",
        ),
        "SentEval avg": (
            paper_defsentplus.TABLE4["SimCSE BERT-base"][-1],
            "DefSent+ Table 4: SimCSE's released encoder",
        ),
    },
    "sup SimCSE": {
        "NLI AUPRC avg": (
            float(np.mean(paper_gausscse.TABLE3["SimCSE (BERT-base)"][NLI_AUPRC])),
            "GaussCSE Table 3: supervised SimCSE on BERT-base (its repository)",
        ),
    },
}


def beside_published(c):
    """Our mean over the seeds beside each row's published BERT-base number and the protocol that
    made it: context, not a difference (the protocols differ; at smoke and cpu the encoder too)."""
    values = benchmark_values(c)
    rows = [
        (row, bench, round(float(np.mean(values[bench][row])), 2), round(number, 2), how)
        for row, benches in PUBLISHED.items()
        for bench, (number, how) in benches.items()
    ]
    ours = f"ours ({c.setup['model']}, {len(c.setup['seeds'])} seeds' mean)"
    columns = ["method", "benchmark", ours, "published (BERT-base)", "published under"]
    return pd.DataFrame(rows, columns=columns).set_index(["method", "benchmark"])


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
    dots do not overlap; the direction panel has the length baseline (saved as
    results/40_spread.png)."""
    values = benchmark_values(c)
    fig, axes = plt.subplots(1, len(values), figsize=(4 * len(values), 0.35 * len(METHODS) + 1.2))
    for ax, (bench, rows) in zip(axes, values.items()):
        for y, row in enumerate(METHODS):
            if row in rows:
                ax.plot(rows[row], [y] * len(rows[row]), "o", alpha=0.7, color=f"C{y}")
        if bench == "direction avg":  # "the longer sentence is entailed", over the same sets
            baseline = np.mean(list(c.length_baseline.values()))
            ax.axvline(baseline, color="grey", ls="--", label=f"length baseline {baseline:.1f}")
            ax.legend(loc="lower right", fontsize=8)
        ax.set(title=bench, yticks=range(len(METHODS)), ylim=(len(METHODS) - 0.5, -0.5))
        ax.set_yticklabels(list(METHODS) if ax is axes[0] else [])
        ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    meta = dict(model=c.setup["model"], seeds=c.setup["seeds"])
    print("saved", results.save_figure(fig, "40_spread.png", **meta))
    return fig
