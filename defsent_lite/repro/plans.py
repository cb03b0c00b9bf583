"""What a paper-scale notebook is about to run, and how long it should take on this device.

Counts come from the run configs (trainings, optimizer steps, sentences encoded for evaluation); the
time per training step and per encoded batch is measured here, on this device, by a short warm-up
with the notebook's own model and loss: the whole update over a spread of the run's own batches,
and encoding through the run's evaluation path. `print_plan` makes and prints a plan only at the
scales that follow the papers' protocol (each protocol's `plan` loads the evaluation counts,
repro/eval_sizes.py, only then). Data loading and the SentEval classifiers are not in the estimate;
it is printed with the measurements it rests on (docs/reproduction.md: how it compares with a
run's real time).
"""

import itertools
import math
import time
from typing import NamedTuple

import torch

from defsent_lite import forward


def print_plan(scale, make_plan):
    """Print what a notebook will run, before it trains, at the scales that follow the papers'
    protocol (paper, colab, rehearsal: hours of GPU); nothing at smoke and cpu scale, where
    make_plan (a protocol's `plan`: a warm-up on this device) is never called."""
    if scale["paper_protocol"]:
        print(make_plan())


# A T4's peak throughput (NVIDIA T4 datasheet: 8.1 TFLOPS fp32; 65 TFLOPS fp16 with fp32
# accumulation on its tensor cores, what autocast uses there: T4 has no bf16). A transformer run
# reaches a fraction of peak; the estimate assumes 40% (an assumption, not measured on a T4 here).
T4_PEAK_TFLOPS = {"fp32": 8.1, "fp16": 65.0}
T4_UTILISATION = 0.4
T4_SOURCE = (
    "NVIDIA T4 datasheet peaks 8.1 TFLOPS fp32 / 65 TFLOPS fp16, at an assumed 40% utilisation"
)

# At the papers' batch sizes a BERT-base step is bound by the host (operator launches and casts),
# not by the chip's FLOPs: a step costs about this much on any GPU, whatever its peak. Measured by
# `python tools/gpu_check.py` on one H100 (16-core host; 2026-11-26, docs/speed.md): DefSent 23.21
# and GaussCSE 19.92 steps/s at batch 16. A T4 session's host is no faster: its training time is
# at least steps x this floor.
STEP_FLOOR_S = {"defsent": 1 / 23.21, "gausscse": 1 / 19.92}
STEP_FLOOR_SOURCE = "no faster than the host-bound step measured on an H100 (docs/speed.md)"


class Plan(NamedTuple):
    what: str
    trainings: int
    steps: int  # optimizer steps over all trainings
    encoded: int  # sentences encoded for evaluation (and entry spaces)
    step_s: float  # measured seconds per training step
    batch_s: float  # measured seconds per encoded batch of `batch` sentences
    batch: int
    device: str
    params: int = 0  # parameters of the model (each token costs 6 FLOPs per parameter in
    train_tokens: float = 0.0  # training, 2 in inference: Kaplan et al., 2020), tokens trained on
    encoded_tokens: float = 0.0  # (padded as batched) and encoded, over the whole plan
    mixed_precision: bool = False  # training under autocast (fp16 on a T4), else fp32
    encode_mixed_precision: bool = False  # encoding under autocast (GaussCSE's), else fp32
    step_floor_s: float = 0.0  # the least a training step takes on any GPU (STEP_FLOOR_S)

    @property
    def seconds(self):
        return self.steps * self.step_s + math.ceil(self.encoded / self.batch) * self.batch_s

    @property
    def flops(self):
        return 6 * self.params * self.train_tokens + 2 * self.params * self.encoded_tokens

    @property
    def t4_seconds(self):
        """The plan's FLOPs at a T4's throughput (T4_SOURCE), training and encoding each at its
        precision; the training never less than steps x step_floor_s (a host-bound step)."""

        def tflops(mixed):
            return 1e12 * T4_UTILISATION * T4_PEAK_TFLOPS["fp16" if mixed else "fp32"]

        training = max(
            6 * self.params * self.train_tokens / tflops(self.mixed_precision),
            self.steps * self.step_floor_s,
        )
        return training + 2 * self.params * self.encoded_tokens / tflops(
            self.encode_mixed_precision
        )

    def flops_line(self):
        floor = (
            f"; {self.step_floor_s * 1e3:.0f} ms a step at least, {STEP_FLOOR_SOURCE}"
            if self.step_floor_s
            else ""
        )
        return (
            f"FLOPs: {self.flops / 1e15:.1f} PFLOP ({self.params / 1e6:.0f}M parameters, "
            f"{self.train_tokens / 1e6:.1f}M tokens trained, {self.encoded_tokens / 1e6:.1f}M "
            "encoded): "
            f"about {hours(self.t4_seconds)} on a T4 ({T4_SOURCE}{floor})."
        )

    def __str__(self):
        warning = ""
        if self.device.startswith("cpu"):
            warning = (
                f"WARNING: no GPU: this plan alone is about {hours(self.seconds)} of CPU time here "
                "(Colab: Runtime > Change runtime type > GPU). "
            )
        return warning + (
            f"plan ({self.what}): {self.trainings} trainings, {self.steps:,} steps, "
            f"{self.encoded:,} sentences "
            f"encoded for evaluation; about {hours(self.seconds)} on {self.device} "
            f"(warm-up here: {self.step_s:.3f} s per training step, optimizer update included, "
            f"{self.batch_s:.3f} s per batch of {self.batch} encoded; SentEval classifiers not "
            "included). "
            f"Runs already in the cache are not repeated."
            + (" " + self.flops_line() if self.params else "")
        )


def hours(seconds):
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


# ------------------------------------------------------------------ the warm-up a plan rests on


SPREAD_BATCHES = 8  # training batches a warm-up steps through, spread over the run's sizes
ENCODE_SAMPLE = 256  # sentences a warm-up encodes as the run's evaluation does


def spaced_sample(items, n):
    """n of `items` at evenly spaced positions (all of them when there are no more than n): the
    warm-up's samples (gausscse_protocol.evenly_spaced picks the evaluation's own pairs)."""
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
    batches = [b for b in batches if texts(b)]  # an empty batch has no step to time
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
        return f"{torch.cuda.get_device_name(device)} ({forward.precision_name(device)})"
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
    trainable weights (fused on CUDA, as train.make_optimizer makes it; the weights restored
    after), under the training's autocast (mixed_precision), once for each of `batches`
    (spread_batches) after an untimed pass over them (each padded shape seen once, as in a run of
    thousands of steps).
    encode_fn(model) encodes `encoded` sentences through the run's evaluation path (its sorting,
    batches and precision), timed once after one untimed call (encoded 0: none)."""
    device = next(model.parameters()).device
    was_training = model.training
    saved = {k: v.detach().clone() for k, v in model.state_dict().items()}
    opt = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad],
        lr=1e-12,
        weight_decay=0.0,
        fused=device.type == "cuda",
    )
    batches = list(batches)
    if not batches:
        raise ValueError("warm-up: no training batch to time a step on")
    cycle = itertools.cycle(batches)

    def step():
        model.train()
        with forward.autocast_for(device, enabled=mixed_precision):
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
