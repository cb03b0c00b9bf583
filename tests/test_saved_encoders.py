"""Trained GaussCSE models are saved in a form others load (save_pretrained + the head as
safetensors) and the loader gives back the same scores."""
import pytest
import torch

from defsent_lite import gausscse
from defsent_lite.runtime import config
from defsent_lite.repro import gausscse_protocol
from tiny_root import gausscse_root, tiny_pst_setup


def test_gausscse_model_is_kept_on_request_and_reloads_to_the_same_scores(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    tiny, _ = tiny_pst_setup(tmp_path)
    root = gausscse_root(tmp_path / "data", triplets=24, pairs=41)
    cfg = dict(gausscse_protocol.base_config(config.scale("smoke"), tiny), setting="ent+rev", train_max=None,
               dev_max=40, test_max=40, batch_size=8, eval_every=100)
    scores_only = gausscse_protocol.run(cfg, root)
    assert scores_only["path"] is None
    kept = gausscse_protocol.run(cfg, root, keep_model=True)   # the dropped entry is trained again, now with its model
    assert kept["path"] is not None and kept["nli"] == scores_only["nli"]
    loaded = gausscse_protocol.load_embedder(kept["path"], device="cpu")
    assert (loaded.reduction, loaded.meta["setting"], loaded.meta["head"]) == (cfg["reduction"], "ent+rev", "official")
    dev, tests, sick_full = gausscse_protocol.eval_data(cfg["test_max"], root)
    again = gausscse_protocol.evaluate(loaded.model, loaded.tokenizer, gausscse_protocol.evenly_spaced(dev, cfg["dev_max"]), tests,
                              sick_full, loaded.reduction)
    for task, metrics in kept["nli"].items():
        assert again["nli"][task] == pytest.approx(metrics, abs=1e-6), task
    assert again["direction"] == pytest.approx(kept["direction"], abs=1e-6)
    sim = loaded.similarity(["a man is playing a guitar"], ["a man plays"])
    mu, var = loaded.encode(["a man is playing a guitar", "a man plays"])
    assert torch.allclose(sim, gausscse.kl_similarity(mu[:1], var[:1], mu[1:], var[1:], loaded.reduction))
    assert gausscse_protocol.run(cfg, root, keep_model=True)["path"] == kept["path"]   # cached with its files


def test_loading_a_folder_without_the_head_names_what_is_missing(tmp_path):
    tiny, _ = tiny_pst_setup(tmp_path)
    with pytest.raises(FileNotFoundError, match="gauss_head.safetensors"):
        gausscse_protocol.load_embedder(tiny)


def test_pooler_vectors_are_transformers_pooler_output():
    from defsent_lite.runtime import models
    model, tok = models.load("offline", device="cpu")
    sents = ["a man is playing a guitar", "two dogs run on the beach in the sun"]
    ours = gausscse_protocol.sentence_vectors(model, tok, sents, "pooler")
    with torch.no_grad():
        reference = torch.cat([model(**tok(s, return_tensors="pt")).pooler_output for s in sents])
    assert torch.allclose(ours, reference, atol=1e-5)


def test_cosine_baseline_scores_sentence_transformers_cosines(tmp_path, monkeypatch):
    """The baseline's accuracy equals the one computed from sentence-transformers' own vectors."""
    from sentence_transformers import SentenceTransformer

    from defsent_lite.runtime import models
    from defsent_lite.evaluation import nli
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    root = gausscse_root(tmp_path / "data", triplets=8, pairs=41)
    base = dict(gausscse_protocol.base_config(config.scale("smoke"), "offline"), dev_max=40, test_max=40)
    got = gausscse_protocol.cosine_baseline(config.OFFLINE_MODEL, "mean", base, root)
    st = SentenceTransformer(str(models.offline_model_path()), device="cpu")

    def cosines(rows):
        a = st.encode([r["hypothesis"] for r in rows], normalize_embeddings=True)
        b = st.encode([r["premise"] for r in rows], normalize_embeddings=True)
        return (a * b).sum(-1)
    dev, tests, _ = gausscse_protocol.eval_data(40, root)
    dev = gausscse_protocol.evenly_spaced(dev, 40)
    t = nli.threshold_for(cosines(dev), nli.binary_labels(dev), "official")
    assert got["threshold"] == pytest.approx(t, abs=1e-3)
    for name, rows in tests.items():
        acc = 100 * nli.accuracy(cosines(rows), nli.binary_labels(rows), t, name, "official")
        assert got["nli"][name]["acc"] == pytest.approx(acc, abs=100 / len(rows) + 1e-9), name   # at most one pair at the threshold
