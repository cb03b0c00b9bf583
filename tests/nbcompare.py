"""Compare a notebook cell's fresh outputs with its stored ones: numbers within tolerance, the rest exactly.

Trained models and classifiers give slightly different floats on another CPU make, instruction
set or thread count, so strict byte comparison (nbval's) only passes where the outputs were made.
Here every number in an output is compared with the stored one within the tolerance of its
*kind* of metric (`TOLERANCES`); every other character (texts, labels, table shapes, which rows
exist) is compared exactly, with runs of white space folded (pandas pads columns to the width of
their numbers). A displayed DataFrame is compared through its HTML (where each number's column
and row labels are known), not its text twin, whose line wrapping follows the numbers' widths.
Images are not compared (as in nbval).

A cell states the kind of the numbers it shows in its .ipynb metadata, under "tolerance", out of
the reader's way (the .py files filter it out: `cell_metadata_filter: tags,-tolerance`); without
one they are exact:

    "tolerance": "score"                       every number is an x100 score
    "tolerance": "fraction; final loss=loss"   default fraction, the column "final loss" a loss

`label=kind` applies to the table cells under a column or beside a row label of that name
(HTML tables, as pandas displays DataFrames); `prefix*=kind` to every label starting with prefix;
`label?=kind` to a label only some scales show (the paper's rows). Any other label that names no
row or column of the cell's tables is a failure: renamed, its cells would take the default kind.
The kind `check` marks a pipeline check (a trained number too small a run to mean anything):
compared as finite or NaN only. The module is a pytest plugin that installs this
comparison into nbval (`conftest.py` loads it; elsewhere `pytest -p nbcompare --nbval, with tests/ on sys.path`).
"""
import html
import json
import math
import os
import re
import sys
from pathlib import Path

# kind: (largest allowed |fresh - stored|, what it covers). Chosen from the spread measured
# between an Intel and an AMD machine and across thread counts and kernel sets (docs/testing.md
# and docs/smoke_spread.md), with room for machines we could not try.
TOLERANCES = {
    "exact": (0.0, "no trained floats in it: dataset statistics, counts of data, the length baseline, settings"),
    "inference": (0.05, "x100 scores of an untrained encoder: inference only (measured: 0.00)"),
    "score": (2.0, "x100 accuracy of a classifier or threshold fitted on an untrained encoder's vectors (SentEval, "
                   "the cosine baseline); measured: up to 1.1 between machines (SentEval of a trained encoder)"),
    "fraction": (0.012, "0-1 metrics of trained models: MRR, top-k, variance shares (measured: up to 0.006 between "
                        "machines; DefSent's smoke test MRR within 0.0044 over three seeds, its effect 0.014-0.031)"),
    "small": (0.002, "0-1 metrics of trained models whose effect is under 0.01: DefSent's word prediction "
                     "from mini-BERT (whole-vocabulary MRR 0.001-0.015, top-k of 500 definitions in steps of "
                     "0.002; seeds 0-2 within 0.006, effect 0.003-0.009) and the entry-space variance shares "
                     "of notebook 21 (seeds within 0.0007, effect 0.006); docs/smoke_spread.md"),
    "direction": (1.0, "x100 direction accuracy and variance shares of GaussCSE's miniature (a head trained on "
                       "frozen vectors; measured: 0.00 between machines, seed range up to 1.64, effect "
                       "27 points; docs/smoke_spread.md)"),
    "loss": (0.05, "training loss in nats, about 8 here (measured: up to 0.0099)"),
    "count": (2.0, "counts that depend on a trained model: defined words among 12 top-3 lists (measured: 0)"),
    "check": (math.inf, "a pipeline check, not a result: a trained number whose effect at this size is smaller "
                        "than its spread across seeds and machines; compared as finite (or NaN) only"),
}

NUMBER = re.compile(r"(?<![\w.^])(?<![\w.^][-+])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w^])")
DIRECTIVE = re.compile(r"^\s*(?:#\s*)?tolerance:\s*(.+)$", re.MULTILINE)
IGNORE_TAG = "nbval-ignore-output"
SKIP_KEYS = {"metadata", "traceback", "prompt_number", "output_type", "name", "execution_count",
             "image/png", "image/jpeg", "image/svg+xml", "application/vnd.jupyter.widget-view+json"}


def directive(cell):
    """A notebook cell's tolerance (the text tolerance_spec reads), '' when it has none."""
    kind = cell.get("metadata", {}).get("tolerance")
    return f"tolerance: {kind}" if kind else ""


def ignored(cell):
    """Whether nbval ignores the cell's output (timings): the nbval-ignore-output tag."""
    return IGNORE_TAG in cell.get("metadata", {}).get("tags", [])


def tolerance_spec(source):
    """A directive ("tolerance: fraction; final loss=loss") as (default kind, {label: kind});
    'exact' when there is none."""
    found = DIRECTIVE.findall(source)
    if not found:
        return "exact", {}
    default, by_label = None, {}
    for part in (p.strip() for p in found[-1].split(";") if p.strip()):
        label, _, kind = part.rpartition("=")
        kind = kind.strip()
        if kind not in TOLERANCES:
            raise ValueError(f"unknown tolerance kind {kind!r} in 'tolerance:' (choose from {sorted(TOLERANCES)})")
        if label:
            by_label[label.strip()] = kind
        else:
            default = kind
    return default or "exact", by_label


def numbers_close(stored, fresh, kind, seen=None):
    """Whether two numeric strings agree within the kind's tolerance (NaN only equals NaN).

    `seen`, a list, collects (kind, stored, fresh) of every pair compared: the spread report.
    """
    a, b = float(stored), float(fresh)
    if seen is not None:
        seen.append((kind, a, b))
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    if kind == "check":
        return math.isfinite(a) == math.isfinite(b)
    tol = TOLERANCES[kind][0]
    return abs(a - b) <= tol + 1e-9 * max(1.0, abs(a))


def split_numbers(text):
    """(skeleton with numbers replaced by '#' and white space folded, list of number strings)."""
    nums = NUMBER.findall(text)
    skeleton = " ".join(NUMBER.sub("#", text).split())
    return skeleton, nums


def compare_text(stored, fresh, kind, seen=None):
    """Problems (a list of strings) between two plain texts; numbers compared as `kind`."""
    s_skel, s_nums = split_numbers(stored)
    f_skel, f_nums = split_numbers(fresh)
    if s_skel != f_skel:
        return [f"text differs:\n  stored: {_first_difference(s_skel, f_skel)[0]}\n  fresh:  {_first_difference(s_skel, f_skel)[1]}"]
    return [f"number {i + 1} of the text: stored {a}, fresh {b} (kind {kind}, tolerance {TOLERANCES[kind][0]})"
            for i, (a, b) in enumerate(zip(s_nums, f_nums)) if not numbers_close(a, b, kind, seen)]


def _first_difference(a, b, width=70):
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    start = max(0, i - width // 2)
    return a[start:start + width], b[start:start + width]


TAG = re.compile(r"(<[^>]+>)")


def html_cells(text):
    """An HTML string as a list of tokens: ('tag', '<tr>') or ('text', folded text)."""
    out = []
    for piece in TAG.split(text):
        if piece.startswith("<") and piece.endswith(">"):
            out.append(("tag", " ".join(piece.split())))
        elif piece.strip():
            out.append(("text", " ".join(html.unescape(piece).split())))
    return out


def table_kinds(tokens, default, by_label):
    """The kind of every <td> text token (index -> kind), from its row labels (innermost level
    first) and then its column header.

    A row label spanning several rows (pandas' `rowspan` for the outer level of a MultiIndex)
    labels each of them.
    """
    kinds, header_rows, row, in_head, cell_tag = {}, [], [], False, None
    spanning = []  # [label, rows left] of row labels that span the rows below
    for i, (typ, val) in enumerate(tokens):
        if typ == "tag":
            name = val[1:].split()[0].rstrip(">").lower()
            if name in ("thead", "/thead"):
                in_head = name == "thead"
            elif name == "tr":
                row = []
            elif name in ("th", "td"):
                cell_tag = name
                span = re.search(r'rowspan="(\d+)"', val)
                row.append(["", name, None, int(span.group(1)) if span else 1])
            elif name in ("/th", "/td"):
                cell_tag = None
            elif name == "/tr" and in_head:
                header_rows.append(row)
            elif name == "/tr":
                labels = [c[0] for c in row if c[1] == "th"][::-1] + [label for label, _ in spanning][::-1]
                _assign_row_kinds(row, labels, header_rows, default, by_label, kinds)
                spanning = [[label, left - 1] for label, left in spanning if left > 1]
                spanning += [[c[0], c[3] - 1] for c in row if c[1] == "th" and c[3] > 1]
        elif cell_tag and row:
            row[-1][0], row[-1][2] = val, i
    return kinds


def _assign_row_kinds(row, row_labels, header_rows, default, by_label, kinds):
    for j, (text, tag, index, _) in enumerate(reversed(row)):
        if tag != "td" or index is None:
            continue
        col_labels = [h[-1 - j][0] for h in header_rows if len(h) > j]
        kinds[index] = next((kind for label in row_labels + col_labels if (kind := label_kind(label, by_label))), default)


def label_kind(label, by_label):
    """The kind a directive gives a row or column label: by its exact name, else by a pattern
    ending in '*' that the label starts with ("untrained*=inference"); None if none does."""
    for name in (label, label + "?"):  # "?": a label only some scales show
        if name in by_label:
            return by_label[name]
    return next((kind for pattern, kind in by_label.items() if pattern.endswith("*") and label.startswith(pattern[:-1])), None)


def th_labels(tokens):
    """Every row label and column header (<th> text) of an HTML output's tables."""
    labels, in_th = set(), False
    for typ, val in tokens:
        if typ == "tag":
            name = val[1:].split()[0].rstrip(">").lower()
            in_th = name == "th" if name in ("th", "/th", "td", "/td") else in_th
        elif in_th:
            labels.add(val)
    return labels


def stale_labels(html_outputs, by_label):
    """The directive's labels that name no row or column of the cell's tables (a label renamed
    since): their cells would fall silently under the default kind."""
    labels = set().union(*(th_labels(html_cells(text)) for text in html_outputs))
    return [
        label
        for label in by_label
        if not label.endswith("?") and not any(label_kind(x, {label: "x"}) for x in labels)
    ]


def compare_html(stored, fresh, default, by_label, seen=None):
    """Problems between two HTML outputs: tags and labels exactly, table numbers within tolerance."""
    s_tok, f_tok = html_cells(stored), html_cells(fresh)
    if [t for t, _ in s_tok] != [t for t, _ in f_tok] or len(s_tok) != len(f_tok):
        return ["HTML structure differs (a row, column or output appeared or went away)"]
    kinds = table_kinds(s_tok, default, by_label)
    problems = []
    for i, ((typ, a), (_, b)) in enumerate(zip(s_tok, f_tok)):
        if typ == "tag" or i not in kinds:  # tags, column headers and row labels: exactly
            if a != b:
                problems.append(f"HTML differs: stored {a!r}, fresh {b!r}")
        elif _is_number(a) and _is_number(b):
            if not numbers_close(a, b, kinds[i], seen):
                problems.append(f"table value: stored {a}, fresh {b} "
                                f"(kind {kinds[i]}, tolerance {TOLERANCES[kinds[i]][0]})")
        else:
            problems += compare_text(a, b, kinds[i], seen=seen)
    return problems


def _is_number(text):
    return bool(NUMBER.fullmatch(text)) or text in ("NaN", "nan")


def flatten_outputs(outputs):
    """nbval's view of a cell's outputs: {stream name or MIME type: [texts]} plus which have tables."""
    flat, has_table = {}, []
    for out in outputs:
        if out.get("output_type") == "stream":
            flat.setdefault(out["name"], []).append(out["text"])
            continue
        data = out.get("data", {})
        table = "<table" in _as_text(data.get("text/html", ""))
        for key, value in list(out.items()) + [(k, v) for k, v in data.items()]:
            if key in SKIP_KEYS or key == "data":
                continue
            flat.setdefault(key, []).append(_as_text(value))
            if key == "text/plain":
                has_table.append(table)
    return flat, has_table


def _as_text(value):
    return "".join(value) if isinstance(value, list) else str(value)


def compare_outputs(stored, fresh, spec, seen=None):
    """Problems between a cell's stored and fresh outputs (already stream-coalesced); [] = same.
    spec: the cell's tolerance directive (`directive(cell)`)."""
    default, by_label = tolerance_spec(spec)
    s_flat, s_tables = flatten_outputs(stored)
    f_flat, _ = flatten_outputs(fresh)
    if set(s_flat) != set(f_flat):
        return [f"output kinds differ: stored {sorted(s_flat)}, fresh {sorted(f_flat)}"]
    problems = [f"tolerance label {label!r} names no row or column of this cell's tables (renamed?)"
                for label in stale_labels(s_flat.get("text/html", []), by_label)]
    for key, s_values in s_flat.items():
        f_values = f_flat[key]
        if len(s_values) != len(f_values):
            problems.append(f"{key}: {len(s_values)} stored outputs, {len(f_values)} fresh")
            continue
        for n, (a, b) in enumerate(zip(s_values, f_values)):
            if key == "text/html":
                found = compare_html(a, b, default, by_label, seen)
            elif key == "text/plain" and n < len(s_tables) and s_tables[n]:
                found = []  # a displayed table: its HTML twin holds the same labels, shape and values
            else:
                found = compare_text(a, b, default, seen=seen)
            problems += [f"[{key}] {p}" for p in found]
    return problems


def install_into_nbval():
    """Make nbval (0.11.x) compare cells with `compare_outputs` instead of byte equality.

    With DEFSENT_NBVAL_SAVE=file.jsonl every compared cell's stored and fresh outputs are appended
    there (`python tests/nbcompare.py --saved file.jsonl` prints their spread)."""
    from nbval.plugin import IPyNbCell
    if not callable(getattr(IPyNbCell, "compare_outputs", None)):
        raise RuntimeError("this nbval has no IPyNbCell.compare_outputs to replace: install nbval 0.11.x")

    def compare(cell, test, ref, skip_compare=None):
        cell.comparison_traceback = compare_outputs(ref, test, directive(cell.cell))
        if os.environ.get("DEFSENT_NBVAL_SAVE"):  # keep both outputs: spreads are measured from them
            record = dict(notebook=Path(str(cell.fspath)).name, cell=cell.cell_num, source=directive(cell.cell),
                          stored=ref, fresh=test, problems=cell.comparison_traceback)
            with open(os.environ["DEFSENT_NBVAL_SAVE"], "a") as f:
                f.write(json.dumps(record, default=dict) + "\n")
        return not cell.comparison_traceback

    IPyNbCell.compare_outputs = compare


def pytest_configure(config):
    """As a pytest plugin (`-p nbcompare`, or conftest's pytest_plugins)."""
    if config.pluginmanager.hasplugin("nbval"):
        install_into_nbval()


def cell_spread(source, stored, fresh):
    """{kind: largest |stored - fresh|} over a cell's numbers, and the comparison's problems."""
    seen = []
    problems = compare_outputs(stored, fresh, source, seen)
    worst = {}
    for kind, a, b in seen:
        if not (math.isnan(a) or math.isnan(b)):
            worst[kind] = max(worst.get(kind, 0.0), abs(a - b))
    return worst, problems


def paired_cells(args):
    """(name, source, stored outputs, fresh outputs) from two folders of executed notebooks, or
    from the files DEFSENT_NBVAL_SAVE wrote (`--saved FILE...`)."""
    import nbformat
    from nbval.plugin import coalesce_streams
    if args[0] == "--saved":
        for path in args[1:]:
            for line in open(path):
                r = json.loads(line)
                yield f"{Path(r['notebook']).stem} cell {r['cell']:2d}", r["source"], \
                    [nbformat.from_dict(o) for o in r["stored"]], [nbformat.from_dict(o) for o in r["fresh"]]
        return
    stored_dir, fresh_dir = Path(args[0]), Path(args[1])
    for path in sorted(stored_dir.glob("*.ipynb")):
        if not (fresh_dir / path.name).exists():
            raise SystemExit(f"{fresh_dir / path.name}: missing (each stored notebook needs its fresh run)")
        fresh = [c for c in nbformat.read(fresh_dir / path.name, 4).cells if c.cell_type == "code"]
        stored = [(i, c) for i, c in enumerate(nbformat.read(path, 4).cells) if c.cell_type == "code"]
        if len(fresh) != len(stored):
            raise SystemExit(f"{fresh_dir / path.name}: {len(fresh)} code cells where {path} has {len(stored)}")
        for (i, s_cell), f_cell in zip(stored, fresh):
            if not ignored(s_cell):
                yield f"{path.stem} cell {i:2d}", directive(s_cell), coalesce_streams(list(s_cell.outputs)), \
                    coalesce_streams(list(f_cell.outputs))


def main(args):
    """Print the spread between two runs of the notebooks, cell by cell, and per kind.

    python tests/nbcompare.py STORED_DIR FRESH_DIR      two folders of executed notebooks
    python tests/nbcompare.py --saved run1.jsonl ...   what DEFSENT_NBVAL_SAVE recorded
    """
    if len(args) < 2 or (args[0] != "--saved" and len(args) != 2):
        raise SystemExit(main.__doc__)
    worst, failed, compared = {}, 0, 0
    for name, source, stored, fresh in paired_cells(args):
        spread, problems = cell_spread(source, stored, fresh)
        failed, compared = failed + bool(problems), compared + 1
        for kind, diff in spread.items():
            worst[kind] = max(worst.get(kind, 0.0), diff)
        print(f"{name}: " + ", ".join(f"{k} {d:.4g}" for k, d in sorted(spread.items())) + (" FAIL" if problems else ""))
        for p in problems:
            print("    " + p.replace("\n", "\n    "))
    print("largest |difference| per kind:", {k: float(f"{v:.4g}") for k, v in sorted(worst.items())})
    if not compared:
        raise SystemExit(f"no cell compared: {' '.join(args)} hold(s) no executed notebook or record")
    print(f"cells beyond tolerance: {failed} of {compared}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
