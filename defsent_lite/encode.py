"""Batched sentence encoding: tokenise once, sort by length, pad per batch, pool, return CPU
float32."""

import torch
from tqdm.auto import tqdm

from defsent_lite import forward
from defsent_lite.pooling import POOLINGS, pool


EVAL_MAX_LENGTH = 512  # the official evaluation encodes up to the models' 512 positions, in fp32


def encode(
    model,
    tokenizer,
    sentences,
    pooling="cls",
    batch_size=64,
    max_length=EVAL_MAX_LENGTH,
    progress=None,
    allow_empty=False,
    desc="encode",
    mixed_precision=False,
):
    """Embed sentences -> torch.Tensor [n, d] (CPU, float32) in input order.

    pooling: cls | mean | max | prompt (DefSent+'s template, embedding at the mask token).
    Defaults as the official evaluation: cut at 512 tokens, fp32; mixed_precision=True encodes
    under bf16/fp16 autocast on GPU (faster, not what produced the papers' numbers).
    """
    args = batch_size, max_length, progress, allow_empty, desc, mixed_precision
    return encode_poolings(model, tokenizer, sentences, [pooling], *args)[pooling]


def encode_poolings(
    model,
    tokenizer,
    sentences,
    poolings,
    batch_size=64,
    max_length=EVAL_MAX_LENGTH,
    progress=None,
    allow_empty=False,
    desc="encode",
    mixed_precision=False,
):
    """{pooling: [n, d] tensor}: cls, mean and max share one forward pass; prompt has its own
    (its input is the template). Each result equals `encode` with that pooling alone."""
    sentences = list(sentences)
    forward.check_sentences(sentences, allow_empty)
    for p in poolings:
        if p not in POOLINGS:
            raise ValueError(f"unknown pooling {p!r}; choose from {POOLINGS}")
    plain = [p for p in dict.fromkeys(poolings) if p != "prompt"]
    args = batch_size, max_length, progress, desc, mixed_precision
    out = _encode_pass(model, tokenizer, sentences, plain, *args) if plain else {}
    if "prompt" in poolings:
        wrapped = forward.prompt_sentences(tokenizer, sentences, max_length)
        out.update(_encode_pass(model, tokenizer, wrapped, ["prompt"], *args))
    return out


def _encode_pass(
    model, tokenizer, sentences, poolings, batch_size, max_length, progress, desc, mixed_precision
):
    """One length-sorted forward pass over `sentences` (forward.length_batches), pooled each way of
    `poolings`. The pooled vectors reach the host in groups of BATCHES_PER_COPY batches: a copy
    waits for the GPU, so one copy per batch would stall it after every batch."""
    device = next(model.parameters()).device
    features, order = forward.tokenize_sorted(tokenizer, sentences, max_length)
    out = {p: torch.empty(len(sentences), model.config.hidden_size) for p in poolings}
    batches = forward.length_batches(features, order, batch_size, device)
    show = forward.bars_shown(progress) and len(batches) > 1
    bar = tqdm(total=len(batches), desc=desc, disable=not show, leave=False)
    with forward.eval_mode(model), bar:
        pending, done = {p: [] for p in poolings}, 0  # pooled on the device; rows of `order` copied
        with torch.inference_mode(), forward.autocast_for(device, enabled=mixed_precision):
            for k, idx in enumerate(batches, 1):
                batch = forward.on_model_device(model, forward.pad_batch(tokenizer, features, idx))
                h, mask, ids = (
                    forward.hidden_states(model, batch),
                    batch["attention_mask"],
                    batch["input_ids"],
                )
                for p in poolings:  # [batch, d] float32 on the model's device
                    pending[p].append(pool(p, h, mask, ids, tokenizer.mask_token_id).float())
                bar.update()
                rows = sum(len(v) for v in pending[poolings[0]])
                if (
                    k % forward.BATCHES_PER_COPY == 0
                    or rows >= forward.ROWS_PER_COPY
                    or k == len(batches)
                ):
                    for p in poolings:  # one wait for the device per group
                        out[p][order[done : done + rows]] = torch.cat(pending[p]).cpu()
                        pending[p].clear()
                    done += rows
    return out


def embedder(model, tokenizer, pooling="cls", **kw):
    """A function list[str] -> numpy array, the form the STS and transfer scorers take."""
    return lambda sentences: encode(model, tokenizer, sentences, pooling=pooling, **kw).numpy()


def embedders(model, tokenizer, poolings, **kw):
    """{pooling: embed function}; asked for the same sentences, the poolings share one forward
    pass (the last list's vectors of every pooling are kept until other sentences come)."""
    last = {"sentences": None, "vectors": None}

    def embed_with(pooling):
        def embed(sentences):
            sentences = list(sentences)
            if last["sentences"] != sentences:
                last["vectors"] = encode_poolings(model, tokenizer, sentences, poolings, **kw)
                last["sentences"] = sentences
            return last["vectors"][pooling].numpy()

        return embed

    return {p: embed_with(p) for p in poolings}
