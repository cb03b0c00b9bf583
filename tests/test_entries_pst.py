import numpy as np
import pytest
import torch

from defsent_lite import defsentplus, encode
from defsent_lite.runtime import models
from defsent_lite.data import entries
from defsent_lite.repro import defsentplus_protocol


@pytest.fixture(scope="module")
def offline():
    return models.load("offline", device="cpu")


@pytest.mark.parametrize("pooling", ["cls", "mean"])
def test_entry_embeddings_are_per_entry_means(offline, pooling):
    model, tok = offline
    defs = ["give new life or vigor to", "imbue something with new life and vitality",
            "a large African animal with a long neck", "a very long definition " * 5, "short"]
    ids = [0, 0, 2, 1, 2]
    got = defsentplus.build_entry_embeddings(model, tok, ids, defs, pooling, batch_size=2)
    vecs = encode.encode(model, tok, defs, pooling=pooling)
    ref = torch.stack([vecs[[i for i, e in enumerate(ids) if e == k]].mean(0) for k in range(3)])
    assert got.shape == (3, 384) and torch.allclose(got, ref, atol=1e-5)


def test_entry_bad_input(offline):
    model, tok = offline
    with pytest.raises(ValueError, match="no definition"):
        defsentplus.build_entry_embeddings(model, tok, [0, 2], ["a", "b"], "cls")
    with pytest.raises(ValueError, match="AMP"):
        defsentplus.build_entry_embeddings(model, tok, [0], ["a"], "max")


def test_ica_recovers_independent_sources():
    rng = np.random.RandomState(0)
    S = np.c_[rng.uniform(-1, 1, 2000), rng.laplace(size=2000), np.sign(rng.randn(2000))]
    X = S @ rng.randn(3, 3)
    Y = defsentplus.ica_transform(X)
    corr = np.abs(np.corrcoef(Y.T, S.T)[:3, 3:])
    assert (corr.max(1) > 0.99).all()
    assert np.allclose(Y.std(0), 100.0, rtol=1e-6)  # unit variance x 100


def test_ica_non_convergence_is_reported():
    X = np.random.RandomState(1).randn(300, 4) @ np.random.RandomState(2).randn(4, 4)
    with pytest.warns(UserWarning, match="stopped at 1 iterations"):
        defsentplus.ica_transform(X, max_iter=1)


def test_ica_refuses_fewer_entries_than_dimensions():
    """Whitening would drop dimensions, and the space would no longer match the encoder's width."""
    with pytest.raises(ValueError, match="as many entries as dimensions"):
        defsentplus.ica_transform(np.random.RandomState(0).randn(30, 40))


def test_pst_steps_and_rates_follow_table5():
    """A raw model runs Table 5's three rates; a data-augmented checkpoint as many steps as its row;
    a 4th Training (Figure 7) repeats the last rate; no steps is an error."""
    from defsent_lite.runtime import config
    from defsent_lite.paper import defsentplus as paper_defsentplus
    paper = config.scale("paper")
    assert defsentplus_protocol.pst_config(paper, "bert-large-uncased", "a")["lrs"] == [4e-5, 4e-5, 3e-5]
    assert defsentplus_protocol.pst_config(paper, "princeton-nlp/unsup-simcse-roberta-large", "a")["lrs"] == [3e-5, 2e-5]
    assert defsentplus_protocol.pst_config(paper, "princeton-nlp/unsup-simcse-bert-base-uncased", "a")["lrs"] == [3e-5]
    assert defsentplus_protocol.pst_config(paper, "bert-base-uncased", "a", steps=4)["lrs"] == [5e-5, 4e-5, 3e-5, 3e-5]
    assert defsentplus_protocol.pst_config(paper, "roberta-base", "c", steps=1)["lrs"] == [3e-5]
    assert len(defsentplus_protocol.pst_config(config.scale("smoke"), None, "a", steps=4)["lrs"]) == 4
    # a checkpoint given as a folder (SNCSE) takes its rates from its Table 5 row (defsentplus_protocol.release)
    assert defsentplus_protocol.pst_config(paper, "/models/sncse-roberta-large", "a", lrs=(1e-6, 1e-6))["lrs"] == [1e-6, 1e-6]
    with pytest.raises(ValueError, match="at least 1"):
        defsentplus_protocol.pst_config(paper, "bert-base-uncased", "a", steps=0)
    assert paper_defsentplus.first_training_combinations("RoBERTa-base") == {
        "c": ("cls", "cls"), "b": ("mean", "cls"), "a": ("mean", "cls")}   # 1st-(CLS,AC)-c, (Mean,AC)-b; on a, 78.44 = Table 8's (Mean, AC)


def test_the_smoke_scale_scores_the_ica_candidate_but_keeps_a_plain_run():
    """FastICA cannot converge on the smoke scale's 390 entries in 384 dimensions: the ICA run is
    trained and shown, but never selected there; at cpu and paper scale it competes (Eq. 11)."""
    from defsent_lite.runtime import config
    runs = {("plain", 0): dict(sts={"cls": {"avg": 70.0}}), ("ica200", 0): dict(sts={"cls": {"avg": 75.0}})}
    assert not config.scale("smoke")["dsp_ica_selectable"] and config.scale("paper")["dsp_ica_selectable"]
    assert set(defsentplus_protocol.selectable(runs, dict(ica_selectable=False))) == {("plain", 0)}
    assert set(defsentplus_protocol.selectable(runs, dict(ica_selectable=True))) == set(runs)
    assert set(defsentplus_protocol.selectable(runs, {})) == set(runs)


def test_pst_rebuilds_entries_with_the_best_encoder_and_trains_the_original_each_step():
    """defsentplus.progressive_separate_training: step k's space is built by step k-1's best run
    (the original at step 1), every run starts from the original, the last step adds the
    candidates, and a step with several runs and no select is refused."""
    built, trained_from = [], []

    def build_entries(encoder, step):
        built.append((step, encoder))
        return f"space{step}<{encoder}"

    def train_against(space, lr, step, key):
        trained_from.append("original")
        return dict(name=f"run{step}{key}", score={"plain": 1, "ica": 2}[key], space=space, lr=lr)

    candidates = lambda space, last: {"plain": space, **({"ica": "ica(" + space + ")"} if last else {})}  # noqa: E731
    steps = defsentplus.progressive_separate_training(
        "original", [5e-5, 4e-5, 3e-5], build_entries, train_against, encoder_of=lambda run: run["name"],
        candidates=candidates, select=lambda runs: max(runs, key=lambda k: runs[k]["score"]))
    assert built == [(1, "original"), (2, "run1plain"), (3, "run2plain")]
    assert [st["best"] for st in steps] == ["plain", "plain", "ica"]
    assert [st["lr"] for st in steps] == [5e-5, 4e-5, 3e-5] and len(trained_from) == 4
    assert steps[2]["runs"]["ica"]["space"] == "ica(space3<run2plain)"
    with pytest.raises(ValueError, match="pass select"):
        defsentplus.progressive_separate_training("original", [1e-5], build_entries, train_against,
                                                  candidates=candidates)


def test_the_miniature_holds_out_one_definition_of_each_entry_that_has_two():
    """entries.held_out_split: the first definition of every entry with two or more is held out, every
    entry keeps a training definition, nothing is lost or shared."""
    ds = dict(names=["a", "b", "c"], ids=[0, 1, 0, 2, 1, 0], definitions=["a1", "b1", "a2", "c1", "b2", "a3"])
    training, held_out = entries.held_out_split(ds)
    assert held_out == [(0, "a1"), (1, "b1")]
    assert training == [(0, "a2"), (2, "c1"), (1, "b2"), (0, "a3")]
    assert {e for e, _ in training} == {0, 1, 2}
