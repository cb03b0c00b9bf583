"""The notebook comparison: numbers within their kind's tolerance, everything else exactly."""
import math
import re
import os
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbval.plugin import coalesce_streams

import nbcompare

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def table_output(df):
    """A cell output as Jupyter stores a displayed DataFrame."""
    return nbformat.v4.new_output("execute_result", data={"text/plain": repr(df), "text/html": df._repr_html_()},
                                  execution_count=1)


def stream(text):
    return nbformat.v4.new_output("stream", name="stdout", text=text)


STORED = pd.DataFrame({"mrr": [0.1174, 0.0480], "final loss": [7.9640, 7.1]}, index=["cls", "max"])
SOURCE = "tolerance: fraction; final loss=loss"   # a cell's tolerance, as directive() reads it


def compare_frames(fresh, source=SOURCE):
    return nbcompare.compare_outputs([table_output(STORED)], [table_output(fresh)], source)


def test_numbers_within_their_kind_pass():
    fresh = STORED.copy()
    fresh.loc["cls", "mrr"] += 0.01           # fraction: 0.012
    fresh.loc["max", "final loss"] += 0.04    # loss: 0.05
    assert compare_frames(fresh) == []


@pytest.mark.parametrize("row, col, delta", [("cls", "mrr", 0.03), ("max", "final loss", 0.08), ("max", "mrr", -0.05)])
def test_a_number_beyond_tolerance_fails(row, col, delta):
    fresh = STORED.copy()
    fresh.loc[row, col] += delta
    problems = compare_frames(fresh)
    assert len(problems) == 1 and "table value" in problems[0]


def test_label_kind_overrides_default():
    fresh = STORED.copy()
    fresh.loc["cls", "final loss"] += 0.04   # a loss: passes only because the column is labelled
    assert compare_frames(fresh) == []
    assert compare_frames(fresh, "tolerance: fraction") != []


def test_labels_rows_and_columns_are_exact():
    assert compare_frames(STORED.rename(index={"cls": "CLS"})) != []
    assert compare_frames(STORED.iloc[:1]) != []
    assert compare_frames(STORED.rename(columns={"mrr": "MRR"})) != []
    assert compare_frames(STORED.assign(extra=1.0)) != []


def test_nan_only_matches_nan():
    fresh = STORED.copy()
    fresh.loc["cls", "mrr"] = float("nan")
    assert compare_frames(fresh) != []
    both = STORED.copy()
    both.loc["cls", "mrr"] = float("nan")
    assert nbcompare.compare_outputs([table_output(both)], [table_output(both)], SOURCE) == []


def test_column_widths_do_not_matter_but_text_does():
    stored = [stream("diff -9.55 | ours 75.30\n")]
    assert nbcompare.compare_outputs(stored, [stream("diff  -10.05 | ours 74.80\n")], "# tolerance: score") == []
    assert nbcompare.compare_outputs(stored, [stream("diff -9.55 | ourz 75.30\n")], "# tolerance: score") != []
    assert nbcompare.compare_outputs(stored, [stream("diff -9.55 | ours 77.80\n")], "# tolerance: score") != []


def test_without_directive_numbers_are_exact():
    stored = [stream("entries: 148149, median 12\n")]
    assert nbcompare.compare_outputs(stored, stored, "print(x)") == []
    assert nbcompare.compare_outputs(stored, [stream("entries: 148150, median 12\n")], "print(x)") != []


def test_number_tokens():
    skeleton, nums = nbcompare.split_numbers("STS12 74.52, lr 5e-05, 2^7e-6 x100 (0, 0.5] -3")
    assert nums == ["74.52", "5e-05", "0", "0.5", "-3"]
    assert skeleton == "STS12 #, lr #, 2^7e-6 x100 (#, #] #"


def test_unknown_kind_is_an_error():
    with pytest.raises(ValueError, match="unknown tolerance kind"):
        nbcompare.tolerance_spec("# tolerance: sccore")


def checked_cells():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for n, cell in enumerate(nbformat.read(path, 4).cells):
            if cell.cell_type == "code" and not nbcompare.ignored(cell) and cell.outputs:
                yield f"{path.stem}:{n}", cell


LARGEST_TOLERANCE = max(tol for tol, _ in nbcompare.TOLERANCES.values() if tol < float("inf"))


def perturbations(outputs, to_nan=False):
    """Copies of `outputs` with one reported number moved beyond every finite tolerance (or made
    NaN), one copy per number."""
    for i, out in enumerate(outputs):
        for key, text in ([("text", out.text)] if out.output_type == "stream" else
                          [(k, v) for k, v in out.get("data", {}).items() if k in ("text/plain", "text/html")]):
            if key == "text/plain" and "text/html" in out.get("data", {}):
                continue  # a table's numbers are checked in its HTML
            for m in nbcompare.NUMBER.finditer(text):
                moved = "nan" if to_nan else repr(float(m.group()) + 2 * max(LARGEST_TOLERANCE, 1))
                new = text[:m.start()] + moved + text[m.end():]
                copy = [nbformat.from_dict(dict(o)) for o in outputs]
                if key == "text":
                    copy[i]["text"] = new
                else:
                    copy[i]["data"] = dict(copy[i]["data"], **{key: new})
                yield m.group(), copy


@pytest.mark.parametrize("name, cell", list(checked_cells()), ids=lambda x: x if isinstance(x, str) else "")
def test_every_stored_number_is_checked(name, cell):
    """Each number a notebook reports (outside timing cells) fails the test when moved past its tolerance."""
    stored = coalesce_streams(list(cell.outputs))
    assert nbcompare.compare_outputs(stored, stored, nbcompare.directive(cell)) == []
    unnoticed = []
    for (number, moved), (_, as_nan) in zip(perturbations(stored), perturbations(stored, to_nan=True)):
        seen = []
        if nbcompare.compare_outputs(stored, moved, nbcompare.directive(cell), seen):
            continue
        kinds = {kind for kind, a, b in seen if a != b and not (math.isnan(a) and math.isnan(b))}
        # a pipeline check (kind "check") is compared as finite only: making it NaN must fail
        if kinds != {"check"} or not nbcompare.compare_outputs(stored, as_nan, nbcompare.directive(cell)):
            unnoticed.append(number)
    assert unnoticed == [], f"{name}: moving these numbers went unnoticed: {unnoticed[:10]}"


def test_nbval_uses_the_tolerant_comparison(tmp_path):
    """End to end: pytest --nbval passes a notebook whose stored number is off within tolerance, fails beyond."""
    def notebook(stored_value):
        cell = nbformat.v4.new_code_cell("print('accuracy', 70.25)", execution_count=1,
                                         outputs=[stream(f"accuracy {stored_value}\n")],
                                         metadata={"tolerance": "score"})
        nb = nbformat.v4.new_notebook(cells=[cell], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}})
        path = tmp_path / f"nb_{str(stored_value).replace('.', '_')}.ipynb"
        nbformat.write(nb, path)
        return path

    def run(path):
        env = {k: v for k, v in os.environ.items() if k != "DEFSENT_NBVAL_SAVE"}
        env["PYTHONPATH"] = os.pathsep.join([str(Path(nbcompare.__file__).parent)] + env.get("PYTHONPATH", "").split(os.pathsep))
        return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "nbcompare", "--nbval",
                               "--nbval-current-env", "-p", "no:cacheprovider", str(path)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=300, env=env)

    near, far = run(notebook(70.95)), run(notebook(72.75))
    assert near.returncode == 0, near.stdout[-2000:]
    assert far.returncode == 1 and "stored 72.75, fresh 70.25" in far.stdout, far.stdout[-2000:]


def test_row_label_spanning_rows_sets_the_kind():
    idx = pd.MultiIndex.from_product([["Length-baseline", "ent"], ["paper", "ours"]], names=["row", "source"])
    stored = pd.DataFrame({"SNLI": [92.63, 92.64, 64.84, 51.78]}, index=idx)
    source = "# tolerance: score; Length-baseline=exact"
    moved_trained, moved_exact = stored.copy(), stored.copy()
    moved_trained.iloc[3, 0] += 1.0
    moved_exact.iloc[1, 0] += 0.01     # the length baseline has no training in it: exact
    assert "rowspan" in stored._repr_html_()
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(moved_trained)], source) == []
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(moved_exact)], source) != []


def test_innermost_row_label_wins():
    idx = pd.MultiIndex.from_product([["3rd (ICA)"], ["paper", "ours"]], names=["row", "source"])
    stored = pd.DataFrame({"STS12": [71.23, 73.80]}, index=idx)
    source = "# tolerance: score; paper=exact; 3rd (ICA)=check"
    ours_moved, paper_moved = stored.copy(), stored.copy()
    ours_moved.iloc[1, 0] += 30.0     # a pipeline check: any finite number
    paper_moved.iloc[0, 0] += 0.01    # the paper's number: exact, though the outer label says check
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(ours_moved)], source) == []
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(paper_moved)], source) != []


def test_a_pipeline_check_is_compared_as_finite_only():
    stored = pd.DataFrame({"avg": [71.2, float("nan")]}, index=["ica", "none"])
    source = "# tolerance: check"
    moved, made_nan, made_finite = stored.copy(), stored.copy(), stored.copy()
    moved.iloc[0, 0] = -40.0
    made_nan.iloc[0, 0] = float("nan")
    made_finite.iloc[1, 0] = 3.0
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(moved)], source) == []
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(made_nan)], source) != []
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(made_finite)], source) != []


def test_a_label_pattern_sets_the_kind():
    stored = pd.DataFrame({"avg": [71.2, 72.0, 70.0]}, index=["untrained (cls)", "untrained (mean)", "DefSent (cls)"])
    source = "# tolerance: check; untrained*=inference"
    moved_trained, moved_untrained = stored.copy(), stored.copy()
    moved_trained.iloc[2, 0] += 10.0
    moved_untrained.iloc[1, 0] += 0.1
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(moved_trained)], source) == []
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(moved_untrained)], source) != []


def test_a_label_naming_no_row_or_column_fails_unless_marked_as_some_scales_only():
    """Issue 85: a tolerance label naming no column was ignored, so its cells fell under the
    default kind and a 1.0 drift passed (notebook 24's 'untrained (mean)' after its row became
    'untrained (cls)'). `label?=kind` marks a row only some scales show (the paper's)."""
    stored = pd.DataFrame({"avg": [71.2, 72.0]}, index=["untrained (cls)", "DefSent (cls)"])
    moved = stored.copy()
    moved.iloc[0, 0] += 3.0   # beyond the score kind's tolerance; a pipeline check passes it
    stale = "# tolerance: check; untrained (mean)=score"
    problems = nbcompare.compare_outputs([table_output(stored)], [table_output(moved)], stale)
    assert problems == ["tolerance label 'untrained (mean)' names no row or column of this cell's tables (renamed?)"]
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(stored)],
                                     "# tolerance: check; paper?=exact; untrained*=score") == []
    assert nbcompare.compare_outputs([table_output(stored)], [table_output(moved)],
                                     "# tolerance: check; paper?=exact; untrained*=score") != []


def test_notebook_01_fails_when_every_spearman_is_scaled_by_097():
    """A moved number is still caught: notebook 01's STS table with every one of our Spearman
    correlations scaled by 0.97 (the paper's rows left as they are) fails the comparison."""
    nb = nbformat.read(NOTEBOOKS / "01_baselines.ipynb", 4)
    cell = next(c for c in nb.cells if c.cell_type == "code" and "aggregate.baselines(sts_rows" in c.source)
    stored = coalesce_streams(list(cell.outputs))
    html = next(o for o in stored if "text/html" in o.get("data", {}))["data"]["text/html"]
    rows = html.split("<tr>")
    scaled = "<tr>".join(r if "<th>ours</th>" not in r else
                         nbcompare.NUMBER.sub(lambda m: f"{0.97 * float(m.group()):.2f}", r) for r in rows)
    assert scaled != html
    fresh = [nbformat.from_dict(dict(o)) for o in stored]
    for o in fresh:
        if "text/html" in o.get("data", {}):
            o["data"] = dict(o["data"], **{"text/html": scaled})
    problems = nbcompare.compare_outputs(stored, fresh, nbcompare.directive(cell))
    assert len(problems) >= 14 and all("kind inference" in p for p in problems), problems[:3]


def test_the_reader_s_code_holds_no_test_machinery():
    """Tolerance kinds live in cell metadata, never in the code or the .py a reader reads (issue 71:
    66 tags sat in the .py files' cell headers): every notebook's jupytext filter keeps them out."""
    found = [f"{path.stem}:{n}" for path in sorted(NOTEBOOKS.glob("*.ipynb"))
             for n, cell in enumerate(nbformat.read(path, 4).cells)
             if cell.cell_type == "code" and re.search(r"#\s*tolerance:|NBVAL", cell.source)]
    found += [path.name for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py"))
              if re.search(r"^# %%.*tolerance", path.read_text(), re.M)]
    found += [path.name for path in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
              if "-tolerance" not in nbformat.read(path, 4).metadata.get("jupytext", {})
              .get("cell_metadata_filter", "").split(",")]
    assert found == []
    tagged = [cell for path in sorted(NOTEBOOKS.glob("*.ipynb")) for cell in nbformat.read(path, 4).cells
              if nbcompare.directive(cell)]
    assert len(tagged) >= 40


def test_the_reader_s_code_reads_without_scrolling_sideways():
    """Every line of a notebook's code at most 100 characters, and no cell branches on the
    scale: a plan prints itself (plans.print_plan), a scale's choice is a named function."""
    long_lines, branches = [], []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        for n, cell in enumerate(nbformat.read(path, 4).cells):
            if cell.cell_type != "code":
                continue
            long_lines += [f"{path.stem}:{n}: {len(line)}" for line in cell.source.splitlines()
                           if len(line) > 100]
            if re.search(r"""\bif\b[^\n]*(paper_protocol|scale\[["']name["']\]|SCALE ==)""", cell.source):
                branches.append(f"{path.stem}:{n}")
    assert long_lines == [] and branches == []


def test_the_command_line_refuses_to_compare_nothing(tmp_path, capsys):
    """Issue 85: the command line read two folders with no notebook in common, or a missing fresh
    run, and said "cells beyond tolerance: 0", naming no cell."""
    stored, fresh = tmp_path / "stored", tmp_path / "fresh"
    stored.mkdir(), fresh.mkdir()
    with pytest.raises(SystemExit, match="no cell compared"):
        nbcompare.main([str(stored), str(fresh)])
    nb = nbformat.read(NOTEBOOKS / "01_baselines.ipynb", 4)
    nbformat.write(nb, stored / "01_baselines.ipynb")
    with pytest.raises(SystemExit, match=r"fresh/01_baselines.ipynb: missing"):
        nbcompare.main([str(stored), str(fresh)])
    nbformat.write(nb, fresh / "01_baselines.ipynb")
    assert nbcompare.main([str(stored), str(fresh)]) == 0
    assert re.search(r"cells beyond tolerance: 0 of \d+", capsys.readouterr().out)
    with pytest.raises(SystemExit, match="STORED_DIR FRESH_DIR"):
        nbcompare.main([str(stored)])
