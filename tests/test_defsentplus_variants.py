"""DefSent+'s two variants: the released code's settings (default) and the paper's text. Each
difference against a reference built from torch, transformers and scikit-learn directly."""
import numpy as np
import pytest
import torch
from sklearn.decomposition import FastICA
from sklearn.preprocessing import StandardScaler

from defsent_lite import defsentplus, train
from defsent_lite.runtime import config, defsentplus_model
from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.repro import defsentplus_protocol, defsentplus_tables
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
    train.train(ours, loss_fn, batches, train.Settings(lr=0.1, **defsentplus_protocol.VARIANTS["official"]["optimizer"]), progress=False)
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
    np.testing.assert_allclose(defsentplus.ica_transform(X), expected)
    raw = FastICA(whiten="unit-variance", max_iter=1000, random_state=42).fit_transform(X) * 100
    np.testing.assert_allclose(defsentplus.ica_transform(X, standardise=False), raw)
    assert not np.allclose(expected, raw)


def test_train_once_runs_the_variant(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    tiny, ds = tiny_pst_setup(tmp_path)
    seen = {}
    original_loss = defsentplus.loss

    def spy_loss(model, tokenizer, examples, pooling, space, max_length=128):
        seen["max_length"] = max_length
        return original_loss(model, tokenizer, examples, pooling, space, max_length)

    def fake_train(model, loss_fn, batches, settings, **kw):
        loss_fn(model, batches[0])
        seen.update(settings._asdict())
        raise RuntimeError("stop here")
    monkeypatch.setattr(defsentplus, "loss", spy_loss)
    monkeypatch.setattr(train, "train", fake_train)
    space = torch.randn(len(ds["names"]), 16)
    cfg = dict(model=tiny, dataset="tiny", pooling="cls", lr=1e-3, seed=0, batch_size=16, inference_poolings=["cls"],
               sts_max_pairs=10, space_key="random")
    for variant in ("official", "paper"):
        with pytest.raises(RuntimeError, match="stop here"):
            defsentplus_protocol.train_once(dict(cfg, variant=variant), space, ds)
        expected = defsentplus_protocol.VARIANTS[variant]
        assert seen["max_length"] == expected["max_length"]
        assert {k: seen[k] for k in expected["optimizer"]} == expected["optimizer"]
    assert defsentplus_protocol.pst_config(dict(config.scale("smoke"), dsp_lrs=[1e-5], dsp_max_entries=None, dsp_ica_max_iter=10, dsp_ica_selectable=True,
                               dsp_inference_poolings=["cls"], dsp_sts_max_pairs=None), "m", "a")["variant"] == "official"
    with pytest.raises(ValueError, match="unknown DefSent\\+ variant 'text'"):
        defsentplus_protocol.variant_settings("text")


# ---------------------------------------------------------------- where we followed neither (now both)

def test_dataset_c_keeps_words_of_berts_vocabulary_for_every_model(monkeypatch):
    """Footnote 8: c is filtered by BERT's vocabulary, whatever model trains on it."""
    from defsent_lite.runtime import models
    from defsent_lite.data import dictionary_readers, entries
    pairs, _ = entries.defsentplus_dataset("c")
    bert = models.bert_vocabulary()
    # bert-base-uncased's vocabulary: 30,522 tokens, uncased, [CLS] = 101, "the" = 1996
    assert bert.vocab_size == 30522 and bert.tokenize("Dog") == ["dog"]
    assert bert.convert_tokens_to_ids(["[CLS]", "the"]) == [101, 1996]
    ox, _ = dictionary_readers.oxford_pairs()
    single = {w for w, _ in ox if len(bert(w, add_special_tokens=False)["input_ids"]) == 1}
    assert pairs == [(w, d) for w, d in ox if w in single] and len(pairs) > 1000


def test_defsentplus_scores_sts_on_senteval_files(monkeypatch):
    """Footnote 9 and the released TestSTS.py: SentEval's tokenised STS files."""
    from defsent_lite.evaluation import sts
    seen = []
    monkeypatch.setattr(sts, "evaluate_each", lambda embeds, data_dir=None, tasks=None, variant="raw", max_pairs=None:
                        seen.append(variant) or {})
    defsentplus_protocol.sts_scores(None, None, [], 10)
    assert seen == ["senteval"]
    assert defsentplus_protocol.pst_config(dict(config.scale("smoke"), dsp_lrs=[1e-5], dsp_max_entries=None, dsp_ica_max_iter=10, dsp_ica_selectable=True,
                               dsp_inference_poolings=["cls"], dsp_sts_max_pairs=None), "m", "a")["sts_files"] == "senteval"


def test_senteval_pooling_is_table_7s_for_the_papers_models():
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "shared" / "papers" / "defsent-plus-2024.md").read_text(encoding="utf-8")
    table7 = {}
    for line in text.splitlines():
        fields = line.split("\t")
        if len(fields) == 3 and "DefSent+" in fields[0]:
            name = fields[0].split("}")[-1].split("(")[0].strip().lower()   # "BERT-base(1CA)" -> "bert-base"
            table7[name] = (fields[1].strip().lower(), fields[2].strip().lower())
    assert len(table7) == 14
    assert {k.split("(")[0].lower(): v for k, v in paper_defsentplus.TABLE7.items()} == table7
    raw = {m.replace("-uncased", ""): p for m, p in defsentplus_tables.SENTEVAL_POOLING.items() if "/" not in m}
    assert raw == {m: senteval for m, (_, senteval) in table7.items() if "-" in m and m.count("-") == 1}
    run = dict(sts={"cls": dict(avg=70.0), "mean": dict(avg=72.0), "prompt": dict(avg=71.0)})
    assert defsentplus_tables.senteval_pooling("bert-base-uncased", run)[0] == "mean"
    assert defsentplus_tables.senteval_pooling("offline", run)[0] == "mean"
    assert defsentplus_tables.senteval_pooling("offline", dict(sts={"cls": dict(avg=75.0), "mean": dict(avg=72.0)}))[0] == "cls"


def test_senteval_pooling_refuses_a_run_with_a_nan_sts_average_even_where_table_7_names_the_pooling():
    import math
    from defsent_lite import checks
    run = dict(sts={p: {c: 70.0 for c in defsentplus_protocol.STS_COLS} for p in ("cls", "mean")})
    run["sts"]["cls"]["avg"] = math.nan
    with pytest.raises(checks.NonFinite, match="inference pooling by STS avg"):
        defsentplus_tables.senteval_pooling("bert-base-uncased", run)


def test_the_ica_candidate_is_trained_for_bert_only_as_table_2_names_it():
    """Issue 45: the paper names an ICA space for BERT-base and BERT-large only; RoBERTa's PST
    trains none unless asked (ica="all")."""
    scale = config.scale("paper")
    for reference, expected in (("bert-base-uncased", True), ("bert-large-uncased", True),
                                ("roberta-base", False), ("roberta-large", False), (None, True)):
        model = reference or "some/other-model"
        cfg, _ = defsentplus_protocol.model_pst_config(scale, model, "a", reference)
        assert cfg["ica"] is expected, reference
    assert defsentplus_protocol.model_pst_config(scale, "roberta-base", "a", "roberta-base", ica="all")[0]["ica"] is True
    assert defsentplus_protocol.model_pst_config(scale, "bert-base-uncased", "a", "bert-base-uncased", ica=False)[0]["ica"] is False
    with pytest.raises(ValueError, match="ica="):
        defsentplus_protocol.model_pst_config(scale, "bert-base-uncased", "a", "bert-base-uncased", ica="yes")


def test_a_roberta_checkpoint_folder_takes_its_pooler_from_the_original_mlm_head(monkeypatch, tmp_path):
    """Issue 45: an SNCSE RoBERTa checkpoint given as a folder (download-only, with PAPER_LABEL)
    trains with the pooler copied from roberta-base's MLM head, as a hub checkpoint does; before,
    nothing could pass mlm_head_from and the folder was refused."""
    from defsent_lite.repro import defsentplus_protocol
    rel = defsentplus_protocol.release(str(tmp_path), "snscse-RoBERTa-base")
    cfg = defsentplus_protocol.release_pst_config(config.scale("paper"), str(tmp_path), rel)
    assert cfg["mlm_head_from"] == "roberta-base"
    assert "mlm_head_from" not in defsentplus_protocol.release_pst_config(
        config.scale("paper"), str(tmp_path), defsentplus_protocol.release(str(tmp_path), "snscse-BERT-base"))
    seen = {}

    class Loaded(Exception):
        pass

    def load_model(name, device=None, allow_new_pooler=False, mlm_head_from=None):
        seen.update(name=name, mlm_head_from=mlm_head_from)
        raise Loaded

    monkeypatch.setattr(defsentplus_model, "load", load_model)
    ds = dict(names=["a"], ids=[0], definitions=["x"])
    with pytest.raises(Loaded):
        defsentplus_protocol.plan(cfg, ds=ds)
    assert seen == dict(name=str(tmp_path), mlm_head_from="roberta-base")


def test_every_data_augmented_roberta_of_the_tables_has_its_original_roberta():
    """runtime/defsentplus_model.ROBERTA_BACKBONES (beneath paper/, so it names the hub checkpoints
    itself) gives each data-augmented RoBERTa row of DefSent+'s tables the RoBERTa of its size, and
    nothing else: a checkpoint added to the tables without its original model fails here."""
    roberta = {hub: f"roberta-{label.rsplit('-', 1)[1]}"
               for hub, label in paper_defsentplus.DATA_AUGMENTED.items() if "RoBERTa" in label}
    assert defsentplus_model.ROBERTA_BACKBONES == roberta
    assert defsentplus_model.roberta_backbone("roberta-large") == "roberta-large"
    assert defsentplus_model.roberta_backbone("bert-base-uncased") is None
