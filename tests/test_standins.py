"""Stand-in models (a test fixture, tests/standins.py): built offline, handed to the package through
DEFSENT_MODEL_FOLDERS like any local copy, loadable the way the paper scale loads the real ones,
with the real heads, poolers and tokenizer conventions."""
import json
import os

import pytest
import standins
import torch

from defsent_lite import defsent
from defsent_lite.runtime import config, defsent_model, defsentplus_model, models
from defsent_lite.data import dictionary
from defsent_lite.repro import defsent_protocol


@pytest.fixture
def built(standin_folders):
    return standin_folders["folders"]


def test_bert_standin_has_the_real_head_pooler_and_vocabulary(built):
    model, tok, head, kind = defsent_model.load(built["bert-base-uncased"], allow_fallback=False)
    assert kind == defsent.PRETRAINED and models.mlm_head_check(model).loaded
    assert tok.vocab_size == 30522 and tok.convert_tokens_to_ids(["[CLS]", "the"]) == [101, 1996]
    encoder, _ = models.load(built["bert-base-uncased"])
    assert not [k for k in encoder.missing_keys if k.startswith("pooler.")]


def test_roberta_standin_has_its_special_tokens_leading_space_head_and_pooler(built):
    path = built["roberta-base"]
    model, tok, head, kind = defsent_model.load(path, prefix_space=True, allow_fallback=False)
    assert kind == defsent.PRETRAINED and model.config.model_type == "roberta"
    assert (tok.bos_token, tok.eos_token, tok.pad_token, tok.mask_token) == ("<s>", "</s>", "<pad>", "<mask>")
    assert models.uses_leading_space(tok)
    ids = tok("a definition of a word")["input_ids"]
    assert ids[0] == tok.bos_token_id and ids[-1] == tok.eos_token_id
    encoder, _ = models.load(path)
    assert not [k for k in encoder.missing_keys if k.startswith("pooler.")]
    dsp_model, _ = defsentplus_model.load(path)   # RoBERTa: pooler dense copied from the MLM head's, GELU
    mlm, _ = models.load(path, mlm_head=True)
    torch.testing.assert_close(dsp_model.pooler.dense.weight, mlm.lm_head.dense.weight)


def test_building_twice_gives_the_same_weights(tmp_path):
    a = standins.build("bert-base-uncased", tmp_path / "a")
    b = standins.build("bert-base-uncased", tmp_path / "b")
    ma, _ = models.load(str(a), mlm_head=True)
    mb, _ = models.load(str(b), mlm_head=True)
    for (na, pa), (nb, pb) in zip(ma.state_dict().items(), mb.state_dict().items()):
        assert na == nb and torch.equal(pa, pb)


def test_unknown_names_are_refused(tmp_path):
    with pytest.raises(ValueError, match="no stand-in for 'gpt2'"):
        standins.build_all(tmp_path, ["gpt2"])


def test_hub_names_load_from_the_folders_of_the_setting(standin_folders, monkeypatch):
    monkeypatch.delenv("DEFSENT_MODEL_FOLDERS", raising=False)
    monkeypatch.delenv("DEFSENT_STANDINS", raising=False)
    assert models.resolve("roberta-large") == "roberta-large"   # no setting: the hub name as given
    monkeypatch.setenv("DEFSENT_MODEL_FOLDERS", standin_folders["setting"])
    assert set(config.model_folders()) == set(standins.HUB_NAMES)
    assert models.resolve("roberta-large") == standin_folders["folders"]["roberta-large"]
    assert not models.is_standin("roberta-large")   # a local folder is a copy until DEFSENT_STANDINS says otherwise
    monkeypatch.setenv("DEFSENT_STANDINS", "1")
    assert all(models.is_standin(name) for name in standins.HUB_NAMES)
    assert models.resolve("offline") == str(models.offline_model_path())   # the offline alias is never a stand-in
    assert models.resolve("gpt2") == "gpt2" and not models.is_standin("gpt2")
    assert models.load_tokenizer("princeton-nlp/unsup-simcse-bert-base-uncased").vocab_size == 30522
    inline = json.dumps({"bert-base-uncased": standin_folders["folders"]["bert-base-uncased"]})
    monkeypatch.setenv("DEFSENT_MODEL_FOLDERS", inline)   # the setting given inline
    assert models.resolve("bert-base-uncased") == standin_folders["folders"]["bert-base-uncased"]


@pytest.mark.parametrize("value,message", [("missing.json", "neither a JSON object nor an existing JSON file"),
                                           ("{not json", "not valid JSON"), ('{"bert-base-uncased": 3}', "expected a JSON object")])
def test_a_bad_model_folders_setting_is_named(monkeypatch, value, message):
    monkeypatch.setenv("DEFSENT_MODEL_FOLDERS", value)
    with pytest.raises(ValueError, match=f"DEFSENT_MODEL_FOLDERS.*{message}"):
        models.resolve("bert-base-uncased")


def test_a_local_copy_never_shares_a_cache_key_with_the_hubs(monkeypatch):
    from defsent_lite.runtime import cache
    cfg = dict(model="bert-base-uncased", lr=1e-5)
    monkeypatch.delenv("DEFSENT_MODEL_FOLDERS", raising=False)
    monkeypatch.delenv("DEFSENT_STANDINS", raising=False)
    hub = cache.config_key(cfg)
    monkeypatch.setenv("DEFSENT_MODEL_FOLDERS", '{"bert-base-uncased": "/models/bert"}')
    local = cache.config_key(cfg)
    monkeypatch.setenv("DEFSENT_STANDINS", "1")
    assert len({hub, local, cache.config_key(cfg)}) == 3


def test_the_rehearsal_scale_is_the_paper_protocol_with_caps_and_turns_stand_ins_on(monkeypatch, tmp_path, standin_folders):
    from defsent_lite.runtime import config
    from defsent_lite.data import sources
    from defsent_lite.repro import preflight
    paper, rehearsal = config.scale("paper"), config.scale("rehearsal")
    for key in ("model", "seeds", "gauss_seeds", "defsent_lr_xs", "dsp_lrs", "dsp_inference_poolings", "transfer_kfold",
                "transfer_inner_search", "transfer_classifier", "paper_protocol"):
        assert rehearsal[key] == paper[key], key
    assert len(rehearsal["seeds"]) == 10 and rehearsal["defsent_lr_xs"] == "table5" and len(rehearsal["gauss_seeds"]) == 5
    for nb in sources.NOTEBOOKS:   # the papers' datasets only: no offline stand-in data
        assert sources.needs(nb, "rehearsal") == sources.needs(nb, "paper")
    monkeypatch.setenv("DEFSENT_STANDINS", "0")   # restored after the test (preflight turns it on)
    monkeypatch.delenv("DEFSENT_MODEL_FOLDERS", raising=False)
    lines = []
    with pytest.raises(preflight.PreflightFailed, match="(?s)Oxford dictionary.*DEFSENT_MODEL_FOLDERS has none for it"):
        preflight.check("10", "rehearsal", tmp_path, ["bert-base-uncased"], log=lines.append)
    assert config.standins_enabled() and lines[0].startswith("stand-in models: hub names")
    assert os.environ["DEFSENT_STANDINS"] == "0"   # turned on for the process, the environment untouched
    monkeypatch.setenv("DEFSENT_MODEL_FOLDERS", standin_folders["setting"])
    assert preflight.model_problem("bert-base-uncased") is None


def test_defsent_trains_and_predicts_words_on_the_roberta_stand_in(tmp_path, monkeypatch):
    """DefSent's RoBERTa path end to end (leading space, <mask>, the real head, save and reload)."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DEFSENT_STANDINS", "1")
    oxford = tmp_path / "data" / "dictionary" / "oxford"
    oxford.mkdir(parents=True)
    words = ["dog", "cat", "house", "tree", "river", "car", "book", "city", "water", "fire", "stone", "bird"]
    rows = ["word\tdefinition\texample"] + [f"{w}\ta thing called {w} , number {k} .\tex" for k, w in enumerate(words)]
    (oxford / "valid.tsv").write_text("\n".join(rows) + "\n")
    (oxford / "test.tsv").write_text("word\tdefinition\texample\ndog\ta pet that barks\tex\n")
    folder = standins.build("roberta-base", tmp_path / "roberta-base", sentences=[r.split("\t")[1] for r in rows[1:]] * 20)
    monkeypatch.setenv("DEFSENT_MODEL_FOLDERS", json.dumps({"roberta-base": str(folder)}))
    tok = models.load_tokenizer("roberta-base")
    dataset = dictionary.defsent_dataset(tok, tmp_path / "data", use_wordnet=False)
    kept = [x for s in dataset[0].values() for x in s]
    assert len(kept) >= 10 and all(ids == tok.convert_tokens_to_ids("Ġ" + w) for w, _, ids in kept)
    cfg = dict(model="roberta-base", pooling="cls", lr=1e-4, seed=0, batch_size=4, train_max=None, eval_max=None,
               optimizer="adam", warmup_ratio=0.1, variant="official", allow_head_fallback=False)
    result = defsent_protocol.run(cfg, dataset)
    assert result["head"] == defsent.PRETRAINED and result["steps"] >= 1 and 0 <= result["test"]["mrr"] <= 1
    encoder, _ = models.load(result["path"])
    assert encoder.config.model_type == "roberta"


def test_a_roberta_checkpoint_without_mlm_head_gets_the_original_models_dense_layer(tmp_path, monkeypatch, standin_folders):
    """Issue 33 item 2: the SimCSE/SynCSE RoBERTa checkpoints ship no lm_head; the official code
    copies the pooler's dense layer from roberta-base/-large's MLM head. b806a5a copied it from
    the checkpoint's own (missing, so randomly initialised) head without a word."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path))
    monkeypatch.setenv("DEFSENT_STANDINS", "1")
    monkeypatch.setenv("DEFSENT_MODEL_FOLDERS", standin_folders["setting"])
    simcse = "princeton-nlp/unsup-simcse-roberta-base"
    assert "transform" in models.mlm_head_check(models.load(simcse, mlm_head=True)[0]).missing_parts
    assert defsentplus_model.roberta_backbone(simcse) == "roberta-base"
    assert defsentplus_model.roberta_backbone("sjtu-lit/SynCSE-partial-RoBERTa-large") == "roberta-large"
    model, _ = defsentplus_model.load(simcse)
    original, _ = models.load("roberta-base", mlm_head=True)
    torch.testing.assert_close(model.pooler.dense.weight, original.lm_head.dense.weight)
    torch.testing.assert_close(model.pooler.dense.bias, original.lm_head.dense.bias)
    assert isinstance(model.pooler.activation, torch.nn.GELU)
    local = models.resolve(simcse)   # the same checkpoint by its folder: no backbone to infer
    with pytest.raises(ValueError, match="no MLM head.*mlm_head_from='roberta-base'"):
        defsentplus_model.load(local)
    model, _ = defsentplus_model.load(local, mlm_head_from="roberta-base")
    torch.testing.assert_close(model.pooler.dense.weight, original.lm_head.dense.weight)
