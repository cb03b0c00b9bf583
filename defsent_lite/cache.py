"""Runs cached by a hash of their config, so notebooks stay independent yet share work."""
import hashlib
import json
import os

from . import config


def config_key(cfg):
    """Short stable hash of a JSON-serialisable config dict."""
    return hashlib.sha256(json.dumps(cfg, sort_keys=True, default=str).encode()).hexdigest()[:16]


def run_dir(kind, cfg):
    """Folder of one cached run: <cache>/<kind>/<hash>/ (not created)."""
    return config.cache_dir() / kind / config_key(cfg)


def lookup_json(kind, cfg):
    """The cached result of (kind, cfg), or None when there is none."""
    path = run_dir(kind, cfg) / "result.json"
    return json.loads(path.read_text())["result"] if path.exists() else None


def store_json(kind, cfg, result):
    """Cache a JSON-serialisable result, written atomically (never a half file); returns it."""
    path = run_dir(kind, cfg) / "result.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"config": cfg, "result": result}, indent=1, default=str))
    os.replace(tmp, path)
    return result


def cached_json(kind, cfg, compute):
    """Return compute()'s JSON-serialisable result, reusing <run_dir>/result.json when present."""
    found = lookup_json(kind, cfg)
    return found if found is not None else store_json(kind, cfg, compute())


def cached_tensor(kind, cfg, compute):
    """Like cached_json for a tensor: <run_dir>/tensor.pt, written atomically."""
    import torch
    path = run_dir(kind, cfg) / "tensor.pt"
    if path.exists():
        return torch.load(path)
    value = compute()
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save(value, path.with_suffix(".tmp"))
    os.replace(path.with_suffix(".tmp"), path)
    return value
