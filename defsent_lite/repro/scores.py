"""Cached STS scores of an encoder, as it is loaded (no training) or trained, per pooling; the
SentEval scores are transfer_scores'.

Several notebooks show the same rows (the untrained model's CLS and mean STS in 01, 11, 21, 22):
each (model, pooling, setting) is computed once per cache, and the poolings asked for together
share one forward pass (`encode.embedders`). A trained run's scores are cached under the run's key
(`trained_sts`), so they outlive its checkpoint: DefSent keeps only the first seed's (see
`defsent_protocol.final_runs`).
"""

from defsent_lite import encode
from defsent_lite.runtime import cache, models
from defsent_lite.evaluation import sts


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


def trained_sts_key(run, pooling, max_pairs, data_dir=None):
    return dict(
        run=run["key"],
        pooling=pooling,
        max_pairs=max_pairs,
        data=cache.data_identity(data_dir, "sts/raw"),
    )


def checkpoint_of(run, what):
    if run.get("path") is None:
        raise FileNotFoundError(
            f"{what} scores of run {run['key']} are not cached and its checkpoint was dropped; "
            "train it again (final_runs does so when its scores are missing)"
        )
    return run["path"]
