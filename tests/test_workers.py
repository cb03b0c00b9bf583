"""README's test command runs two workers (tests/workers.py): every notebook family and the
rehearsal are units it schedules first, and a family's notebooks share one unit (one worker, one
run cache read in order)."""
from pathlib import Path

import workers

REPO = Path(__file__).resolve().parents[1]


def test_every_notebook_and_the_rehearsal_are_a_unit_scheduled_first():
    units = {workers.work_unit(f"notebooks/{p.name}::Cell 0") for p in (REPO / "notebooks").glob("[0-9]*.ipynb")}
    assert units <= set(workers.LONGEST_FIRST), sorted(units - set(workers.LONGEST_FIRST))
    files = [u for u in workers.LONGEST_FIRST if not u.startswith("notebooks ")]
    assert all((REPO / f).is_file() for f in files), files


def test_a_family_shares_a_unit_and_a_test_module_is_one():
    unit = workers.work_unit
    assert unit("notebooks/10_defsent_word_prediction.ipynb::Cell 9") == unit("notebooks/13_defsent_predictions.ipynb::Cell 0")
    assert unit("notebooks/21_defsentplus_pst_spaces.ipynb::Cell 0") != unit("notebooks/30_gausscse_nli.ipynb::Cell 0")
    assert unit("tests/test_rehearsal.py::test_notebook_runs_at_rehearsal_scale[10]") == "tests/test_rehearsal.py"
