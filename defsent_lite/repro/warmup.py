"""The warm-up a plan rests on (repro/budget.py): seconds per training step (the whole update, over
a spread of the run's own batches) and per encoded batch (through the run's evaluation path),
measured here with the run's own model and loss, and the token counts its FLOPs are computed
from. Loaded only when a plan is made (the scales that follow the papers' protocol)."""

import itertools
import time

import torch

from defsent_lite import encode, train

SPREAD_BATCHES = 8  # training batches a warm-up steps through, spread over the run's sizes
ENCODE_SAMPLE = 256  # sentences a warm-up encodes as the run's evaluation does


def spaced_sample(items, n):
    """n of `items` at evenly spaced positions (all of them when there are no more than n): the
    warm-up's samples (gausscse_data.evenly_spaced picks the evaluation's own pairs)."""
    items = list(items)
    return items if len(items) <= n else [items[int(k * len(items) / n)] for k in range(n)]


def row_tokens(tokenizer, texts, batch=None, sample=4096):
    """Mean tokens per text (special tokens included), over an evenly spaced sample; with `batch`,
    the mean padded length of a training batch in the sample's order (each row padded to its
    batch's longest)."""
    texts = spaced_sample(texts, sample)
    if not texts:
        return 0.0
    lengths = [len(ids) for ids in tokenizer(texts, truncation=True, max_length=512)["input_ids"]]
    if batch is None:
        return sum(lengths) / len(lengths)
    chunks = [lengths[i : i + batch] for i in range(0, len(lengths), batch)]
    return sum(max(c) * len(c) for c in chunks) / len(lengths)


def spread_batches(tokenizer, batches, texts, k=SPREAD_BATCHES, pool=256):
    """k of a run's training batches at evenly spaced quantiles of their padded size (rows x the
    longest row's tokens, over an evenly spaced pool of the batches): the mean step over them is
    the run's mean step, which the first batch alone (short or long) is not. texts(batch) -> its
    sentences."""
    if not batches:
        raise ValueError(
            "warm-up: no training batch to time a step on (is the training data empty?)"
        )
    pool = spaced_sample(batches, pool)
    rows = [texts(b) for b in pool]
    ids = tokenizer([t for r in rows for t in r], truncation=True, max_length=512)["input_ids"]
    sizes, start = [], 0
    for r in rows:
        sizes.append(len(r) * max(len(i) for i in ids[start : start + len(r)]))
        start += len(r)
    order = sorted(range(len(pool)), key=sizes.__getitem__)
    k = min(k, len(order))
    return [pool[order[int((j + 0.5) * len(order) / k)]] for j in range(k)]


def parameters(model):
    return sum(p.numel() for p in model.parameters())


def device_name(device):
    device = torch.device(device)
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} ({encode.precision_name(device)})"
    return f"cpu ({torch.get_num_threads()} threads, fp32)"


def _sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def seconds_per_call(fn, device, warmup=1, repeats=3):
    """Mean wall time of fn() after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    _sync(device)
    return (time.perf_counter() - t0) / repeats


def measure(model, loss_fn, batches, encode_fn, encoded, mixed_precision=True, batch=64):
    """(seconds per training step, seconds per `batch` sentences encoded), spent as the run spends
    them. A step is the whole update: loss_fn(model, b), backward and an AdamW step on the
    trainable weights (train.make_optimizer, fused on CUDA; the weights restored after), under the
    training's autocast (mixed_precision), once for each of `batches` (spread_batches) after an
    untimed pass over them (each padded shape seen once, as in a run of thousands of steps).
    encode_fn(model) encodes `encoded` sentences through the run's evaluation path (its sorting,
    batches and precision), timed once after one untimed call (encoded 0: none)."""
    device = next(model.parameters()).device
    was_training = model.training
    saved = {k: v.detach().clone() for k, v in model.state_dict().items()}
    opt = train.make_optimizer(model.parameters(), "adamw", 1e-12, 0.0)
    batches = list(batches)
    if not batches:
        raise ValueError("warm-up: no training batch to time a step on")
    cycle = itertools.cycle(batches)

    def step():
        model.train()
        with encode.autocast_for(device, enabled=mixed_precision):
            loss = loss_fn(model, next(cycle))
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def infer():
        model.eval()
        with torch.inference_mode():
            encode_fn(model)

    try:
        step_s = seconds_per_call(step, device, warmup=len(batches), repeats=len(batches))
        if not encoded:
            return step_s, 0.0
        return step_s, seconds_per_call(infer, device, warmup=1, repeats=1) * batch / encoded
    finally:
        model.train(was_training)
        model.zero_grad(set_to_none=True)
        model.load_state_dict(saved)
