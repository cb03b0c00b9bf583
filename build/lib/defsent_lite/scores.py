"""Cached STS and SentEval scores of an encoder as it is loaded (no training), per pooling.

Several notebooks show the same rows (the untrained model's CLS and mean STS in 01, 11, 21, 22;
its SentEval rows in 01, 12, 24): each (model, pooling, setting) is computed once per cache, and
the poolings asked for together share one forward pass (`encode.embedders`).
"""
from . import cache, encode, models, sts, transfer


def cached_per_pooling(kind, cfg, poolings, compute_many):
    """{pooling: result}, each cached under cfg + pooling; the missing ones computed together."""
    key = {p: dict(cfg, pooling=p) for p in poolings}
    found = {p: cache.lookup_json(kind, key[p]) for p in poolings}
    missing = [p for p in poolings if found[p] is None]
    if missing:
        for p, result in compute_many(missing).items():
            found[p] = cache.store_json(kind, key[p], result)
    return found


def untrained_sts(name_or_path, poolings, max_pairs, data_dir=None, batch_size=64):
    """{pooling: STS scores} of the model as loaded (max_pairs evenly spaced pairs per task)."""
    def compute(missing):
        model, tokenizer = models.load(name_or_path)
        embeds = encode.embedders(model, tokenizer, missing, batch_size=batch_size)
        return sts.evaluate_each(embeds, data_dir, max_pairs=max_pairs)
    cfg = dict(model=str(name_or_path), max_pairs=max_pairs, data=cache.data_identity(data_dir, "sts/raw"))
    return cached_per_pooling("sts_untrained", cfg, list(poolings), compute)


def untrained_transfer(name_or_path, poolings, scale, data_dir=None, batch_size=64):
    """{pooling: SentEval scores} of the model as loaded, with the scale's transfer settings."""
    settings = transfer_settings(scale)

    def compute(missing):
        model, tokenizer = models.load(name_or_path)
        embeds = encode.embedders(model, tokenizer, missing, batch_size=batch_size, allow_empty=True)
        return transfer.evaluate_each(embeds, data_dir=data_dir, **settings)
    cfg = dict(model=str(name_or_path), data=cache.data_identity(data_dir, "senteval"), **settings)
    return cached_per_pooling("transfer_untrained", cfg, list(poolings), compute)


def transfer_scores(name_or_path, pooling, scale, data_dir=None, batch_size=64):
    """SentEval scores of a (trained) encoder under one pooling, with the scale's settings."""
    model, tokenizer = models.load(name_or_path)
    embed = encode.embedder(model, tokenizer, pooling, batch_size=batch_size, allow_empty=True)
    return transfer.evaluate(embed, data_dir=data_dir, **transfer_settings(scale))


def transfer_settings(scale):
    """The SentEval protocol settings of a scale, as `transfer.evaluate` takes them."""
    return dict(kfold=scale["transfer_kfold"], inner_search=scale["transfer_inner_search"],
                max_examples=scale["transfer_max_examples"], max_eval=scale["transfer_max_eval"])
