import json
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy.special import logsumexp
from sklearn.decomposition import PCA, TruncatedSVD
from transformers import BertConfig, BertModel, RobertaConfig, RobertaForMaskedLM, RobertaModel

from defsent_lite import defsentplus
from defsent_lite.runtime import defsentplus_model, models
from defsent_lite.data import entries
from defsent_lite.repro import defsentplus_protocol
from tiny_root import tiny_pst_setup


def tiny_bert():
    torch.manual_seed(0)
    return BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                intermediate_size=32)).eval()


def test_pooler_output_on_cls_equals_the_bert_pooler():
    model = tiny_bert()
    ids = torch.randint(0, 50, (3, 7))
    h = model(ids).last_hidden_state
    assert torch.allclose(defsentplus.pooler_output(model, h[:, 0]), model.pooler(h), atol=1e-6)


def test_roberta_pooler_copies_mlm_dense_and_uses_gelu():
    cfg = RobertaConfig(vocab_size=60, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                        intermediate_size=32, max_position_embeddings=40)
    torch.manual_seed(0)
    mlm, model = RobertaForMaskedLM(cfg).eval(), RobertaModel(cfg).eval()
    defsentplus.pooler_from_mlm_head(model, mlm)
    x = torch.randn(4, 16)
    expected = torch.nn.functional.gelu(x @ mlm.lm_head.dense.weight.T + mlm.lm_head.dense.bias)
    assert torch.allclose(defsentplus.pooler_output(model, x), expected, atol=1e-6)


def test_loss_is_softmax_over_all_entries_by_scipy():
    class Tok:
        mask_token_id = 103

        def __call__(self, texts, **kw):
            ids = torch.tensor([[1, 2 + len(t) % 5, 3] for t in texts])
            return _Batch(input_ids=ids, attention_mask=torch.ones_like(ids))

    model = tiny_bert()
    space = torch.randn(9, 16)
    examples = [(4, "a definition"), (0, "another one"), (8, "x")]
    got = defsentplus.loss(model, Tok(), examples, "mean", space).item()
    batch = Tok()([d for _, d in examples])
    h = model(**batch).last_hidden_state.mean(1)
    logits = (defsentplus.pooler_output(model, h) @ space.T).detach().numpy().astype(np.float64)
    expected = np.mean([logsumexp(row) - row[t] for row, (t, _) in zip(logits, examples)])
    assert got == pytest.approx(expected, rel=1e-5)


class _Batch(dict):
    def to(self, device):
        return self


def test_entry_dataset_drops_and_counts_and_samples_entries():
    pairs = [("b", "def b1"), ("a", "def a1"), ("a", "  "), ("c", ""), ("b", "def b2"), ("d", "def d")]
    names, ids, defs, report = entries.entry_dataset(pairs)
    assert names == ["a", "b", "d"]
    assert list(zip(ids, defs)) == [(1, "def b1"), (0, "def a1"), (1, "def b2"), (2, "def d")]
    assert report["dropped_empty_definitions"] == 2 and report["dropped_entries_without_definition"] == 1
    names2, ids2, _, report2 = entries.entry_dataset(pairs, max_entries=2, seed=1)
    assert len(names2) == 2 and set(ids2) == {0, 1} and report2["entries"] == 2


def test_space_views_match_sklearn_svd_and_whitened_pca():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 6)) @ rng.normal(size=(6, 6)) + 3.0
    views = defsentplus_protocol.space_views(X, n_points=200, seed=0)
    order = torch.randperm(200, generator=torch.Generator().manual_seed(0)).numpy()
    svd = TruncatedSVD(2, algorithm="arpack").fit_transform(X)[order]
    pca = PCA(2, whiten=True).fit_transform(X)[order]
    for ours, ref in ((np.array(views["svd"]), svd), (np.array(views["pca_whitened"]), pca)):
        for j in range(2):  # each axis is defined up to its sign
            assert np.allclose(np.abs(ours[:, j]), np.abs(ref[:, j]), atol=1e-6)


def test_candidates_add_ica_only_at_the_last_step():
    space = torch.randn(300, 4) ** 3
    assert list(defsentplus_protocol.candidates(space, last_step=False, ica=True)) == ["plain"]
    both = defsentplus_protocol.candidates(space, last_step=True, ica=True)
    assert list(both) == ["plain", "ica1000"] and both["ica1000"].shape == space.shape
    assert np.allclose(both["ica1000"].numpy().std(0), 100.0, rtol=1e-3)  # unit variance x 100


def test_missing_pooler_is_refused(tmp_path):
    from transformers import AutoTokenizer
    BertModel(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                         intermediate_size=32), add_pooling_layer=False).save_pretrained(tmp_path)
    tok = AutoTokenizer.from_pretrained(models.resolve("offline"))
    tok.save_pretrained(tmp_path)
    with pytest.raises(ValueError, match="no pre-trained pooler .* no MLM head"):
        defsentplus_model.load(str(tmp_path))


def test_bert_without_nsp_pooler_takes_its_mlm_heads_dense_layer(tmp_path):
    """A BERT pre-trained without next-sentence prediction (no pooler weights; the repository's
    mini-BERT): Sec. 3.2's pooler from its own MLM head's dense layer, with GELU."""
    from transformers import AutoTokenizer, BertForMaskedLM
    torch.manual_seed(0)
    mlm = BertForMaskedLM(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1,
                                     num_attention_heads=2, intermediate_size=32)).eval()
    mlm.save_pretrained(tmp_path)
    AutoTokenizer.from_pretrained(models.resolve("offline")).save_pretrained(tmp_path)
    model, _ = defsentplus_model.load(str(tmp_path))
    dense = mlm.cls.predictions.transform.dense
    x = torch.randn(4, 16)
    expected = torch.nn.functional.gelu(x @ dense.weight.T + dense.bias)
    assert torch.allclose(defsentplus.pooler_output(model, x), expected, atol=1e-6)


def test_pst_loop_restarts_from_original_and_chains_spaces(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    tiny, ds = tiny_pst_setup(tmp_path)
    cfg = dict(model=tiny, pooling="cls", entry_pooling="mean", lrs=[1e-3, 1e-3], seeds=[0, 1],
               batch_size=16, ica=True, ica_max_iter=50, inference_poolings=["cls"], sts_max_pairs=20)
    loaded, original_load = [], defsentplus_model.load
    monkeypatch.setattr(defsentplus_model, "load", lambda name, **kw: loaded.append(name) or original_load(name, **kw))
    steps = defsentplus_protocol.run_pst(cfg, ds, "tiny-data")
    assert loaded == [cfg["model"]] * 6  # every run (2 seeds; then 2 spaces x 2 seeds) trains the original weights
    assert [st["step"] for st in steps] == [1, 2]
    assert steps[0]["space_from"] == cfg["model"] and steps[1]["space_from"] == steps[0]["best_run"]["key"]
    assert set(steps[0]["runs"]) == {("plain", 0), ("plain", 1)}
    assert {name for name, _ in steps[1]["runs"]} == {"plain", "ica50"}
    assert all(r["steps"] == 5 for st in steps for r in st["runs"].values())  # 80 definitions, batch 16, one epoch
    assert steps[0]["views"]["svd"] != steps[1]["views"]["svd"]  # the space was rebuilt by the trained encoder
    again = defsentplus_protocol.run_pst(cfg, ds, "tiny-data")  # all cached: nothing is trained again
    assert again[1]["best_run"]["sts"] == steps[1]["best_run"]["sts"] and len(loaded) == 6


def test_pst_encoder_loads_in_sentence_transformers_and_the_following_space(tmp_path, monkeypatch):
    """The kept checkpoint of a PST step loads in transformers and sentence-transformers (pooling
    as trained) with its metadata; the space for one more Training (Figure 7) is built from it."""
    from sentence_transformers import SentenceTransformer

    from defsent_lite import encode
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    tiny, ds = tiny_pst_setup(tmp_path)
    cfg = dict(model=tiny, pooling="cls", entry_pooling="mean", lrs=[1e-3], seeds=[0], batch_size=16, ica=False,
               inference_poolings=["cls", "mean"], sts_max_pairs=20)
    steps = defsentplus_protocol.run_pst(cfg, ds, "tiny-data")
    folder = steps[-1]["best_run"]["path"]
    meta = json.loads((Path(folder) / "defsentplus_meta.json").read_text())
    assert meta["training_pooling"] == "cls" and meta["best_sts_pooling"] in ("cls", "mean")
    sents = ["a celestial body orbiting the earth", "be expensive for someone"]
    model, tok = models.load(folder, device="cpu")
    ours = encode.encode(model, tok, sents, pooling="cls")
    assert torch.allclose(torch.tensor(SentenceTransformer(folder, device="cpu").encode(sents)), ours, atol=1e-4)
    monkeypatch.setattr(defsentplus_protocol, "entry_dataset", lambda cfg, data_dir=None: (ds, "tiny-data"))
    following = defsentplus_protocol.following_space_views(steps, cfg)
    assert following["svd"] != steps[0]["views"]["svd"]   # built by the trained encoder, not the original
    assert len(following["svd"]) == len(ds["names"])


def test_pst_changes_the_combination_at_a_later_step(tmp_path, monkeypatch):
    """A later step's own combination (Sec. 4.2: SNCSE-RoBERTa-large, 1st (CLS, AC), then (Mean, AC)):
    step 2 trains with step 2's pooling against entries built with step 2's entry pooling."""
    from defsent_lite.paper import defsentplus as paper_defsentplus
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    tiny, ds = tiny_pst_setup(tmp_path)
    later = paper_defsentplus.pst_combinations("RoBERTa-base")[1:]
    assert later == [("mean", "cls"), ("mean", "cls")]
    cfg = dict(model=tiny, pooling="cls", entry_pooling="mean", lrs=[1e-3, 1e-3], seeds=[0], batch_size=16, ica=False,
               inference_poolings=["cls"], sts_max_pairs=20, later_combinations=later)
    built = []
    original = defsentplus_protocol.entry_space
    monkeypatch.setattr(defsentplus_protocol, "entry_space", lambda enc, enc_id, entry_pooling, *a, **k:
                        built.append(entry_pooling) or original(enc, enc_id, entry_pooling, *a, **k))
    steps = defsentplus_protocol.run_pst(cfg, ds, "tiny-data")
    assert built == ["mean", "cls"] and [st["combination"] for st in steps] == [("cls", "mean"), ("mean", "cls")]
    assert defsentplus_protocol.step_combination(cfg, 4) == ("mean", "cls")   # past the list: the last again
    assert defsentplus_protocol.combinations_text(dict(cfg, lrs=[1, 1, 1])) == "1st: (CLS, AMP); 2nd: (Mean, AC); 3rd: (Mean, AC)"
