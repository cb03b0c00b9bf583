"""GaussCSE's protocol: the official code's and the paper's settings, one cached training run per
loss setting and seed (the loss of a batch of triplets, model selection on SNLI-dev AUPRC), the
cosine baseline, the Appendix E grid and the plan. Its data is gausscse_data, its scores
gausscse_eval, a trained model's files gausscse_embedder; the tables are gausscse_tables'. The
method is defsent_lite.gausscse."""

import warnings

import pandas as pd
import torch

from defsent_lite import checks, encode, gausscse, train
from defsent_lite.runtime import cache, config, models
from defsent_lite.data import nli_readers
from defsent_lite.evaluation import nli
from defsent_lite.paper import aggregate
from defsent_lite.paper import gausscse as paper_gausscse
from defsent_lite.repro import budget, gausscse_data, gausscse_embedder, gausscse_eval, variants


# What the released code (yoda122/GaussCSE) does and what the paper's text says, where they differ.
VARIANTS = {
    "official": dict(
        head="official",
        reduction="mean_per_dim",
        weight_decay=0.01,
        warmup_ratio=0.1,
        decay=True,
        warmup_from_zero=True,
        metrics="official",
        drop_last=True,
        epochs=1,
    ),
    "paper": dict(
        head="paper",
        reduction="sum",
        weight_decay=0.0,
        warmup_ratio=1.0,
        decay=False,
        warmup_from_zero=False,
        metrics="paper",
        drop_last=False,
        epochs=3,
    ),
}
DIFFERENCES = [  # (setting, paper text, official code, ours)
    ("mean head", "linear map of CLS", "tanh(linear map of CLS)", "variant's"),
    (
        "variance",
        "not specified (positive)",
        "exp(linear map of CLS)",
        "official: exp, floored at float32's smallest normal; paper: softplus + 1e-4",
    ),
    (
        "similarity",
        "1 / (1 + sum_d KL_d) (Eq. 2)",
        "mean_d 1 / (1 + KL_d)",
        "variant's (reduction setting)",
    ),
    (
        "optimiser",
        "AdamW (decay not stated)",
        "AdamW, weight decay 0.01 on every parameter",
        "variant's",
    ),
    (
        "schedule",
        "linear warm-up over the run (Appendix E)",
        "10% warm-up from 0, then linear decay",
        "variant's",
    ),
    (
        "epochs",
        "3",
        "1 (its default; run.sh sets none)",
        "paper scale: the variant's; smoke and cpu scales: 1",
    ),
    ("AUPRC", "thresholds 0..1 step 0.001", "sklearn precision_recall_curve + auc", "variant's"),
    (
        "NLI threshold",
        "most accurate on SNLI dev",
        "grid of 1,001, score >= t",
        "official: grid, >=; paper: midpoints, >",
    ),
    (
        "last partial batch",
        "not stated",
        "dropped (drop_last)",
        "official: dropped; paper: kept (unless 1 triplet)",
    ),
    (
        "model selection",
        "SNLI-dev AUPRC every 100 steps",
        "the same, also before training (step 0); the steps "
        "after the last multiple of 100 are never scored",
        "every 100 steps and at the last step, not step 0 (kept: "
        "they differ only at the two ends of a run)",
    ),
    (
        "batch size, lr",
        "Table 5's grid optimum (BERT-base: 16, 5e-5)",
        "run.sh: BERT-base 16, 1e-5 (no other model); the grid scripts scripts/n4/*.sh ran every cell",
        "paper scale: Table 5's optimum, what produced the published numbers (run.sh was committed after the "
        "paper, 3 min before the grid scripts were deleted, and does not parse: bash -n fails at its line 12); "
        "rates='run.sh' for its (16, 1e-5)",
    ),
    (
        "SICK direction pairs",
        "one direction only: A entails B xor B entails A (794 test pairs)",
        "every entailment pair, premise -> hypothesis (1,414 here)",
        "the text's (its length-baseline row, 69.14, is reproduced exactly; all pairs give 60.11): sick_pairs='all' for the "
        "code's; 10 test pairs absent from SICK.txt are excluded and counted",
    ),
]


def variant_settings(variant):
    """The settings of a GaussCSE variant (VARIANTS); an unknown name is an error."""
    return variants.pick("GaussCSE", VARIANTS, variant)


def differences():
    """The GaussCSE settings where the paper's text and the official code differ, and what we run."""
    return variants.differences_table(
        DIFFERENCES, ["setting", "paper text", "official code", "ours"]
    )


def triplet_loss(model, tokenizer, batch, setting, reduction, max_length=64):
    """Encode premises, entailments and contradictions in one forward pass; Eq. 3."""
    sentences = [s for column in zip(*batch) for s in column]
    enc = tokenizer(
        sentences, padding=True, truncation=True, max_length=max_length, return_tensors="pt"
    )
    mu, var = model(encode.on_model_device(model, enc))
    n = len(batch)
    pre, ent, con = [(mu[k * n : (k + 1) * n], var[k * n : (k + 1) * n]) for k in range(3)]
    return gausscse.contrastive_loss(pre, ent, con, setting, reduction=reduction)


def describe_batch(model, tokenizer):
    """For NonFiniteLoss: the batch's first premises and the range of its means and variances."""

    def describe(batch):
        with torch.no_grad():
            mu, var = gausscse.encode(model, tokenizer, [s for t in batch for s in t])
        return (
            f"premises {[p[:30] for p, _, _ in batch[:2]]}..., mu in [{mu.min():.3g}, {mu.max():.3g}], "
            f"var in [{var.min():.3g}, {var.max():.3g}]"
        )

    return describe


SIMCSE_BASELINE = (
    "princeton-nlp/sup-simcse-bert-base-uncased",
    "pooler",
)  # Tables 1/3's baseline (BERT-base)


def baseline_encoder(scale, model):
    """(model, pooling) of the cosine baseline row: under the paper's protocol supervised
    SimCSE-BERT-base through its pooler (the paper's row), else `model` with mean pooling."""
    return SIMCSE_BASELINE if scale["paper_protocol"] else (model, "mean")


def cosine_baseline(model_name, pooling, base, data_dir=None):
    """The baseline row of Tables 1/3: cosine(hypothesis, premise) of an encoder as the entailment
    score, thresholded on SNLI dev with the variant's metrics; {test set: {acc, auprc}} x100 (cached)."""
    metrics = variant_settings(base.get("variant", "official"))["metrics"]
    cfg = dict(
        model=str(model_name),
        pooling=pooling,
        dev_max=base["dev_max"],
        test_max=base["test_max"],
        metrics=metrics,
    )
    what = f"cosine baseline {model_name} ({pooling})"

    def compute():
        model, tokenizer = models.load(model_name)
        dev, tests, _ = gausscse_data.eval_data(base["test_max"], data_dir)
        dev = gausscse_data.evenly_spaced(dev, base["dev_max"])

        def scores(rows):
            hyps, pres = [r["hypothesis"] for r in rows], [r["premise"] for r in rows]
            uniq = list(dict.fromkeys(hyps + pres))
            vectors = torch.nn.functional.normalize(
                gausscse_eval.sentence_vectors(model, tokenizer, uniq, pooling), dim=-1
            )
            pos = {s: i for i, s in enumerate(uniq)}
            return (
                (vectors[[pos[h] for h in hyps]] * vectors[[pos[p] for p in pres]]).sum(-1).numpy()
            )

        threshold = nli.threshold_for(
            scores(dev), nli.binary_labels(dev), metrics, what=f"{what}: SNLI-dev threshold"
        )
        out = {}
        for name, rows in tests.items():
            s, labels = scores(rows), nli.binary_labels(rows)
            out[name] = dict(
                acc=100 * nli.accuracy(s, labels, threshold, f"{what}: {name} accuracy", metrics),
                auprc=100 * nli.area_under_pr(s, labels, metrics, what=f"{what}: {name} AUPRC"),
            )
        return dict(nli=out, threshold=threshold)

    return cache.cached_json(
        "gauss_baseline", dict(cfg, data=cache.data_identity(data_dir, "nli")), compute
    )


def run(cfg, data_dir=None, keep_model=False):
    """Train GaussCSE once for cfg (cached by its hash) and evaluate it; with keep_model the
    trained model stays in the cache (save_embedder; the result's "path" loads it with
    gausscse_embedder.load_embedder), else only its scores are kept.

    cfg: model, setting, lr, batch_size, epochs, seed, train_max, eval_every, dev_max,
    test_max, reduction, exclude_sources, train_source, variant (VARIANTS: head, optimiser,
    schedule and metrics; the similarity's reduction is its own key, set from the variant).
    """
    v = variant_settings(cfg.get("variant", "official"))
    checks.rate(cfg["lr"], "GaussCSE lr")  # before a message formats it
    checks.count(cfg["eval_every"], "GaussCSE eval_every")  # 0 would never evaluate, yet be cached
    what = f"GaussCSE {cfg['setting']} (lr {cfg['lr']:g}, batch {cfg['batch_size']}, seed {cfg['seed']})"

    def compute(folder):
        config.set_seed(cfg["seed"])
        encoder, tokenizer = models.load(cfg["model"], eval_mode=False)
        model = gausscse.GaussModel(encoder, v["head"]).to(next(encoder.parameters()).device)
        triplets = nli_readers.training_triplets(
            data_dir, cfg["exclude_sources"], cfg["train_max"], cfg["seed"], cfg["train_source"]
        )
        epochs = checks.count(cfg["epochs"], "epochs", allow_none=False)
        batches = [
            b
            for e in range(epochs)
            for b in train.batched(triplets, cfg["batch_size"], seed=cfg["seed"] + e)
        ]
        smallest = (
            cfg["batch_size"] if v["drop_last"] else 2
        )  # a 1-triplet batch has no in-batch negatives
        batches = [b for b in batches if len(b) >= smallest]
        if not batches:
            raise ValueError(
                f"{what}: no training batches: {len(triplets)} training triplets make no batch of "
                f"{smallest} (the official variant drops a last partial batch, as its code does)"
            )
        dev, tests, sick_full = gausscse_data.eval_data(cfg["test_max"], data_dir)
        dev = gausscse_data.evenly_spaced(dev, cfg["dev_max"])
        settings = train.Settings(
            lr=cfg["lr"],
            optimizer="adamw",
            weight_decay=v["weight_decay"],
            warmup_ratio=v["warmup_ratio"],
            decay=v["decay"],
            warmup_from_zero=v["warmup_from_zero"],
        )
        history = train.train(
            model,
            lambda m, b: triplet_loss(m, tokenizer, b, cfg["setting"], cfg["reduction"]),
            batches,
            settings,
            eval_fn=gausscse_eval.dev_auprc_fn(
                tokenizer, dev, cfg["reduction"], what, v["metrics"]
            ),
            eval_every=cfg["eval_every"],
            describe_batch=describe_batch(model, tokenizer),
            desc=what,
        )
        tests = (
            tests if cfg.get("evaluate_tests", True) else {}
        )  # the grid needs the SNLI-dev AUPRC only
        result = gausscse_eval.evaluate(
            model,
            tokenizer,
            dev,
            tests,
            sick_full,
            cfg["reduction"],
            what,
            v["metrics"],
            cfg.get("sick_pairs", "one-way"),
        )
        if keep_model:
            gausscse_embedder.save_embedder(
                model,
                tokenizer,
                folder / "model",
                cfg["reduction"],
                dict(setting=cfg["setting"], base_model=str(cfg["model"]), seed=cfg["seed"]),
            )
        return dict(
            result,
            steps=history["steps"],
            best_step=history["best_step"],
            eval=history["eval"],
            loss_curve=history["loss"],
            triplets=len(triplets),
        )

    key = run_key(cfg, data_dir)
    entry = cache.cached_run("gausscse", key, compute, need_files=keep_model)
    if not keep_model and entry.folder is not None and not (entry.folder / "model").exists():
        cache.drop_files(
            "gausscse", key
        )  # nothing was saved: the entry says so, a keep_model call retrains
    path = (
        entry.folder / "model"
        if entry.folder is not None and (entry.folder / "model").exists()
        else None
    )
    return dict(entry.result, path=str(path) if path else None)


def run_key(cfg, data_dir=None):
    """The cache key of run(cfg): its settings and the NLI and SICK files' identity."""
    return dict(cfg, data=cache.data_identity(data_dir, "nli", "sts/raw/SICK"))


def needs_training(cfg, data_dir=None, keep_model=False):
    """Whether run(cfg, data_dir, keep_model) would train: no cached entry, or (keep_model) one
    without its model."""
    found = cache.lookup("gausscse", run_key(cfg, data_dir))
    return found is None or (
        keep_model and (found.folder is None or not (found.folder / "model").exists())
    )


def paper_hyperparameters(model):
    """(batch size, lr) with the best SNLI-dev AUPRC in the paper's grid (Table 5), or None for a
    model the paper does not report."""
    cells = {
        (batch, lr): auprc
        for (name, batch), row in paper_gausscse.TABLE5.items()
        if name == model
        for lr, auprc in zip(paper_gausscse.GRID_LRS, row)
    }
    return max(cells, key=cells.get) if cells else None


RUN_SH = {
    "bert-base-uncased": (16, 1e-5)
}  # (batch, lr) the official run.sh pins (yoda122/GaussCSE)
RATES = ("table5", "run.sh")


def base_config(
    scale, model, data_dir=None, variant="official", sick_pairs="one-way", rates="table5"
):
    """A scale's GaussCSE config (setting added per run). At paper scale the batch size and lr are
    the model's Table 5 optimum (BERT-base (16, 5e-5): the grid's best cell produced the published
    numbers), or with rates="run.sh" what the official run.sh pins (BERT-base (16, 1e-5); it names
    no other model), else the scale's defaults with a warning. variant: "official" (the released
    code's behaviour, the default) or "paper" (the text's); sick_pairs: direction_pairs' SICK reading."""
    if rates not in RATES:
        raise ValueError(f"rates={rates!r}: choose one of {', '.join(RATES)}")
    batch_size, lr = scale["gauss_batch_size"], scale["gauss_lr"]
    if scale["paper_protocol"]:
        pinned = RUN_SH.get(model) if rates == "run.sh" else None
        best = pinned or paper_hyperparameters(model)
        if best is None:
            warnings.warn(
                f"{model!r} is not in GaussCSE's Table 5 grid: using batch {batch_size}, lr {lr}; "
                "run `python -m defsent_lite.repro.gausscse_tables --grid SETTING` to search it"
            )
        batch_size, lr = best or (batch_size, lr)
    if sick_pairs not in gausscse_data.SICK_PAIRS:
        raise ValueError(
            f"sick_pairs={sick_pairs!r}: choose one of {', '.join(gausscse_data.SICK_PAIRS)}"
        )
    return dict(
        model=model,
        lr=lr,
        batch_size=batch_size,
        epochs=scale["gauss_epochs"] or variant_settings(variant)["epochs"],
        seed=scale["gauss_seeds"][0],
        train_max=scale["gauss_train_max"],
        eval_every=100,
        dev_max=scale["gauss_dev_max"],
        test_max=scale["gauss_test_max"],
        reduction=variant_settings(variant)["reduction"],
        exclude_sources=[],
        train_source=nli_readers.train_source(scale["name"], data_dir),
        variant=variant,
        sick_pairs=sick_pairs,
    )


def average_runs(results):
    """Mean NLI and direction scores (and dev AUPRC) over seeds, as the paper reports; the
    per-example correctness that McNemar's test needs is the first seed's."""
    first = results[0]
    if len(results) == 1:
        return first

    def mean(get):  # non-finite runs are refused, never averaged
        return aggregate.over_seeds([get(r) for r in results], "GaussCSE over seeds").mean

    nli_means = {
        t: {k: mean(lambda r: r["nli"][t][k]) for k in first["nli"][t]} for t in first["nli"]
    }
    direction = {t: mean(lambda r: r["direction"][t]) for t in first["direction"]}
    return dict(
        first,
        nli=nli_means,
        direction=direction,
        dev_auprc=mean(lambda r: r["dev_auprc"]),
        seeds=len(results),
    )


def run_settings(base, seeds, data_dir=None, settings=gausscse.LOSS_SETTINGS):
    """One cached run per loss setting and seed; {setting: seed-averaged result}. The first seed's
    model of each setting is kept ("path": gausscse_embedder.load_embedder loads it), the others' scores only."""
    return {
        s: average_runs(
            [run(cfg, data_dir, keep_model=keep) for cfg, keep in seed_runs(base, s, seeds)]
        )
        for s in settings
    }


def seed_runs(base, setting, seeds):
    """run_settings' trainings of one loss setting: (cfg, keep_model) per seed, the first kept."""
    return [(dict(base, setting=setting, seed=k), k == seeds[0]) for k in seeds]


def grid_cells(base, setting, batch_sizes, lrs):
    """grid_search's trainings: one cfg per (batch size, lr) cell, the test sets not scored."""
    return {
        (b, lr): dict(base, setting=setting, batch_size=b, lr=lr, evaluate_tests=False)
        for b in batch_sizes
        for lr in lrs
    }


def grid_search(
    base, setting, batch_sizes=(16, 32, 64, 128), lrs=tuple(paper_gausscse.GRID_LRS), data_dir=None
):
    """Appendix E: SNLI-dev AUPRC x100 of the best checkpoint for each batch size (rows) and lr
    (columns); the test sets are not scored (the grid selects on SNLI dev only)."""
    cells = {
        cell: 100 * run(cfg, data_dir)["dev_auprc"]
        for cell, cfg in grid_cells(base, setting, batch_sizes, lrs).items()
    }
    grid = pd.Series(cells).unstack().rename_axis(index="batch size", columns="lr")
    return grid.rename(columns=lambda lr: f"{lr:g}")


# ---------------------------------------------------------------- what a notebook will run (paper scale)


def plan(base, seeds, data_dir=None, settings=gausscse.LOSS_SETTINGS, lrs=None):
    """run_settings: trainings (setting x seed), steps, NLI sentences encoded (SNLI dev every
    eval_every steps, the test sets at the end), timed by a warm-up here. lrs: one training per
    rate as well (a row of the grid: grid_search at base's batch size)."""
    triplets = nli_readers.training_triplets(
        data_dir, base["exclude_sources"], base["train_max"], 0, base["train_source"]
    )
    steps = base["epochs"] * (len(triplets) // base["batch_size"])
    dev, tests, _ = gausscse_data.eval_data(base["test_max"], data_dir)
    dev = gausscse_data.evenly_spaced(dev, base["dev_max"])

    def distinct(rows):  # each distinct sentence is encoded once (gausscse_eval.sentence_gaussians)
        return len({s for r in rows for s in (r["premise"], r["hypothesis"])})

    encoded = distinct(dev) * (steps // base["eval_every"] + 2) + sum(
        distinct(rows) for rows in tests.values()
    )
    encoder, tokenizer = models.load(base["model"], eval_mode=False)
    model = gausscse.GaussModel(encoder).to(next(encoder.parameters()).device)
    batch = triplets[: base["batch_size"]]
    sentences = [s for t in triplets[:22] for s in t][:64]
    step_s, batch_s = budget.measure(
        model,
        lambda m: triplet_loss(m, tokenizer, batch, "ent+con+rev", base["reduction"]),
        lambda m: gausscse.encode(m, tokenizer, sentences),
    )
    trainings = len(settings) * len(seeds) * len(lrs or [None])
    rates = f" x {len(lrs)} learning rates at batch {base['batch_size']}" if lrs else ""
    # a training batch pads premises, entailments and contradictions together (3 x batch rows)
    per_triplet = 3 * budget.row_tokens(
        tokenizer, [s for t in triplets[:4096] for s in t], 3 * base["batch_size"]
    )
    return budget.Plan(
        f"GaussCSE, {len(settings)} loss settings x {len(seeds)} seeds{rates}, {len(triplets):,} triplets",
        trainings,
        trainings * steps,
        trainings * encoded,
        step_s,
        batch_s,
        64,
        budget.device_name(next(model.parameters()).device),
        budget.parameters(model),
        trainings * steps * base["batch_size"] * per_triplet,
        trainings
        * encoded
        * budget.row_tokens(tokenizer, [s for r in dev for s in (r["premise"], r["hypothesis"])]),
        True,
        True,
    )
