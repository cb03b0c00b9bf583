"""Whether the long loops (encoding, entry building, training) draw tqdm bars."""

import os


def shown(progress=None):
    """`progress` when given, else DEFSENT_PROGRESS (default on; 0 turns the bars off, as in
    tests)."""
    if progress is not None:
        return bool(progress)
    return os.environ.get("DEFSENT_PROGRESS", "1") not in ("0", "false", "False", "")
