"""Guards that keep a poisoned number out of every result: non-finite values, empty work and
selections over candidates are refused with a message that names what was being computed."""

import math
import os

import numpy as np


def switch(name, default):
    """An on/off environment variable: 1 / true / yes / on or 0 / false / no / off (any case, or
    empty); anything else is refused, naming the variable, so that a typo never flips a switch."""
    value = os.environ.get(name, default).strip().lower()
    if value not in ("1", "true", "yes", "on", "0", "false", "no", "off", ""):
        raise ValueError(f"{name}={os.environ[name]!r}: use 1 or 0 (or true/false, yes/no, on/off)")
    return value in ("1", "true", "yes", "on")


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
        raise NonFinite(
            f"{what}: candidate {bad[0]!r} has score {scored[bad[0]]}; refusing to select "
            "(delete that run from the cache or fix its training)"
        )
    return max(scored, key=scored.get)


def first_non_finite(obj, path="result"):
    """Path of the first NaN/inf float inside nested dicts/lists, or None."""
    if isinstance(obj, (float, np.floating)):
        return None if math.isfinite(obj) else f"{path} = {obj}"
    if isinstance(obj, (list, tuple)):
        obj = dict(enumerate(obj))  # a list's path names the index
    for k, v in obj.items() if isinstance(obj, dict) else ():
        found = first_non_finite(v, f"{path}[{k!r}]")
        if found:
            return found
    return None


# --------------------------------------------------------------- settings, checked where they enter


def count(value, name, allow_none=True):
    """A positive whole number (a batch size, a cap on examples, epochs); None means "all" where
    allowed. Anything else is refused naming the setting, its value and what is allowed."""
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        allowed = "a whole number >= 1" + (" or None (all)" if allow_none else "")
        raise ValueError(f"{name}={value!r}: {allowed} is needed")
    return int(value)


def rate(value, name):
    """A finite number > 0: a learning rate (0 would train nothing; a rate so large that training
    diverges is caught by the loop's non-finite guards, naming the step)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.floating))
        or not math.isfinite(value)
        or not value > 0
    ):
        raise ValueError(f"{name}={value!r}: a finite number > 0 is needed")
    return float(value)


def fraction(value, name):
    """A finite number in [0, 1] (a warm-up ratio)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float, np.floating))
        or not math.isfinite(value)
        or not 0 <= value <= 1
    ):
        raise ValueError(f"{name}={value!r}: a number in [0, 1] is needed")
    return float(value)
