import copy

import numpy as np
import pytest
import torch

from defsent_lite import encode, forward, pooling
from defsent_lite.runtime import models

SENTENCES = ["A man is playing a guitar.", "Short.", "The quick brown fox jumps over the lazy dog near the river bank."]


@pytest.fixture(scope="module")
def offline():
    return models.load("offline", device="cpu")


def test_mean_and_max_ignore_padding_by_hand():
    hidden = torch.tensor([[[1.0, 2.0], [3.0, -4.0], [100.0, 100.0]]])
    mask = torch.tensor([[1, 1, 0]])
    assert torch.allclose(pooling.mean(hidden, mask), torch.tensor([[2.0, -1.0]]))
    assert torch.allclose(pooling.max(hidden, mask), torch.tensor([[3.0, 2.0]]))
    assert torch.equal(pooling.cls(hidden, mask), torch.tensor([[1.0, 2.0]]))


def test_prompt_pooling_needs_exactly_one_mask():
    hidden = torch.arange(6.0).view(1, 3, 2)
    ids = torch.tensor([[5, 9, 7]])
    assert torch.equal(pooling.prompt(hidden, None, ids, 9), torch.tensor([[2.0, 3.0]]))
    with pytest.raises(ValueError, match="mask tokens"):
        pooling.prompt(hidden, None, ids, 4)


@pytest.mark.parametrize("name", pooling.POOLINGS)
def test_alone_equals_inside_padded_batch(offline, name):
    model, tok = offline
    batch = encode.encode(model, tok, SENTENCES, pooling=name, batch_size=3)
    for i, s in enumerate(SENTENCES):
        alone = encode.encode(model, tok, [s], pooling=name)
        assert torch.allclose(alone[0], batch[i], atol=1e-5), (name, s)


def test_vectors_copied_to_the_host_in_groups_are_the_same_in_input_order(offline, monkeypatch):
    """Issue 44: pooled batches reach the host every BATCHES_PER_COPY batches (one wait for the GPU
    per group, not per batch); groups of 2 batches of 2 over 7 sentences (a partial last group)
    give exactly the vectors of one copy per pass, each in its input row."""
    model, tok = offline
    sentences = SENTENCES + ["A dog runs.", "Two people talk in a kitchen.", "Rain.", "He reads a book."]
    whole = encode.encode_poolings(model, tok, sentences, ["mean", "max"], batch_size=2)
    monkeypatch.setattr(forward, "BATCHES_PER_COPY", 2)
    grouped = encode.encode_poolings(model, tok, sentences, ["mean", "max"], batch_size=2)
    assert all(torch.equal(whole[p], grouped[p]) for p in ("mean", "max"))
    assert torch.allclose(grouped["mean"][4], encode.encode(model, tok, [sentences[4]], "mean")[0], atol=1e-5)


def test_batches_sized_by_tokens_on_an_accelerator_by_count_on_the_cpu(offline, monkeypatch):
    """Issue 44: on the CPU a batch is batch_size sentences; on an accelerator as many as fit
    ACCELERATOR_BATCH_TOKENS padded tokens, never fewer than batch_size; every sentence once, in the
    length-sorted order either way."""
    _, tok = offline
    sentences = SENTENCES * 20 + ["word"] * 40
    features, order = forward.tokenize_sorted(tok, sentences, 128)
    cpu = forward.length_batches(features, order, 8, "cpu")
    assert [len(b) for b in cpu] == [8] * 12 + [4] and sum(cpu, []) == order
    monkeypatch.setattr(forward, "ACCELERATOR_BATCH_TOKENS", 100)
    gpu = forward.length_batches(features, order, 8, "cuda")
    assert sum(gpu, []) == order and min(len(b) for b in gpu[:-1]) >= 8
    longest = [len(features[b[0]]["input_ids"]) for b in gpu]
    assert all(len(b) == max(8, 100 // n) for b, n in zip(gpu[:-1], longest[:-1]))
    assert len(gpu[-2]) >= 100 // 4 > 8 and len(gpu) < len(cpu)   # the short ones: 25 or more a batch


def test_order_dtype_device_and_mode(offline):
    model, tok = offline
    model.train()
    fwd = encode.encode(model, tok, SENTENCES, pooling="mean", batch_size=2)
    rev = encode.encode(model, tok, SENTENCES[::-1], pooling="mean", batch_size=2)
    assert model.training  # mode restored
    model.eval()
    assert fwd.dtype == torch.float32 and fwd.device.type == "cpu" and fwd.shape == (3, 384)
    assert torch.allclose(fwd, rev.flip(0), atol=1e-5)


def test_bad_input(offline):
    model, tok = offline
    with pytest.raises(ValueError, match="sentence 1 is empty"):
        encode.encode(model, tok, ["fine", "  "])
    with pytest.raises(ValueError, match="unknown pooling"):
        encode.encode(model, tok, ["fine"], pooling="avg")
    assert encode.encode(model, tok, ["", "x"], allow_empty=True).shape == (2, 384)


def test_same_vectors_as_sentence_transformers(offline):
    from sentence_transformers import SentenceTransformer
    model, tok = offline
    st = SentenceTransformer(str(models.offline_model_path()), device="cpu")
    ref = st.encode(SENTENCES, normalize_embeddings=False, convert_to_numpy=True)
    ours = encode.encode(model, tok, SENTENCES, pooling="mean").numpy()
    cos = (ref * ours).sum(1) / np.linalg.norm(ref, axis=1) / np.linalg.norm(ours, axis=1)
    assert cos.min() > 0.9999


def test_unknown_model_lists_offline_options():
    with pytest.raises(OSError, match="Offline, these work: mini-bert, .*offline"):
        models.load("no-such-org/no-such-model-xyz", local_files_only=True)


def test_poolings_share_a_pass_and_equal_encoding_alone(offline, monkeypatch):
    model, tok = offline
    together = encode.encode_poolings(model, tok, SENTENCES, list(pooling.POOLINGS), batch_size=2)
    for name in pooling.POOLINGS:
        assert torch.allclose(together[name], encode.encode(model, tok, SENTENCES, pooling=name, batch_size=2), atol=1e-6)
    passes = []
    real = encode._encode_pass
    monkeypatch.setattr(encode, "_encode_pass", lambda *a: passes.append(a[3]) or real(*a))
    embeds = encode.embedders(model, tok, ["cls", "mean", "max", "prompt"])
    for name in ["cls", "mean", "max", "prompt"]:
        embeds[name](SENTENCES)
    assert passes == [["cls", "mean", "max"], ["prompt"]]   # one plain pass, one prompt pass
    embeds["cls"](SENTENCES[:1])                              # other sentences: a new pass
    assert len(passes) == 4


def test_scores_for_several_embedders_equal_one_at_a_time(offline, tmp_path, monkeypatch):
    from defsent_lite.evaluation import sts
    model, tok = offline
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path))
    each = sts.evaluate_each(encode.embedders(model, tok, ["cls", "mean"]), tasks=["STSB"], max_pairs=60)
    for name in ["cls", "mean"]:
        alone = sts.evaluate(encode.embedder(model, tok, name), tasks=["STSB"], max_pairs=60)
        assert each[name] == pytest.approx(alone, abs=1e-4)
    computed = []

    def compute(missing):
        computed.append(missing)
        return {p: {"x": len(p)} for p in missing}
    assert sts.cached_per_pooling("t", {"m": 1}, ["cls", "mean"], compute) == {"cls": {"x": 3}, "mean": {"x": 4}}
    assert sts.cached_per_pooling("t", {"m": 1}, ["mean", "max"], compute) == {"mean": {"x": 4}, "max": {"x": 3}}
    assert computed == [["cls", "mean"], ["max"]]             # each pooling computed once


def tokenizer_batches(tok, sentences, max_length, sizes=(3, 1, 5)):
    """(ours, the tokenizer's own) padded batches of `sentences` in the length-sorted order."""
    features, order = forward.tokenize_sorted(tok, sentences, max_length)
    starts = np.cumsum((0,) + sizes[:-1])
    for start, size in zip(starts, sizes):
        idx = order[start:start + size]
        theirs = tok([sentences[i] for i in idx], padding=True, truncation=True, max_length=max_length,
                     return_tensors="pt")
        yield forward.pad_batch(tok, features, idx), theirs


@pytest.mark.parametrize("name", ["offline", "offline, left padding", "bert-base-uncased", "roberta-base",
                                  "roberta-base, prefix space"])
def test_batches_padded_in_numpy_equal_the_tokenizers_own(offline, standin_folders, name):
    """Issue 44: the Rust backend called once (forward.token_features) and the batches padded in
    numpy give exactly the tensors tokenizer(batch, padding=True, truncation=True) gives, cut at
    max_length (BERT's WordPiece with type ids, RoBERTa's byte-level BPE without), and leave the
    tokenizer's own truncation and padding settings as they were."""
    if name == "offline":
        tok = offline[1]
    elif name.endswith("left padding"):
        tok = models.load_tokenizer("offline")
        tok.padding_side = "left"
    elif name.endswith("prefix space"):   # DefSent's official RoBERTa setting (AutoTokenizer's option)
        from transformers import AutoTokenizer
        tok = AutoTokenizer.from_pretrained(standin_folders["folders"]["roberta-base"], add_prefix_space=True)
        assert tok("Fill")["input_ids"] != models.load_tokenizer(standin_folders["folders"]["roberta-base"])("Fill")["input_ids"]
    else:
        tok = models.load_tokenizer(standin_folders["folders"][name])
    sentences = SENTENCES + ["A dog runs.", "word " * 40, "Rain.", f"Fill the {tok.mask_token} in."]
    tok("warm", padding="max_length", truncation=True, max_length=20)   # a setting left in the backend
    before = tok.backend_tokenizer.truncation, tok.backend_tokenizer.padding
    forward.tokenize_sorted(tok, sentences, 8)
    assert (tok.backend_tokenizer.truncation, tok.backend_tokenizer.padding) == before
    for max_length in (128, 8):
        for ours, theirs in tokenizer_batches(tok, sentences, max_length):
            assert sorted(ours) == sorted(theirs.keys())
            for key, value in theirs.items():
                assert ours[key].dtype == torch.int64 and torch.equal(ours[key], value), (name, key)


class SettingsFrozen:
    """A fast tokenizer's backend that refuses every change of its settings (and copies as the
    backend it wraps): what two threads sharing one tokenizer need from token_features."""

    def __init__(self, backend):
        self.backend = backend

    def __deepcopy__(self, memo):
        return copy.deepcopy(self.backend)

    def __getattr__(self, name):
        if name.startswith(("enable_", "no_")):
            raise AssertionError(f"the shared tokenizer's settings changed ({name})")
        return getattr(self.backend, name)


def test_tokenising_never_changes_the_shared_tokenizers_settings(offline):
    """Issue 72, case 4: token_features set and restored the shared backend's truncation and
    padding, so a second thread encoding with the same tokenizer read the first one's (vectors off
    by up to 0.91); it now tokenises with a private copy and gives the same ids."""
    tok = models.load_tokenizer("offline")
    sentences = SENTENCES + ["word " * 40]
    expected = [tok(s, truncation=True, max_length=8)["input_ids"] for s in sentences]
    tok._tokenizer = SettingsFrozen(tok._tokenizer)
    got = forward.token_features(tok, sentences, 8)
    assert [f["input_ids"] for f in got] == expected
