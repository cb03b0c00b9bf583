"""The SHA-256 every data file should have: pinned in checksums.sha256 (the verified copies), or
recorded at its first download (RECORD_FILE in the data root) where no pin exists. The preflight
reads them without loading the downloader."""

from pathlib import Path

CHECKSUMS_FILE = Path(__file__).with_name("checksums.sha256")
# The verified copies of files whose downloaded bytes differ (../shared/data's WordNet is Debian's,
# not NLTK's package): accepted by verify and the preflight, never asked of a download.
OFFLINE_COPIES_FILE = Path(__file__).with_name("offline_copies.sha256")
RECORD_FILE = ".defsent-downloads.sha256"  # digests of files written without a pinned checksum


def known_checksums(path=CHECKSUMS_FILE):
    """{relative path: sha256} of the data files, recorded from the verified copies in
    ../shared/data."""
    out = {}
    for line in Path(path).read_text().splitlines():
        digest, rel = line.split(maxsplit=1)
        out[rel] = digest
    return out


def offline_copies():
    """{relative path: sha256} of the offline copies whose bytes differ from a download's."""
    return known_checksums(OFFLINE_COPIES_FILE)


def accepted(rel, pinned, recorded, offline):
    """The digests a file may have: its pin, else its record, and its offline copy's."""
    return {d for d in (pinned.get(rel) or recorded.get(rel), offline.get(rel)) if d}


def read_record(root):
    """{relative path: sha256} recorded by earlier downloads for files without a pinned checksum."""
    path = Path(root) / RECORD_FILE
    if not path.exists():
        return {}
    record = {}
    for i, line in enumerate(path.read_text().splitlines(), 1):
        parts = line.split(maxsplit=1)
        if not parts:
            continue
        if (
            len(parts) != 2
            or len(parts[0]) != 64
            or any(c not in "0123456789abcdef" for c in parts[0])
        ):
            raise ValueError(
                f"{path}:{i}: expected '<sha256>  <relative path>', got {line[:80]!r} "
                "(delete the line, or the file, and download again)"
            )
        record[parts[1]] = parts[0]
    return record
