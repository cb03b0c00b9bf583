"""DefSent+ Progressive Separate Training (Sec. 3.2, Eq. 3-13) and the ICA candidate space.

Step k builds the entry embeddings with the best encoder of step k-1 (the original model at
step 1) and trains again *from the original weights*, one epoch. At the last step the
candidate space may also be ICA-transformed (Eq. 11); every candidate and seed is trained
and the best run by STS average (the paper's "optimal encoder out of the runs") goes on.
"""

import argparse
import math
import warnings

import numpy as np
import pandas as pd
import torch

from defsent_lite import defsentplus, train
from defsent_lite.checks import best_of
from defsent_lite.defsentplus import ENTRY_POOLINGS, build_entry_embeddings
from defsent_lite.runtime import cache, config, defsentplus_model, models
from defsent_lite.data import entries
from defsent_lite.paper import aggregate, results
from defsent_lite.paper.results import STS_COLS
from defsent_lite.repro import defsentplus_runs, scores, variants


def entry_space(encoder, encoder_id, entry_pooling, ds, dataset_key, batch_size=128):
    """Entry embeddings (Eq. 2) of the dataset built with `encoder` (name or path), cached and
    keyed by encoder_id (the model name, or the cache key of the run that trained it)."""

    def compute():
        model, tokenizer = models.load(encoder)
        return build_entry_embeddings(
            model,
            tokenizer,
            ds["ids"],
            ds["definitions"],
            entry_pooling,
            batch_size=batch_size,
            n_entries=len(ds["names"]),
        )

    return cache.cached_tensor(
        "dsp_space",
        dict(encoder=encoder_id, entry_pooling=entry_pooling, data=dataset_key),
        compute,
    )


def space_views(space, n_points=3000, seed=0):
    """2-d views of an entry space (Figures 1-2): SVD of the uncentered matrix (top two right
    singular vectors) and whitened PCA (centered, divided by sqrt of the eigenvalues), for a
    seeded sample of n_points entries; the projections use every entry."""
    X = torch.as_tensor(np.asarray(space), dtype=torch.float64)
    _, _, Vh = torch.linalg.svd(X, full_matrices=False)
    svd = X @ Vh[:2].T
    Xc = X - X.mean(0)
    evals, evecs = torch.linalg.eigh(Xc.T @ Xc / (len(X) - 1))
    top = evecs[:, [-1, -2]]
    pca = (Xc @ top) / evals[[-1, -2]].sqrt()
    g = torch.Generator().manual_seed(seed)
    pick = torch.randperm(len(X), generator=g)[:n_points]
    return dict(
        svd=svd[pick].tolist(),
        pca_whitened=pca[pick].tolist(),
        explained_variance_top2=(evals[[-1, -2]] / evals.sum()).tolist(),
    )


def candidates(space, last_step, ica, max_iter=1000, space_key=None, standardise=True):
    """Eq. 11: the plain space, and at the last step also its ICA transform (when asked;
    cached under space_key when given)."""
    out = {"plain": space}
    if last_step and ica:

        def compute():
            return torch.as_tensor(
                defsentplus.ica_transform(
                    space.numpy(), max_iter=max_iter, standardise=standardise
                ),
                dtype=torch.float32,
            )

        key = f"ica{max_iter}" + ("" if standardise else "_raw")
        cfg = (
            dict(
                space_key,
                space=cache.content_digest(space),
                max_iter=max_iter,
                standardise=standardise,
            )
            if space_key
            else None
        )
        out[key] = cache.cached_tensor("dsp_ica", cfg, compute) if space_key else compute()
    return out


def keep_only_best(runs, best, run_cfgs, ds, data_dir=None):
    """Drop the checkpoints of a step's runs but the best (the only one a later step or notebook
    loads); the best's is trained again if an earlier call had dropped it."""
    runs.update(cache.drop_all_but("defsentplus", runs, best))
    if runs[best]["path"] is None:
        run_cfg, cand = run_cfgs[best]
        runs[best] = defsentplus_runs.train_once(run_cfg, cand, ds, data_dir)


class StepDone(Exception):
    """run_pst(..., only=(step, seeds)) trained its share of `step` (repro/launch.py's jobs)."""


def run_pst(cfg, ds, dataset_key, data_dir=None, only=None):
    """The PST loop (defsentplus.progressive_separate_training) with the protocol's bookkeeping:
    cached spaces and runs, a run per candidate space and seed, the best by STS average kept, at
    most two checkpoints on disk. cfg: model, dataset, max_entries, pooling, entry_pooling, lrs
    (one per step), seeds, batch_size, ica, inference_poolings, sts_max_pairs.
    only=(step, seeds): one job's share of a step on many GPUs: the steps before it (cached) are
    replayed, the step's space and candidates built, only `seeds`' runs trained, then StepDone.

    Returns one record per step: the space's views, every run (candidate x seed), the best run.
    """
    built_by, trained, run_cfgs, caught = {}, {}, {}, {}
    standardise = defsentplus_runs.variant_settings(cfg.get("variant", "official"))[
        "ica_standardise"
    ]

    def build_entries(encoder, step):
        (path, built_by[step]), entry_pooling = encoder, step_combination(cfg, step)[1]
        return entry_space(path, built_by[step], entry_pooling, ds, dataset_key)

    def candidate_spaces(space, last):
        step = len(built_by)
        key = dict(
            encoder=built_by[step], entry_pooling=step_combination(cfg, step)[1], data=dataset_key
        )
        with warnings.catch_warnings(
            record=True
        ) as found:  # kept in the record and shown by the notebook
            warnings.simplefilter("always")
            spaces = candidates(
                space, last, cfg["ica"], cfg.get("ica_max_iter", 1000), key, standardise
            )
        caught[step] = [str(w.message) for w in found]
        return {(name, seed): cand for name, cand in spaces.items() for seed in cfg["seeds"]}

    def train_against(cand, lr, step, key):
        (name, seed), (pooling, entry_pooling) = key, step_combination(cfg, step)
        if only is not None and step == only[0] and seed not in only[1]:
            return None  # another job's share of this step
        run_cfg = dict(
            model=cfg["model"],
            dataset=dataset_key,
            pooling=pooling,
            lr=lr,
            seed=seed,
            batch_size=cfg["batch_size"],
            inference_poolings=cfg["inference_poolings"],
            sts_max_pairs=cfg["sts_max_pairs"],
            sts_files=cfg.get("sts_files", defsentplus_runs.STS_FILES),
            variant=cfg.get("variant", "official"),
            **(
                {"train_autocast": cfg["train_autocast"]}
                if cfg.get("train_autocast") is not None
                else {}
            ),
            space_key=dict(encoder=built_by[step], entry_pooling=entry_pooling, transform=name),
        )
        runs = trained.setdefault(step, {})
        runs[key] = defsentplus_runs.train_once(run_cfg, cand, ds, data_dir, need_checkpoint=False)
        run_cfgs[key] = (run_cfg, cand)
        so_far = best_of(
            selectable(runs, cfg),
            defsentplus_runs.best_sts_avg,
            f"PST step {step} (candidate space, seed)",
        )
        # at most two checkpoints on disk
        trained[step] = cache.drop_all_but("defsentplus", runs, so_far)
        return trained[step][key]

    def select(runs):
        step = len(built_by)
        if only is not None and step == only[0]:
            raise StepDone(step)
        # the runs whose checkpoints were dropped since they were trained
        runs.update(trained[step])
        best = best_of(
            selectable(runs, cfg),
            defsentplus_runs.best_sts_avg,
            f"PST step {step} (candidate space, seed)",
        )
        keep_only_best(runs, best, run_cfgs, ds, data_dir)
        return best

    steps = defsentplus.progressive_separate_training(
        (cfg["model"], cfg["model"]),
        cfg["lrs"],
        build_entries,
        train_against,
        encoder_of=lambda run: (run["path"], run["key"]),
        candidates=candidate_spaces,
        select=select,
    )
    return [
        dict(
            step=st["step"],
            lr=st["lr"],
            space_from=built_by[st["step"]],
            views=space_views(st["space"]),
            runs=st["runs"],
            best=st["best"],
            best_run=st["runs"][st["best"]],
            warnings=caught[st["step"]],
            space_name=ENTRY_POOLINGS[step_combination(cfg, st["step"])[1]],
            combination=step_combination(cfg, st["step"]),
        )
        for st in steps
    ]


def selectable(runs, cfg):
    """The runs a step may keep: all of them, or only the plain space's where the ICA candidate is
    scored but not chosen (cfg["ica_selectable"] False: the smoke scale, where FastICA cannot
    converge)."""
    if cfg.get("ica_selectable", True):
        return runs
    return {key: run for key, run in runs.items() if key[0] == "plain"}


def step_combination(cfg, step):
    """(pooling, entry pooling) of PST step `step` (1-based): cfg["later_combinations"][step - 2]
    from the 2nd step on where given (the paper changes it for some models), else the 1st's; past
    the list the last one again."""
    later = cfg.get("later_combinations") or []
    if step == 1 or not later:
        return cfg["pooling"], cfg["entry_pooling"]
    return tuple(later[min(step - 2, len(later) - 1)])


def pst_config(
    scale,
    model,
    dataset,
    pooling="cls",
    entry_pooling="mean",
    ica=True,
    steps=None,
    variant="official",
    later_combinations=None,
    max_entries=None,
    lrs=None,
):
    """The PST config of a scale: Table 5 learning rates (per model at paper scale), Appendix A
    batch size, the scale's subset. A data-augmented checkpoint (Table 3) is just another model
    name; at paper scale it runs as many steps as its Table 5 row (1 or 2). steps: None (that count)
    or any number: past the listed rates each further Training repeats the last one (Appendix A: a
    step's rate is no bigger than the previous one), e.g. 4 for the 4th Training of Figure 7.
    max_entries: the entries sampled (None: the scale's dsp_max_entries, dsp_max_entries_b_c for b,
    c). lrs: the rates of the steps (None: Table 5's row of a hub model at paper scale, else the
    scale's); a checkpoint given as a folder takes its row from augmented.release.
    later_combinations: [(pooling, entry pooling)] of the 2nd, 3rd, ... step (None: the 1st's
    throughout; defsentplus_runs.paper_combination gives the paper's per step). variant: "official"
    (the released code, default) or "paper" (defsentplus_runs.VARIANTS)."""
    defsentplus_runs.variant_settings(variant)
    if lrs is None:
        lrs = (
            defsentplus_runs.PAPER_LRS.get(model, scale["dsp_lrs"])
            if scale["paper_protocol"]
            else scale["dsp_lrs"]
        )
    lrs = list(lrs)
    if steps is not None and steps < 1:
        raise ValueError(f"PST steps must be at least 1, got {steps}")
    lrs = lrs[:steps] + [lrs[-1]] * max(0, (steps or 0) - len(lrs))
    if max_entries is None:  # the scale's sample (None: every entry)
        max_entries = scale["dsp_max_entries"]
        if dataset in ("b", "c") and scale["dsp_max_entries_b_c"] is not None:
            max_entries = scale["dsp_max_entries_b_c"]
    return dict(
        model=model,
        dataset=dataset,
        max_entries=max_entries,
        pooling=pooling,
        entry_pooling=entry_pooling,
        lrs=lrs,
        seeds=list(scale["seeds"]),
        batch_size=defsentplus_runs.BATCH_SIZE[dataset],
        ica=ica,
        ica_max_iter=scale["dsp_ica_max_iter"],
        ica_selectable=scale["dsp_ica_selectable"],
        inference_poolings=list(scale["dsp_inference_poolings"]),
        sts_max_pairs=scale["dsp_sts_max_pairs"],
        sts_files=defsentplus_runs.STS_FILES,
        paper_data=scale["paper_protocol"],
        variant=variant,
        later_combinations=[tuple(c) for c in later_combinations or []],
        **(
            {"train_autocast": scale["train_autocast"]}
            if scale["train_autocast"] is not None
            else {}
        ),
    )


def entry_dataset(cfg, data_dir=None):
    """(dataset, its cache key) of a PST config: the entries and definitions it trains on
    (cached)."""
    ds = entries.load_entry_dataset(
        cfg["dataset"], cfg["max_entries"], data_dir, paper_data=cfg.get("paper_data", False)
    )
    return ds, dict(
        dataset=cfg["dataset"],
        max_entries=cfg["max_entries"],
        seed=0,
        entries=cache.content_digest(ds),
    )


def model_pst_config(
    scale, model, dataset, reference, combination=None, ica=True, steps=None, variant="official"
):
    """(pst_config, why): with combination None, the encoding combination of each step as Table 2
    gives it for `reference` (the hub model whose paper rows stand beside ours: its 1st Training
    on the dataset, and on *a* its 2nd and 3rd); else (pooling, entry pooling) at every step.
    ica=True trains the ICA candidate where the paper does: not for a RoBERTa reference (Table 2
    names an ICA space for BERT-base and BERT-large only; a model outside the paper runs as
    BERT-base); ica="all" for every model, False never."""
    if ica not in (True, False, "all"):
        raise ValueError(
            f"model_pst_config: ica={ica!r}: choose True (BERT, as the paper), 'all' or False"
        )
    ica = ica == "all" or (ica is True and "roberta" not in str(reference).lower())
    if combination is None:
        pooling, entry_pooling, why = defsentplus_runs.paper_combination(reference, dataset)
        later = defsentplus_runs.paper_later_combinations(reference, dataset)
    else:
        (pooling, entry_pooling), later, why = combination, [], "given"
    cfg = pst_config(
        scale,
        model,
        dataset,
        pooling,
        entry_pooling,
        ica=ica,
        steps=steps,
        variant=variant,
        later_combinations=later,
    )
    return cfg, why


def combinations_text(cfg):
    """The combination of each step, e.g. "(CLS, AMP); 2nd-3rd (Mean, AC)", for printing."""
    names = [
        defsentplus_runs.combination_name(*step_combination(cfg, k))
        for k in range(1, len(cfg["lrs"]) + 1)
    ]
    return (
        "; ".join(f"{ordinal(k)}: {n}" for k, n in enumerate(names, 1))
        if len(set(names)) > 1
        else names[0]
    )


def run(cfg, data_dir=None):
    """Load the dataset of cfg (cached) and run PST; returns (steps, dataset report)."""
    ds, key = entry_dataset(cfg, data_dir)
    return run_pst(cfg, ds, key, data_dir), ds["report"]


def run_share(cfg, data_dir=None, step=1, seeds=()):
    """One job's share of PST step `step` (repro/launch.py): the runs of `seeds` against every
    candidate space of the step (none: the space and its candidates only), into the cache."""
    ds, key = entry_dataset(cfg, data_dir)
    try:
        run_pst(cfg, ds, key, data_dir, only=(step, list(seeds)))
    except StepDone:
        return


def following_space_views(steps, cfg, data_dir=None):
    """Views of the entry space the next Training would use, built by the last step's best encoder
    (Figure 7: "built from encoders after 3rd Training of PST for 4th Training"); nothing is
    trained."""
    ds, key = entry_dataset(cfg, data_dir)
    best = steps[-1]["best_run"]
    return space_views(
        entry_space(best["path"], best["key"], step_combination(cfg, len(steps) + 1)[1], ds, key)
    )


def seed_table(step, space):
    """STS of one step's runs against one candidate space, over its seeds: an aggregate.SeedTable
    indexed by inference pooling (mean and std of the seeds, as the paper's statistical results)."""
    seeds = [r for (name, _), r in step["runs"].items() if name == space]
    poolings = list(seeds[0]["sts"])
    return aggregate.table_over_seeds(
        {p: [[r["sts"][p][c] for c in STS_COLS] for r in seeds] for p in poolings},
        STS_COLS,
        f"PST step {step['step']}, {space} space",
    )


def best_pooling_row(table):
    """(pooling, mean row, std row) of a seed_table under the pooling with the best mean STS
    average."""
    pooling = best_of(dict(table.mean["avg"]), float, "inference pooling by mean STS avg")
    return pooling, table.mean.loc[pooling], table.std.loc[pooling]


def best_pooling_scores(sts):
    """(pooling, STS row in results.STS_COLS order) of one run's {pooling: scores} under its best
    average."""
    pooling = best_of(sts, lambda s: s["avg"], "inference pooling by STS avg")
    return pooling, [sts[pooling][c] for c in STS_COLS]


def ordinal(step):
    """The papers' name of a PST step: 1st, 2nd, 3rd, 4th, ..."""
    return f"{step}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(step if step < 20 else step % 10, 'th') }"


def spaces_of(step):
    """The candidate spaces a step trained against, in order ("plain", then "ICA" at the last
    step)."""
    return list(dict.fromkeys(name for name, _ in step["runs"]))


def steps_table(steps, untrained=None):
    """STS rows (pooling at inference) for every step and candidate space, the mean over seeds;
    `untrained` ({pooling: scores}) adds the original model's rows."""
    rows = {("untrained", "-", p): [s[c] for c in STS_COLS] for p, s in (untrained or {}).items()}
    for st in steps:
        for space in spaces_of(st):
            for p, row in seed_table(st, space).mean.iterrows():
                rows[(f"{ordinal(st['step'])} Training", space, p)] = row.tolist()
    df = pd.DataFrame.from_dict(rows, orient="index", columns=STS_COLS)
    df.index = pd.MultiIndex.from_tuples(df.index, names=["PST step", "space", "pooling"])
    return df


def loss_drop(steps, k=3):
    """How far each step's training loss falls within its one epoch: the mean of the first k and
    of the last k logged batches, and the drop (first - last), per step and candidate space (the
    seed of the step's best run); chance is log(entries)."""
    rows = {}
    for st in steps:
        for (space, seed), run in st["runs"].items():
            if seed == st["best"][1]:
                curve = run["loss_curve"]
                first, last = float(np.mean(curve[:k])), float(np.mean(curve[-k:]))
                rows[(f"{ordinal(st['step'])} Training", space)] = dict(
                    chance=run["chance_loss"], first=first, last=last, drop=first - last
                )
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=["PST step", "space"])
    return df


def plan(cfg, ds=None, data_dir=None, extra_encoded=0):
    """run_pst for cfg: trainings (candidate x seed per step), steps, sentences encoded (entry
    spaces, STS after every training), timed by a warm-up here (ds: the cfg's dataset when None;
    budget, eval_sizes and warmup load only when a plan is made: the protocol's scales)."""
    from defsent_lite.repro import plans, eval_sizes

    if ds is None:
        ds = entries.load_entry_dataset(
            cfg["dataset"], cfg["max_entries"], data_dir, paper_data=cfg.get("paper_data", False)
        )
    n_steps = len(cfg["lrs"])
    trainings = sum(
        len(cfg["seeds"]) * (2 if k == n_steps and cfg["ica"] else 1) for k in range(1, n_steps + 1)
    )
    n_defs = len(ds["definitions"])
    sts_sentences = eval_sizes.sts_sentences(data_dir, cfg["sts_max_pairs"]) * len(
        cfg["inference_poolings"]
    )
    model, tokenizer = defsentplus_model.load(cfg["model"], mlm_head_from=cfg.get("mlm_head_from"))
    device = next(model.parameters()).device
    space = torch.randn(len(ds["names"]), model.config.hidden_size, device=device)
    examples = list(zip(ds["ids"], ds["definitions"]))
    evaluated = plans.spaced_sample(examples, plans.ENCODE_SAMPLE)
    step_s, batch_s = plans.measure(
        model,
        lambda m, b: defsentplus.loss(m, tokenizer, b, cfg["pooling"], space),
        plans.spread_batches(
            tokenizer,
            train.batched(examples, cfg["batch_size"], seed=cfg["seeds"][0]),
            lambda b: [d for _, d in b],
        ),
        lambda m: build_entry_embeddings(  # what each step's entry space encodes
            m, tokenizer, list(range(len(evaluated))), [d for _, d in evaluated], "cls"
        ),
        len(evaluated),
        mixed_precision=variants.autocast_training(
            cfg, defsentplus_runs.variant_settings(cfg.get("variant", "official"))
        ),
    )
    what = f"DefSent+ PST on {cfg['dataset']}, {n_steps} step(s) x {len(cfg['seeds'])} seeds" + (
        " + ICA" if cfg["ica"] else ""
    )
    definitions = ds["definitions"]
    encoded_tokens = n_steps * n_defs * plans.row_tokens(tokenizer, definitions) + (
        trainings * sts_sentences + extra_encoded
    ) * eval_sizes.eval_sentence_tokens(tokenizer, data_dir)
    return plans.Plan(
        what,
        trainings,
        trainings * math.ceil(n_defs / cfg["batch_size"]),
        n_steps * n_defs + trainings * sts_sentences + extra_encoded,
        step_s,
        batch_s,
        64,
        plans.device_name(device),
        plans.parameters(model),
        trainings * n_defs * plans.row_tokens(tokenizer, definitions, cfg["batch_size"]),
        encoded_tokens,
        variants.autocast_training(
            cfg, defsentplus_runs.variant_settings(cfg.get("variant", "official"))
        ),
    )


# ---------------------------------------------------------------- the command line (a long CPU run, a cluster)


def main(argv=None):
    """python -m defsent_lite.repro.pst --scale cpu --dataset b: one PST run, its STS table
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
    cfg = pst_config(S, S["model"], args.dataset, args.pooling, args.entry_pooling)
    steps, report = run(cfg)
    untrained = scores.untrained_sts(
        S["model"], cfg["inference_poolings"], cfg["sts_max_pairs"], files=cfg["sts_files"]
    )
    table = steps_table(steps, untrained).round(2)
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
