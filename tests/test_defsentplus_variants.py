"""DefSent+'s two variants: the released code's settings (default) and the paper's text. Each
difference against a reference built from torch, transformers and scikit-learn directly."""
import numpy as np
import pytest
import torch
from sklearn.decomposition import FastICA
from sklearn.preprocessing import StandardScaler

from defsent_lite import defsentplus, pst, train
from tiny_root import tiny_pst_setup


def test_official_training_is_adamw_eps_1e6_no_decay_no_warmup_linear_decay_clipped():
    """train.train with the official settings takes exactly the steps of the released code's loop:
    transformers' AdamW(eps=1e-6) (= torch's with weight decay 0), get_linear_schedule_with_warmup
    with 0 warm-up steps, clip_grad_norm_(1.0) before each step."""
    from transformers import get_linear_schedule_with_warmup
    g = torch.Generator().manual_seed(0)
    batches = [(torch.randn(8, 4, generator=g) * 30, torch.randn(8, 2, generator=g)) for _ in range(6)]

    def loss_fn(model, batch):
        return ((model(batch[0]) - batch[1]) ** 2).mean()
    torch.manual_seed(1)
    ours = torch.nn.Linear(4, 2)
    reference = torch.nn.Linear(4, 2)
    reference.load_state_dict(ours.state_dict())
    train.train(ours, loss_fn, batches, 0.1, progress=False, **defsentplus.VARIANTS["official"]["optimizer"])
    opt = torch.optim.AdamW(reference.parameters(), lr=0.1, eps=1e-6, weight_decay=0.0)
    sched = get_linear_schedule_with_warmup(opt, num_warmup_steps=0, num_training_steps=len(batches))
    clipped = 0
    for batch in batches:
        opt.zero_grad()
        loss_fn(reference, batch).backward()
        clipped += float(torch.nn.utils.clip_grad_norm_(reference.parameters(), 1.0)) > 1.0
        opt.step()
        sched.step()
    assert clipped > 0, "the gradients should be large enough for clipping to matter"
    for a, b in zip(ours.parameters(), reference.parameters()):
        torch.testing.assert_close(a, b)


@pytest.mark.filterwarnings("error")
def test_official_ica_standardises_before_fastica():
    rng = np.random.RandomState(0)   # independent uniform sources, mixed: FastICA converges
    X = rng.uniform(-1, 1, (300, 6)) @ rng.randn(6, 6) * np.array([1, 5, 0.1, 2, 3, 1]) + 4
    expected = FastICA(whiten="unit-variance", max_iter=1000, random_state=42).fit_transform(
        StandardScaler().fit_transform(X)) * 100
    np.testing.assert_allclose(pst.ica_transform(X), expected)
    raw = FastICA(whiten="unit-variance", max_iter=1000, random_state=42).fit_transform(X) * 100
    np.testing.assert_allclose(pst.ica_transform(X, standardise=False), raw)
    assert not np.allclose(expected, raw)


def test_train_once_runs_the_variant(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    tiny, ds = tiny_pst_setup(tmp_path)
    seen = {}
    original_loss = defsentplus.loss

    def spy_loss(model, tokenizer, examples, pooling, space, max_length=128):
        seen["max_length"] = max_length
        return original_loss(model, tokenizer, examples, pooling, space, max_length)

    def fake_train(model, loss_fn, batches, lr, **kw):
        loss_fn(model, batches[0])
        seen.update(kw)
        raise RuntimeError("stop here")
    monkeypatch.setattr(defsentplus, "loss", spy_loss)
    monkeypatch.setattr(train, "train", fake_train)
    space = torch.randn(len(ds["names"]), 16)
    cfg = dict(model=tiny, dataset="tiny", pooling="cls", lr=1e-3, seed=0, batch_size=16, inference_poolings=["cls"],
               sts_max_pairs=10, space_key="random")
    for variant in ("official", "paper"):
        with pytest.raises(RuntimeError, match="stop here"):
            defsentplus.train_once(dict(cfg, variant=variant), space, ds)
        expected = defsentplus.VARIANTS[variant]
        assert seen["max_length"] == expected["max_length"]
        assert {k: seen[k] for k in expected["optimizer"]} == expected["optimizer"]
    assert pst.pst_config(dict(name="smoke", dsp_lrs=[1e-5], dsp_max_entries=None, seeds=[0], dsp_ica_max_iter=10,
                               dsp_inference_poolings=["cls"], dsp_sts_max_pairs=None), "m", "a")["variant"] == "official"
    with pytest.raises(ValueError, match="unknown DefSent\\+ variant 'text'"):
        defsentplus.variant_settings("text")
