"""Issue 81: the repository's own raw masked LM (defsent_lite/runtime/mini_bert, docs/mini_bert.md).
What its card says that can be checked in seconds, on the committed weights, with the card's own
code (tools/mini_bert_card.py); what pre-training may read; and that the script that rebuilt it
still runs and learns."""
import json

import pytest
import torch

import mini_bert_card
import pretrain_mini_bert as pretrain
from defsent_lite import defsent
from defsent_lite.data import dictionary
from defsent_lite.runtime import config, defsent_model, defsentplus_model, models

FOLDER = config.bundled_model_path(config.MINI_BERT)
CARD = json.loads((FOLDER / "card.json").read_text())
RECORD = json.loads((FOLDER / "pretraining.json").read_text())
OURS = CARD["models"]["mini-BERT"]


@pytest.fixture(scope="module")
def mini():
    return models.load(config.MINI_BERT, mlm_head=True, device="cpu")


@pytest.fixture(scope="module")
def corpus():
    return pretrain.corpus()


@pytest.fixture(scope="module")
def held_out(corpus):
    sentences = list(corpus[0])
    pretrain.random.Random(pretrain.SEED).shuffle(sentences)
    return sentences[: pretrain.HELD_OUT]


def test_small_safetensors_with_bert_vocabulary_and_a_real_tied_mlm_head(mini):
    model, tokenizer = mini
    assert (FOLDER / "model.safetensors").stat().st_size <= 25e6
    c = model.config
    assert (c.model_type, c.hidden_size, c.num_hidden_layers) == ("bert", RECORD["arch"]["hidden_size"],
                                                                  RECORD["arch"]["num_hidden_layers"])
    assert sum(p.numel() for p in model.parameters()) == RECORD["parameters"] == CARD["parameters"]
    assert tokenizer.get_vocab() == models.bert_vocabulary().get_vocab()   # BERT's uncased WordPiece
    check = models.mlm_head_check(model)
    assert check.loaded and check.tied and not check.missing_parts   # transform, LayerNorm, bias: its own
    assert defsent_model.load(config.MINI_BERT, device="cpu").head_kind == defsent.PRETRAINED
    # DefSent+: no NSP pooler, so Sec. 3.2's pooler from its own MLM head's dense layer, GELU
    encoder, _ = defsentplus_model.load("mini-bert", device="cpu")
    assert torch.equal(encoder.pooler.dense.weight, model.cls.predictions.transform.dense.weight)
    assert isinstance(encoder.pooler.activation, torch.nn.GELU)


def test_held_out_masked_token_accuracy_is_the_cards(mini, held_out):
    accuracy = mini_bert_card.masked_accuracy(*mini, held_out)
    assert accuracy == pytest.approx(CARD["held_out_accuracy"], abs=0.01)
    assert accuracy >= 0.30   # the floor, on sentences it never saw
    assert accuracy == pytest.approx(RECORD["held_out_accuracy"][-1], abs=0.01)   # the script's own


def test_anisotropy_and_raw_sts_are_the_cards(mini, held_out):
    model, tokenizer = mini
    measured = mini_bert_card.anisotropy(model, tokenizer, held_out[:500])
    for pooling in ("cls", "mean"):   # 500 of the card's 2,000 sentences: the mean cosine within 0.02
        assert measured[pooling]["mean_cosine"] == pytest.approx(OURS["anisotropy"][pooling]["mean_cosine"], abs=0.02)
    scores = mini_bert_card.raw_sts(model, tokenizer, tasks=["STSB"])
    for pooling in ("cls", "mean"):
        assert scores[pooling]["STSB"] == pytest.approx(OURS["sts"][pooling]["STSB"], abs=0.5)


def test_pretraining_read_no_evaluation_sentence_and_no_dev_or_test_words_text(corpus):
    sentences, dev_texts, counts = corpus
    seen = {pretrain.normalised(s) for s in sentences}
    stsb = [s for path in sorted((config.data_root() / "sts" / "raw" / "STSBenchmark").glob("sts-*.csv"))
            for line in path.read_text(encoding="utf-8").splitlines() for s in line.split("\t")[5:7]]
    assert stsb and not seen & {pretrain.normalised(s) for s in stsb}
    onwn = (config.data_root() / "sts" / "raw" / "STS13" / "STS.input.OnWN.txt")   # WordNet glosses
    if onwn.exists():
        assert not seen & {pretrain.normalised(s) for line in onwn.read_text().splitlines() for s in line.split("\t")}
    # DefSent's split over every word: a dev/test word's definition is never read, unless the same
    # text also defines a train word (1,326 of the 39,120 dev/test texts: a synset's gloss defines each
    # of its lemmas) or is an example sentence (6 short phrases: "catch the ball", "to a certain degree")
    words = dictionary.split_by_word(pretrain._dictionary_pairs())
    text = {k: {pretrain.normalised(d) for _, d in v} for k, v in words.items()}
    held = (text["dev"] | text["test"]) - text["train"]
    assert len(held) > 17_000 and len(seen & held) <= 6
    assert counts["in_an_evaluation_file"] > 0 and counts["unique_kept"] == len(sentences)
    assert counts == {k: RECORD["counts"][k] for k in counts}   # the corpus the committed model read


def test_pretraining_script_learns_on_a_tiny_model(monkeypatch):
    monkeypatch.setitem(pretrain.ARCH, "num_hidden_layers", 1)
    monkeypatch.setitem(pretrain.RECIPE, "batch_size", 8)
    tokenizer = models.bert_vocabulary()
    ids = pretrain.tokenized(tokenizer, ["the cat sat on the mat ."] * 64)
    model = pretrain.new_model(tokenizer)
    log = pretrain.pretrain(model, tokenizer, ids, ids[:16], steps=120, eval_every=60)
    assert log["eval_step"] == [60, 120] and log["step"] == [100, 120]   # the loss: every 100 steps, and the tail
    assert log["held_out_accuracy"][-1] > 0.5   # a memorised sentence: its masked words come back


def test_pretraining_stops_on_a_non_finite_loss_naming_its_steps(monkeypatch):
    monkeypatch.setitem(pretrain.ARCH, "num_hidden_layers", 1)
    monkeypatch.setitem(pretrain.RECIPE, "batch_size", 8)
    real = pretrain.masked_logits
    monkeypatch.setattr(pretrain, "masked_logits", lambda *a: real(*a) * float("nan"))
    tokenizer = models.bert_vocabulary()
    ids = pretrain.tokenized(tokenizer, ["the cat sat on the mat ."] * 16)
    with pytest.raises(FloatingPointError, match="summed over steps 1-3"):
        pretrain.pretrain(pretrain.new_model(tokenizer), tokenizer, ids, ids[:4], steps=3, eval_every=60)
