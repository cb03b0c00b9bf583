"""Cached SentEval (transfer) scores of an encoder, as it is loaded (no training) or trained, per
pooling, under a scale's SentEval settings (notebooks 01, 12, 24, 25). SentEval (its classifiers and
scikit-learn) is imported where a transfer score is computed, so that loading this module does not
load it; the STS scores are evaluation/sts'."""

from defsent_lite import encode
from defsent_lite.runtime import cache, models
from defsent_lite.paper import results
from defsent_lite.evaluation import sts


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
    return sts.cached_per_pooling("transfer_untrained", cfg, list(poolings), compute)


def encoder_transfer_at(name_or_path, pooling, scale, data_dir=None, batch_size=64):
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
    rows = [candidates[best], encoder_transfer_at(trained_path, pooling, scale, data_dir, batch)]
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


def trained_transfer(run, pooling, settings, data_dir=None, batch_size=64):
    """SentEval scores of a trained run's encoder under `settings` (`transfer_settings(scale)`),
    cached by the run's key; computed from its checkpoint the first time only."""

    def compute():
        return encoder_transfer(
            sts.checkpoint_of(run, "SentEval"), pooling, settings, data_dir, batch_size
        )

    return cache.cached_json(
        "transfer_trained", trained_transfer_key(run, pooling, settings, data_dir), compute
    )


def trained_transfer_key(run, pooling, settings, data_dir=None):
    return dict(
        run=run["key"], pooling=pooling, data=cache.data_identity(data_dir, "senteval"), **settings
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
        f"dev-test examples, {scale['transfer_kfold']}-fold, inner C search "
        f"{scale['transfer_inner_search']}"
    )
