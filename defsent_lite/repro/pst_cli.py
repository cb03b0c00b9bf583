"""DefSent+'s PST from the command line, outside the notebooks (a long CPU run, a cluster): one
PST run of a scale's model on dataset a, b or c, its STS table after every step printed and saved
as a CSV."""

import argparse

from defsent_lite.runtime import config
from defsent_lite.paper import results
from defsent_lite.repro import defsentplus_runs, pst, scores


def main(argv=None):
    """python -m defsent_lite.repro.pst_cli --scale cpu --dataset b: one PST run, its STS table
    saved as CSV."""
    ap = argparse.ArgumentParser(description=main.__doc__)
    ap.add_argument("--scale", default="cpu")
    ap.add_argument("--dataset", default="b", choices=["a", "b", "c"])
    ap.add_argument("--pooling", default="cls", choices=["cls", "mean"])
    ap.add_argument("--entry-pooling", default="mean", choices=["cls", "mean"])
    ap.add_argument(
        "--out", default="pst_run.csv", help="CSV name in the results folder (DEFSENT_RESULTS)"
    )
    args = ap.parse_args(argv)
    S = config.scale(args.scale)
    cfg = pst.pst_config(S, S["model"], args.dataset, args.pooling, args.entry_pooling)
    steps, report = pst.run(cfg)
    untrained = scores.untrained_sts(
        S["model"], cfg["inference_poolings"], cfg["sts_max_pairs"], files=cfg["sts_files"]
    )
    table = pst.steps_table(steps, untrained).round(2)
    print(report, *[w for st in steps for w in st["warnings"]], table.to_string(), sep="\n")
    combo = defsentplus_runs.combination_name(args.pooling, args.entry_pooling)
    print(
        "saved",
        results.save_csv(
            table,
            args.out,
            model=S["model"],
            scale=S["name"],
            seeds=cfg["seeds"],
            data=f"{report['source']}, {report['entries']} entries, {report['definitions']} definitions",
            combination=combo,
            lrs=cfg["lrs"],
            sts="full" if cfg["sts_max_pairs"] is None else cfg["sts_max_pairs"],
        ),
    )


if __name__ == "__main__":
    main()
