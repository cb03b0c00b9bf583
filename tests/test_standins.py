"""Stand-in models (issue 15, point 1): built offline, loadable the way the paper scale loads the
real ones, with the real heads, poolers and tokenizer conventions."""
import pytest
import torch

from defsent_lite import defsent, defsentplus, models, standins


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    return {name: standins.path_for(name, cache=cache) for name in ("bert-base-uncased", "roberta-base")}


def test_bert_standin_has_the_real_head_pooler_and_vocabulary(built):
    model, tok, head, kind = defsent.load_model(built["bert-base-uncased"], allow_fallback=False)
    assert kind == defsent.PRETRAINED and models.mlm_head_check(model).loaded
    assert tok.vocab_size == 30522 and tok.convert_tokens_to_ids(["[CLS]", "the"]) == [101, 1996]
    encoder, _ = models.load(built["bert-base-uncased"])
    assert not [k for k in encoder.missing_keys if k.startswith("pooler.")]


def test_roberta_standin_has_its_special_tokens_leading_space_head_and_pooler(built):
    path = built["roberta-base"]
    model, tok, head, kind = defsent.load_model(path, prefix_space=True, allow_fallback=False)
    assert kind == defsent.PRETRAINED and model.config.model_type == "roberta"
    assert (tok.bos_token, tok.eos_token, tok.pad_token, tok.mask_token) == ("<s>", "</s>", "<pad>", "<mask>")
    assert models.uses_leading_space(tok)
    ids = tok("a definition of a word")["input_ids"]
    assert ids[0] == tok.bos_token_id and ids[-1] == tok.eos_token_id
    encoder, _ = models.load(path)
    assert not [k for k in encoder.missing_keys if k.startswith("pooler.")]
    dsp_model, _ = defsentplus.load_model(path)   # RoBERTa: pooler dense copied from the MLM head's, GELU
    mlm, _ = models.load(path, mlm_head=True)
    torch.testing.assert_close(dsp_model.pooler.dense.weight, mlm.lm_head.dense.weight)


def test_building_twice_gives_the_same_weights(tmp_path):
    a = standins.build("bert-base-uncased", tmp_path / "a")
    b = standins.build("bert-base-uncased", tmp_path / "b")
    ma, _ = models.load(str(a), mlm_head=True)
    mb, _ = models.load(str(b), mlm_head=True)
    for (na, pa), (nb, pb) in zip(ma.state_dict().items(), mb.state_dict().items()):
        assert na == nb and torch.equal(pa, pb)


def test_unknown_names_are_refused():
    with pytest.raises(ValueError, match="no stand-in for 'gpt2'"):
        standins.folder_for("gpt2")
