"""GaussCSE's protocol from the command line, outside the notebooks (a long CPU run, a cluster):
the four loss settings seed-averaged, their NLI, direction, McNemar and length tables printed and
saved as CSVs, or the Appendix E grid of one setting."""

import argparse

import numpy as np
import pandas as pd

from defsent_lite import gausscse
from defsent_lite.runtime import config
from defsent_lite.paper import aggregate, results
from defsent_lite.paper import gausscse as paper_gausscse
from defsent_lite.repro import gausscse_data, gausscse_grid, gausscse_runs, gausscse_settings
from defsent_lite.repro.gausscse_lengths import direction_by_length
from defsent_lite.repro.gausscse_tables import mcnemar_table, tables


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
            f"steps {r['steps']}, best step {r['best_step']}, dev AUPRC "
            f"{100 * r['dev_auprc']:.2f}, threshold {r['threshold']:.4f}",
        )


def main(argv=None):
    """python -m defsent_lite.repro.gausscse_cli --scale cpu: the four loss settings
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
        return gausscse_grid.save_grid(
            gausscse_grid.grid_search(base, args.grid),
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
