"""Cached STS and SentEval scores of an encoder as it is loaded (no training), per pooling.

Several notebooks show the same rows (the untrained model's CLS and mean STS in 01, 11, 21, 22;
its SentEval rows in 01, 12, 24): each (model, pooling, setting) is computed once per cache, and
the poolings asked for together share one forward pass (`encode.embedders`). A trained run's
scores are cached under the run's key (`trained_sts`, `trained_transfer`), so they outlive its
checkpoint: DefSent keeps only the first seed's (see `defsent_runs.final_runs`).
SentEval (its classifiers and scikit-learn) is imported where a transfer score is computed, so
that a notebook scoring STS alone does not load it.
"""

from defsent_lite import encode
from defsent_lite.runtime import cache, config, models
from defsent_lite.evaluation import sts
from defsent_lite.paper import results


def cached_per_pooling(kind, cfg, poolings, compute_many):
    """{pooling: result}, each cached under cfg + pooling; the missing ones computed together."""
    key = {p: dict(cfg, pooling=p) for p in poolings}
    found = {p: cache.lookup_json(kind, key[p]) for p in poolings}
    missing = [p for p in poolings if found[p] is None]
    if missing:
        for p, result in compute_many(missing).items():
            found[p] = cache.store_json(kind, key[p], result)
    return found


def untrained_sts(name_or_path, poolings, max_pairs, data_dir=None, batch_size=64, files="raw"):
    """{pooling: STS scores} of the model as loaded (max_pairs evenly spaced pairs per task);
    files: "raw" (the official releases: DefSent, GaussCSE) or "senteval" (SentEval's tokenised
    files: DefSent+)."""

    def compute(missing):
        model, tokenizer = models.load(name_or_path)
        embeds = encode.embedders(model, tokenizer, missing, batch_size=batch_size)
        return sts.evaluate_each(embeds, data_dir, variant=files, max_pairs=max_pairs)

    cfg = dict(
        model=str(name_or_path),
        max_pairs=max_pairs,
        data=cache.data_identity(data_dir, f"sts/{files}"),
    )
    return cached_per_pooling("sts_untrained", cfg, list(poolings), compute)


def untrained_transfer(name_or_path, poolings, scale, data_dir=None, batch_size=64):
    """{pooling: SentEval scores} of the model as loaded, with the scale's transfer settings."""
    settings = transfer_settings(scale)

    def compute(missing):
        from defsent_lite.evaluation import senteval

        model, tokenizer = models.load(name_or_path)
        embeds = encode.embedders(
            model, tokenizer, missing, batch_size=batch_size, allow_empty=True
        )
        return senteval.evaluate_each(embeds, data_dir=data_dir, **settings)

    cfg = dict(model=str(name_or_path), data=cache.data_identity(data_dir, "senteval"), **settings)
    return cached_per_pooling("transfer_untrained", cfg, list(poolings), compute)


def transfer_scores(name_or_path, pooling, scale, data_dir=None, batch_size=64):
    """SentEval scores of a (trained) encoder under one pooling, with the scale's settings."""
    return encoder_transfer(name_or_path, pooling, transfer_settings(scale), data_dir, batch_size)


def transfer_before_after(
    model,
    trained_path,
    pooling,
    scale,
    data_dir=None,
    names=("untrained", "trained"),
    untrained_poolings=None,
):
    """SentEval rows (named `names`, columns results.TRANSFER_COLS) of a model as loaded (cached)
    and of an encoder trained from it under `pooling`, with the scale's settings. The model as
    loaded is scored under `pooling`, or under whichever of `untrained_poolings` has the higher
    average (a published row that reports the better of several), named in the table's attrs."""
    batch = scale["encode_batch_size"]
    candidates = untrained_transfer(
        model, list(untrained_poolings or [pooling]), scale, data_dir, batch
    )
    best = max(candidates, key=lambda p: candidates[p]["avg"])
    rows = [candidates[best], transfer_scores(trained_path, pooling, scale, data_dir, batch)]
    table = results.paper_table(
        {n: [r[c] for c in results.TRANSFER_COLS] for n, r in zip(names, rows)},
        results.TRANSFER_COLS,
    )
    table.attrs["untrained_pooling"] = best
    return table


def encoder_transfer(name_or_path, pooling, settings, data_dir=None, batch_size=64):
    """SentEval scores of an encoder under one pooling and `senteval.evaluate` settings."""
    from defsent_lite.evaluation import senteval

    model, tokenizer = models.load(name_or_path)
    embed = encode.embedder(model, tokenizer, pooling, batch_size=batch_size, allow_empty=True)
    return senteval.evaluate(embed, data_dir=data_dir, **settings)


def trained_sts(run, pooling, max_pairs, data_dir=None, batch_size=64):
    """STS scores of a trained run's encoder (`run`: a result with "key" and "path"), cached by the
    run's key; computed from its checkpoint the first time only."""

    def compute():
        model, tokenizer = models.load(checkpoint_of(run, "STS"))
        return sts.evaluate(
            encode.embedder(model, tokenizer, pooling, batch_size=batch_size),
            data_dir,
            max_pairs=max_pairs,
        )

    return cache.cached_json(
        "sts_trained", trained_sts_key(run, pooling, max_pairs, data_dir), compute
    )


def mean_trained_sts(runs, pooling, max_pairs, data_dir=None, batch_size=64):
    """{task: mean over `runs`} of trained_sts (the raw STS files, DefSent's own protocol): a
    published row that averages seeds stands beside the same average of ours."""
    if not runs:
        raise ValueError("mean_trained_sts: no runs to average")
    each = [trained_sts(run, pooling, max_pairs, data_dir, batch_size) for run in runs]
    return {task: sum(s[task] for s in each) / len(each) for task in each[0]}


def trained_transfer(run, pooling, settings, data_dir=None, batch_size=64):
    """SentEval scores of a trained run's encoder under `settings` (`transfer_settings(scale)`),
    cached by the run's key; computed from its checkpoint the first time only."""

    def compute():
        return encoder_transfer(
            checkpoint_of(run, "SentEval"), pooling, settings, data_dir, batch_size
        )

    return cache.cached_json(
        "transfer_trained", trained_transfer_key(run, pooling, settings, data_dir), compute
    )


def trained_sts_key(run, pooling, max_pairs, data_dir=None):
    return dict(
        run=run["key"],
        pooling=pooling,
        max_pairs=max_pairs,
        data=cache.data_identity(data_dir, "sts/raw"),
    )


def trained_transfer_key(run, pooling, settings, data_dir=None):
    return dict(
        run=run["key"], pooling=pooling, data=cache.data_identity(data_dir, "senteval"), **settings
    )


def checkpoint_of(run, what):
    if run.get("path") is None:
        raise FileNotFoundError(
            f"{what} scores of run {run['key']} are not cached and its checkpoint was dropped; "
            "train it again (final_runs does so when its scores are missing)"
        )
    return run["path"]


def seed_scoring(scale, data_dir=None):
    """What a trained DefSent seed is scored on before its checkpoint is dropped: the STS and
    SentEval evaluations that notebooks 11 and 12 show, with the scale's settings."""
    return dict(
        sts_max_pairs=scale["sts_max_pairs"],
        transfer=transfer_settings(scale),
        batch_size=scale["encode_batch_size"],
        data_dir=str(config.data_root(data_dir)),
    )


def score_trained(run, pooling, scoring):
    """Cache the STS and SentEval scores of a trained run (`seed_scoring`'s evaluations; SentEval
    skipped where scoring["transfer"] is None)."""
    trained_sts(run, pooling, scoring["sts_max_pairs"], scoring["data_dir"], scoring["batch_size"])
    if scoring["transfer"] is not None:
        trained_transfer(
            run, pooling, scoring["transfer"], scoring["data_dir"], scoring["batch_size"]
        )


def trained_scores_cached(run, pooling, scoring):
    """Whether both of `seed_scoring`'s evaluations of this run are in the cache."""
    d = scoring["data_dir"]
    return cache.lookup_json(
        "sts_trained", trained_sts_key(run, pooling, scoring["sts_max_pairs"], d)
    ) is not None and (
        scoring["transfer"] is None
        or cache.lookup_json(
            "transfer_trained", trained_transfer_key(run, pooling, scoring["transfer"], d)
        )
        is not None
    )


def transfer_settings(scale):
    """The SentEval protocol settings of a scale, as `senteval.evaluate` takes them."""
    return dict(
        kfold=scale["transfer_kfold"],
        inner_search=scale["transfer_inner_search"],
        max_examples=scale["transfer_max_examples"],
        max_eval=scale["transfer_max_eval"],
        classifier=scale["transfer_classifier"],
    )


def transfer_text(scale):
    """A scale's SentEval protocol in words, for a result file's metadata."""
    return (
        f"SentEval max {scale['transfer_max_examples']} train / {scale['transfer_max_eval']} "
        f"dev-test examples, {scale['transfer_kfold']}-fold, "
        f"inner C search {scale['transfer_inner_search']}"
    )
