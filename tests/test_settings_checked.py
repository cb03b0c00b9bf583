"""Issue 36, settings: each is checked where it enters, and a bad one is refused with an error that
names the setting, its value and what is allowed; a run that would train nothing is an error, not
a cached "trained" result."""
import json

import numpy as np
import pytest
import torch

from defsent_lite import checks, defsent, gausscse, pooling, train
from defsent_lite.runtime import cache, config, models
from defsent_lite.data import nli_readers
from defsent_lite.repro import defsent_protocol, gausscse_protocol

LINEAR = torch.nn.Linear(2, 1)


def loss_of(model, batch):
    return model.weight.sum()


@pytest.mark.parametrize("lr,shown", [(0, "lr=0"), ("1e-5", "lr='1e-5'"), (-1e-5, "lr=-1e-05"), (float("nan"), "lr=nan")])
def test_a_learning_rate_that_is_not_a_positive_number_is_named(lr, shown):
    with pytest.raises(ValueError, match=f"train: {shown}: a finite number > 0 is needed"):
        train.train(LINEAR, loss_of, [[1]], train.Settings(lr=lr))


def test_a_bare_learning_rate_is_refused_naming_the_settings_record():
    """train.train takes one settings record (Issue 47): a number where it goes is named, not
    silently read as the rate with every other setting defaulted."""
    with pytest.raises(TypeError, match="train: settings must be a train.Settings .* not float"):
        train.train(LINEAR, loss_of, [[1]], 1e-3)


@pytest.mark.parametrize("ratio", [5, -0.1, float("inf")])
def test_a_warmup_ratio_outside_0_to_1_is_named(ratio):
    with pytest.raises(ValueError, match=f"warmup_ratio={ratio!r}: a number in \\[0, 1\\]"):
        train.train(LINEAR, loss_of, [[1]], train.Settings(lr=1e-3, warmup_ratio=ratio))


def test_a_run_whose_every_step_has_rate_zero_is_an_error():
    """One step with a warm-up that starts from 0 (transformers' schedule) would train nothing."""
    with pytest.raises(ValueError, match="no step of 1 has a non-zero learning rate"):
        train.train(LINEAR, loss_of, [[1]], train.Settings(lr=1e-3, warmup_ratio=0.1, warmup_from_zero=True, fractional_warmup=True))
    history = train.train(LINEAR, loss_of, [[1], [2]], train.Settings(lr=1e-3, warmup_ratio=0.1, warmup_from_zero=True, fractional_warmup=True))   # two steps: the second has a rate
    assert history["steps"] == 2


@pytest.mark.parametrize("size", [-16, 0, 2.5, "16", True])
def test_a_batch_size_that_is_not_a_positive_whole_number_is_named(size):
    with pytest.raises(ValueError, match=f"batch_size={size!r}: a whole number >= 1 is needed"):
        train.batched(range(10), size)


@pytest.mark.parametrize("n", [0, -5, 2.5])
def test_caps_on_examples_are_positive_or_none(n):
    with pytest.raises(ValueError, match=f"train_max / eval_max\\)={n!r}"):
        defsent_protocol.subsample(list(range(10)), n, seed=0)
    with pytest.raises(ValueError, match=f"dev_max / test_max\\)={n!r}"):
        gausscse_protocol.evenly_spaced(list(range(10)), n)
    assert defsent_protocol.subsample(list(range(10)), None, seed=0) == list(range(10))


def test_gausscse_max_triplets_and_epochs_are_named(tmp_path):
    from tiny_root import gausscse_root
    root = gausscse_root(tmp_path / "data", triplets=8)
    with pytest.raises(ValueError, match="max_triplets \\(train_max\\)=-5"):
        nli_readers.training_triplets(root, max_triplets=-5)
    cfg = dict(gausscse_protocol.base_config(config.scale("smoke"), "offline"), setting="ent", train_max=None, dev_max=40,
               test_max=40, epochs=0)
    with pytest.raises(ValueError, match="epochs=0: a whole number >= 1 is needed"):
        gausscse_protocol.run(cfg, root)


def test_contrastive_loss_refuses_a_batch_of_one():
    mu, var = torch.zeros(1, 4), torch.ones(1, 4)
    with pytest.raises(ValueError, match="a batch of 1 triplet"):
        gausscse.contrastive_loss((mu, var), (mu, var), (mu, var))


def test_contrastive_loss_refuses_zero_variances_and_a_plan_an_empty_batch():
    """Issue 72: zero variances gave an infinite loss without a word; an empty batch among a
    run's batches stopped the plan's warm-up with max() of an empty sequence."""
    mu, var = torch.zeros(2, 4), torch.ones(2, 4)
    with pytest.raises(ValueError, match="the variances of ent must be > 0"):
        gausscse.contrastive_loss((mu, var), (mu, var.clone().index_fill_(1, torch.tensor([2]), 0.0)), (mu, var))
    from defsent_lite.repro import plans
    tok = models.load_tokenizer("offline")
    assert plans.spread_batches(tok, [[], ["a dog runs"], []], lambda b: b, k=2) == [["a dog runs"]]


def test_an_empty_defsent_batch_and_prompt_pooling_without_ids_are_named():
    with pytest.raises(ValueError, match="DefSent loss: an empty batch"):
        defsent.loss(None, None, dict(targets=torch.zeros(0, dtype=torch.long)), "cls")
    hidden, mask = torch.zeros(2, 3, 4), torch.ones(2, 3)
    with pytest.raises(ValueError, match="prompt pooling needs the input ids"):
        pooling.pool("prompt", hidden, mask)


@pytest.mark.parametrize("name,message", [("gpu", "use cpu, cuda or cuda:N"), ("cuda", "CUDA is not available"),
                                          ("meta", "use cpu, cuda or cuda:N"), ("mps", "use cpu, cuda or cuda:N")])
def test_a_device_setting_is_named(monkeypatch, name, message):
    if name == "cuda" and torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    monkeypatch.setenv("DEFSENT_DEVICE", name)
    with pytest.raises(ValueError, match=f"device '{name}' \\(argument or DEFSENT_DEVICE\\): .*{message}"):
        config.device()


def test_a_numpy_number_is_cached_as_a_number_and_a_numpy_nan_is_refused(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path))
    entry = cache.store("check", dict(k=1), dict(score=np.float32(0.5), ranks=np.array([1, 2])))
    stored = json.loads((cache.run_dir("check", dict(k=1)) / "result.json").read_text())["result"]
    assert stored == dict(score=0.5, ranks=[1, 2]) and entry.result == stored
    with pytest.raises(checks.NonFinite, match="score"):
        cache.store("check", dict(k=2), dict(score=np.float32("nan")))
    assert cache.lookup_json("check", dict(k=2)) is None


def test_eval_every_zero_and_a_rate_given_as_text_are_named_before_any_work(tmp_path):
    """Issue 46: GaussCSE's eval_every=0 was accepted (never evaluating) and cached; lr='1e-5'
    failed inside a format string before the rate check."""
    cfg = dict(gausscse_protocol.base_config(config.scale("smoke"), "offline"), setting="ent", eval_every=0)
    with pytest.raises(ValueError, match="GaussCSE eval_every=0: a whole number >= 1"):
        gausscse_protocol.run(cfg, tmp_path)
    with pytest.raises(ValueError, match="GaussCSE lr='1e-5': a finite number > 0 is needed"):
        gausscse_protocol.run(dict(cfg, eval_every=100, lr="1e-5"), tmp_path)
    base = defsent_protocol.base_config(config.scale("smoke"), "offline")
    with pytest.raises(ValueError, match="DefSent lr='1e-5': a finite number > 0 is needed"):
        defsent_protocol.run(dict(base, pooling="cls", lr="1e-5", seed=0), data_dir=tmp_path)


def test_an_empty_collate_and_a_notebook_id_with_a_suffix_are_named():
    """Issue 46: collate of no definitions failed with a bare IndexError; preflight.start('10x')
    ran as notebook 10."""
    from defsent_lite.data import sources
    with pytest.raises(ValueError, match="DefSent collate: no definitions to batch"):
        defsent.collate(None, [])
    with pytest.raises(ValueError, match="unknown notebook '10x'"):
        sources.needs("10x")
    assert sources.needs("10_defsent_word_prediction") == sources.needs("10")


def test_a_relative_home_inline_folders_and_a_mapped_offline_name(monkeypatch, tmp_path):
    """Issue 46: a relative DEFSENT_HOME and a relative folder in inline DEFSENT_MODEL_FOLDERS
    resolved against the working directory (docs/settings.md: against DEFSENT_HOME), and mapping
    the offline model's name there was ignored."""
    from defsent_lite.runtime import models
    monkeypatch.setenv("DEFSENT_HOME", "relative/home")
    with pytest.raises(ValueError, match="DEFSENT_HOME='relative/home': give an absolute path"):
        config.project_root()
    monkeypatch.setenv("DEFSENT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("DEFSENT_MODEL_FOLDERS", json.dumps({"offline": "models/mine"}))
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    mine = str(tmp_path / "home" / "models" / "mine")
    assert config.model_folders() == {"offline": mine} and models.resolve("offline") == mine


def test_contrastive_loss_names_mismatched_batches_and_a_bad_temperature():
    """Issue 46: mismatched batch sizes and temperature 0 crashed without saying why."""
    mu, var = torch.zeros(3, 4), torch.ones(3, 4)
    with pytest.raises(ValueError, match=r"must all be \[B, d\] of one shape; got .*'ent': \[\(2, 4\)"):
        gausscse.contrastive_loss((mu, var), (mu[:2], var[:2]), (mu, var))
    with pytest.raises(ValueError, match="temperature=0: a finite number > 0 is needed"):
        gausscse.contrastive_loss((mu, var), (mu, var), (mu, var), temperature=0)


@pytest.mark.parametrize("batch", [[], {}, torch.zeros(0, 3), {"input_ids": torch.zeros(0, 5, dtype=torch.long)}],
                         ids=["list", "dict", "tensor", "dict of 0 rows"])
def test_an_empty_batch_of_any_kind_is_named_not_blamed_on_the_rate(batch):
    """Issue 46: an empty tensor or dict batch ran and was blamed on the learning rate."""
    with pytest.raises(ValueError, match="train: batch 2 of 2 is empty"):
        train.train(LINEAR, loss_of, [[1], batch], train.Settings(lr=1e-3))


@pytest.mark.parametrize("value, on", [("0", False), ("no", False), ("off", False), ("FALSE", False),
                                       ("", False), ("1", True), ("Yes", True), ("on", True), (" true ", True)])
def test_an_on_off_variable_means_what_it_says(monkeypatch, value, on):
    """Issue 72: DEFSENT_STANDINS=no / off / FALSE turned the stand-ins on (then a paper table took
    no difference), DEFSENT_PROGRESS=off showed bars; both read checks.switch's words now."""
    from defsent_lite import forward
    from defsent_lite.runtime import config
    monkeypatch.setenv("DEFSENT_STANDINS", value)
    monkeypatch.setenv("DEFSENT_PROGRESS", value)
    assert config.standins_enabled() == on and forward.bars_shown() == on


def test_an_on_off_variable_with_another_word_is_refused_by_name(monkeypatch):
    from defsent_lite.runtime import config
    monkeypatch.setenv("DEFSENT_STANDINS", "maybe")
    with pytest.raises(ValueError, match="DEFSENT_STANDINS='maybe': use 1 or 0"):
        config.standins_enabled()


@pytest.mark.parametrize("clip", [-1.0, 0.0, float("nan")])
def test_a_gradient_clip_that_is_not_a_positive_number_is_named(clip):
    """Issue 72: grad_clip=-1.0 scaled every gradient by a negative factor (gradient ascent)."""
    with pytest.raises(ValueError, match="grad_clip="):
        train.train(LINEAR, loss_of, [[1]], train.Settings(lr=1e-3, grad_clip=clip), progress=False)


def test_a_diverged_gausscse_training_names_its_step_and_rate():
    """Issue 85: a diverged GaussCSE training on the CPU stopped with "the variances of pre must be
    > 0", naming no step or rate (the zero-variance check also fired on NaN)."""
    from defsent_lite import train

    model = torch.nn.Linear(4, 4)

    def loss_fn(m, step):
        mu = m(torch.ones(2, 4))
        var = torch.ones(2, 4) * (float("nan") if step == 3 else 1.0)
        return gausscse.contrastive_loss((mu, var), (mu, var), (mu, var))

    with pytest.raises(FloatingPointError, match=r"GaussCSE: step 3 of 4 \(lr 0.001\): contrastive loss: "
                                                 "the variances of pre are NaN or inf"):
        train.train(model, loss_fn, [1, 2, 3, 4], train.Settings(lr=1e-3), desc="GaussCSE", progress=False)
