"""Speed for long runs on a GPU: the encoders under torch.compile (reduce-overhead: CUDA graphs),
for a run long enough to pay for compiling: on one H200 (docs/speed.md, batch 16, BERT-base)
DefSent trained at 47.2 against 25.1 steps/s, GaussCSE at 35.4 against 17.9, after 148 and 166 s
of compiling, so a run gains past about 7,900 and 6,000 steps. The method trains the same either
way; the protocols hand train.train `training(model, steps)`, the method modules know nothing of
it. DEFSENT_COMPILE=0 keeps every run eager, 1 (or a mode) compiles every one.
"""

import contextlib
import os

import torch

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
BREAK_EVEN_STEPS = {"defsent": 7_900, "gausscse": 6_000}  # one H200 (docs/speed.md, 2026-11-28)


def compile_mode(name=None, steps=0, kind="defsent", measured_gpu=False):
    """The torch.compile mode a run of `steps` trains with: a mode (argument or DEFSENT_COMPILE;
    "1": reduce-overhead, CUDA graphs, the fastest steps on a GPU) or None (eager: "0"). Unset: a
    run of at least BREAK_EVEN_STEPS[kind] steps on a GPU of the kind they were measured on
    (measured_gpu: compute capability 9, H100 and H200) compiles, the others run eager."""
    name = (name if name is not None else os.environ.get("DEFSENT_COMPILE", "")).strip()
    name = name or ("1" if measured_gpu and steps >= BREAK_EVEN_STEPS[kind] else "0")
    name = {"0": None, "1": "reduce-overhead"}.get(name, name)
    if name is not None and name not in MODES:
        raise ValueError(
            f"compile mode {name!r} (argument or DEFSENT_COMPILE): use 0 (eager), 1 "
            f"(reduce-overhead) or one of {MODES}"
        )
    return name


def training(model, steps, kind="defsent", mode=None):
    """The context train.train(around=...) runs a run of `steps` in: None (eager) unless it
    compiles (compile_mode)."""
    device = next(model.parameters()).device
    measured = device.type == "cuda" and torch.cuda.get_device_capability(device)[0] == 9
    mode = compile_mode(mode, steps, kind, measured)
    return None if mode is None else compiled_encoders(model, mode)


def encoders(model):
    """The transformers encoders inside `model`: the modules forward.hidden_states calls
    (`m.base_model` of each), each once."""
    found = {id(m.base_model): m.base_model for m in model.modules() if hasattr(m, "base_model")}
    return [m for m in found.values() if isinstance(m, torch.nn.Module)]


@contextlib.contextmanager
def compiled_encoders(model, mode):
    """The block runs with model's encoders under torch.compile in `mode` (dynamic shapes: one
    compilation for every padded length), eager again after it. Yields a context that runs a block
    eagerly inside (evaluation: encoding thousands of new shapes would record a graph each); an
    unknown mode is torch.compile's error, before any step."""
    modules = encoders(model)
    if not modules:
        raise ValueError(f"compile mode {mode!r}: no encoder (a module with base_model) in model")
    for m in modules:
        m.compile(dynamic=True, mode=mode)
    compiled = [m._compiled_call_impl for m in modules]  # nn.Module.compile's one switch

    @contextlib.contextmanager
    def eager():
        for m in modules:
            m._compiled_call_impl = None
        try:
            yield
        finally:
            for m, c in zip(modules, compiled):
                m._compiled_call_impl = c

    try:
        yield eager
    finally:
        for m in modules:
            m._compiled_call_impl = None
