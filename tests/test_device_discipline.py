"""Every path that feeds a model moves its inputs to the model's device in one place,
`forward.on_model_device` (issue 33: `defsent_protocol.plan` scored a CPU batch with `word_logits`, which
did not move it, and crashed on any GPU).

A CPU machine cannot see a tensor left on the wrong device (there is one device), so the tests
check the discipline instead: a forward pre-hook on the encoder fails unless every tensor it is
given came out of `on_model_device`."""
import pytest
import torch
from transformers import BertConfig, BertForMaskedLM, BertModel

from defsent_lite import defsent, defsentplus, forward, gausscse
from defsent_lite.runtime import config, defsent_model, models
from defsent_lite.repro import defsent_protocol

TINY = dict(vocab_size=30522, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32,
            max_position_embeddings=64)


@pytest.fixture
def moved(monkeypatch):
    """ids of the tensors on_model_device returned; the function is patched where the paths call it."""
    seen = set()
    real = forward.on_model_device

    def recording(model, batch):
        out = real(model, batch)
        seen.update(id(v) for v in out.values() if torch.is_tensor(v))
        return out
    monkeypatch.setattr(forward, "on_model_device", recording)
    monkeypatch.setattr(defsent, "on_model_device", recording)
    monkeypatch.setattr(gausscse, "on_model_device", recording)
    return seen


def guarded(model, moved):
    """The model, its encoder refusing any tensor that did not pass through on_model_device."""
    def check(module, args, kwargs):
        stray = [k for k, v in kwargs.items() if torch.is_tensor(v) and id(v) not in moved]
        assert not args and not stray, f"inputs fed to the model without on_model_device: {stray or 'positional'}"
    model.base_model.register_forward_pre_hook(check, with_kwargs=True)
    return model


def cpu_batch():
    return dict(input_ids=torch.tensor([[101, 2204, 2003, 102]]), attention_mask=torch.ones(1, 4, dtype=torch.long),
                targets=torch.tensor([2204]))


def test_word_logits_and_loss_move_their_batch(moved):
    torch.manual_seed(0)
    model = guarded(BertForMaskedLM(BertConfig(**TINY)), moved)
    head = defsent.word_prediction_head(model)
    assert defsent.word_logits(model, head, cpu_batch(), "cls").shape == (1, 30522)
    assert torch.isfinite(defsent.loss(model, head, cpu_batch(), "mean"))


def test_entry_logits_move_their_batch_and_the_entry_space(moved):
    torch.manual_seed(0)
    model = guarded(BertModel(BertConfig(**TINY)), moved)   # with its pooler (Eq. 5's h)
    batch = {k: v for k, v in cpu_batch().items() if k != "targets"}
    assert defsentplus.entry_logits(model, batch, "cls", torch.randn(3, 16)).shape == (1, 3)


def test_the_defsent_plan_feeds_the_model_through_on_model_device(monkeypatch, moved):
    """The plan times a training step and an evaluation batch (b806a5a: the evaluation batch stayed
    on the CPU beside a GPU model)."""
    torch.manual_seed(0)
    model = guarded(BertForMaskedLM(BertConfig(**TINY)), moved)
    head = defsent.word_prediction_head(model)
    tokenizer = models.load_tokenizer(config.OFFLINE_MODEL)
    monkeypatch.setattr(defsent_model, "load", lambda *a, **k: (model, tokenizer, head, "test"))
    rows = [("word", "a short definition of a word", 2773)] * 40
    base = dict(model="tiny", train_max=None, eval_max=None, batch_size=16, variant="official")
    plan = defsent_protocol.plan(base, ["cls"], [7.0], [0], ({"train": rows, "dev": rows, "test": rows}, {}))
    assert plan.trainings == 1 and plan.steps == 3
    # issue 85: an empty dev split is refused before anything is timed or trained, not scored NaN
    with pytest.raises(ValueError, match=r"\(Oxford test\) has no dev definition"):
        defsent_protocol.plan(base, ["cls"], [7.0], [0], ({"train": rows, "dev": [], "test": rows}, {"source": "Oxford test"}))


def test_on_model_device_moves_tensors_and_keeps_the_rest():
    model = torch.nn.Linear(2, 2)
    out = forward.on_model_device(model, dict(x=torch.ones(2), name="kept"))
    assert out["x"].device == next(model.parameters()).device and out["name"] == "kept"


def test_defsentplus_loss_top_words_and_gausscse_move_their_batches(moved):
    """The remaining paths that fed `.to(device)` batches (issue 33's list): DefSent+'s loss,
    DefSent's top-k words, GaussCSE's training loss and its Gaussian encoder."""
    torch.manual_seed(0)
    tokenizer = models.load_tokenizer(config.OFFLINE_MODEL)
    model = guarded(BertModel(BertConfig(**TINY)), moved)
    assert torch.isfinite(defsentplus.loss(model, tokenizer, [(0, "a dog"), (2, "a cat")], "mean", torch.randn(3, 16)))
    mlm = guarded(BertForMaskedLM(BertConfig(**TINY)), moved)
    assert len(defsent.top_k_words(mlm, tokenizer, defsent.word_prediction_head(mlm), ["a dog"], "cls", k=2)[0]) == 2
    gauss = gausscse.GaussModel(guarded(BertModel(BertConfig(**TINY)), moved))
    triplets = [("a man sleeps", "a person rests", "a man runs"), ("a dog barks", "an animal barks", "a cat sleeps")]
    assert torch.isfinite(gausscse.triplet_loss(gauss, tokenizer, triplets, "ent+con+rev", "mean_per_dim"))
    mu, var = gausscse.encode(gauss, tokenizer, ["a dog", "a cat"])
    assert mu.shape == var.shape == (2, 16)


def test_the_tests_and_the_stored_outputs_run_on_the_cpu_unless_told(monkeypatch, tmp_path):
    """Issue 44: the stored outputs are CPU numbers and GPU-trained ones move past their
    tolerances, so conftest.py sets DEFSENT_DEVICE=cpu where it is unset (a GPU machine's tests run
    on its CPU) and tools/run_notebooks.py writes stored outputs on the CPU."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    import run_notebooks
    repo = Path(__file__).resolve().parent.parent
    env = {k: v for k, v in os.environ.items() if k != "DEFSENT_DEVICE"}
    code = "import conftest, os, shutil; shutil.rmtree(conftest._scratch); print(os.environ['DEFSENT_DEVICE'])"
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "cpu"
    seen = []
    for name in ("DEFSENT_CACHE", "DEFSENT_PROGRESS"):   # run_all sets them: restored after the test
        monkeypatch.setenv(name, os.environ.get(name, ""))
    monkeypatch.setenv("DEFSENT_DEVICE", "cuda")
    monkeypatch.setattr(run_notebooks, "run",
                        lambda p, out=None: seen.append(os.environ["DEFSENT_DEVICE"]) or (p, []))
    run_notebooks.run_all(["01"])
    assert seen == ["cpu"]
    monkeypatch.setenv("DEFSENT_DEVICE", "cuda")   # executed copies elsewhere run where the user says
    run_notebooks.run_all(["01"], out=tmp_path)
    assert seen == ["cpu", "cuda"]
