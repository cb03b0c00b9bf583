"""Issue 44: the opt-in compiled training step (runtime/speed, train.train(around=...)): the encoder under
torch.compile for the steps, the same losses and weights as the eager loop (on the CPU, mode
"default": CUDA graphs need a GPU; dropout off, as compiled code draws its own dropout masks),
evaluation eager, the encoder eager again after the run."""
import copy
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from defsent_lite import defsent, train
from defsent_lite.runtime import speed


def batch(lengths, seed):
    """A DefSent batch of token ids, each row `length` tokens then padding."""
    g = torch.Generator().manual_seed(seed)
    width = max(lengths)
    ids = torch.randint(5, 50, (len(lengths), width), generator=g)
    mask = (torch.arange(width) < torch.tensor(lengths)[:, None]).long()
    return dict(input_ids=ids * mask, attention_mask=mask, targets=torch.randint(5, 50, (len(lengths),), generator=g))


def run(model, settings, batches, seen, mode=None):
    head = defsent.word_prediction_head(model)

    def eval_fn(m):   # what evaluation runs under: the encoder's compiled call, or None
        seen.append(m.bert._compiled_call_impl)
        return 0.0
    return train.train(model, lambda m, b: defsent.loss(m, head, b, "mean"), batches, settings,
                       params=defsent.trainable_parameters(model), eval_fn=eval_fn, eval_every=2,
                       progress=False, around=speed.training(model, len(batches), mode=mode))


def test_compiled_steps_give_the_eager_losses_and_weights_and_evaluate_eagerly(tmp_path):
    """Issue 72: in a process of its own with a kernel cache of its own, so that kernels compiled
    under another kernel set (ATEN_CPU_CAPABILITY) are never loaded (they crashed inside a kernel
    or gave NaN), and a crash fails this test at once instead of taking down or hanging a worker."""
    done = subprocess.run([sys.executable, "-c", "import test_compiled_training as t; t.compiled_against_eager()"],
                          cwd=Path(__file__).parent, env=dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp_path)),
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"exit code {done.returncode}:\n{done.stderr[-3000:]}"


def compiled_against_eager():
    torch.manual_seed(0)
    eager = BertForMaskedLM(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                       intermediate_size=32, max_position_embeddings=32,
                                       hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0))
    compiled = copy.deepcopy(eager)
    batches = [batch(lengths, seed) for seed, lengths in enumerate([(6, 4), (9, 3), (6, 6), (12, 5)])]
    seen_eager, seen_compiled = [], []
    a = run(eager, train.Settings(lr=1e-2, optimizer="adam"), batches, seen_eager)
    b = run(compiled, train.Settings(lr=1e-2, optimizer="adam"), batches, seen_compiled, mode="default")
    assert a["loss"] == pytest.approx(b["loss"], rel=1e-4) and a["loss"][-1] != a["loss"][0]
    for (name, p), q in zip(eager.named_parameters(), compiled.parameters()):
        assert torch.allclose(p, q, atol=1e-5), name
    assert seen_compiled == [None, None]                   # evaluation ran eagerly
    assert speed.encoders(compiled) == [compiled.bert]     # the module forward.hidden_states calls
    assert compiled.bert._compiled_call_impl is None       # and eager again after the run


def test_an_unknown_compile_mode_is_named_before_any_step():
    model = BertForMaskedLM(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                       intermediate_size=32, max_position_embeddings=32))
    calls = []
    with pytest.raises(RuntimeError, match="Unrecognized mode=fast"):   # torch.compile names it
        train.train(model, lambda m, b: calls.append(b) or torch.tensor(1.0, requires_grad=True), [0, 1],
                    train.Settings(lr=1e-3), progress=False, around=speed.compiled_encoders(model, "fast"))
    assert calls == []


@pytest.mark.parametrize("value, kind, steps, cuda, mode", [
    ("", "defsent", 7_899, True, None), ("", "defsent", 7_900, True, "reduce-overhead"),
    ("", "gausscse", 6_000, True, "reduce-overhead"), ("", "gausscse", 10**6, False, None),
    ("0", "gausscse", 10**6, True, None), ("1", "defsent", 1, False, "reduce-overhead"),
    (" default ", "defsent", 1, False, "default")])
def test_a_run_compiles_on_a_measured_gpu_when_long_enough_to_pay_for_it(monkeypatch, value, kind, steps, cuda, mode):
    """Issue 70: unset, a run compiles past the break-even measured on an H200 (docs/speed.md) on a
    GPU of that kind; the setting forces either way."""
    monkeypatch.setenv("DEFSENT_COMPILE", value)
    assert speed.compile_mode(None, steps, kind, cuda) == mode
    cpu_model = torch.nn.Linear(2, 2)
    assert (speed.training(cpu_model, steps, kind) is None) == (value.strip() in ("", "0"))


def test_an_unknown_compile_setting_names_the_variable(monkeypatch):
    monkeypatch.setenv("DEFSENT_COMPILE", "yes")
    with pytest.raises(ValueError, match="DEFSENT_COMPILE"):
        speed.compile_mode()
