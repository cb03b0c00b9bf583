"""GaussCSE's two variants: the released code's behaviour (default) and the paper's text. Each
difference checked against a reference computed without our implementation: torch.distributions
for the similarity, transformers' scheduler for the warm-up, hand-computed metric cases."""
import numpy as np
import pytest
import torch
import torch.distributions as td

from defsent_lite import gausscse, train
from defsent_lite.data import nli_readers
from defsent_lite.evaluation import nli
from defsent_lite.repro import gausscse_protocol


def test_official_similarity_is_the_mean_over_dimensions_of_one_over_one_plus_kl():
    """The released code: 1 / (1 + KL(N(mu1, std1) || N(mu2, std2))) per dimension, then the mean."""
    g = torch.Generator().manual_seed(0)
    mu1, mu2 = torch.randn(5, 6, generator=g), torch.randn(5, 6, generator=g)
    var1, var2 = torch.rand(5, 6, generator=g) + 0.1, torch.rand(5, 6, generator=g) + 0.1
    reference = (1 / (1 + td.kl_divergence(td.Normal(mu1, var1.sqrt()), td.Normal(mu2, var2.sqrt())))).mean(-1)
    torch.testing.assert_close(gausscse.kl_similarity(mu1, var1, mu2, var2, "mean_per_dim"), reference)
    matrix = gausscse.similarity_matrix(mu1, var1, mu2, var2, "mean_per_dim")
    torch.testing.assert_close(matrix[2, 4], gausscse.kl_similarity(mu1[2], var1[2], mu2[4], var2[4], "mean_per_dim"))


def test_official_schedule_is_transformers_linear_warmup_from_zero():
    from transformers import get_linear_schedule_with_warmup
    total, warmup = 50, 5
    opt = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    sched = get_linear_schedule_with_warmup(opt, warmup, total)
    reference = []
    for _ in range(total):
        reference.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    ours = [train.warmup_factor(s, warmup, total, decay=True, from_zero=True) for s in range(total)]
    assert ours == pytest.approx(reference)


def test_variants_configure_every_difference(monkeypatch):
    S = dict(name="smoke", paper_protocol=False, gauss_batch_size=8, gauss_lr=1e-5, gauss_epochs=1, gauss_seeds=[0], gauss_train_max=4,
             gauss_dev_max=4, gauss_test_max=4)
    official = gausscse_protocol.base_config(S, "m", variant="official")
    paper = gausscse_protocol.base_config(S, "m", variant="paper")
    assert (official["variant"], official["reduction"]) == ("official", "mean_per_dim")
    assert (paper["variant"], paper["reduction"]) == ("paper", "sum")
    assert gausscse_protocol.VARIANTS["official"] == dict(head="official", reduction="mean_per_dim", weight_decay=0.01,
                                                 warmup_ratio=0.1, decay=True, warmup_from_zero=True, metrics="official",
                                                 drop_last=True, epochs=1)
    paper_scale = dict(S, name="paper", paper_protocol=True, gauss_epochs=None)
    monkeypatch.setattr(gausscse_protocol, "paper_hyperparameters", lambda model: (16, 5e-5))
    assert gausscse_protocol.base_config(paper_scale, "m")["epochs"] == 1      # the official code's default
    assert gausscse_protocol.base_config(paper_scale, "m", variant="paper")["epochs"] == 3
    with pytest.raises(ValueError, match="unknown GaussCSE variant 'text'"):
        gausscse_protocol.base_config(S, "m", variant="text")
    assert set(gausscse_protocol.differences().index) >= {"mean head", "variance", "similarity", "optimiser", "schedule", "AUPRC"}


def test_run_passes_the_variant_to_head_optimiser_schedule_and_metrics(monkeypatch):
    seen = {}

    def fake_train(model, loss_fn, batches, settings, **kw):
        # the runs train on batches tokenised before the loop (gausscse.TokenizedTriplets)
        seen.update(settings._asdict(), head=model.head.head, sizes=[len(b.triplets) for b in batches])
        raise RuntimeError("stop here")
    monkeypatch.setattr(train, "train", fake_train)
    monkeypatch.setattr(nli_readers, "training_triplets", lambda *a: [("a", "b", "c")] * 5)
    monkeypatch.setattr(gausscse_protocol, "eval_data", lambda *a: ([], {}, []))
    cfg = dict(model="offline", setting="ent", lr=1e-5, batch_size=3, epochs=1, seed=0, train_max=4, eval_every=10,
               dev_max=4, test_max=4, reduction="mean_per_dim", exclude_sources=[], train_source="offline")
    for variant, expected in (("official", dict(weight_decay=0.01, warmup_ratio=0.1, decay=True, warmup_from_zero=True,
                                                head="official", sizes=[3])),   # 5 triplets: the partial batch dropped
                              ("paper", dict(weight_decay=0.0, warmup_ratio=1.0, decay=False, warmup_from_zero=False,
                                             head="paper", sizes=[3, 2]))):
        with pytest.raises(RuntimeError, match="stop here"):
            gausscse_protocol.run(dict(cfg, variant=variant))
        assert {k: seen[k] for k in expected} == expected


def brute_force_grid_threshold(scores, labels, num=1000):
    """The official threshold search as its code describes it: every t = i / num, prediction
    score >= t, the first best accuracy (t = 0 first)."""
    best_t, best = 0.0, -1.0
    for i in range(num + 1):
        t = i / num
        acc = np.mean([(s >= t) == (y == 1) for s, y in zip(scores, labels)])
        if acc > best:
            best_t, best = t, acc
    return best_t


def test_grid_threshold_matches_the_official_search():
    rng = np.random.RandomState(0)
    for _ in range(20):
        labels = rng.randint(0, 2, 40)
        scores = np.clip(rng.rand(40) * 0.5 + 0.3 * labels, 0, 1).round(3)   # ties with grid points
        assert nli.grid_threshold(scores, labels) == brute_force_grid_threshold(scores, labels)


def test_grid_threshold_and_inclusive_accuracy_by_hand():
    scores, labels = [0.2, 0.5, 0.5, 0.9], [0, 1, 0, 1]
    assert nli.grid_threshold(scores, labels) == 0.201   # 0.2 negative, both 0.5 positive: 3 of 4
    scores, labels = [0.2, 0.5, 0.9], [0, 1, 1]
    assert nli.accuracy(scores, labels, 0.5, metrics="official") == 1.0   # 0.5 >= 0.5: entailment
    assert nli.accuracy(scores, labels, 0.5, metrics="paper") == 2 / 3    # 0.5 > 0.5: not


def test_official_auprc_by_hand():
    """scikit-learn's curve stops at full recall: (R, P) = (1, 2/3), (.5, .5), (.5, 1), (0, 1);
    trapezoids give 0.5 + 0.5 * (0.5 + 2/3) / 2."""
    scores, labels = [0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]
    assert nli.official_auprc(scores, labels) == pytest.approx(0.5 + 0.5 * (0.5 + 2 / 3) / 2)
    assert nli.area_under_pr(scores, labels, "official") == nli.official_auprc(scores, labels)
    assert nli.area_under_pr(scores, labels, "paper") == nli.auprc(scores, labels)
    with pytest.raises(ValueError, match="unknown GaussCSE metric set"):
        nli.area_under_pr(scores, labels, "sklearn")
