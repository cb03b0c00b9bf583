"""How README's test command (`pytest -n 2`) splits the run between its two workers.

A notebook family shares its cached runs (11, 12 and 13 read 10's trainings; 22-25 21's; 31-33
30's), so a family runs in one worker, its notebooks and cells in order; a test module runs in one
worker, its module fixtures built once. The units go out longest first (their durations are in
docs/testing.md), each to whichever worker is nearly done (xdist's scope scheduling). The threads
and the shared run cache of the workers are set in conftest.py.
"""
from pathlib import Path

import pytest

LONGEST_FIRST = ["notebooks 2x", "tests/test_rehearsal.py", "notebooks 1x", "notebooks 3x",
                 "notebooks 9x", "notebooks 4x", "tests/test_slurm.py", "notebooks 0x"]


def work_unit(nodeid):
    """The unit a test runs in: its notebook's family (the first digit of NN_*.ipynb) or its file."""
    path = nodeid.split("::")[0]
    if path.endswith(".ipynb"):
        return f"notebooks {Path(path).name[0]}x"
    return path


@pytest.hookimpl(optionalhook=True)   # a hook of xdist's: none without it
def pytest_xdist_make_scheduler(config, log):
    """xdist's scope scheduling with the units above, in the order the workers collected them."""
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return work_unit(nodeid)

    config.option.loadscopereorder = False
    return ByWorkUnit(config, log)


def pytest_collection_modifyitems(config, items):
    """In an xdist worker (which collects what the scheduler hands out): the longest units first,
    the order within a unit kept."""
    if hasattr(config, "workerinput"):
        rank = {unit: i for i, unit in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(work_unit(item.nodeid), len(rank)))
