"""Guards that keep a poisoned number out of every result: non-finite values, empty work and
selections over candidates are refused with a message that names what was being computed."""
import math

import numpy as np


class NonFinite(FloatingPointError):
    """A score, metric or model output is NaN or inf; the message names the run and the value."""


def require_finite(values, what):
    """Return `values` (array, tensor or number) if every entry is finite, else raise NonFinite."""
    if hasattr(values, "detach"):  # a tensor is checked where it lives (no copy off the GPU)
        finite = values.detach().isfinite()
        bad, size = int((~finite).sum()) if not bool(finite.all()) else 0, values.numel()
    else:
        arr = np.asarray(values, dtype=np.float64)
        bad, size = int((~np.isfinite(arr)).sum()), arr.size
    if bad:
        raise NonFinite(f"{what}: {bad} of {size} values are NaN or inf (did the model diverge?)")
    return values


def require_nonempty(items, what):
    """Return `items` if it has at least one element, else raise ValueError naming what is empty."""
    if len(items) == 0:
        raise ValueError(f"{what}: nothing to compute (empty input)")
    return items


def best_of(candidates, score, what):
    """The key of `candidates` ({key: result}) with the highest score(result); a non-finite score
    is refused (NaN never compares greater, so max() would keep whatever came first)."""
    require_nonempty(candidates, what)
    scored = {k: score(v) for k, v in candidates.items()}
    bad = [k for k, s in scored.items() if not math.isfinite(s)]
    if bad:
        raise NonFinite(f"{what}: candidate {bad[0]!r} has score {scored[bad[0]]}; refusing to select "
                        "(delete that run from the cache or fix its training)")
    return max(scored, key=scored.get)


def first_non_finite(obj, path="result"):
    """Path of the first NaN/inf float inside nested dicts/lists, or None."""
    if isinstance(obj, float):
        return None if math.isfinite(obj) else f"{path} = {obj}"
    if isinstance(obj, dict):
        items = obj.items()
    elif isinstance(obj, (list, tuple)):
        items = enumerate(obj)
    else:
        return None
    for k, v in items:
        found = first_non_finite(v, f"{path}[{k!r}]")
        if found:
            return found
    return None
