"""The one training loop every method shares: a loss function is passed in.

Adam or AdamW, linear warm-up (then constant, or linear decay), gradient clipping,
bf16/fp16 autocast on GPU, a seed, periodic evaluation with best-state tracking, and a
hard stop with the step number when the loss is NaN or inf.
"""

import contextlib
import copy
import hashlib
import math
import os
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

import torch
from tqdm.auto import tqdm

from defsent_lite import checks
from defsent_lite.checks import NonFinite
from defsent_lite.forward import amp_dtype, autocast_for, bars_shown


class NonFiniteLoss(FloatingPointError):
    """The loss became NaN or inf; the message names the step."""


# Steps between reads of the losses on the host. Each read waits for the device, so on a GPU the
# losses stay there and are read in groups (the host runs ahead, preparing the next batches); on
# the CPU a read costs nothing and each loss is checked before its update.
LOSS_READ_EVERY = {"cpu": 1}
LOSS_READ_EVERY_ACCELERATOR = 50


def warmup_factor(step, warmup_steps, total_steps, decay, from_zero=False):
    """Learning-rate multiplier: linear warm-up, then 1 (decay=False) or linear decay to 0.
    from_zero: the warm-up's first step has factor 0 (transformers'
    get_linear_schedule_with_warmup)."""
    if step < warmup_steps:
        return (step + int(not from_zero)) / max(1, warmup_steps)
    if not decay:
        return 1.0
    return max(0.0, (total_steps - step) / max(1, total_steps - warmup_steps))


def make_optimizer(params, name, lr, weight_decay, eps=1e-8):
    """Adam or AdamW; on CUDA the fused kernels (one launch for all parameters, no host sync)."""
    params = [p for p in params if p.requires_grad]
    fused = {"fused": True} if params and all(p.is_cuda for p in params) else {}
    if name == "adam":
        return torch.optim.Adam(params, lr=lr, weight_decay=weight_decay, eps=eps, **fused)
    if name == "adamw":
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay, eps=eps, **fused)
    raise ValueError(f"unknown optimizer {name!r}: use 'adam' or 'adamw'")


def is_empty_batch(batch):
    """An empty list, tuple, dict or tensor, or a dict holding a tensor of 0 rows."""
    if torch.is_tensor(batch):
        return batch.numel() == 0
    if isinstance(batch, dict):
        return not batch or any(torch.is_tensor(v) and v.shape[:1] == (0,) for v in batch.values())
    return isinstance(batch, (list, tuple)) and not batch


@contextlib.contextmanager
def where(desc, step, total, lr):
    """A loss function's refusal (a bad input, a diverged output) named with the run, its step and
    rate: the loss function knows neither."""
    try:
        yield
    except (ValueError, FloatingPointError) as e:
        if type(e) not in (ValueError, FloatingPointError, NonFinite) or str(e).startswith(desc):
            raise
        raise type(e)(f"{desc}: step {step} of {total} (lr {lr:g}): {e}") from e


def one_number(loss, what, step):
    """The loss as returned, when it is a one-number tensor; anything else is an error."""
    if not torch.is_tensor(loss) or loss.numel() != 1:
        raise TypeError(
            f"{what} returned {type(loss).__name__} "
            f"{tuple(loss.shape) if torch.is_tensor(loss) else loss!r:.80} at step {step}; "
            "it must return the batch's loss as a one-number tensor"
        )
    return loss


def read_losses(pending, history, total, lr, describe_batch=None):
    """Move the pending (step, batch, loss) to the host in one read and append them to the history;
    the first NaN or inf stops the run, naming its step (and its batch, with describe_batch)."""
    if not pending:
        return
    values = torch.stack([loss.float() for _, _, loss in pending]).tolist()
    for (step, batch, _), value in zip(pending, values):
        if not math.isfinite(value):
            info = f" ({describe_batch(batch)})" if describe_batch else ""
            raise NonFiniteLoss(
                f"loss became {value} at step {step} of {total}{info}; try a lower learning rate "
                f"than {lr:g}"
            )
        history["loss"].append(value)
    pending.clear()


class Settings(NamedTuple):
    """How a run optimises: the rate and optimizer, the schedule, clipping and precision.

    decay: after the warm-up, linear decay to 0 (else constant). warmup_from_zero: the warm-up's
    first step has factor 0 (transformers' get_linear_schedule_with_warmup). fractional_warmup: the
    warm-up lasts total * warmup_ratio steps unrounded (the official DefSent schedule: factor
    step / (0.1 * total)), else floor(total * warmup_ratio) steps. mixed_precision: bf16/fp16
    autocast on GPU (forward.amp_dtype); False trains in fp32 everywhere.
    """

    lr: float
    optimizer: str = "adamw"
    weight_decay: float = 0.0
    eps: float = 1e-8
    warmup_ratio: float = 0.1
    decay: bool = False
    warmup_from_zero: bool = False
    fractional_warmup: bool = False
    grad_clip: float | None = None
    mixed_precision: bool = True


def lr_factors(s, batches, desc):
    """(the checked rate, each step's factor of it: the warm-up, then constant or decaying) of
    Settings `s`; no batches, an empty batch or a schedule whose every step has rate 0 is an
    error."""
    if not isinstance(s, Settings):
        raise TypeError(
            f"{desc}: settings must be a train.Settings (lr, optimizer, schedule), not "
            f"{type(s).__name__}"
        )
    lr, warmup_ratio, _ = (
        checks.rate(s.lr, f"{desc}: lr"),
        checks.fraction(s.warmup_ratio, f"{desc}: warmup_ratio"),
        s.grad_clip is None or checks.rate(s.grad_clip, f"{desc}: grad_clip"),  # < 0: ascent
    )
    if not batches:
        raise ValueError(f"{desc}: no training batches (is the training data empty?)")
    empty = [i for i, b in enumerate(batches, 1) if is_empty_batch(b)]
    if empty:
        raise ValueError(f"{desc}: batch {empty[0]} of {len(batches)} is empty")
    total = len(batches)
    warmup = total * warmup_ratio if s.fractional_warmup else math.floor(total * warmup_ratio)
    factors = [warmup_factor(i, warmup, total, s.decay, s.warmup_from_zero) for i in range(total)]
    if max(factors) == 0:  # e.g. one step whose warm-up starts from 0: the run would train nothing
        raise ValueError(
            f"{desc}: no step of {total} has a non-zero learning rate (warm-up {warmup:g} "
            f"steps{', from 0' if s.warmup_from_zero else ''}); give it more training data or "
            "batches"
        )
    return lr, factors


def kept_best(model, history, step, score, best_state, desc):
    """Record an evaluation score (a non-finite one is an error) and return the state to load back
    at the end: a copy of the weights when this score is the best so far before the last step,
    None when the last step's weights are the best."""
    if not math.isfinite(score):
        raise NonFinite(
            f"{desc}: evaluation score {score} at step {step} of {history['steps']}; try a lower "
            "learning rate"
        )
    history["eval"].append((step, score))
    if history["best_score"] is not None and score <= history["best_score"]:
        return best_state
    history["best_step"], history["best_score"] = step, score
    return copy.deepcopy(model.state_dict()) if step != history["steps"] else None


def train(
    model,
    loss_fn,
    batches,
    settings,
    params=None,
    eval_fn=None,
    eval_every=None,
    describe_batch=None,
    progress=None,
    desc="train",
    around=None,
    resume=None,
):
    """Run one pass over `batches` (a list), minimising `loss_fn(model, batch)` as `settings` (a
    Settings) say; params: the parameters trained (default all).

    eval_fn(model) -> float (higher is better) runs every `eval_every` steps and at the end;
    the best state is loaded back into `model` before returning. Returns a history dict. around: a
    context the steps run in, yielding one that runs evaluation eagerly (runtime/speed.training:
    the encoders compiled; None: eager). resume: a file the run's state is saved to every
    RESUME_EVERY_S seconds, and once STOP is set (save_state); a run that finds one continues from
    its step, to the weights an uninterrupted run ends with (a preempted job, a Colab reconnecting).
    No batches, an empty batch, a non-finite loss, evaluation score or final weight is an error.
    """
    lr, factors = lr_factors(settings, batches, desc)
    s, total = settings, len(batches)
    params = list(model.parameters()) if params is None else list(params)
    opt = make_optimizer(params, s.optimizer, lr, s.weight_decay, s.eps)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda i: factors[i] if i < total else factors[-1]
    )
    device = next(model.parameters()).device
    amp = amp_dtype(device) if s.mixed_precision else None
    scaler = torch.amp.GradScaler(device.type, enabled=amp == torch.float16)  # fp16 only
    history = dict(loss=[], eval=[], best_step=None, best_score=None, steps=total)
    parts = dict(model=model, opt=opt, sched=sched, scaler=scaler)
    run = resume and run_identity(model, settings, batches)
    start, history, best_state = load_state(resume, parts, history, device, desc, run)
    saved = time.monotonic()
    read_every = LOSS_READ_EVERY.get(device.type, LOSS_READ_EVERY_ACCELERATOR)
    pending = []  # (step, batch, loss) not yet read on the host
    model.train()
    with around or contextlib.nullcontext(contextlib.nullcontext) as eager:
        bar = tqdm(batches[start:], desc=desc, disable=not bars_shown(progress), leave=False)
        for step, batch in enumerate(bar, start + 1):
            with autocast_for(device, enabled=s.mixed_precision), where(desc, step, total, lr):
                loss = one_number(loss_fn(model, batch), f"{desc}: loss_fn", step)
            pending.append((step, batch, loss.detach().reshape(())))
            if read_every == 1:  # checked before its update: a NaN never reaches the weights
                read_losses(pending, history, total, lr, describe_batch)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            if s.grad_clip:
                scaler.unscale_(opt)
                torch.nn.utils.clip_grad_norm_(params, s.grad_clip)
            # with fp16, a step whose gradients overflowed is skipped and the scale lowered
            scaler.step(opt)
            scaler.update()
            sched.step()
            evaluate = eval_fn and ((eval_every and step % eval_every == 0) or step == total)
            due = STOP.is_set() or time.monotonic() - saved >= RESUME_EVERY_S
            save = resume and step < total and due
            if len(pending) >= read_every or evaluate or save or step == total:
                read_losses(pending, history, total, lr, describe_batch)
            if evaluate:
                with eager():
                    score = eval_fn(model)
                best_state = kept_best(
                    model, history, step, score, best_state, f"{desc} (lr {lr:g})"
                )
                model.train()
            if save:  # then stops (Stopped) when STOP is set
                saved = save_state(resume, step, parts, history, best_state, run, desc)
    if best_state is not None:
        model.load_state_dict(best_state)
    require_finite_weights(model, f"{desc}: after step {total} of {total} (lr {lr:g})")
    model.eval()
    return history


RESUME_EVERY_S = 600  # a resumable run's state (weights, optimizer: GBs) is written this often
STOP = threading.Event()  # set by a job's SIGTERM or time-out signal (launch.Work): save and stop


class Stopped(BaseException):
    """A resumable run saved its state on request (STOP) and stopped, its job about to end; not an
    Exception, so that no handler of failures records it as one."""


def run_identity(model, settings, batches):
    """What a resume file belongs to: a digest of the settings, the batches and the weights the
    run starts from, so that no run continues another's state."""
    h = hashlib.sha256(repr(settings).encode())

    def feed(x):
        if isinstance(x, torch.Tensor):
            h.update(x.detach().cpu().reshape(-1).view(torch.uint8).numpy().tobytes())
        elif isinstance(x, (list, tuple)):
            h.update(f"[{len(x)}".encode())
            for y in x:
                feed(y)
        elif isinstance(x, Mapping):
            for k, v in x.items():
                h.update(repr(k).encode())
                feed(v)
        else:
            h.update(repr(x).encode())

    feed(batches)
    feed(dict(model.state_dict()))
    return h.hexdigest()[:16]


def save_state(path, step, parts, history, best_state, run, desc="train"):
    """What a run resumes from after `step`: the weights, optimizer, schedule and scaler states, the
    history, the best state so far and torch's generators (the loop draws from no other), with the
    run it belongs to (run_identity), written aside and renamed (a kill mid-write leaves the last
    one). Returns when, or raises Stopped once saved if STOP is set."""
    state = {k: v.state_dict() for k, v in parts.items()}
    rng = dict(cpu=torch.get_rng_state(), cuda=torch.cuda.get_rng_state_all())
    state.update(step=step, history=history, best=best_state, rng=rng, run=run)
    tmp = Path(path).with_name(f".{Path(path).name}.{os.getpid()}.tmp")
    torch.save(state, tmp)
    os.replace(tmp, path)
    if STOP.is_set():
        raise Stopped(
            f"{desc}: stopped after step {step} of {history['steps']}, its state in {path}"
        )
    return time.monotonic()


def load_state(path, parts, history, device, desc, run=None):
    """(step, history, best state) of a saved run, loaded into `parts`; (0, history, None) without
    one. A file that cannot be read, or is another run's (`run`: its run_identity), is an error
    naming it."""
    if path is None or not Path(path).is_file():
        return 0, history, None
    try:
        state = torch.load(path, map_location=device, weights_only=True)
        if state.get("run") != run:
            raise ValueError(
                f"another run's state (run {state.get('run')}, this one {run}: the settings, the "
                "batches or the starting weights differ)"
            )
        if state["history"]["steps"] != history["steps"]:
            raise ValueError(f"{state['history']['steps']} steps, not {history['steps']}")
        for k, part in parts.items():
            part.load_state_dict(state[k])
    except Exception as e:  # the parts may be half loaded: never train on from there
        why = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
        raise ValueError(f"{desc}: cannot resume from {path} ({why}); delete it") from None
    torch.set_rng_state(state["rng"]["cpu"])
    if state["rng"]["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["rng"]["cuda"])
    return state["step"], state["history"], state["best"]


def require_finite_weights(model, what):
    """The losses are checked, not the updates they make: the last weights are checked here."""
    for name, p in model.named_parameters():
        if not torch.isfinite(p).all():
            raise NonFinite(f"{what}: weight {name} is NaN or inf; try a lower learning rate")


def batched(items, batch_size, seed=None):
    """Split a list into batches, shuffled with `seed` when given (the one-epoch order)."""
    batch_size = checks.count(batch_size, "batch_size", allow_none=False)
    items = list(items)
    if seed is not None:
        g = torch.Generator().manual_seed(seed)
        items = [items[i] for i in torch.randperm(len(items), generator=g).tolist()]
    return [items[i : i + batch_size] for i in range(0, len(items), batch_size)]
