"""A file's SHA-256, computed once per (path, size, mtime) in a process: cache keys and the data
checks both need it."""

import hashlib
import os
from pathlib import Path

_digests = {}


def file_digest(path):
    """SHA-256 of a file's bytes, remembered per (path, size, mtime) within the process."""
    st = os.stat(path)
    memo = (str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
    if memo not in _digests:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        _digests[memo] = h.hexdigest()
    return _digests[memo]
