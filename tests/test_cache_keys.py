"""Issue 46, point 1: a cache key covers what the result depends on. A local model folder counts by
the bytes of its files, not its path; WordNet by the files actually read (NLTK_DATA's too). Each
test changes the input in place and sees a new key or a recomputed result."""
import json

import pytest

from defsent_lite.data import dictionary_readers
from defsent_lite.runtime import cache


def model_folder(path, weights=b"weights 1"):
    path.mkdir(parents=True, exist_ok=True)
    (path / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (path / "model.safetensors").write_bytes(weights)
    return path


def test_a_model_folder_with_weights_replaced_in_place_gets_a_new_key(tmp_path):
    folder = model_folder(tmp_path / "m")
    cfg = dict(model=str(folder), pooling="cls")
    before = cache.config_key(cfg)
    assert cache.config_key(cfg) == before                         # unchanged: the same key
    (folder / "model.safetensors").write_bytes(b"weights 2")       # replaced in place
    assert cache.config_key(cfg) != before
    (folder / "model.safetensors").write_bytes(b"weights 1")
    assert cache.config_key(cfg) == before
    (folder / "vocab.txt").write_text("[PAD]\n")                   # a tokenizer file counts too
    assert cache.config_key(cfg) != before


def test_a_hub_name_mapped_to_a_folder_is_keyed_by_the_folder_content(tmp_path, monkeypatch):
    folder = model_folder(tmp_path / "bert")
    monkeypatch.setenv("DEFSENT_MODEL_FOLDERS", json.dumps({"bert-base-uncased": str(folder)}))
    cfg = dict(runs=[dict(model="bert-base-uncased")])            # at any depth of the config
    before = cache.config_key(cfg)
    (folder / "model.safetensors").write_bytes(b"other weights")
    assert cache.config_key(cfg) != before


def test_a_cached_result_is_computed_again_after_the_model_changed(tmp_path):
    folder = model_folder(tmp_path / "m")
    calls = []

    def compute():
        calls.append(1)
        return {"score": float((folder / "model.safetensors").read_bytes()[-1])}

    cfg = dict(model=str(folder))
    first = cache.cached_json("test_model_key", cfg, compute)
    assert cache.cached_json("test_model_key", cfg, compute) == first and len(calls) == 1
    (folder / "model.safetensors").write_bytes(b"weights 9")
    assert cache.cached_json("test_model_key", cfg, compute) != first and len(calls) == 2


def test_wordnet_read_through_nltk_data_is_keyed_by_its_files(tmp_path, monkeypatch):
    root = tmp_path / "root"
    root.mkdir()
    corpus = tmp_path / "nltk" / "corpora" / "wordnet"
    corpus.mkdir(parents=True)
    (corpus / "data.noun").write_text("00001740 03 n 01 entity 0 000 | that which is perceived\n")
    monkeypatch.setenv("NLTK_DATA", str(tmp_path / "nltk"))
    assert dictionary_readers.wordnet_folder(root) == corpus
    before = dictionary_readers.wordnet_identity(root)
    (corpus / "data.noun").write_text("00001740 03 n 01 entity 0 000 | something else\n")
    assert dictionary_readers.wordnet_identity(root) != before


def test_a_model_rewritten_while_a_run_reads_it_leaves_no_entry_under_either_key(tmp_path):
    """Issue 72, case 1: the key is computed once, before the run reads; a training rewriting the
    checkpoint meanwhile leaves the result uncached (said so), never stored under the new content."""
    folder = model_folder(tmp_path / "m")
    cfg = dict(model=str(folder))

    def read_then_rewritten():
        score = float((folder / "model.safetensors").read_bytes()[-1])
        (folder / "model.safetensors").write_bytes(b"weights 7")    # a training rewrites it
        return {"score": score}

    with pytest.warns(cache.InputsChanged, match="not cached"):
        stale = cache.cached_json("test_rewritten", cfg, read_then_rewritten)
    fresh = cache.cached_json("test_rewritten", cfg, lambda: {"score": float(ord("7"))})
    assert stale == {"score": float(ord("1"))} and fresh == {"score": float(ord("7"))}
    assert cache.lookup_json("test_rewritten", cfg) == fresh


def test_a_folder_named_without_a_slash_is_keyed_by_its_content(tmp_path, monkeypatch):
    """Issue 72, case 2: MODEL='mymodel' (a folder in the working directory)."""
    monkeypatch.chdir(tmp_path)
    folder = model_folder(tmp_path / "mymodel")
    before = cache.config_key(dict(model="mymodel"))
    (folder / "model.safetensors").write_bytes(b"replaced")
    assert cache.config_key(dict(model="mymodel")) != before


def test_a_hub_name_is_keyed_by_the_revision_it_resolves_to(tmp_path, monkeypatch):
    """Issue 72, case 3: offline, the revision the local hub cache holds (refs/main). Issue 85,
    case 5: read at every key, so a model updated on disk within one kernel is keyed anew (it was
    looked up once per process)."""
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path))
    refs = tmp_path / "models--org--encoder" / "refs"
    refs.mkdir(parents=True)
    keys = []
    for commit in ("aaa111", "bbb222", "aaa111"):
        (refs / "main").write_text(commit)
        keys.append(cache.config_key(dict(model="org/encoder", pooling="mean")))
    assert keys[0] != keys[1] and keys[0] == keys[2]
    asked = []
    monkeypatch.setattr(cache, "hub_revision", lambda name: asked.append(name))
    cache.config_key(dict(pooling="org/encoder"))    # under another key: no model name, no lookup
    assert asked == []


def test_a_data_file_or_model_rewritten_mid_run_even_if_put_back_leaves_no_entry(tmp_path, monkeypatch):
    """Issue 85, cases 3 and 4: the data's fingerprint was computed once and never checked again (a
    data file rewritten mid-run was stored under the old data's key), and a model folder rewritten
    and restored (A -> B -> A) stored B's numbers under A's key."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    root = tmp_path / "data"
    (root / "sts").mkdir(parents=True)
    data = root / "sts" / "pairs.tsv"
    data.write_text("a\tb\t1.0\n")
    cfg = dict(data=cache.data_identity(root, "sts"))

    def read_while_rewritten():
        score = len(data.read_text())
        data.write_text("a\tb\t5.0\n")   # the same length: a new number, the old key
        return {"score": score}

    with pytest.warns(cache.InputsChanged, match="pairs.tsv changed while it ran"):
        cache.cached_json("test_data", cfg, read_while_rewritten)
    assert cache.lookup_json("test_data", cfg) is None
    folder = model_folder(tmp_path / "m")
    original = (folder / "model.safetensors").read_bytes()

    def b_then_a():
        (folder / "model.safetensors").write_bytes(b"weights B")   # read as B, then put back
        (folder / "model.safetensors").write_bytes(original)
        return {"score": 2.0}

    with pytest.warns(cache.InputsChanged, match="model.safetensors changed while it ran"):
        cache.cached_json("test_aba", dict(model=str(folder)), b_then_a)
    assert cache.lookup_json("test_aba", dict(model=str(folder))) is None
    assert cache.cached_json("test_aba", dict(model=str(folder)), lambda: {"score": 1.0}) == {"score": 1.0}
