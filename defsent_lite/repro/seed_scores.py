"""What a trained DefSent seed is scored on before its checkpoint is dropped
(defsent_runs.final_runs keeps only the first seed's): the STS and SentEval evaluations notebooks 11
and 12 show, cached under the run's key."""

from defsent_lite.runtime import cache, config
from defsent_lite.repro import scores, transfer_scores


def seed_scoring(scale, data_dir=None):
    """What a trained DefSent seed is scored on before its checkpoint is dropped: the STS and
    SentEval evaluations that notebooks 11 and 12 show, with the scale's settings."""
    return dict(
        sts_max_pairs=scale["sts_max_pairs"],
        transfer=transfer_scores.transfer_settings(scale),
        batch_size=scale["encode_batch_size"],
        data_dir=str(config.data_root(data_dir)),
    )


def score_trained(run, pooling, scoring):
    """Cache the STS and SentEval scores of a trained run (`seed_scoring`'s evaluations; SentEval
    skipped where scoring["transfer"] is None)."""
    scores.trained_sts(
        run, pooling, scoring["sts_max_pairs"], scoring["data_dir"], scoring["batch_size"]
    )
    if scoring["transfer"] is not None:
        transfer_scores.trained_transfer(
            run, pooling, scoring["transfer"], scoring["data_dir"], scoring["batch_size"]
        )


def trained_scores_cached(run, pooling, scoring):
    """Whether both of `seed_scoring`'s evaluations of this run are in the cache."""
    d = scoring["data_dir"]
    return cache.lookup_json(
        "sts_trained", scores.trained_sts_key(run, pooling, scoring["sts_max_pairs"], d)
    ) is not None and (
        scoring["transfer"] is None
        or cache.lookup_json(
            "transfer_trained",
            transfer_scores.trained_transfer_key(run, pooling, scoring["transfer"], d),
        )
        is not None
    )
