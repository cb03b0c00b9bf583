"""What a paper-scale notebook is about to run, and how long it should take on this device.

Counts come from the run configs (trainings, optimizer steps, sentences encoded for evaluation); the
time per training step and per encoded batch is measured here, on this device, by a short warm-up
with the notebook's own model and loss (repro/warmup.py; each protocol's `plan` loads it and the
evaluation counts, repro/eval_sizes.py, only when a plan is made). Data loading and the SentEval
classifiers are not in the estimate; it is printed with the measurements it rests on
(docs/reproduction.md: how it compares with a run's real time).
"""

import math
from typing import NamedTuple


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
