"""Issue 13, points 4-5: a cache key covers data, options and code; entries are atomic,
concurrent-safe, checksummed, and a corrupt one is reported and recomputed."""
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import torch

from defsent_lite.runtime import cache, config, models
from defsent_lite.data import dictionary
from defsent_lite.repro import gausscse_protocol
from tiny_root import copy_head, copy_tree, gausscse_root

PACKAGE = Path(cache.__file__).parents[1]


# ---------------------------------------------------------------- 4. keys

def test_data_identity_follows_content_not_path(tmp_path):
    a, b = copy_tree("sts/raw/SICK", tmp_path / "a").parents[2], copy_tree("sts/raw/SICK", tmp_path / "b").parents[2]
    assert cache.data_identity(a, "sts/raw") == cache.data_identity(b, "sts/raw")
    with open(b / "sts/raw/SICK/SICK_trial.txt", "a") as f:
        f.write("\n")
    assert cache.data_identity(a, "sts/raw") != cache.data_identity(b, "sts/raw")
    before = cache.data_identity(a, "sts/raw")
    (a / "sts/raw/SICK/extra.txt").write_text("x")  # an added file changes it too
    assert cache.data_identity(a, "sts/raw") != before


def test_gausscse_run_on_another_root_is_not_served_from_the_cache(tmp_path):
    base = dict(gausscse_protocol.base_config(config.scale("smoke"), "offline"), setting="ent", train_max=None,
                dev_max=30, test_max=30, batch_size=8)
    big = gausscse_protocol.run(base, gausscse_root(tmp_path / "big", triplets=32, pairs=31))
    small = gausscse_protocol.run(base, gausscse_root(tmp_path / "small", triplets=10, pairs=31))
    assert (big["triplets"], small["triplets"]) == (32, 10)


def test_defsent_dataset_is_rebuilt_when_the_oxford_train_split_appears(tmp_path):
    root = tmp_path / "data"
    for split in ("valid", "test"):
        copy_head(f"dictionary/oxford/{split}.tsv", root, 400)
    tok = models.load_tokenizer("offline")
    _, before = dictionary.defsent_dataset(tok, root, use_wordnet=False)
    oxford = root / "dictionary/oxford"
    (oxford / "train.tsv").write_bytes((oxford / "valid.tsv").read_bytes())
    _, after = dictionary.defsent_dataset(tok, root, use_wordnet=False)
    assert before["source"] == "Oxford valid+test" and after["source"] == "Oxford train+valid+test"


def test_code_identity_changes_with_the_source(tmp_path):
    copy = shutil.copytree(PACKAGE, tmp_path / "pkg", ignore=shutil.ignore_patterns("__pycache__"))
    before = cache.code_identity(copy)
    (copy / "paper" / "plots.py").write_text("# a module that cannot change a result\n")
    assert cache.code_identity.__wrapped__(copy) == before
    train = (copy / "train.py").read_text()   # issue 69: prose and layout are not the code
    prose = train.replace('"""', '"""Reworded. ', 1).replace("\n\n\n", "\n\n\n# a comment\n\n", 1)
    (copy / "train.py").write_text(prose)
    assert prose != train and cache.code_identity.__wrapped__(copy) == before
    with open(copy / "train.py", "a") as f:
        f.write("\nCHANGED = 1\n")
    assert cache.code_identity.__wrapped__(copy) != before
    changed = cache.code_identity.__wrapped__(copy)
    for inside in ("repro/defsentplus_protocol.py", "evaluation/sts.py", "data/readers.py"):   # every folder counts
        with open(copy / inside, "a") as f:
            f.write("\nCHANGED = 1\n")
        assert cache.code_identity.__wrapped__(copy) != changed, inside
        changed = cache.code_identity.__wrapped__(copy)


# ---------------------------------------------------------------- 5. atomic, checksummed entries

WRITER = """
import sys
from defsent_lite.runtime import cache
for i in range(60):
    cache.store_json("race", dict(key=1), dict(writer=sys.argv[1], i=i, payload=list(range(2000))))
print("ok")
"""


def test_two_processes_writing_one_key(tmp_path):
    env = dict(os.environ, DEFSENT_CACHE=str(tmp_path / "cache"), OMP_NUM_THREADS="1")
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, w], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for w in "ab"]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err[-2000:] for _, err in outs]
    entry = cache._read_entry(tmp_path / "cache" / "race" / cache.config_key(dict(key=1)) / "result.json")
    assert entry.result["writer"] in "ab" and entry.result["i"] == 59
    assert not list((tmp_path / "cache").rglob("*.tmp"))


def test_a_zero_byte_entry_is_reported_and_recomputed():
    cfg = dict(zero=1)
    cache.store_json("corrupt", cfg, dict(x=1))
    path = cache.run_dir("corrupt", cfg) / "result.json"
    path.write_bytes(b"")
    with pytest.warns(cache.CorruptEntry, match=re.escape(str(path))):
        assert cache.cached_json("corrupt", cfg, lambda: dict(x=2)) == dict(x=2)
    assert cache.lookup_json("corrupt", cfg) == dict(x=2)


def test_an_edited_result_is_reported():
    cfg = dict(edited=1)
    cache.store_json("corrupt", cfg, dict(mrr=0.25))
    path = cache.run_dir("corrupt", cfg) / "result.json"
    path.write_text(path.read_text().replace("0.25", "0.95"))
    with pytest.warns(cache.CorruptEntry, match="does not match its recorded SHA-256"):
        assert cache.lookup_json("corrupt", cfg) is None


def test_a_truncated_model_file_under_a_complete_entry_is_recomputed():
    calls = []

    def compute(folder):
        calls.append(folder)
        (folder / "model").mkdir()
        (folder / "model" / "model.safetensors").write_bytes(os.urandom(4096))
        return dict(ok=True)
    entry = cache.cached_run("corrupt_model", dict(m=1), compute)
    weights = entry.folder / "model" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    with pytest.warns(cache.CorruptEntry, match="truncated"):
        again = cache.cached_run("corrupt_model", dict(m=1), compute)
    assert len(calls) == 2 and again.folder != entry.folder
    assert (again.folder / "model" / "model.safetensors").stat().st_size == 4096


def test_a_corrupt_tensor_is_recomputed_and_loaded_weights_only():
    cfg = dict(t=1)
    first = cache.cached_tensor("corrupt_tensor", cfg, lambda: torch.arange(6.0))
    (f,) = cache.run_dir("corrupt_tensor", cfg).glob("files-*/tensor.pt")
    data = bytearray(f.read_bytes())
    data[-20] ^= 0xFF
    f.write_bytes(bytes(data))
    with pytest.warns(cache.CorruptEntry):
        again = cache.cached_tensor("corrupt_tensor", cfg, lambda: torch.arange(6.0))
    assert torch.equal(first, again)


def test_a_tensor_file_holding_a_pickled_object_is_refused_naming_its_entry():
    """Issue 46: a consistent entry whose tensor.pt holds a pickled object (not a tensor) was
    refused by torch.load without naming the cache entry."""
    import argparse
    import json
    cfg = dict(t=2)
    cache.cached_tensor("pickled_tensor", cfg, lambda: torch.arange(3.0))
    record = cache.run_dir("pickled_tensor", cfg) / "result.json"
    (f,) = record.parent.glob("files-*/tensor.pt")
    torch.save(argparse.Namespace(x=1), f)
    entry = json.loads(record.read_text())
    entry["files"]["tensor.pt"] = [f.stat().st_size, cache.file_digest(f)]   # consistent again
    record.write_text(json.dumps(entry))
    with pytest.raises(ValueError, match=r"cache entry .*tensor\.pt \(pickled_tensor\) is not a plain tensor file"):
        cache.cached_tensor("pickled_tensor", cfg, lambda: torch.arange(3.0))


def test_every_torch_load_is_weights_only():
    calls = [line for f in PACKAGE.rglob("*.py") for line in f.read_text().splitlines() if "torch.load(" in line]
    assert calls and all("weights_only=True" in line for line in calls), calls


def test_a_failed_computation_leaves_no_files_behind():
    def compute(folder):
        (folder / "partial.bin").write_bytes(b"x")
        raise RuntimeError("training crashed")
    with pytest.raises(RuntimeError):
        cache.cached_run("crash", dict(c=1), compute)
    assert not list(cache.run_dir("crash", dict(c=1)).glob("files-*"))


def test_a_result_comes_back_in_the_order_it_was_computed():
    result = dict(source="x", train_definitions=3, dev_definitions=1)
    assert list(cache.store_json("order", dict(o=1), result)) == list(result)
    assert list(cache.lookup_json("order", dict(o=1))) == list(result)


def test_files_of_gone_writers_are_removed_and_nothing_else(tmp_path, monkeypatch):
    """Issue 36: a killed run, the loser of two concurrent writers and a recomputed corrupt entry each
    left a files-<id> folder (up to a whole model) that nothing removed."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path))
    cfg = dict(orphans=1)
    parent = cache.run_dir("orphans", cfg)
    parent.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()
    killed = parent / f"files-{cache.HOST}-{dead.pid}-aaaaaaaaaaaa"
    alive = parent / f"files-{cache.HOST}-{os.getppid()}-bbbbbbbbbbbb"   # another writer, running
    for folder in (killed, alive):
        (folder / "model").mkdir(parents=True)

    def compute(folder):
        (folder / "x.txt").write_text("1")
        return dict(v=1.0)
    entry = cache.cached_run("orphans", cfg, compute)
    assert not killed.exists() and alive.exists() and entry.folder.exists()
    (entry.folder / "x.txt").write_text("tampered")   # a corrupt entry, recomputed: its old files go
    with pytest.warns(cache.CorruptEntry):
        again = cache.cached_run("orphans", cfg, compute)
    assert again.folder != entry.folder and not entry.folder.exists() and alive.exists()


def test_an_entry_whose_file_list_was_emptied_is_not_served(tmp_path, monkeypatch):
    """Issue 36: with result.json's file list emptied by hand, a truncated model file was served."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path))
    cfg = dict(listed=1)

    def compute(folder):
        (folder / "model.bin").write_bytes(b"x" * 100)
        return dict(v=1.0)
    entry = cache.cached_run("listed", cfg, compute)
    path = cache.run_dir("listed", cfg) / "result.json"
    record = json.loads(path.read_text())
    record["files"] = {}
    path.write_text(json.dumps(record))
    (entry.folder / "model.bin").write_bytes(b"x" * 10)   # truncated
    with pytest.warns(cache.CorruptEntry, match="holds files its entry does not list"):
        assert cache.lookup("listed", cfg) is None


def test_a_writer_on_another_machine_is_judged_by_its_lease_not_its_process_id(tmp_path, monkeypatch):
    """Issue 46, point 4: in a cache shared by machines, a writer whose process id is not visible
    here is alive while its lease is fresh: its folder is kept; once the lease has run out it goes.
    This host's writers are named by host and process and leave no lease behind."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path))
    parent = cache.run_dir("shared", dict(shared=1))
    parent.mkdir(parents=True)
    dead = subprocess.Popen(["true"])
    dead.wait()   # a process id that is not running here, as another machine's writer's
    foreign, stale = (parent / f"files-other_host-{dead.pid}-{c * 12}" for c in "ab")
    for folder in (foreign, stale):
        (folder / "model").mkdir(parents=True)
        folder.with_name(f"{folder.name}.lease").touch()
    old = time.time() - cache.LEASE_S - 60
    for p in (stale, stale.with_name(f"{stale.name}.lease")):
        os.utime(p, (old, old))

    def compute(folder):
        assert folder.name.startswith(f"files-{cache.HOST}-{os.getpid()}-")
        assert folder.with_name(f"{folder.name}.lease").exists()   # the heartbeat while computing
        (folder / "x.txt").write_text("1")
        return dict(v=1.0)
    entry = cache.cached_run("shared", dict(shared=1), compute)
    assert foreign.exists() and not stale.exists() and not stale.with_name(f"{stale.name}.lease").exists()
    assert not entry.folder.with_name(f"{entry.folder.name}.lease").exists()
    assert "-" not in cache.HOST


def test_a_lease_dated_ahead_or_a_reused_process_id_keeps_no_run_busy(tmp_path, monkeypatch):
    """Issue 72: a lease with a future mtime, or this host's dead writer whose process id was
    reused by another program, kept the run "busy" for ever (the launcher skipped it). Both are
    judged by the lease's freshness now; a live writer's fresh lease still keeps its folder."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path))
    parent = cache.run_dir("busy", dict(busy=1))
    parent.mkdir(parents=True)
    alive_pid = os.getppid()   # a running process that is not this one (as a reused pid is)
    ahead = parent / f"files-other_host-4242-{'a' * 12}"
    reused, live = (parent / f"files-{cache.HOST}-{alive_pid}-{c * 12}" for c in "bc")
    for folder in (ahead, reused, live):
        folder.mkdir()
        folder.with_name(f"{folder.name}.lease").touch()
    future, old = time.time() + cache.LEASE_S + 60, time.time() - cache.LEASE_S - 60
    for folder, t in ((ahead, future), (reused, old)):
        for p in (folder, folder.with_name(f"{folder.name}.lease")):
            os.utime(p, (t, t))
    assert [cache.writer_gone(f) for f in (ahead, reused, live)] == [True, True, False]


def test_a_container_or_machine_under_the_same_hostname_is_another_host(tmp_path, monkeypatch):
    """Issue 72: a writer in another container with this hostname (its process ids not visible
    here) lost its folder while its lease was fresh: this host's name now carries its process-id
    namespace, so that writer is judged by its lease. Issue 85: two machines with one hostname
    have the same initial namespace's inode: the name carries this boot's id too."""
    if not os.path.exists("/proc/self/ns/pid"):
        pytest.skip("no process-id namespaces here")
    assert cache.HOST.endswith(f".{os.stat('/proc/self/ns/pid').st_ino}")
    dead = subprocess.Popen(["true"])
    dead.wait()
    name, boot, ns = cache.HOST.rsplit(".", 2)
    assert boot == open("/proc/sys/kernel/random/boot_id").read().replace("-", "")[:12]
    for other in (f"{name}.{boot}.4026531999", f"{name}.0123456789ab.{ns}"):  # container, machine
        folder = tmp_path / f"files-{other}-{dead.pid}-{'c' * 12}"
        folder.mkdir()
        folder.with_name(f"{folder.name}.lease").touch()
        assert not cache.writer_gone(folder)
    mine = tmp_path / f"files-{cache.HOST}-{dead.pid}-{'d' * 12}"
    mine.mkdir()
    assert cache.writer_gone(mine)   # this container's dead writer: gone at once
