"""DefSent+: entry embeddings from definitions (Eq. 2), a definition scored against every entry
(Eq. 5), and the ICA transform of the entry space (Sec. 3.3).

An entry embedding averages the pooled embeddings of an entry's definitions (AC: CLS, AMP: mean
pooling); training pushes each definition towards its own entry, the entry space frozen."""

import warnings

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.decomposition import FastICA
from sklearn.preprocessing import StandardScaler
from torch import nn
from tqdm.auto import tqdm

from defsent_lite import forward
from defsent_lite.forward import (
    autocast_for,
    check_sentences,
    eval_mode,
    hidden_states,
    length_batches,
    on_model_device,
    pad_batch,
    tokenize_sorted,
)
from defsent_lite.pooling import pool

ENTRY_POOLINGS = {"cls": "AC", "mean": "AMP"}


@torch.no_grad()
def build_entry_embeddings(
    model,
    tokenizer,
    entry_ids,
    definitions,
    pooling="cls",
    batch_size=128,
    max_length=512,
    n_entries=None,
    progress=None,
    mixed_precision=False,
):
    """[number of entries, hidden] float32 CPU tensor; entry_ids[i] is the entry of definitions[i].
    As the official code: no cut below the models' 512 positions, fp32 (mixed_precision=True:
    bf16/fp16 autocast on GPU)."""
    if pooling not in ENTRY_POOLINGS:
        raise ValueError(f"entry embeddings use cls (AC) or mean (AMP) pooling, not {pooling!r}")
    if len(entry_ids) != len(definitions):
        raise ValueError(f"{len(entry_ids)} entry ids for {len(definitions)} definitions")
    check_sentences(definitions)
    ids = torch.as_tensor(entry_ids, dtype=torch.long)
    n_entries = int(ids.max()) + 1 if n_entries is None else n_entries
    counts = torch.bincount(ids, minlength=n_entries)
    if (counts == 0).any():
        raise ValueError(f"{int((counts == 0).sum())} entries have no definition; drop them first")
    sums = torch.zeros(n_entries, model.config.hidden_size, dtype=torch.float64)
    device = next(model.parameters()).device
    features, order = tokenize_sorted(tokenizer, definitions, max_length)
    show = forward.bars_shown(progress)
    with eval_mode(model), autocast_for(device, enabled=mixed_precision):
        for idx in tqdm(
            length_batches(features, order, batch_size, device),
            desc=f"entries ({ENTRY_POOLINGS[pooling]})",
            disable=not show,
            leave=False,
        ):
            batch = on_model_device(model, pad_batch(tokenizer, features, idx))
            vec = pool(pooling, hidden_states(model, batch), batch["attention_mask"])
            sums.index_add_(0, ids[idx], vec.double().cpu())
    return (sums / counts[:, None]).float()  # Eq. 2


@torch.no_grad()
def pooler_from_mlm_head(model, mlm_model):
    """Copy the MLM head's dense layer (RoBERTa's lm_head.dense, BERT's transform.dense) into
    pooler.dense and switch the pooler's activation to GELU: Sec. 3.2's pooler for a model
    pre-trained without next-sentence prediction."""
    head = getattr(mlm_model, "lm_head", None) or mlm_model.cls.predictions.transform
    model.pooler.dense.weight.copy_(head.dense.weight)
    model.pooler.dense.bias.copy_(head.dense.bias)
    model.pooler.activation = nn.GELU()
    return model


def pooler_output(model, pooled):
    """h_theta(s): the pooler's dense layer and activation on a pooled vector (CLS or mean)."""
    return model.pooler.activation(model.pooler.dense(pooled))


def entry_logits(model, batch, pooling, space, mask_token_id=None):
    """entry_embed(e') . h(s) for every entry e' (Eq. 5): [B, number of entries]."""
    batch = forward.on_model_device(model, batch)
    h = hidden_states(model, batch)
    pooled = pool(pooling, h, batch["attention_mask"], batch["input_ids"], mask_token_id)
    with forward.full_precision(pooled.device):  # [B, entries] logits in fp32 under autocast too
        # a no-op once on the device
        return pooler_output(model, pooled.float()) @ space.to(pooled.device).float().T


def loss(model, tokenizer, examples, pooling, space, max_length=128):
    """Cross-entropy of each definition's entry over all entries (Eq. 1, 5)."""
    # entry_logits moves it
    batch = forward.tokenize_batch(tokenizer, [d for _, d in examples], pooling, max_length)
    logits = entry_logits(model, dict(batch), pooling, space, tokenizer.mask_token_id).float()
    return F.cross_entropy(logits, torch.tensor([e for e, _ in examples], device=logits.device))


def ica_transform(X, max_iter=1000, seed=42, scale=100.0, standardise=True):
    """FastICA with unit-variance whitening, result x scale (DefSent+'s ICA-transformed space);
    standardise: each dimension scaled to zero mean, unit variance first (the official script's
    StandardScaler). Non-convergence is not hidden: a UserWarning names the iteration count reached.
    """
    X = np.asarray(X, dtype=np.float64)
    if standardise:
        X = StandardScaler().fit_transform(X)
    if X.shape[0] < X.shape[1]:  # whitening keeps at most as many components as rows
        raise ValueError(
            f"ICA needs at least as many entries as dimensions: {X.shape[0]} entries of dimension "
            f"{X.shape[1]} (raise dsp_max_entries, or run without the ICA candidate)"
        )
    ica = FastICA(whiten="unit-variance", max_iter=max_iter, random_state=seed)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Y = ica.fit_transform(X)
    if ica.n_iter_ >= max_iter or any("did not converge" in str(w.message) for w in caught):
        warnings.warn(
            f"FastICA did not converge: stopped at {ica.n_iter_} iterations (max_iter={max_iter})"
        )
    return Y * scale


def only_run(runs):
    """The selection of a step with a single run: its key (more than one needs a `select`)."""
    if len(runs) != 1:
        raise ValueError(
            f"PST step with {len(runs)} runs ({list(runs)}): pass select= to choose one"
        )
    return next(iter(runs))


def progressive_separate_training(
    original,
    lrs,
    build_entries,
    train_against,
    encoder_of=lambda run: run,
    candidates=lambda space, last: {"plain": space},
    select=only_run,
):
    """Progressive Separate Training (Sec. 3.2, Eq. 3-13). Step k builds the entry space with the
    best encoder of step k-1 (Eq. 2; the original model at step 1), then trains the *original*
    model against each candidate space with step k's rate (Eq. 5), and keeps the best run, whose
    encoder builds the next step's space.

    build_entries(encoder, step) -> [entries, d] space; train_against(space, lr, step, key) -> run;
    encoder_of(run) -> the encoder the next space is built with; candidates(space, last_step) ->
    {key: space}: the plain space, and at the last step also its ICA transform (Eq. 11; the
    protocol adds one key per seed); select({key: run}) -> the key kept (the paper: best STS).
    Returns one dict per step: step, lr, space, runs ({key: run}), best (a key)."""
    encoder, steps = original, []
    for step, lr in enumerate(lrs, 1):
        space = build_entries(encoder, step)  # Eq. 2
        spaces = candidates(space, step == len(lrs))  # Eq. 11
        runs = {key: train_against(cand, lr, step, key) for key, cand in spaces.items()}  # Eq. 5
        best = select(runs)
        steps.append(dict(step=step, lr=lr, space=space, runs=runs, best=best))
        encoder = encoder_of(runs[best])
    return steps
