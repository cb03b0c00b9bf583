"""Scores of a GaussCSE model: sentence Gaussians encoded once per distinct sentence, asymmetric
similarities of pairs, SNLI-dev AUPRC for model selection, the NLI and direction rows of Tables
1-4; and the vectors a cosine baseline scores."""

import torch

from defsent_lite import encode, gausscse
from defsent_lite.evaluation import nli
from defsent_lite.repro.gausscse_data import direction_pairs


def sentence_gaussians(model, tokenizer, sentences, batch_size=64):
    """(mu, var, row of each sentence): every distinct sentence encoded once, for all the pairs
    built on them."""
    uniq = list(dict.fromkeys(sentences))
    mu, var = gausscse.encode(model, tokenizer, uniq, batch_size=batch_size)
    return mu, var, {s: i for i, s in enumerate(uniq)}


def similarities_in(gaussians, first, second, reduction="sum"):
    """sim(first[k]||second[k]) and sim(second[k]||first[k]) for each k, from sentence_gaussians'
    table."""
    mu, var, pos = gaussians
    a = torch.tensor([pos[s] for s in first], dtype=torch.long)
    b = torch.tensor([pos[s] for s in second], dtype=torch.long)
    fwd = gausscse.kl_similarity(mu[a], var[a], mu[b], var[b], reduction)
    bwd = gausscse.kl_similarity(mu[b], var[b], mu[a], var[a], reduction)
    return fwd.numpy(), bwd.numpy()


def pair_similarities(model, tokenizer, first, second, reduction="sum", batch_size=64):
    """sim(first[k]||second[k]) for each k, and sim(second[k]||first[k]); each distinct sentence
    encoded once."""
    return similarities_in(
        sentence_gaussians(model, tokenizer, list(first) + list(second), batch_size),
        first,
        second,
        reduction,
    )


def nli_scores(model, tokenizer, rows, reduction="mean_per_dim"):
    """sim(hyp||pre) per NLI row (the score thresholded for entailment)."""
    fwd, _ = pair_similarities(
        model, tokenizer, [r["hypothesis"] for r in rows], [r["premise"] for r in rows], reduction
    )
    return fwd


def dev_auprc_fn(tokenizer, dev_rows, reduction, what="GaussCSE", metrics="official"):
    """eval_fn for train.train: SNLI-dev AUPRC (the paper's model selection, every 100 steps)."""
    labels = nli.binary_labels(dev_rows)
    return lambda model: nli.area_under_pr(
        nli_scores(model, tokenizer, dev_rows, reduction),
        labels,
        metrics,
        what=f"{what}: SNLI-dev AUPRC",
    )


def evaluate(
    model,
    tokenizer,
    dev_rows,
    test_sets,
    sick_full,
    reduction="mean_per_dim",
    what="GaussCSE",
    metrics="official",
    sick_pairs="one-way",
):
    """Table 1/3 (accuracy with the SNLI-dev threshold, AUPRC) and Table 2/4 (direction) rows,
    plus per-example correctness for McNemar's test. `what` names the run in errors; metrics:
    one of nli.METRICS."""
    dev_scores, dev_labels = (
        nli_scores(model, tokenizer, dev_rows, reduction),
        nli.binary_labels(dev_rows),
    )
    threshold = nli.threshold_for(
        dev_scores, dev_labels, metrics, what=f"{what}: SNLI-dev threshold"
    )
    out = dict(
        threshold=threshold,
        dev_auprc=nli.area_under_pr(
            dev_scores, dev_labels, metrics, what=f"{what}: SNLI-dev AUPRC"
        ),
        nli={},
        direction={},
        nli_correct={},
        direction_correct={},
    )
    for name, rows in test_sets.items():
        hyps, pres = [r["hypothesis"] for r in rows], [r["premise"] for r in rows]
        entailing, entailed = direction_pairs(name, rows, sick_full, sick_pairs)[:2]
        # NLI and direction share it
        table = sentence_gaussians(model, tokenizer, hyps + pres + entailing + entailed)
        scores, labels = similarities_in(table, hyps, pres, reduction)[0], nli.binary_labels(rows)
        out["nli"][name] = dict(
            acc=100 * nli.accuracy(scores, labels, threshold, f"{what}: {name} accuracy", metrics),
            auprc=100 * nli.area_under_pr(scores, labels, metrics, what=f"{what}: {name} AUPRC"),
        )
        out["nli_correct"][name] = (
            (nli.predicted_entailment(scores, threshold, metrics) == (labels == 1))
            .astype(int)
            .tolist()
        )
        fwd, bwd = similarities_in(table, entailed, entailing, reduction)  # sim(B||A), sim(A||B)
        out["direction"][name] = 100 * nli.direction_accuracy(fwd, bwd)
        out["direction_correct"][name] = (fwd > bwd).astype(int).tolist()
    return out


def sentence_vectors(model, tokenizer, sentences, pooling):
    """Encoder vectors for a cosine baseline: a pooling of encode.POOLINGS, or "pooler" (the
    CLS state through the encoder's pooler, dense + tanh: where supervised SimCSE's released
    checkpoints keep the MLP their sentence vectors pass through)."""
    if pooling != "pooler":
        return encode.encode(model, tokenizer, sentences, pooling=pooling)
    cls = encode.encode(model, tokenizer, sentences, pooling="cls")
    pooler = getattr(model.base_model, "pooler", None)
    if pooler is None:
        raise ValueError(
            f"{type(model).__name__} has no pooler: use a pooling of {encode.POOLINGS}"
        )
    device = next(model.parameters()).device
    with torch.no_grad():
        return pooler.activation(pooler.dense(cls.to(device))).float().cpu()
