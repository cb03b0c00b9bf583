"""Opt-in speed for long runs on a GPU: the training steps with the model's encoders under
torch.compile (DEFSENT_COMPILE=1: mode reduce-overhead, CUDA graphs). The method trains the same
either way; a compiled run first spends minutes compiling. On one H200 (docs/speed.md, batch 16,
BERT-base) DefSent trained at 47.2 against 25.1 steps/s and GaussCSE at 35.4 against 17.9, after
148 and 166 s of compiling: a run gains past about 8,000 and 6,000 steps. The protocols hand
train.train `training(model)`; the method modules know nothing of it.
"""

import contextlib
import os

import torch

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile_mode(name=None):
    """The torch.compile mode the runs train with: None (eager, the default) or a mode (argument or
    DEFSENT_COMPILE; "1": reduce-overhead, CUDA graphs, the fastest steps on a GPU)."""
    name = name if name is not None else os.environ.get("DEFSENT_COMPILE", "")
    name = {"": None, "0": None, "1": "reduce-overhead"}.get(name.strip(), name.strip())
    if name is not None and name not in MODES:
        raise ValueError(
            f"compile mode {name!r} (argument or DEFSENT_COMPILE): use 0 (eager), 1 "
            f"(reduce-overhead) or one of {MODES}"
        )
    return name


def training(model, mode=None):
    """The context train.train(around=...) runs its steps in: None (eager, the default) unless a
    compile mode is given (argument or DEFSENT_COMPILE)."""
    mode = compile_mode(mode)
    return None if mode is None else compiled_encoders(model, mode)


def encoders(model):
    """The transformers encoders inside `model`: the modules encode.hidden_states calls
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
