"""Strict reading of the papers' data files; download.py fetches the data. The readers of each
dataset family use these checks: sick (SICK, an STS and an NLI set, and the 0-5 gold scores),
eval_readers (STS, SentEval), nli_readers, dictionary_readers.

Every reader takes a data root in the layout of `../shared/data` (see config.data_root):

    sts/raw/  sts/senteval/  senteval/  nli/  dictionary/

A missing file raises DataMissing naming the path and how to get the data; a malformed
line raises ValueError naming `file:line`. Nothing is skipped silently, except the STS
rule that a pair with an empty gold score is dropped (SentEval does the same).
"""

from pathlib import Path


HOW_TO_GET = (
    "point DEFSENT_DATA at a folder in the layout of ../shared/data, or run `python -m "
    "defsent_lite.data.download fetch --root <folder>` on a connected machine"
)


class DataMissing(FileNotFoundError):
    """A data file or root is not there."""


def require(path):
    """Return `path` if it exists, else raise DataMissing that says how to get it."""
    path = Path(path)
    if not path.exists():
        raise DataMissing(f"{path} not found: {HOW_TO_GET}")
    return path


def read_text(path, encoding="utf-8"):
    """A text file's contents; bytes that are not `encoding` are an error naming file:line. A UTF-8
    byte-order mark at the start is dropped (it is not text; doubled too), one elsewhere refused;
    a NUL byte is refused; a latin-1 file (SentEval's) with a line of UTF-8 multi-byte text is
    refused, naming the line, rather than decoded into mojibake."""
    raw = require(path).read_bytes()
    if encoding.replace("_", "-").lower() in ("utf-8", "utf8") and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if b"\x00" in raw:
        line = raw[: raw.index(b"\x00")].count(b"\n") + 1
        raise ValueError(f"{path}:{line}: a NUL byte (is this a text file?)")
    if (
        encoding.replace("_", "-").lower() in ("latin-1", "latin1", "iso-8859-1")
        and not raw.isascii()
    ):
        for line, text in enumerate(raw.split(b"\n"), 1):  # line by line: one UTF-8 line is enough
            if not text.isascii() and _is_utf8(text):
                raise ValueError(
                    f"{path}:{line}: UTF-8 text in a file read as latin-1 (SentEval's "
                    "encoding): it would be garbled; use the original latin-1 file"
                )
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        column = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise ValueError(
            f"{path}:{line}: byte 0x{raw[e.start]:02x} at column {column} is not valid {encoding} "
            f"({e.reason})"
        ) from None
    text = text.lstrip("\ufeff")  # a byte-order mark written twice
    if "\ufeff" in text:
        line = text[: text.index("\ufeff")].count("\n") + 1
        raise ValueError(
            f"{path}:{line}: a byte-order mark (U+FEFF) inside the text (files joined "
            "together?); remove it"
        )
    return text


def _is_utf8(raw):
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_lines(path, encoding="utf-8"):
    """Lines of a text file without their terminators (LF or CRLF); an empty file is an error."""
    text = read_text(path, encoding)
    if not text:
        raise ValueError(f"{path}: the file is empty")
    return [line.rstrip("\r") for line in text.split("\n")[: -1 if text.endswith("\n") else None]]


def split_fields(path, lineno, line, n, sep="\t", exact=False):
    """Split a line and check it has at least (exact: exactly) n fields."""
    parts = line.split(sep)
    if len(parts) < n or (exact and len(parts) != n):
        raise ValueError(
            f"{path}:{lineno}: expected {'' if exact else 'at least '}{n} tab-separated fields, "
            f"got {len(parts)}"
        )
    return parts


def check_header(path, line, expected, sep="\t"):
    """Check a file's first line starts with the expected column names (a file without its
    header would otherwise lose its first row)."""
    if line.split(sep)[: len(expected)] != list(expected):
        raise ValueError(
            f"{path}:1: expected a header starting with {sep.join(expected)!r}, got {line[:80]!r}"
        )


def nonempty_rows(path, rows):
    """Rows read from a file; none (an empty file or a header only) is an error."""
    if not rows:
        raise ValueError(f"{path}: no data lines (empty file or header only)")
    return rows


def check_nonempty(path, lineno, *sentences, what="sentence"):
    for s in sentences:
        if not s.strip():
            raise ValueError(f"{path}:{lineno}: empty {what}")
