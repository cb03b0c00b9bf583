"""GaussCSE's tables, from the runs of gausscse: Tables 1-4 (NLI accuracy / AUPRC, entailment
direction with the length baseline) beside the paper's rows, one call each; McNemar's test,
direction accuracy by length ratio (Figure 2's pairs), the Appendix E grid beside Table 5; the
CLI's printing and CSVs."""

import argparse
import itertools
from typing import NamedTuple

import numpy as np
import pandas as pd

from defsent_lite import gausscse
from defsent_lite.runtime import config
from defsent_lite.evaluation import nli
from defsent_lite.paper import aggregate, results
from defsent_lite.paper import gausscse as paper_gausscse
from defsent_lite.repro import gausscse_baseline, gausscse_data, gausscse_runs, gausscse_settings
from defsent_lite.repro.gausscse_data import NLI_TEST_SETS, direction_pairs, length_baselines
from defsent_lite.repro.gausscse_settings import paper_hyperparameters


def tables(runs, tests, sick_full, sick_pairs="one-way"):
    """(NLI table: accuracy and AUPRC per test set, direction table with the length baseline) as
    DataFrames."""
    nli_rows = {
        s: {
            f"{t} {m}": r["nli"][t][k]
            for t in NLI_TEST_SETS
            for m, k in (("acc", "acc"), ("AUPRC", "auprc"))
        }
        for s, r in runs.items()
    }
    direction = {
        "Length-baseline": length_baselines(tests, sick_full, sick_pairs),
        **{s: r["direction"] for s, r in runs.items()},
    }
    d = pd.DataFrame(direction).T[list(NLI_TEST_SETS)]
    d["avg"] = d.mean(axis=1)
    return pd.DataFrame(nli_rows).T, d


def baseline_row(baseline):
    """gausscse_baseline.cosine_baseline's scores as a row of the NLI table (its columns)."""
    return [baseline["nli"][t][k] for t in NLI_TEST_SETS for k in ("acc", "auprc")]


class Beside(NamedTuple):
    """A GaussCSE table of ours beside the paper's rows of the model, and what it was built from."""

    table: pd.DataFrame  # results.side_by_side: the paper's row above ours, per pair
    ours: pd.DataFrame  # our rows
    whole_pairs: (
        dict  # {our row: the paper's row (of any model) it stands below in the whole table}
    )
    reference: str  # the model whose paper rows stand beside ours
    note: str  # aggregate.reference_model's line: whose rows, and why


def table3(runs, baseline, baseline_encoder, tests, sick_full, model, scale):
    """Tables 1/3: NLI accuracy (SNLI-dev threshold) and AUPRC per loss setting, with the cosine
    baseline's row (baseline: gausscse_baseline.cosine_baseline's scores of baseline_encoder, a
    (model, pooling)), beside the paper's rows of the model; SimCSE's row only beside SimCSE's."""
    ours, _ = tables(runs, tests, sick_full)
    encoder, pooling = baseline_encoder
    cosine = f"cosine baseline: {encoder.split('/')[-1]} ({pooling})"
    ours.loc[cosine] = baseline_row(baseline)
    reference, note = aggregate.reference_model(model)
    label = aggregate.paper_model_label(reference)
    rows = paper_gausscse.rows_for(paper_gausscse.TABLE3, label)
    paper = results.paper_table(rows, paper_gausscse.NLI_COLS)
    simcse = tuple(baseline_encoder) == gausscse_baseline.SIMCSE_BASELINE  # the paper's baseline
    pairs = {cosine: ("SimCSE (BERT-base)" if simcse else None, cosine)}
    pairs.update({s: (s if s in paper.index else None, s) for s in gausscse.LOSS_SETTINGS})
    table = results.side_by_side(paper, ours, pairs, compare=aggregate.comparable(model, scale))
    whole = {s: (label, s) for s in gausscse.LOSS_SETTINGS}
    whole[cosine] = "SimCSE (BERT-base)" if simcse else None
    return Beside(table, ours, whole, reference, note)


def whole_table3(t3):
    """The paper's whole Table 3 (every model and the SimCSE baseline), each of ours below the row
    it stands beside (t3: table3's result)."""
    return results.whole_paper_table(
        paper_gausscse.TABLE3, paper_gausscse.NLI_COLS, t3.ours, t3.whole_pairs
    )


def table1(whole3):
    """Table 1: Table 3's accuracy columns with their average (whole3: whole_table3's result)."""
    table = whole3[[c for c in paper_gausscse.NLI_COLS if c.endswith("acc")]].copy()
    table["avg"] = table.mean(axis=1)
    return table


def table2(runs, tests, sick_full, sick_pairs, model, scale):
    """Tables 2/4: entailment-direction accuracy per loss setting and the length baseline (on
    sick_pairs' reading of SICK), beside the paper's rows of the model."""
    _, ours = tables(runs, tests, sick_full, sick_pairs)
    reference, note = aggregate.reference_model(model)
    label = aggregate.paper_model_label(reference)
    paper = results.paper_table(
        paper_gausscse.rows_for(paper_gausscse.TABLE2, label), paper_gausscse.DIR_COLS
    )
    pairs = {k: (k if k in paper.index else None, k) for k in ours.index}  # row: (paper's, ours)
    table = results.side_by_side(paper, ours, pairs, compare=aggregate.comparable(model, scale))
    whole = {}
    for row in ours.index:
        key = (label, row) if (label, row) in paper_gausscse.TABLE2 else row
        whole[row] = key if key in paper_gausscse.TABLE2 else None
    return Beside(table, ours, whole, reference, note)


def whole_table2(t2):
    """The paper's whole Table 2 / 4 (every model's block and the length baseline), each of ours
    below the row it stands beside (t2: table2's result)."""
    return results.whole_paper_table(
        paper_gausscse.TABLE2, paper_gausscse.DIR_COLS, t2.ours, t2.whole_pairs
    )


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


def mcnemar_table(runs):
    """McNemar's test (exact, p < 0.05) between every two loss settings, per task and test set, as
    the paper does."""
    rows = []
    for task, key in (("direction", "direction_correct"), ("NLI", "nli_correct")):
        for a, b in itertools.combinations([s for s in gausscse.LOSS_SETTINGS if s in runs], 2):
            for name in NLI_TEST_SETS:
                nb, nc, p = nli.mcnemar(runs[a][key][name], runs[b][key][name])
                rows.append(
                    dict(
                        task=task,
                        pair=f"{a} vs {b}",
                        set=name,
                        b=nb,
                        c=nc,
                        p=float(f"{p:.3g}"),
                        significant=p < 0.05,
                    )
                )
    return pd.DataFrame(rows)


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


def save_tables(runs, eval_sets, out, meta):
    """Print Tables 3 and 2 (ours beside the paper's rows of meta["model"]) and McNemar's p-values;
    save them as CSVs."""
    _, tests, sick_full = eval_sets
    nli_table, dir_table = tables(runs, tests, sick_full)
    label = aggregate.paper_model_label(aggregate.reference_model(meta["model"])[0])
    paper_nli = results.paper_table(
        paper_gausscse.rows_for(paper_gausscse.TABLE3, label), paper_gausscse.NLI_COLS
    )
    paper_dir = results.paper_table(
        paper_gausscse.rows_for(paper_gausscse.TABLE2, label), paper_gausscse.DIR_COLS
    )
    mc = mcnemar_table(runs)
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        for name, paper, ours in (
            ("nli", paper_nli, nli_table),
            ("direction", paper_dir, dir_table),
        ):
            both = results.side_by_side(
                paper, ours, {k: (k if k in paper.index else None, k) for k in ours.index}
            )
            print(
                both.to_string(),
                "saved",
                results.save_csv(ours.round(2), f"{out}_{name}.csv", **meta),
                sep="\n",
            )
        print(
            mc.pivot_table(index=["task", "pair"], columns="set", values="p").to_string(),
            "saved",
            results.save_csv(mc, f"{out}_mcnemar.csv", **meta),
            sep="\n",
        )
        three_way = {"shorter": (-np.inf, -1e-9), "equal": (-1e-9, 1e-9), "longer": (1e-9, np.inf)}
        by_length = pd.concat(
            {s: direction_by_length(r, tests, sick_full, three_way) for s, r in runs.items()}
        )
        print(
            "direction accuracy by length of the entailing sentence (characters):",
            by_length.to_string(),
            "saved",
            results.save_csv(by_length, f"{out}_direction_by_length.csv", **meta),
            sep="\n",
        )
    for s, r in runs.items():
        print(
            s,
            f"steps {r['steps']}, best step {r['best_step']}, dev AUPRC {100 * r['dev_auprc']:.2f}, threshold {r['threshold']:.4f}",
        )


def main(argv=None):
    """python -m defsent_lite.repro.gausscse_tables --scale cpu: the four loss settings
    (seed-averaged), NLI, direction and McNemar tables saved as CSV; --grid SETTING: the Appendix E
    grid on SNLI dev."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--scale", default="cpu")
    ap.add_argument("--model", help="default: the scale's model")
    ap.add_argument(
        "--variant",
        default="official",
        choices=list(gausscse_settings.VARIANTS),
        help="official code (default) or paper text",
    )
    ap.add_argument("--reduction", choices=["sum", "mean_per_dim"], help="default: the variant's")
    ap.add_argument(
        "--seeds", nargs="+", type=int, help="default: the scale's gauss_seeds (paper: 5)"
    )
    ap.add_argument("--batch-size", type=int)
    ap.add_argument("--lr", type=float)
    ap.add_argument("--out", help="CSV prefix in the results folder (default gausscse_<scale>)")
    ap.add_argument(
        "--only",
        nargs="*",
        choices=gausscse.LOSS_SETTINGS,
        help="train just these settings (cached), no tables",
    )
    ap.add_argument(
        "--grid",
        choices=gausscse.LOSS_SETTINGS,
        help="grid-search batch size x lr for this setting",
    )
    args = ap.parse_args(argv)
    S = config.scale(args.scale)
    model = args.model or S["model"]
    base = gausscse_settings.base_config(S, model, variant=args.variant)
    base["reduction"] = args.reduction or base["reduction"]
    base.update(
        {k: v for k, v in (("batch_size", args.batch_size), ("lr", args.lr)) if v is not None}
    )
    seeds = args.seeds or S["gauss_seeds"]
    out = args.out or f"gausscse_{S['name']}"
    if args.grid:
        meta = {k: v for k, v in base.items() if k not in ("batch_size", "lr")}  # the grid's axes
        return save_grid(
            gausscse_runs.grid_search(base, args.grid),
            model,
            f"{out}_grid_{args.grid}.csv",
            dict(meta, setting=args.grid),
        )
    if args.only:  # e.g. two processes with one thread each on a 2-core machine
        gausscse_runs.run_settings(base, seeds, settings=args.only)
        return
    runs = gausscse_runs.run_settings(base, seeds)
    meta = dict(
        model=model,
        scale=S["name"],
        seeds=seeds,
        lr=base["lr"],
        batch_size=base["batch_size"],
        epochs=base["epochs"],
        variant=args.variant,
        reduction=base["reduction"],
        data=f"{base['train_source']} triplets ({runs['ent']['triplets']}); SNLI dev pairs "
        f"{base['dev_max'] or 'all'}; test pairs per set {base['test_max'] or 'all'}",
    )
    save_tables(runs, gausscse_data.eval_data(base["test_max"]), out, meta)


if __name__ == "__main__":
    main()
