"""GaussCSE's protocol runs: one cached training per loss setting and seed (Eq. 3 on batches of
triplets, model selection on SNLI-dev AUPRC), seed averages and the plan. Its
settings are gausscse_settings', its data gausscse_data, its scores gausscse_eval, a trained
model's files gausscse_embedder; the tables are gausscse_tables', gausscse_lengths' and
gausscse_grid's (with the grid's trainings). The method is defsent_lite.gausscse."""

import torch

from defsent_lite import checks, gausscse, train
from defsent_lite.runtime import cache, config, models
from defsent_lite.data import nli_readers
from defsent_lite.paper import aggregate
from defsent_lite.repro import gausscse_data, gausscse_embedder, gausscse_eval
from defsent_lite.repro.gausscse_settings import variant_settings


def describe_batch(model, tokenizer):
    """For NonFiniteLoss: the batch's first premises and the range of its means and variances."""

    def describe(batch):
        batch = batch.triplets if isinstance(batch, gausscse.TokenizedTriplets) else batch
        with torch.no_grad():
            mu, var = gausscse.encode(model, tokenizer, [s for t in batch for s in t])
        return (
            f"premises {[p[:30] for p, _, _ in batch[:2]]}..., mu in [{mu.min():.3g}, "
            f"{mu.max():.3g}], var in [{var.min():.3g}, {var.max():.3g}]"
        )

    return describe


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
        # a 1-triplet batch has no in-batch negatives
        smallest = cfg["batch_size"] if v["drop_last"] else 2
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
            compile_mode=config.compile_mode(),
        )
        history = train.train(
            model,
            lambda m, b: gausscse.triplet_loss(m, tokenizer, b, cfg["setting"], cfg["reduction"]),
            gausscse.tokenize_triplet_batches(tokenizer, batches),  # once, before the steps
            settings,
            eval_fn=gausscse_eval.dev_auprc_fn(
                tokenizer, dev, cfg["reduction"], what, v["metrics"]
            ),
            eval_every=cfg["eval_every"],
            describe_batch=describe_batch(model, tokenizer),
            desc=what,
        )
        # the grid needs the SNLI-dev AUPRC only
        tests = tests if cfg.get("evaluate_tests", True) else {}
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
        # nothing was saved: the entry says so, a keep_model call retrains
        cache.drop_files("gausscse", key)
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
    model of each setting is kept ("path": gausscse_embedder.load_embedder loads it), the others'
    scores only."""
    return {
        s: average_runs(
            [run(cfg, data_dir, keep_model=keep) for cfg, keep in seed_runs(base, s, seeds)]
        )
        for s in settings
    }


def seed_runs(base, setting, seeds):
    """run_settings' trainings of one loss setting: (cfg, keep_model) per seed, the first kept."""
    return [(dict(base, setting=setting, seed=k), k == seeds[0]) for k in seeds]


# ----------------------------------------------------------- what a notebook will run (paper scale)


def plan(base, seeds, data_dir=None, settings=gausscse.LOSS_SETTINGS, lrs=None):
    """run_settings: trainings (setting x seed), steps, NLI sentences encoded (SNLI dev every
    eval_every steps, the test sets at the end), timed by a warm-up here. lrs: one training per
    rate as well (a row of the grid: gausscse_grid.grid_search at base's batch size). budget and
    warmup load only when a plan is made (the protocol's scales)."""
    from defsent_lite.repro import budget, warmup

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
    batches = train.batched(triplets, base["batch_size"], seed=seeds[0])  # the first seed's epoch
    dev_sentences = sorted({s for r in dev for s in (r["premise"], r["hypothesis"])})
    evaluated = warmup.spaced_sample(dev_sentences, warmup.ENCODE_SAMPLE)
    step_s, batch_s = warmup.measure(
        model,
        lambda m, b: gausscse.triplet_loss(m, tokenizer, b, settings[0], base["reduction"]),
        warmup.spread_batches(tokenizer, batches, lambda b: [s for t in b for s in t]),
        lambda m: gausscse.encode(m, tokenizer, evaluated),
        len(evaluated),
    )
    trainings = len(settings) * len(seeds) * len(lrs or [None])
    rates = f" x {len(lrs)} learning rates at batch {base['batch_size']}" if lrs else ""
    # a training batch pads premises, entailments and contradictions together (3 x batch rows)
    per_triplet = 3 * warmup.row_tokens(
        tokenizer, [s for t in triplets[:4096] for s in t], 3 * base["batch_size"]
    )
    return budget.Plan(
        f"GaussCSE, {len(settings)} loss settings x {len(seeds)} seeds{rates}, {len(triplets):,} "
        "triplets",
        trainings,
        trainings * steps,
        trainings * encoded,
        step_s,
        batch_s,
        64,
        warmup.device_name(next(model.parameters()).device),
        warmup.parameters(model),
        trainings * steps * base["batch_size"] * per_triplet,
        trainings
        * encoded
        * warmup.row_tokens(tokenizer, [s for r in dev for s in (r["premise"], r["hypothesis"])]),
        True,
        True,
    )
