"""GaussCSE: a sentence is a Gaussian N(mu, diag(var)) read off its CLS vector by two linear
layers; sim(a||b) = 1 / (1 + KL(N_a||N_b)) (Eq. 2) is asymmetric, and a contrastive loss over
NLI triplets (Eq. 3) teaches premises broad and hypotheses narrow distributions.

Two heads (`HEADS`): "official" (the released code: mu = tanh(W_mu v), var = exp(W_var v),
i.e. std = sqrt(exp(log_var))) and "paper" (the text's two linear layers: mu = W_mu v, var =
softplus(W_var v) + 1e-4). Both are computed in float32 (also under bf16 autocast). The official
variance is floored at float32's smallest normal number, where exp would underflow to 0 and
log(var) to -inf (a departure only where the official form gives no number at all).
"""

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from defsent_lite.forward import (
    BATCHES_PER_COPY,
    ROWS_PER_COPY,
    autocast_for,
    check_sentences,
    eval_mode,
    hidden_states,
    length_batches,
    on_model_device,
    pad_batch,
    token_features,
    tokenize_sorted,
)

VAR_FLOOR = 1e-4  # the "paper" head's softplus offset
EXP_VAR_FLOOR = torch.finfo(torch.float32).tiny  # the "official" head's underflow guard
HEADS = ("official", "paper")
LOSS_SETTINGS = ("ent", "ent+con", "ent+rev", "ent+con+rev")
TEMPERATURE = 0.05


class GaussHead(nn.Module):
    """Two separate linear layers on the CLS vector: mean and (positive) diagonal variance."""

    def __init__(self, hidden, head="official"):
        super().__init__()
        if head not in HEADS:
            raise ValueError(f"unknown GaussCSE head {head!r}; choose from {HEADS}")
        self.head = head
        self.mean = nn.Linear(hidden, hidden)
        self.var = nn.Linear(hidden, hidden)

    def forward(self, v):
        v = v.float()
        with torch.autocast(v.device.type, enabled=False):
            if self.head == "official":
                return torch.tanh(self.mean(v)), torch.exp(self.var(v)).clamp_min(EXP_VAR_FLOOR)
            return self.mean(v), F.softplus(self.var(v)) + VAR_FLOOR


class GaussModel(nn.Module):
    """Encoder + GaussHead; forward(batch) -> (mu, var), each [B, d] float32."""

    def __init__(self, encoder, head="official"):
        super().__init__()
        self.encoder = encoder
        self.head = GaussHead(encoder.config.hidden_size, head)

    @property
    def config(self):
        return self.encoder.config

    def forward(self, batch):
        return self.head(hidden_states(self.encoder, batch)[:, 0])  # CLS (<s> for RoBERTa)


# ---------------------------------------------------------------- similarity


def kl_per_dim(mu_a, var_a, mu_b, var_b):
    """KL(N_a||N_b) per dimension for diagonal Gaussians (Appendix A); broadcasts, float32."""
    mu_a, var_a, mu_b, var_b = (t.float() for t in (mu_a, var_a, mu_b, var_b))
    return 0.5 * (
        torch.log(var_b) - torch.log(var_a) + var_a / var_b + (mu_a - mu_b) ** 2 / var_b - 1
    )


def kl_divergence(mu_a, var_a, mu_b, var_b):
    """KL(N_a||N_b) summed over the last dimension; O(d) per pair."""
    return kl_per_dim(mu_a, var_a, mu_b, var_b).sum(-1)


def kl_similarity(mu_a, var_a, mu_b, var_b, reduction="sum"):
    """sim(a||b) = 1 / (1 + KL(N_a||N_b)) (Eq. 2). Broadcasts: a [B,1,d] with b [1,B,d] gives [B,B].

    reduction="sum" is the paper's (KL over all dimensions); "mean_per_dim" averages
    1 / (1 + KL_d) over dimensions, as the official code does.
    """
    if reduction == "sum":
        return 1.0 / (1.0 + kl_divergence(mu_a, var_a, mu_b, var_b))
    if reduction == "mean_per_dim":
        return (1.0 / (1.0 + kl_per_dim(mu_a, var_a, mu_b, var_b))).mean(-1)
    raise ValueError(
        f"unknown similarity reduction {reduction!r}: use 'sum' (paper) or 'mean_per_dim' "
        "(official code)"
    )


def kl_matrix(mu_a, var_a, mu_b, var_b):
    """[n, m] matrix of KL(N_a[i]||N_b[j]) by matrix products, never materialising [n, m, d].

    Computed in float64: the expanded Mahalanobis term cancels (KL(a||a) = 0 is a difference
    of sums of size ~d), which in float32 leaves errors near 1e-4 for d = 384."""
    dtype = torch.float64
    mu_a, var_a, mu_b, var_b = (t.to(dtype) for t in (mu_a, var_a, mu_b, var_b))
    inv_b = 1.0 / var_b
    log_term = torch.log(var_b).sum(-1)[None, :] - torch.log(var_a).sum(-1)[:, None]
    trace = var_a @ inv_b.T
    maha = (mu_a**2) @ inv_b.T - 2 * mu_a @ (mu_b * inv_b).T + (mu_b**2 * inv_b).sum(-1)[None, :]
    return (0.5 * (log_term + trace + maha - mu_a.shape[-1])).float()


def similarity_matrix(mu_a, var_a, mu_b, var_b, reduction="sum"):
    """[n, m] matrix of sim(a[i]||b[j]); the paper's sum uses the matmul form (kl_matrix)."""
    if reduction == "sum":
        return 1.0 / (1.0 + kl_matrix(mu_a, var_a, mu_b, var_b).clamp(min=0))
    return kl_similarity(mu_a[:, None], var_a[:, None], mu_b[None], var_b[None], reduction)


# ---------------------------------------------------------------- loss (Eq. 3)


def contrastive_loss(pre, ent, con, setting="ent+con", temperature=TEMPERATURE, reduction="sum"):
    """Eq. 3 over a batch of triplets; pre/ent/con are (mu, var) pairs of [B, d].

    Row i's candidates: sim(ent_j||pre_i) for all j (positive j = i), plus sim(con_j||pre_i)
    with "con", plus sim(pre_j||ent_i) (the reversed entailment pairs) with "rev".
    """
    if setting not in LOSS_SETTINGS:
        raise ValueError(f"unknown loss setting {setting!r}; choose from {LOSS_SETTINGS}")
    shapes = {
        name: [tuple(t.shape) for t in pair]
        for name, pair in (("pre", pre), ("ent", ent), ("con", con))
    }
    if len({s for pair in shapes.values() for s in pair}) != 1 or len(shapes["pre"][0]) != 2:
        raise ValueError(
            "contrastive loss: (mu, var) of premises, entailments and contradictions must all be "
            f"[B, d] of one shape; got {shapes}"
        )
    if not (
        isinstance(temperature, (int, float)) and math.isfinite(temperature) and temperature > 0
    ):
        raise ValueError(
            f"contrastive loss: temperature={temperature!r}: a finite number > 0 is needed"
        )
    for n, (_, var) in (("pre", pre), ("ent", ent), ("con", con)):
        if var.device.type != "cpu":  # a check would wait for the device each step: the loop's
            continue  # guards catch a NaN there
        if not torch.isfinite(var).all():
            raise FloatingPointError(
                f"contrastive loss: the variances of {n} are NaN or inf (the encoder diverged; "
                "try a lower learning rate)"
            )
        if not (var > 0).all():
            raise ValueError(
                f"contrastive loss: the variances of {n} must be > 0 (KL divides by them)"
            )
    if len(pre[0]) < 2:  # the other rows of the batch are the negatives: one row has none
        raise ValueError(
            f"contrastive loss: a batch of {len(pre[0])} triplet(s); in-batch negatives need at "
            "least 2"
        )
    # [i, j] = sim(ent_j||pre_i)
    blocks = [similarity_matrix(ent[0], ent[1], pre[0], pre[1], reduction).T]
    if "con" in setting:
        # sim(con_j||pre_i)
        blocks.append(similarity_matrix(con[0], con[1], pre[0], pre[1], reduction).T)
    if "rev" in setting:
        # sim(pre_j||ent_i)
        blocks.append(similarity_matrix(pre[0], pre[1], ent[0], ent[1], reduction).T)
    logits = torch.cat(blocks, dim=1) / temperature
    return F.cross_entropy(logits, torch.arange(len(logits), device=logits.device))


# ---------------------------------------------------------------- encoding


class TokenizedTriplets(NamedTuple):
    """A batch of (premise, entailment, contradiction) triplets and the token features of its
    sentences, column by column (premises, then entailments, then contradictions)."""

    triplets: list
    features: list


def tokenize_triplet_batches(tokenizer, batches, max_length=64):
    """Every batch's sentences tokenised before training in one call (forward.token_features): a
    step then only pads its batch. -> [TokenizedTriplets], one per batch."""
    columns = [[s for column in zip(*b) for s in column] for b in batches]
    features = token_features(tokenizer, [s for c in columns for s in c], max_length)
    out, start = [], 0
    for batch, sentences in zip(batches, columns):
        out.append(TokenizedTriplets(batch, features[start : start + len(sentences)]))
        start += len(sentences)
    return out


def triplet_loss(model, tokenizer, batch, setting, reduction, max_length=64):
    """Eq. 3 on a batch of (premise, entailment, contradiction) triplets (or TokenizedTriplets),
    the three columns encoded in one forward pass of the GaussModel."""
    if not isinstance(batch, TokenizedTriplets):
        batch = tokenize_triplet_batches(tokenizer, [batch], max_length)[0]
    features = batch.features
    mu, var = model(on_model_device(model, pad_batch(tokenizer, features, range(len(features)))))
    n = len(batch.triplets)
    pre, ent, con = [(mu[k * n : (k + 1) * n], var[k * n : (k + 1) * n]) for k in range(3)]
    return contrastive_loss(pre, ent, con, setting, reduction=reduction)


@torch.no_grad()
def encode(model, tokenizer, sentences, batch_size=64, max_length=64):
    """(mu, var) float32 CPU tensors [n, d] in input order; length-sorted batches, no fixed padding
    (forward.length_batches), copied to the host in groups (a copy waits for the GPU)."""
    sentences = list(sentences)
    check_sentences(sentences)
    device = next(model.parameters()).device
    features, order = tokenize_sorted(tokenizer, sentences, max_length)
    d = model.config.hidden_size
    mu, var = torch.empty(len(sentences), d), torch.empty(len(sentences), d)
    pending = []  # (index list, mu, var) still on the device

    def copy_pending():
        if pending:
            idx = [i for ids, _, _ in pending for i in ids]
            mu[idx] = torch.cat([m for _, m, _ in pending]).cpu()
            var[idx] = torch.cat([v for _, _, v in pending]).cpu()
            pending.clear()

    with eval_mode(model), autocast_for(device):
        for k, idx in enumerate(length_batches(features, order, batch_size, device), 1):
            batch = on_model_device(model, pad_batch(tokenizer, features, idx))
            m, v = model(batch)
            pending.append((idx, m.float(), v.float()))
            if k % BATCHES_PER_COPY == 0 or sum(len(p[0]) for p in pending) >= ROWS_PER_COPY:
                copy_pending()
        copy_pending()
    return mu, var
