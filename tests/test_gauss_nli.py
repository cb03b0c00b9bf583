import math
import numpy as np
import pytest
import torch
from scipy.stats import binomtest
from sklearn.metrics import auc, precision_recall_curve
from torch.distributions import Normal, kl_divergence

from defsent_lite import gausscse
from defsent_lite.evaluation import nli


def gaussians(n, d, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, d, generator=g), torch.rand(n, d, generator=g) * 2 + 0.05


def test_kl_matches_torch_distributions_and_broadcasts():
    mu_a, var_a = gaussians(5, 7, 0)
    mu_b, var_b = gaussians(4, 7, 1)
    ref = kl_divergence(Normal(mu_a[:, None], var_a[:, None].sqrt()), Normal(mu_b[None], var_b[None].sqrt())).sum(-1)
    assert torch.allclose(gausscse.kl_divergence(mu_a[:, None], var_a[:, None], mu_b[None], var_b[None]), ref, atol=1e-4)
    assert torch.allclose(gausscse.kl_matrix(mu_a, var_a, mu_b, var_b), ref, atol=1e-3)
    sim = gausscse.kl_similarity(mu_a[:, None], var_a[:, None], mu_b[None], var_b[None])
    assert sim.shape == (5, 4) and torch.allclose(sim, 1 / (1 + ref), atol=1e-6)
    assert torch.allclose(gausscse.similarity_matrix(mu_a, var_a, mu_b, var_b), sim, atol=1e-5)


def test_broad_premise_makes_sim_hyp_given_pre_larger():
    mu = torch.zeros(1, 4)
    narrow, broad = torch.full((1, 4), 0.5), torch.full((1, 4), 2.0)
    assert gausscse.kl_similarity(mu, narrow, mu, broad) > gausscse.kl_similarity(mu, broad, mu, narrow)


def test_official_reduction_averages_per_dimension():
    mu_a, var_a = gaussians(3, 5, 2)
    mu_b, var_b = gaussians(3, 5, 3)
    per_dim = kl_divergence(Normal(mu_a, var_a.sqrt()), Normal(mu_b, var_b.sqrt()))
    got = gausscse.kl_similarity(mu_a, var_a, mu_b, var_b, reduction="mean_per_dim")
    assert torch.allclose(got, (1 / (1 + per_dim)).mean(-1), atol=1e-6)
    with pytest.raises(ValueError, match="reduction"):
        gausscse.kl_similarity(mu_a, var_a, mu_b, var_b, reduction="max")


def naive_loss(pre, ent, con, setting, t=0.05):
    """Eq. 3 with explicit loops (the reference)."""
    n, total = len(pre[0]), 0.0
    sim = lambda x, i, y, j: float(1 / (1 + kl_divergence(Normal(x[0][i], x[1][i].sqrt()), Normal(y[0][j], y[1][j].sqrt())).sum()))
    for i in range(n):
        denom = sum(np.exp(sim(ent, j, pre, i) / t) for j in range(n))
        if "con" in setting:
            denom += sum(np.exp(sim(con, j, pre, i) / t) for j in range(n))
        if "rev" in setting:
            denom += sum(np.exp(sim(pre, j, ent, i) / t) for j in range(n))
        total += -np.log(np.exp(sim(ent, i, pre, i) / t) / denom)
    return total / n


@pytest.mark.parametrize("setting", gausscse.LOSS_SETTINGS)
def test_contrastive_loss_equals_explicit_sums(setting):
    pre, ent, con = gaussians(4, 3, 4), gaussians(4, 3, 5), gaussians(4, 3, 6)
    pre = (pre[0] * 0.3, pre[1] + 1)  # keep similarities away from 0 so the sums are informative
    ent = (ent[0] * 0.3, ent[1] + 1)
    got = gausscse.contrastive_loss(pre, ent, con, setting).item()
    assert got == pytest.approx(naive_loss(pre, ent, con, setting), rel=1e-4)


def test_paper_head_variance_positive_and_finite_in_bf16():
    torch.manual_seed(0)
    head = gausscse.GaussHead(8, "paper")
    v = torch.randn(4, 8) * 1e4  # extreme inputs
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mu, var = head(v)
        sim = gausscse.kl_similarity(mu[:, None], var[:, None], mu[None], var[None])
    assert var.dtype == torch.float32 and (var >= gausscse.VAR_FLOOR).all()
    assert torch.isfinite(sim).all() and torch.isfinite(mu).all()


def test_official_head_is_tanh_mean_and_exp_variance():
    """The released code: mu = tanh(W_mu v + b), std = sqrt(exp(W_var v + b)), i.e. var = exp(.)."""
    torch.manual_seed(0)
    head = gausscse.GaussHead(8)
    v = torch.randn(4, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        mu, var = head(v)
    lin_mu = v @ head.mean.weight.T + head.mean.bias
    log_var = v @ head.var.weight.T + head.var.bias
    torch.testing.assert_close(mu, torch.tanh(lin_mu))
    torch.testing.assert_close(var.sqrt(), torch.sqrt(log_var.exp()))
    assert var.dtype == torch.float32


def test_official_head_floors_an_underflowing_variance():
    head = gausscse.GaussHead(2)
    with torch.no_grad():
        head.var.weight.zero_()
        head.var.bias.copy_(torch.tensor([-200.0, 0.0]))   # exp(-200) is 0 in float32
    _, var = head(torch.zeros(1, 2))
    assert var[0, 0] == gausscse.EXP_VAR_FLOOR and var[0, 1] == 1.0
    assert torch.isfinite(torch.log(var)).all()
    with pytest.raises(ValueError, match="unknown GaussCSE head 'linear'"):
        gausscse.GaussHead(2, "linear")


def test_best_threshold_and_accuracy_by_hand():
    scores = [0.1, 0.4, 0.35, 0.8, 0.7]
    labels = [0, 0, 1, 1, 1]
    t = nli.best_threshold(scores, labels)
    assert nli.accuracy(scores, labels, t) == pytest.approx(0.8)  # best possible: 4/5
    brute = max(np.mean((np.array(scores) > c) == np.array(labels)) for c in np.linspace(0, 1, 10001))
    assert nli.accuracy(scores, labels, t) == pytest.approx(brute)


def test_auprc_equals_sklearn_on_grid_scores():
    rng = np.random.default_rng(0)
    labels = rng.integers(0, 2, 500)
    scores = np.clip(rng.normal(0.4 + 0.2 * labels, 0.15), 0, 0.998)
    scores = np.floor(scores * 1000) / 1000 + 0.0005  # between grid points: > and >= agree
    p, r, _ = precision_recall_curve(labels, scores)
    assert nli.auprc(scores, labels) == pytest.approx(auc(r, p), abs=1e-9)


def test_direction_length_baseline_and_mcnemar():
    assert nli.direction_accuracy([0.9, 0.2, 0.5], [0.1, 0.3, 0.4]) == pytest.approx(2 / 3)
    entailing, entailed = ["a b c", "a", "a b"], ["a", "a b", "c d"]  # chars 5|1, 1|3, 3|3 (a tie)
    assert nli.length_baseline_accuracy(entailing, entailed) == pytest.approx(1 / 3)
    assert nli.length_baseline_accuracy(entailing, entailed, ties="half") == pytest.approx(0.5)
    assert nli.length_baseline_accuracy(["a b c", "abcdefg"], ["ab cd", "a b c"], unit="words") == pytest.approx(0.5)
    with pytest.raises(ValueError, match="unit 'tokens'"):
        nli.sentence_lengths(["a"], unit="tokens")
    c1 = [1] * 30 + [0] * 5 + [1] * 10
    c2 = [0] * 30 + [1] * 5 + [1] * 10
    b, c, p = nli.mcnemar(c1, c2)
    assert (b, c) == (30, 5) and p == pytest.approx(binomtest(30, 35, 0.5).pvalue)
    _, _, p_chi = nli.mcnemar(c1, c2, exact=False)
    assert p_chi == pytest.approx(math.erfc(math.sqrt(576 / 35 / 2)))  # chi2(1) sf of (|30-5|-1)^2/35


def test_length_baseline_reproduces_paper_table2_on_full_test_sets():
    """Characters, a tie counted wrong: the paper's 92.63 / 82.64 / 69.14 (truncated) exactly."""
    from defsent_lite.repro import gausscse_protocol
    _, tests, sick_full = gausscse_protocol.eval_data(None)
    got = {n: 100 * nli.length_baseline_accuracy(*gausscse_protocol.direction_pairs(n, r, sick_full)[:2]) for n, r in tests.items()}
    assert {k: math.floor(v * 100) / 100 for k, v in got.items()} == {"SNLI": 92.63, "MNLI": 82.64, "SICK": 69.14}


def test_sick_bilateral_pairs_are_excluded_and_counted():
    rows = [dict(sentence_a="A1", sentence_b="B1", ab="A_entails_B", ba="B_neutral_A"),
            dict(sentence_a="A2", sentence_b="B2", ab="A_entails_B", ba="B_entails_A"),
            dict(sentence_a="A3", sentence_b="B3", ab="A_neutral_B", ba="B_entails_A")]
    entailing, entailed, bilateral, _ = nli.sick_direction_pairs(rows)
    assert entailing == ["A1", "B3"] and entailed == ["B1", "A3"] and bilateral == 1


@pytest.fixture(scope="module")
def tiny_gauss():
    from transformers import AutoTokenizer, BertConfig, BertModel

    from defsent_lite.runtime import models
    torch.manual_seed(0)
    tok = AutoTokenizer.from_pretrained(models.resolve("offline"))
    enc = BertModel(BertConfig(vocab_size=tok.vocab_size, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                               intermediate_size=32))
    return gausscse.GaussModel(enc).eval(), tok


def test_encode_keeps_input_order_and_ignores_padding(tiny_gauss):
    model, tok = tiny_gauss
    sentences = ["a short one.", "a much longer sentence with many more words in it.", "mid length here."]
    mu, var = gausscse.encode(model, tok, sentences, batch_size=2)
    for i, s in enumerate(sentences):
        m1, v1 = model(dict(tok([s], return_tensors="pt")))
        assert torch.allclose(mu[i], m1[0], atol=1e-5) and torch.allclose(var[i], v1[0], atol=1e-5)


def test_nan_loss_names_step_and_batch_statistics(tiny_gauss):
    from defsent_lite import train
    from defsent_lite.repro import gausscse_protocol
    model, tok = tiny_gauss
    batch = [("premise one.", "entailed one.", "contradicted one."), ("premise two.", "entailed two.", "other two.")]

    def loss_fn(m, b):
        return gausscse.triplet_loss(m, tok, b, "ent+con+rev", "sum") * float("nan")
    with pytest.raises(train.NonFiniteLoss, match=r"step 1 of 1 \(premises .* var in \["):
        train.train(model, loss_fn, [batch], train.Settings(lr=1e-5), describe_batch=gausscse_protocol.describe_batch(model, tok), progress=False)


def test_nan_loss_on_batches_tokenised_before_the_loop_names_the_premises(tiny_gauss):
    from defsent_lite import train
    from defsent_lite.repro import gausscse_protocol
    model, tok = tiny_gauss
    batch = [("premise one.", "entailed one.", "contradicted one."), ("premise two.", "entailed two.", "other two.")]
    prepared = gausscse.tokenize_triplet_batches(tok, [batch])

    def loss_fn(m, b):
        return gausscse.triplet_loss(m, tok, b, "ent+con+rev", "sum") * float("nan")
    with pytest.raises(train.NonFiniteLoss, match=r"step 1 of 1 \(premises \['premise one.', 'premise two.'\]"):
        train.train(model, loss_fn, prepared, train.Settings(lr=1e-5), describe_batch=gausscse_protocol.describe_batch(model, tok), progress=False)


def test_triplets_tokenised_before_the_loop_give_the_losses_of_the_tokenizers_own_batches(tiny_gauss):
    """Issue 44: gausscse_protocol tokenises every batch once before training (tokenize_triplet_batches);
    each batch's loss equals the loss of the same triplets through the tokenizer's own padded call
    (columns premise / entailment / contradiction, cut at max_length)."""
    model, tok = tiny_gauss
    model.eval()   # a refused training above leaves it in training mode (dropout)
    triplets = [(f"a man number {i} plays " + "very " * (i % 7), f"someone plays {i}.", f"nobody is here {i}")
                for i in range(10)]
    batches = [triplets[:4], triplets[4:7], triplets[7:]]
    prepared = gausscse.tokenize_triplet_batches(tok, batches, max_length=12)
    assert [p.triplets for p in prepared] == batches and [len(p.features) for p in prepared] == [12, 9, 9]
    with torch.no_grad():
        for batch, ready in zip(batches, prepared):
            enc = tok([s for column in zip(*batch) for s in column], padding=True, truncation=True,
                      max_length=12, return_tensors="pt")
            mu, var = model(dict(enc))
            n = len(batch)
            by_hand = gausscse.contrastive_loss(*[(mu[k * n:(k + 1) * n], var[k * n:(k + 1) * n]) for k in range(3)],
                                                "ent+con+rev", reduction="sum")
            assert torch.equal(gausscse.triplet_loss(model, tok, ready, "ent+con+rev", "sum", 12), by_hand)
            assert torch.equal(gausscse.triplet_loss(model, tok, batch, "ent+con+rev", "sum", 12), by_hand)


def test_training_triplets_exclude_sources_and_never_hold_test_premises():
    from defsent_lite.data import nli_readers
    all_t = nli_readers.training_triplets()
    no_mnli = nli_readers.training_triplets(exclude_sources=["mnli_dev_matched"])
    assert len(all_t) == 7409 and len(no_mnli) == 7409 - 3243
    premises = {p for p, _, _ in all_t}
    for name in ("snli_dev", "snli_test", "mnli_dev_mismatched"):
        assert not premises & {r["premise"] for r in nli_readers.load_nli(name)}


def test_simcse_csv_reader_quotes_and_bad_lines(tmp_path):
    from defsent_lite.data import nli_readers
    good = tmp_path / "nli_for_simcse.csv"
    good.write_text('sent0,sent1,hard_neg\n"A man, outside.",A man is out.,Nobody is out.\n')
    assert nli_readers.read_simcse_nli(good)[0]["premise"] == "A man, outside."
    bad = tmp_path / "bad.csv"
    bad.write_text("sent0,sent1,hard_neg\na,b,c\nonly,two\n")
    with pytest.raises(ValueError, match=r"bad.csv:3"):
        nli_readers.read_simcse_nli(bad)


class BagOfWordsGauss(torch.nn.Module):
    """A stand-in GaussModel whose (mu, var) differ strongly between sentences: mean and summed token embeddings."""

    def __init__(self, vocab_size, d=8):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.mu = torch.nn.Embedding.from_pretrained(torch.randn(vocab_size, d, generator=g))
        self.var = torch.nn.Embedding.from_pretrained(torch.randn(vocab_size, d, generator=g))
        self.config = type("Config", (), {"hidden_size": d})()

    def forward(self, batch):
        mask = batch["attention_mask"].unsqueeze(-1).float()
        mu = (self.mu(batch["input_ids"]) * mask).sum(1) / mask.sum(1)
        return mu, torch.nn.functional.softplus((self.var(batch["input_ids"]) * mask).sum(1)) + 1e-4


def test_evaluate_matches_sentence_by_sentence_scores(tiny_gauss):
    """evaluate encodes each test set once for NLI and direction; its answers equal direct per-sentence scores."""
    from defsent_lite.repro import gausscse_protocol
    tok = tiny_gauss[1]
    model = BagOfWordsGauss(tok.vocab_size)
    rows = [dict(premise=p, hypothesis=h, label=l) for p, h, l in [
        ("a man plays a guitar on a stage.", "a man plays music.", "entailment"),
        ("two dogs run in a field.", "animals are outside.", "entailment"),
        ("a woman reads.", "a woman is sleeping in her bed at night.", "contradiction"),
        ("kids swim in a lake.", "kids are in the water.", "entailment"),
        ("a chef cooks pasta.", "someone is cooking.", "neutral")]]

    def sim(a, b):
        with torch.no_grad():
            (ma, va), (mb, vb) = model(dict(tok([a], return_tensors="pt"))), model(dict(tok([b], return_tensors="pt")))
        return gausscse.kl_similarity(ma[0], va[0], mb[0], vb[0]).item()
    out = gausscse_protocol.evaluate(model, tok, rows, {"SNLI": rows}, sick_full=[], reduction="sum", metrics="paper")
    scores = np.array([sim(r["hypothesis"], r["premise"]) for r in rows])
    labels = nli.binary_labels(rows)
    assert out["nli_correct"]["SNLI"] == ((scores > out["threshold"]) == (labels == 1)).astype(int).tolist()
    assert out["threshold"] == pytest.approx(nli.best_threshold(scores, labels), abs=1e-5)
    official = gausscse_protocol.evaluate(model, tok, rows, {"SNLI": rows}, sick_full=[], reduction="sum")
    assert official["threshold"] == nli.grid_threshold(scores, labels)
    assert official["nli_correct"]["SNLI"] == ((scores >= official["threshold"]) == (labels == 1)).astype(int).tolist()
    assert official["dev_auprc"] == pytest.approx(nli.official_auprc(scores, labels), abs=1e-6)
    ent = [r for r in rows if r["label"] == "entailment"]
    margins = np.array([sim(r["hypothesis"], r["premise"]) - sim(r["premise"], r["hypothesis"]) for r in ent])
    assert np.abs(margins).min() > 1e-3  # the comparison is not decided by float noise
    expected = (margins > 0).astype(int).tolist()
    assert out["direction_correct"]["SNLI"] == expected
    assert out["direction"]["SNLI"] == pytest.approx(100 * np.mean(expected))


def test_direction_by_length_bins_pairs_by_character_length_ratio():
    from defsent_lite.repro import gausscse_tables
    rows = [dict(premise=p, hypothesis=h, label="entailment") for p, h in
            [("abcd", "ab"), ("abcdefgh", "ab"), ("ab", "cd"), ("a", "abc")]]  # log ratios 0.69, 1.39, 0, -1.10
    rows.append(dict(premise="x", hypothesis="y", label="neutral"))  # not a direction pair
    table = gausscse_tables.direction_by_length({"direction_correct": {"SNLI": [1, 0, 1, 1]}}, {"SNLI": rows}, [])
    pairs, right = table["SNLI"].xs("pairs", level=1), table["SNLI"].xs("right", level=1)
    assert pairs.tolist() == [1, 1, 0, 1, 1]  # shorter, equal, (0, 0.5], (0.5, 1], > 1
    assert right["(0.5, 1]"] == 1 and right["> 1"] == 0 and right["0 (equal)"] == 1 and right["(0, 0.5]"] == 0


def test_paper_hyperparameters_are_table5_optima_and_unknown_models_warn():
    from defsent_lite.runtime import config
    from defsent_lite.repro import gausscse_protocol
    assert gausscse_protocol.paper_hyperparameters("bert-base-uncased") == (16, 5e-5)
    assert gausscse_protocol.paper_hyperparameters("roberta-large") == (16, 3e-5)  # 67.17
    assert gausscse_protocol.paper_hyperparameters("bert-large-uncased") == (16, 3e-5)  # 65.65 against 65.56 at batch 32
    assert gausscse_protocol.paper_hyperparameters("my/model") is None
    paper = config.scale("paper")
    assert gausscse_protocol.base_config(paper, "roberta-large")["lr"] == 3e-5
    with pytest.warns(UserWarning, match="'my/model' is not in GaussCSE's Table 5"):
        cfg = gausscse_protocol.base_config(paper, "my/model")
    assert (cfg["batch_size"], cfg["lr"]) == (paper["gauss_batch_size"], paper["gauss_lr"])
    assert paper["gauss_seeds"] == [0, 1, 2, 3, 4]


def fake_result(acc, direction, dev_auprc, correct):
    return dict(nli={"SNLI": dict(acc=acc, auprc=acc - 10)}, direction={"SNLI": direction}, dev_auprc=dev_auprc,
                nli_correct={"SNLI": correct}, direction_correct={"SNLI": correct}, triplets=7)


def test_seeds_are_averaged_and_grid_collects_dev_auprc(monkeypatch):
    from defsent_lite.repro import gausscse_protocol
    calls = []

    def fake_run(cfg, data_dir=None, keep_model=False):
        calls.append((cfg["setting"], cfg["seed"], cfg["batch_size"], cfg["lr"], keep_model))
        return fake_result(70 + cfg["seed"], 50 + 2 * cfg["seed"], cfg["lr"] * 1e4 + cfg["batch_size"] / 1e3, [cfg["seed"]])
    monkeypatch.setattr(gausscse_protocol, "run", fake_run)
    base = dict(setting=None, seed=0, batch_size=16, lr=5e-5)
    runs = gausscse_protocol.run_settings(base, [0, 1, 2], settings=["ent", "ent+rev"])
    assert len(calls) == 6 and {c[1] for c in calls} == {0, 1, 2}
    assert [c[4] for c in calls] == [True, False, False] * 2   # the first seed's model of each setting is kept
    assert runs["ent"]["nli"]["SNLI"] == dict(acc=71.0, auprc=61.0) and runs["ent"]["direction"]["SNLI"] == 52.0
    assert runs["ent"]["nli_correct"]["SNLI"] == [0] and runs["ent"]["seeds"] == 3  # McNemar: first seed
    grid = gausscse_protocol.grid_search(base, "ent", batch_sizes=(16, 32), lrs=(1e-5, 5e-5))
    assert grid.shape == (2, 2) and grid.loc[32, "5e-05"] == pytest.approx(100 * (0.5 + 0.032))
    assert grid.stack().idxmax() == (32, "5e-05")
