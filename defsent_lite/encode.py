"""Batched sentence encoding: tokenise once, sort by length, pad per batch, pool, return CPU float32."""
import contextlib

import torch
from tqdm.auto import tqdm

from . import config
from .pooling import POOLINGS, pool, prompt_text


def tokenize_sorted(tokenizer, sentences, max_length):
    """Token ids of every sentence (no padding) and the order that sorts them longest first."""
    enc = tokenizer(list(sentences), truncation=True, max_length=max_length, padding=False)
    features = [{k: enc[k][i] for k in enc.keys()} for i in range(len(sentences))]
    order = sorted(range(len(features)), key=lambda i: -len(features[i]["input_ids"]))
    return features, order


def check_sentences(sentences, allow_empty=False):
    """Sentences must be strings; empty ones are refused unless allow_empty (SentEval keeps a few)."""
    if isinstance(sentences, str):
        raise TypeError("encode() takes a list of sentences, not a single string")
    for i, s in enumerate(sentences):
        if not isinstance(s, str):
            raise TypeError(f"sentence {i} is {type(s).__name__}, not str")
        if not allow_empty and not s.strip():
            raise ValueError(f"sentence {i} is empty (pass allow_empty=True to encode it as [CLS] [SEP])")


@contextlib.contextmanager
def eval_mode(model):
    """Switch to eval for the block and restore the previous mode (training loops call encode)."""
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


def autocast_for(device):
    """fp16/bf16 autocast on GPU; a no-op on CPU (fp32 there)."""
    if device.type == "cuda":
        dtype = torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16
        return torch.autocast("cuda", dtype=dtype)
    return contextlib.nullcontext()


def hidden_states(model, batch):
    """Last hidden states of the encoder (works for AutoModel and AutoModelForMaskedLM)."""
    return model.base_model(**batch).last_hidden_state


def encode(model, tokenizer, sentences, pooling="cls", batch_size=64, max_length=128,
           progress=None, allow_empty=False, desc="encode"):
    """Embed sentences -> torch.Tensor [n, d] (CPU, float32) in input order.

    pooling: cls | mean | max | prompt (DefSent+'s template, embedding at the mask token).
    """
    sentences = list(sentences)
    check_sentences(sentences, allow_empty)
    if pooling not in POOLINGS:
        raise ValueError(f"unknown pooling {pooling!r}; choose from {POOLINGS}")
    if pooling == "prompt":
        sentences = [prompt_text(s, tokenizer.mask_token) for s in sentences]
    device = next(model.parameters()).device
    features, order = tokenize_sorted(tokenizer, sentences, max_length)
    out = torch.empty(len(sentences), model.config.hidden_size)
    show = config.show_progress() if progress is None else progress
    batches = range(0, len(order), batch_size)
    with eval_mode(model), torch.inference_mode(), autocast_for(device):
        for start in tqdm(batches, desc=desc, disable=not show or len(batches) < 2, leave=False):
            idx = order[start:start + batch_size]
            batch = tokenizer.pad([features[i] for i in idx], return_tensors="pt")
            batch = {k: v.to(device) for k, v in batch.items()}
            h = hidden_states(model, batch)
            vec = pool(pooling, h, batch["attention_mask"], batch["input_ids"], tokenizer.mask_token_id)
            out[idx] = vec.float().cpu()
    return out


def embedder(model, tokenizer, pooling="cls", **kw):
    """A function list[str] -> numpy array, the form the STS and transfer scorers take."""
    return lambda sentences: encode(model, tokenizer, sentences, pooling=pooling, **kw).numpy()
