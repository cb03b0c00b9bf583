"""Side-by-side "paper / ours / diff" tables, and results saved with their provenance (CSV,
figures).

The papers' numbers are in paper_defsent, paper_defsentplus and paper_gausscse.
"""

import io
import os
import platform
import uuid
from importlib import metadata
from pathlib import Path

import numpy
import pandas as pd
import torch
import transformers
from PIL import Image

from defsent_lite import __version__
from defsent_lite.runtime import config

STS_COLS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSB", "SICKR", "avg"]
TRANSFER_COLS = ["MR", "CR", "SUBJ", "MPQA", "SST2", "TREC", "MRPC", "avg"]


def paper_table(table, columns):
    """A reference dict as a DataFrame (tuple keys become a MultiIndex)."""
    df = pd.DataFrame.from_dict(table, orient="index", columns=columns)
    if isinstance(next(iter(table)), tuple):
        df.index = pd.MultiIndex.from_tuples(df.index)
    return df


def side_by_side(paper, ours, pairs, digits=2, compare=True, std=None, runs=1):
    """Rows 'paper', 'ours', 'diff' (ours - paper) for each (paper row, our row) pair.

    `paper` and `ours` are DataFrames with the same columns; `pairs` maps a label to
    (paper row key, our row key); a paper key of None (the paper has no such row) gives NaN
    paper and diff rows. With compare=False (another model stands in for the paper's, see
    aggregate.comparable) the paper's row is context: rows 'paper (context)' and 'ours', no diff.
    std: the paper's standard deviations over its seeds (indexed like `paper`); a row with one gets
    a row 'paper std' ('paper std (context)' beside a stand-in), and a compared one a row 'z' (see
    spread_z), which spread_verdict reads.
    """
    rows = {}
    for label, (p_key, o_key) in pairs.items():
        o = ours.loc[o_key]
        p = paper.loc[p_key] if p_key is not None else pd.Series(float("nan"), index=paper.columns)
        sd = std.loc[p_key] if std is not None and p_key in std.index else None
        rows[(label, "paper" if compare else "paper (context)")] = p
        rows[(label, "ours")] = o
        if compare:
            rows[(label, "diff")] = o - p
        if sd is not None:
            rows[(label, "paper std" if compare else "paper std (context)")] = sd
        if compare and sd is not None:
            rows[(label, "z")] = spread_z(o, p, sd, runs)
    out = pd.DataFrame(rows).T
    out.index = pd.MultiIndex.from_tuples(out.index, names=["row", "source"])
    return out[list(paper.columns)].astype(float).round(digits)


def whole_paper_table(table, columns, ours, pairs, ours_label="ours"):
    """Every row of a paper's table in its order, as context, with each of our rows just below the
    paper row it pairs with; ours that pair with no row come last. table: {key: numbers} (a tuple
    key (model, setting) reads "model, setting"); ours: a DataFrame with these columns; pairs:
    {our row label: paper key or None}. No difference is taken (a stand-in model is context)."""
    name = lambda key: ", ".join(map(str, key)) if isinstance(key, tuple) else key  # noqa: E731
    unknown = [k for k in pairs.values() if k is not None and k not in table]
    if unknown:
        raise KeyError(
            f"paper rows {unknown} are not in the table (its rows: {[name(k) for k in table]})"
        )
    below = {}
    for ours_row, key in pairs.items():
        below.setdefault(key, []).append(ours_row)
    rows = {}
    for key, numbers in table.items():
        rows[(name(key), "paper")] = pd.Series(numbers, index=columns)
        for ours_row in below.get(key, []):
            rows[(name(key), f"{ours_label}: {ours_row}")] = ours.loc[ours_row, columns]
    for ours_row in below.get(None, []):
        rows[("(no paper row)", f"{ours_label}: {ours_row}")] = ours.loc[ours_row, columns]
    out = pd.DataFrame(rows).T.astype(float)
    out.index = pd.MultiIndex.from_tuples(out.index, names=["paper row", "source"])
    return out


def whole_beside(table, columns, ours, pairs, ours_label="ours"):
    """whole_paper_table from the pairs a notebook gave side_by_side, {label: (paper key or None,
    our row key)}: each of our rows, named by its label, below the paper row it pairs with."""
    rows = pd.DataFrame({label: ours.loc[o_key, columns] for label, (_, o_key) in pairs.items()}).T
    return whole_paper_table(
        table, columns, rows, {label: p_key for label, (p_key, _) in pairs.items()}, ours_label
    )


# "inside the paper's spread": within 2 standard deviations of its mean (about 95% of seeds)
SPREAD_Z = 2.0


def spread_z(ours, paper_mean, paper_std, runs=1):
    """How far ours lies from the paper's mean, in the standard deviation that a mean of `runs`
    seeds drawn with the paper's spread would have: (ours - mean) / (std / sqrt(runs)). One seed:
    diff / std."""
    return (ours - paper_mean) / (paper_std / runs**0.5)


def spread_verdict(table, limit=SPREAD_Z):
    """One line per row of a side_by_side table that has 'z' rows: how many of ours lie inside the
    paper's mean +- `limit` stds, naming each that does not. Says so when no row has a spread."""
    if "z" not in set(table.index.get_level_values("source")):
        return "inside the paper's spread: not judged (no paper row with a published std is compared here)"
    lines = []
    for label in dict.fromkeys(row for row, source in table.index if source == "z"):
        z = table.loc[(label, "z")].dropna()
        outside = z[z.abs() > limit]
        lines.append(
            f"{label}: inside the paper's mean +- {limit:g} std in {len(z) - len(outside)} of "
            f"{len(z)}"
            + (
                " (outside: " + ", ".join(f"{c} z = {v:+.1f}" for c, v in outside.items()) + ")"
                if len(outside)
                else ""
            )
        )
    return "\n".join(lines)


def versions():
    """Package versions that decide the numbers."""
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "scikit-learn": metadata.version("scikit-learn"),
        "numpy": numpy.__version__,
        "scipy": metadata.version("scipy"),
        "defsent_lite": __version__,
    }


def save_csv(df, name, **meta):
    """Write a table to the results folder with `# key: value` header lines (model, scale, seeds,
    subset, versions); returns the file name (what a notebook prints: never an absolute path).

    A relative `name` lands in `config.results_dir()`; read it back with `read_csv` (not pandas'
    comment="#", which would cut WordPiece tokens such as "##ing" out of a row).
    """
    path = config.results_dir() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    meta = dict(meta, **versions(), rows=len(df))  # rows, last: read_csv refuses a table cut short
    broken = [k for k, v in meta.items() if {"\n", "\r"} & set(f"{k}{v}") or ": " in str(k)]
    if broken:
        raise ValueError(
            f"save_csv {name}: the header line of {broken[0]!r} holds a line break, or its key "
            "': ' (read_csv would read another key or value)"
        )
    partial = path.with_name(f".{path.name}.{os.getpid()}.{uuid.uuid4().hex}.partial")
    try:  # written aside, then renamed over the old table: a failed write never loses it
        with open(partial, "w") as f:
            for k, v in meta.items():
                f.write(f"# {k}: {v}\n")
            df.to_csv(f)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return f"results/{name}" if not Path(name).is_absolute() else str(path)


def save_figure(fig, name, **meta):
    """Save a figure (PNG, or SVG by the name's suffix) to the results folder beside the CSVs, with
    the same provenance as save_csv in the file's metadata; returns the file name to print."""
    path = config.results_dir() / name
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "\n".join(f"{k}: {v}" for k, v in dict(meta, **versions()).items())
    fig.savefig(
        path,
        dpi=120,
        bbox_inches="tight",
        metadata={"Description": text, "Software": "defsent_lite"},
    )
    return f"results/{name}" if not Path(name).is_absolute() else str(path)


def figure_provenance(path):
    """{key: value} of the provenance save_figure wrote into a PNG."""
    with Image.open(path) as im:
        lines = im.text.get("Description", "").splitlines()
    return dict(line.partition(": ")[::2] for line in lines)


def read_csv(path, **kwargs):
    """(header {key: value}, table) of a file written by `save_csv`; kwargs go to pd.read_csv.
    The header ends at its `rows` line: a table without one, with fewer or more rows, or cut
    inside its last row (no final line break), is refused naming the file."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path}: not UTF-8 text (byte {e.start}): not a table save_csv wrote")
    if text.startswith("\ufeff"):
        raise ValueError(
            f"{path}: starts with a byte-order mark (saved as UTF-8 with BOM?): save it "
            "as plain UTF-8"
        )
    header = {}
    for line in text.splitlines():
        if not line.startswith("# ") or "rows" in header:
            break
        key, _, value = line[2:].partition(": ")
        header[key] = value
    if not header.get("rows", "").isdigit():
        raise ValueError(
            f"{path}: its header does not end with a '# rows: N' line (N a whole number): not a "
            "table save_csv wrote; write it with save_csv, or add that line with its row count"
        )
    lines = text.splitlines()
    for i, line in enumerate(lines[len(header) + 1 :], len(header) + 2):
        if line.startswith("# ") or line == lines[len(header)]:
            raise ValueError(
                f"{path}:{i}: a second header ({line[:40]!r}) after the table's column names: "
                "two tables joined in one file? keep one"
            )
    if not text.endswith("\n"):
        raise ValueError(
            f"{path}: its last line has no line break: the table was cut inside its last row (a "
            "run stopped while writing it?); run the notebook that wrote it again"
        )
    try:
        table = pd.read_csv(io.StringIO(text), skiprows=len(header), **kwargs)
    except ValueError as e:  # pandas' parser and empty-data errors
        raise ValueError(f"{path}: unreadable table ({type(e).__name__}: {e})") from None
    if not {"nrows", "skipfooter", "header"} & set(kwargs) and len(table) != int(header["rows"]):
        raise ValueError(
            f"{path}: {len(table)} rows where its header says {header['rows']}: the table was cut "
            "short (a run stopped while writing it?); run the notebook that wrote it again"
        )
    return header, table
