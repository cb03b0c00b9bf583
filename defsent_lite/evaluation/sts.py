"""Unsupervised STS: Spearman x100 between cosine similarity and gold, "all" setting.

STS12-16: each year's subsets concatenated (empty gold dropped, STS13 without SMT);
STS-B and SICK-R: the test sets. Every distinct sentence is embedded once across tasks.

The scores of a model as loaded (no training) or trained are cached per pooling: several notebooks
show the same rows (the untrained model's CLS and mean in 01, 11, 21, 22), each (model, pooling,
setting) is computed once per cache, and the poolings asked for together share one forward pass
(`encode.embedders`). A trained run's scores are cached under the run's key (`trained_sts`), so
they outlive its checkpoint (DefSent keeps only the first seed's: `defsent_protocol.final_runs`).
The SentEval scores are evaluation/senteval's.
"""

import numpy as np

from defsent_lite import encode
from defsent_lite.checks import require_finite, require_nonempty
from defsent_lite.data import eval_readers
from defsent_lite.runtime import cache, models

TASKS = eval_readers.STS_TASKS


def as_numpy(x):
    """Array or tensor -> float64 numpy array."""
    if hasattr(x, "detach"):
        x = x.detach().float().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def cosine_rows(a, b):
    """Cosine similarity of matching rows of a and b."""
    na = np.linalg.norm(a, axis=1).clip(min=1e-12)
    nb = np.linalg.norm(b, axis=1).clip(min=1e-12)
    return (a * b).sum(1) / (na * nb)


def spearman_x100(pred, gold, what="STS"):
    """Spearman x100; empty, non-finite or constant input is an error naming `what` (else NaN)."""
    pred, gold = np.asarray(pred, np.float64), np.asarray(gold, np.float64)
    require_nonempty(gold, f"{what}: pairs")
    require_finite(pred, f"{what}: predicted similarities")
    require_finite(gold, f"{what}: gold scores")
    for values, name in ((gold, "gold score"), (pred, "predicted similarity")):
        if np.ptp(values) == 0:
            raise ValueError(
                f"{what}: every pair has the same {name} ({values[0]:g}); Spearman is undefined"
            )
    from scipy.stats import spearmanr  # here: scipy.stats costs a kernel about 2 s to import

    return float(100.0 * spearmanr(pred, gold).statistic)


def load_tasks(tasks=None, data_dir=None, variant="raw", max_pairs=None):
    """{task: (s1, s2, gold)}; max_pairs keeps an evenly spaced subset of each task (smoke runs)."""
    out = {}
    for task in tasks or TASKS:
        s1, s2, gold = eval_readers.load_sts(task, data_dir, variant)
        if max_pairs and len(gold) > max_pairs:
            keep = np.linspace(0, len(gold) - 1, max_pairs).round().astype(int)
            s1, s2, gold = [s1[i] for i in keep], [s2[i] for i in keep], [gold[i] for i in keep]
        out[task] = (s1, s2, gold)
    return out


def embed_unique(embed, sentences):
    """Embed each distinct sentence once: {sentence: row index}, matrix."""
    unique = list(dict.fromkeys(sentences))
    vectors = as_numpy(embed(unique))
    if vectors.shape[0] != len(unique):
        raise ValueError(f"embed returned {vectors.shape[0]} rows for {len(unique)} sentences")
    if not np.isfinite(vectors).all():
        raise ValueError("embed returned NaN or inf values")
    return {s: i for i, s in enumerate(unique)}, vectors


def evaluate(embed, data_dir=None, tasks=None, variant="raw", max_pairs=None):
    """Spearman x100 per task and their average 'avg'. `embed(list[str]) -> [n, d]`."""
    return evaluate_each({"_": embed}, data_dir, tasks, variant, max_pairs)["_"]


def evaluate_each(embeds, data_dir=None, tasks=None, variant="raw", max_pairs=None):
    """{name: scores} for several embed functions (e.g. `encode.embedders`' poolings, which then
    share one forward pass): the data is read once and the same sentence list goes to each."""
    loaded = load_tasks(tasks, data_dir, variant, max_pairs)
    all_sentences = [s for s1, s2, _ in loaded.values() for s in s1 + s2]
    out = {}
    for name, embed in embeds.items():
        index, vectors = embed_unique(embed, all_sentences)
        scores = {}
        for task, (s1, s2, gold) in loaded.items():
            a = vectors[[index[s] for s in s1]]
            b = vectors[[index[s] for s in s2]]
            scores[task] = spearman_x100(cosine_rows(a, b), gold, task)
        scores["avg"] = float(np.mean(list(scores.values())))
        out[name] = scores
    return out


# ---------------------------------------------------------------- cached scores of a model


def cached_per_pooling(kind, cfg, poolings, compute_many):
    """{pooling: result}, each cached under cfg + pooling; the missing ones computed together."""
    key = {p: cache.config_key(dict(cfg, pooling=p)) for p in poolings}  # once, before the run
    found = {p: cache.lookup_json(kind, key[p]) for p in poolings}
    missing = [p for p in poolings if found[p] is None]
    if missing:
        for p, result in compute_many(missing).items():
            found[p] = cache.store_json(kind, dict(cfg, pooling=p), result, key[p])
    return found


def untrained_sts(name_or_path, poolings, max_pairs, data_dir=None, batch_size=64, files="raw"):
    """{pooling: STS scores} of the model as loaded (max_pairs evenly spaced pairs per task);
    files: "raw" (the official releases: DefSent, GaussCSE) or "senteval" (SentEval's tokenised
    files: DefSent+)."""

    def compute(missing):
        model, tokenizer = models.load(name_or_path)
        embeds = encode.embedders(model, tokenizer, missing, batch_size=batch_size)
        return evaluate_each(embeds, data_dir, variant=files, max_pairs=max_pairs)

    cfg = dict(
        model=str(name_or_path),
        max_pairs=max_pairs,
        data=cache.data_identity(data_dir, f"sts/{files}"),
    )
    return cached_per_pooling("sts_untrained", cfg, list(poolings), compute)


def trained_sts(run, pooling, max_pairs, data_dir=None, batch_size=64, files="raw"):
    """STS scores of a trained run's encoder (`run`: a result with "key" and "path"), cached by the
    run's key; computed from its checkpoint the first time only (files: as untrained_sts)."""

    def compute():
        model, tokenizer = models.load(checkpoint_of(run, "STS"))
        return evaluate(
            encode.embedder(model, tokenizer, pooling, batch_size=batch_size),
            data_dir,
            variant=files,
            max_pairs=max_pairs,
        )

    return cache.cached_json(
        "sts_trained", trained_sts_key(run, pooling, max_pairs, data_dir, files), compute
    )


def trained_sts_key(run, pooling, max_pairs, data_dir=None, files="raw"):
    return dict(
        run=run["key"],
        pooling=pooling,
        max_pairs=max_pairs,
        data=cache.data_identity(data_dir, f"sts/{files}"),
    )


def checkpoint_of(run, what):
    if run.get("path") is None:
        raise FileNotFoundError(
            f"{what} scores of run {run['key']} are not cached and its checkpoint was dropped; "
            "train it again (final_runs does so when its scores are missing)"
        )
    return run["path"]
