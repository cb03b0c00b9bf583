"""Runs cached by a key of everything that changes their result, so notebooks stay independent
yet share work, and a resumed run can be trusted.

Key = the run's config (which names the data it reads by content: `data_identity`,
`content_digest`) + a hash of the package's source (`code_identity`): editing the code starts
new entries instead of serving old results. An entry is `<cache>/<kind>/<key>/result.json`,
written under a unique temporary name and renamed (concurrent writers never clash); it holds a
SHA-256 of its result and of every file it stands for (a saved model, a tensor), each written
in its own folder first. A corrupt or truncated entry is reported with its path and recomputed.
Nothing non-finite is cached.
"""

import ast
import contextlib
import functools
import hashlib
import json
import os
import re
import shutil
import socket
import threading
import time
import uuid
import warnings
from pathlib import Path
from typing import NamedTuple

import numpy as np
import torch

from defsent_lite.checks import first_non_finite, NonFinite
from defsent_lite.runtime import config
from defsent_lite.runtime.config import file_digest

PACKAGE = Path(__file__).resolve().parents[1]
# modules (relative to the package) that never change a cached result: plots,
# downloading, preflight, Colab setup
NOT_IN_CODE_IDENTITY = {
    "paper/plots.py",
    "data/download.py",
    "data/sources.py",
    "repro/preflight.py",
    "repro/colab.py",
}


class CorruptEntry(UserWarning):
    """A cache entry could not be trusted (unreadable, truncated, checksum mismatch): recomputed."""


class InputsChanged(UserWarning):
    """What a run read changed while it ran: its result is returned, not cached."""


class Entry(NamedTuple):
    result: object  # the JSON result
    folder: Path  # where the entry's files are (a saved model, a tensor); None for a plain result


# ---------------------------------------------------------------- identities


@functools.lru_cache(maxsize=4)
def code_identity(package=PACKAGE):
    """SHA-256 (16 hex) of the package's code as Python parses it, every folder, modules that
    cannot change a result excluded: docstrings, comments and layout are not part of it, so an edit
    of the prose keeps a cache (on Drive too) that an edit of the code starts anew."""
    h = hashlib.sha256()
    for f in sorted(Path(package).rglob("*.py")):
        name = f.relative_to(package).as_posix()
        if name not in NOT_IN_CODE_IDENTITY and "__pycache__" not in name:
            tree = ast.parse(f.read_text())
            for node in ast.walk(tree):
                body = getattr(node, "body", None)
                if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
                    if isinstance(body[0].value, ast.Constant) and isinstance(
                        body[0].value.value, str
                    ):
                        node.body = body[1:]  # the docstring
            h.update(name.encode() + b"\0" + ast.dump(tree).encode() + b"\0")
    return h.hexdigest()[:16]


def files_under(folder):
    """Every file under `folder`, through symlinked folders too (a data folder may be a link to
    elsewhere: its files are the data), each real folder once; sorted by path."""
    files, seen = [], set()
    for top, dirs, names in os.walk(folder, followlinks=True):
        real = os.path.realpath(top)
        if real in seen:  # a link back up: walked already
            dirs[:] = []
            continue
        seen.add(real)
        files += [Path(top) / n for n in names if (Path(top) / n).is_file()]
    return sorted(files)


def data_identity(data_dir, *parts):
    """Fingerprint (16 hex) of the contents of the files under each `part` (a file or folder
    relative to the data root): two roots with the same files have the same identity wherever
    they are; an edited, added or removed file changes it."""
    root = config.data_root(data_dir)
    h = hashlib.sha256()
    for part in parts:
        p = root / part
        files = [p] if p.is_file() else files_under(p) if p.is_dir() else []
        h.update(f"{part}: {len(files)} files\n".encode())
        for f in files:
            h.update(f"{f.relative_to(root).as_posix()} {file_digest(f)}\n".encode())
    return h.hexdigest()[:16]


def content_digest(value):
    """SHA-256 (16 hex) of a JSON-serialisable value or a tensor/array (its dtype, shape and
    bytes)."""
    h = hashlib.sha256()
    if hasattr(value, "detach") or hasattr(value, "__array__"):
        arr = value.detach().cpu().numpy() if hasattr(value, "detach") else np.asarray(value)
        h.update(f"{arr.dtype} {arr.shape}\n".encode() + np.ascontiguousarray(arr).tobytes())
    else:
        h.update(json.dumps(value, sort_keys=True, default=str).encode())
    return h.hexdigest()[:16]


def model_folder_identity(folder):
    """Fingerprint (16 hex) of a local model folder by the bytes of its files (config, weights,
    tokenizer; each hashed once per process while its size and mtime stay): weights replaced in
    place give a new identity, a copy of the folder elsewhere the same one."""
    folder = Path(folder)
    h = hashlib.sha256()
    for f in sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith(".")):
        h.update(f"{f.name} {file_digest(f)}\n".encode())
    return h.hexdigest()[:16]


def local_models(cfg, folders):
    """{name: identity} of every string in `cfg` (at any depth) that names a model: a local folder
    (mapped by DEFSENT_MODEL_FOLDERS, an offline alias, or any path holding a config.json, 'mymodel'
    too) by its content; a hub name under a key naming a model by the revision it resolves to."""
    found = {}

    def visit(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                visit(v, str(k))
        elif isinstance(value, (list, tuple)):
            for v in value:
                visit(v, key)
        elif isinstance(value, str) and value and value not in found and len(value) < 1024:
            folder = folders.get(value)
            if folder is None:
                with contextlib.suppress(ImportError):  # not installed: loading it says so
                    folder = config.bundled_model_path(value)
            try:
                candidate = Path(value).expanduser()
                folder = folder or (candidate if (candidate / "config.json").is_file() else None)
            except (OSError, ValueError):  # not a path at all (a NUL byte, a name too long)
                pass
            if folder is not None and Path(folder).is_dir():
                found[value] = model_folder_identity(folder)
            elif re.search("model|head_from", key) and re.fullmatch(r"[\w.-]+(/[\w.-]+)?", value):
                found[value] = hub_revision(value)

    visit(cfg)
    return found


def hub_revision(name):
    """The commit a hub model name resolves to: the hub's answer when it may be asked (HF_HUB_OFFLINE
    unset; asked once per process), else the one the local hub cache holds (read at every call: a
    model updated on disk is keyed anew within one kernel); None for a name neither knows."""
    from huggingface_hub import constants

    answer = None if config.hub_offline() else hub_answer(name)
    if answer:
        return answer
    ref = Path(constants.HF_HUB_CACHE) / f"models--{name.replace('/', '--')}" / "refs" / "main"
    return ref.read_text().strip() if ref.is_file() else None


@functools.lru_cache(maxsize=None)
def hub_answer(name):
    """The hub's own answer for `name` (None when it cannot be asked)."""
    from huggingface_hub import model_info

    with contextlib.suppress(Exception):
        return model_info(name, timeout=10).sha


def config_key(cfg):
    """Short stable hash of a JSON-serialisable config dict and the code identity; a local model
    folder the config names counts by its content (`model_folder_identity`), not by its path."""
    # a hub name loaded from a local folder (DEFSENT_MODEL_FOLDERS) never shares a key with the hub
    folders = config.model_folders()
    local = dict(model_folders=folders, standins=config.standins_enabled()) if folders else {}
    models = local_models(cfg, folders)
    if models:
        local["model_content"] = models
    text = json.dumps(dict(config=cfg, code=code_identity(), **local), sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run_dir(kind, cfg):
    """Folder of one cached run: <cache>/<kind>/<key>/ (not created); `cfg` a config or its key."""
    return config.cache_dir() / kind / (cfg if isinstance(cfg, str) else config_key(cfg))


# ---------------------------------------------------------------- reading and writing entries


def atomic_write_text(path, text):
    """Write under a unique temporary name in the same folder, then rename over `path`."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    try:
        with open(tmp, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def plain_numbers(obj):
    """`obj` with numpy and torch scalars and arrays (at any depth of dicts, lists, tuples) as
    Python numbers and lists, so that JSON stores a number as a number and the non-finite guard sees
    it."""
    if isinstance(obj, dict):
        return {k: plain_numbers(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain_numbers(v) for v in obj]
    if isinstance(obj, np.ndarray):
        return plain_numbers(obj.tolist())
    if isinstance(obj, np.generic):
        return obj.item()
    if torch.is_tensor(obj):  # a torch scalar or tensor: numbers, never its repr ('tensor(nan)')
        return plain_numbers(obj.detach().cpu().tolist())
    return obj


def _canonical(result):
    return json.dumps(result, sort_keys=True, default=str, allow_nan=False)


def _read_entry(path):
    """(result, folder) of a sound entry; raises ValueError saying what is wrong."""
    try:
        entry = json.loads(path.read_text())
        result, digest = entry["result"], entry["sha256"]
    except (ValueError, KeyError, TypeError) as e:
        raise ValueError(f"unreadable ({type(e).__name__}: {e})") from None
    if hashlib.sha256(_canonical(result).encode()).hexdigest() != digest:
        raise ValueError("the result does not match its recorded SHA-256")
    folder = path.parent / entry["files_in"] if entry.get("files_in") else None
    if folder is not None:  # every file of the folder is listed with its checksum: none is optional
        on_disk = (
            {f.relative_to(folder).as_posix() for f in folder.rglob("*") if f.is_file()}
            if folder.is_dir()
            else set()
        )
        unlisted = sorted(on_disk - set(entry.get("files") or {}))
        if unlisted:
            raise ValueError(
                f"{folder} holds files its entry does not list ({', '.join(unlisted[:3])})"
            )
    for rel, (size, sha) in (entry.get("files") or {}).items():
        f = folder / rel
        if not f.is_file():
            raise ValueError(f"{f} is missing")
        if f.stat().st_size != size:
            raise ValueError(f"{f} has {f.stat().st_size} bytes, expected {size} (truncated?)")
        if file_digest(f) != sha:
            raise ValueError(f"{f} does not match its recorded SHA-256")
    return Entry(result, folder)


def lookup(kind, cfg):
    """The cached Entry of (kind, cfg), or None when there is none or it is corrupt (reported);
    `cfg` a config or its key."""
    path = run_dir(kind, cfg) / "result.json"
    if not path.exists():
        return None
    try:
        return _read_entry(path)
    except ValueError as e:
        warnings.warn(
            f"cache entry {path} is corrupt: {e}; recomputing", CorruptEntry, stacklevel=2
        )
        return None


def changed_since(since_ns):
    """Files this process fingerprinted (data, model folders; not the cache's own) modified after
    `since_ns` (time.time_ns()): what a run that started then may have read half-changed, even if
    put back since (A -> B -> A). A removed file is left to the next key (tests remove theirs)."""
    cache_root = str(config.cache_dir().resolve())
    changed = []
    for path in {memo[0] for memo in list(config._digests)}:
        with contextlib.suppress(OSError):
            if not path.startswith(cache_root) and os.stat(path).st_mtime_ns > since_ns:
                changed.append(path)
    return sorted(changed)


def store(kind, cfg, result, folder=None, key=None, since=None):
    """Cache a JSON-serialisable result (and the files under `folder`, a folder inside the run's
    folder that the writer filled) under `key`, the key computed when the run looked it up at
    time `since` (ns): what it read changed meanwhile (a data file or model folder rewritten) and
    it is returned uncached (warned). Refuses NaN/inf anywhere in the result. Returns the Entry."""
    result = plain_numbers(result)  # a numpy float is stored as a number, never as its string
    now = config_key(cfg)
    bad = first_non_finite(result)
    if bad:
        raise NonFinite(f"refusing to cache a non-finite result of {kind} {now}: {bad}")
    changed = changed_since(since) if since is not None else []
    if key not in (None, now) or changed:
        what = f"{changed[0]} changed" if changed else "what it read changed"
        warnings.warn(
            f"{kind} {key}: not cached, {what} while it ran (a data file or model folder "
            "rewritten?); run it again",
            InputsChanged,
            stacklevel=2,
        )
        return Entry(json.loads(json.dumps(result, default=str)), folder and Path(folder))
    text = _canonical(result)  # sorted keys: the checksum does not depend on key order
    path = run_dir(kind, now) / "result.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    files = {}
    if folder is not None:
        files = {
            f.relative_to(folder).as_posix(): (f.stat().st_size, file_digest(f))
            for f in sorted(Path(folder).rglob("*"))
            if f.is_file()
        }
    # as computed: key order kept for tables
    entry = dict(
        config=cfg,
        code=code_identity(),
        sha256=hashlib.sha256(text.encode()).hexdigest(),
        files_in=Path(folder).name if folder is not None else None,
        files=files,
        result=json.loads(json.dumps(result, default=str)),
    )
    atomic_write_text(path, json.dumps(entry, indent=1, default=str))
    return Entry(entry["result"], Path(folder) if folder is not None else None)


def lookup_json(kind, cfg):
    """The cached result of (kind, cfg), or None."""
    found = lookup(kind, cfg)
    return None if found is None else found.result


def store_json(kind, cfg, result, key=None, since=None):
    """Cache a JSON-serialisable result (under `key`, looked up at `since`: see store); returns it
    as stored (JSON round trip)."""
    return store(kind, cfg, result, key=key, since=since).result


def cached_json(kind, cfg, compute):
    """Return compute()'s JSON-serialisable result, reusing the cached one when sound; the key is
    computed once, before the run reads anything."""
    since, key = time.time_ns(), config_key(cfg)
    found = lookup(kind, key)
    return found.result if found is not None else store_json(kind, cfg, compute(), key, since)


def cached_run(kind, cfg, compute, need_files=True):
    """Entry of compute(folder), which writes its files (a model, a tensor) into `folder`, a new
    folder of this writer only, and returns a JSON result; reused when cached and sound. An entry
    whose files were dropped (drop_files) is reused only when need_files is False."""
    since, key = time.time_ns(), config_key(cfg)
    found = lookup(kind, key)
    if found is not None and (found.folder is not None or not need_files):
        return found
    parent = run_dir(kind, key)
    parent.mkdir(parents=True, exist_ok=True)
    remove_orphans(parent)
    folder = parent / f"files-{HOST}-{os.getpid()}-{uuid.uuid4().hex[:12]}"
    folder.mkdir()
    try:
        with lease(folder):
            result = compute(folder)
        entry = store(kind, cfg, result, folder, key, since)
    except BaseException:  # a preempted training's resume_file stays: the next writer goes on
        shutil.rmtree(folder, ignore_errors=True)
        raise
    resume_file(folder).unlink(missing_ok=True)
    remove_orphans(parent, keep=folder)  # e.g. the files of the corrupt entry this one replaced
    return entry


def resume_file(folder):
    """Where a training in a writer's `folder` keeps its state to resume from (train.train's
    resume): beside the writers' folders, so that the next writer of the run (a requeued job, a
    reconnected Colab session) finds it; removed once the run's entry is stored."""
    return Path(folder).parent / "resume.pt"


ORPHAN_AGE = 3600  # seconds: a files folder of an older naming unreferenced this long is gone


# A writer's folder is named by its host and process: files-<host>-<pid>-<random>. On this host a
# writer is alive while its process is; on another host (a cache on Drive or a cluster's shared
# filesystem, where its process id means nothing here) while its lease file is fresh: the writer
# touches it every HEARTBEAT_S seconds, and a lease untouched for LEASE_S is judged gone.
def host_name():
    """This machine's name in a writer's folder name, with its boot and process-id namespace:
    machines under one hostname, or containers on one machine, see different processes, so each
    judges the others' writers by their leases, never by a process id it cannot see."""
    name = socket.gethostname()
    with contextlib.suppress(OSError):  # Linux: this boot's id and the namespace's inode
        boot = Path("/proc/sys/kernel/random/boot_id").read_text().replace("-", "")[:12]
        name += f".{boot}.{os.stat('/proc/self/ns/pid').st_ino}"
    return re.sub(r"[^A-Za-z0-9_.]", "_", name) or "unknown_host"


HOST = host_name()
HEARTBEAT_S, LEASE_S = 60, 1800


@contextlib.contextmanager
def lease(folder):
    """While a writer computes into `folder`, `<folder>.lease` beside it is touched every
    HEARTBEAT_S seconds (a daemon thread): other machines sharing the cache see the writer alive."""
    beat, stop = folder.with_name(f"{folder.name}.lease"), threading.Event()

    def heartbeat():
        while not stop.wait(HEARTBEAT_S):
            try:
                beat.touch()
            except OSError:
                pass

    beat.touch()
    thread = threading.Thread(target=heartbeat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        beat.unlink(missing_ok=True)


def writer_gone(folder):
    """Whether the writer of a files folder is gone: its lease (or, without one, the folder) is
    untouched for LEASE_S, or dated as far ahead (a clock gone wrong), on any host; on this host
    sooner when its process is not running (or is this one: a replaced entry). A folder named
    otherwise (an older naming) is gone ORPHAN_AGE after its last change."""
    parts = folder.name.split("-")
    beat = folder.with_name(f"{folder.name}.lease")
    seen = max(p.stat().st_mtime for p in (beat, folder) if p.exists())
    stale = abs(time.time() - seen) > LEASE_S  # a live writer touches its lease every HEARTBEAT_S
    if len(parts) == 4 and parts[2].isdigit():
        host, pid = parts[1], int(parts[2])
    else:
        return time.time() - folder.stat().st_mtime > ORPHAN_AGE
    if host == HOST:  # a process id reused by another program keeps no run busy past LEASE_S
        return pid == os.getpid() or not process_alive(pid) or stale
    return stale


def remove_orphans(parent, keep=None):
    """Remove the files folders of a run that its result.json does not reference and whose writer
    is gone (killed, the loser of two concurrent writers, this process replacing an entry, or
    another host's writer whose lease ran out); never another host's live writer's folder."""
    try:
        referenced = json.loads((parent / "result.json").read_text()).get("files_in")
    except (OSError, ValueError, AttributeError):
        referenced = None
    for folder in parent.glob("files-*"):
        if folder.suffix == ".lease" or folder.name in (referenced, getattr(keep, "name", None)):
            continue
        if writer_gone(folder):
            shutil.rmtree(folder, ignore_errors=True)
            folder.with_name(f"{folder.name}.lease").unlink(missing_ok=True)


def process_alive(pid):
    """Whether a process with this id exists (on this machine)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def cached_tensor(kind, cfg, compute):
    """Like cached_json for a tensor (saved as tensor.pt, loaded with weights_only=True);
    a tensor with NaN or inf is refused."""

    def compute_into(folder):
        value = compute()
        if not torch.isfinite(value).all():
            raise NonFinite(f"refusing to cache a tensor of {kind} with NaN or inf values")
        torch.save(value, folder / "tensor.pt")
        return dict(shape=list(value.shape), dtype=str(value.dtype))

    entry = cached_run(kind, cfg, compute_into)
    path = entry.folder / "tensor.pt"
    try:  # weights_only: a pickled object in the file is refused, never run
        return torch.load(path, weights_only=True)
    except Exception as e:
        raise ValueError(
            f"cache entry {path} ({kind}) is not a plain tensor file "
            f"({type(e).__name__}: {str(e).splitlines()[0][:200]}); delete its folder to "
            "recompute it"
        ) from None


def drop_files(kind, cfg):
    """Delete the files of a cached run (a checkpoint no later step loads), keeping its result.
    The entry then records that its files were dropped: cached_run(..., need_files=True)
    recomputes such an entry, need_files=False returns its result without files. `cfg` is the
    run's config or its config_key. Returns whether anything was dropped."""
    path = run_dir(kind, cfg) / "result.json"
    if not path.exists():
        return False
    try:
        found = _read_entry(path)
    except ValueError:
        return False
    if found.folder is None:
        return False
    entry = json.loads(path.read_text())
    entry.update(files_in=None, files={}, files_dropped=True)
    atomic_write_text(path, json.dumps(entry, indent=1, default=str))
    shutil.rmtree(found.folder, ignore_errors=True)
    return True


def drop_all_but(kind, runs, keep):
    """Drop the files of every run of {name: result} (results with "key" and "path") but `keep`'s;
    returns the results, path None where dropped (a checkpoint no later step loads)."""
    out = dict(runs)
    for name, r in runs.items():
        if name != keep and r.get("path") is not None:
            drop_files(kind, r["key"])
            out[name] = dict(r, path=None)
    return out
