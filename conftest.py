"""pytest setup shared by unit tests and nbval notebook runs (kernels inherit this environment).

- DEFSENT_DATA / NLTK_DATA point at ../shared/data when that folder exists and they are unset.
- Every test session starts from an empty run cache (the stored notebook outputs come from a
  cold-cache run) and writes result CSVs to a temporary folder (the committed results/ stay).
- Notebook outputs are compared by `tests/nbcompare.py`: numbers within the tolerance of
  their kind of metric, everything else exactly (nbval's own comparison is byte-exact).
- The tests run on the CPU, also on a GPU machine (DEFSENT_DEVICE=cpu unless set): the stored
  outputs are CPU numbers, and numbers trained on a GPU move past their tolerances (one H200:
  notebook 10's top-10 0.014 apart, tolerance 0.012; its final loss 0.134, tolerance 0.05).
"""
import os
import shutil
import sys
import tempfile
from pathlib import Path

_shared = Path(__file__).resolve().parent.parent / "shared" / "data"
if "DEFSENT_DATA" not in os.environ and _shared.exists():
    os.environ["DEFSENT_DATA"] = str(_shared)
if "NLTK_DATA" not in os.environ and _shared.exists():
    os.environ["NLTK_DATA"] = str(_shared / "dictionary" / "wordnet" / "nltk_data")
# Progress bars go to stderr, which nbval compares: off under pytest, on for a reader.
os.environ.setdefault("DEFSENT_PROGRESS", "0")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DEFSENT_DEVICE", "cpu")   # the stored outputs' device (see above)

# README's test command runs two workers (pytest-xdist, `-n 2`): each gets its share of the cores
# as threads (one each on 2 cores: never more threads than cores), and the kernels it starts
# inherit that. The run cache and results folder are made once, by the process that starts the
# workers, and shared: a notebook finds the runs another notebook of its group cached.
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
if _workers:
    _threads = str(max(1, (os.cpu_count() or 1) // _workers))
    for _var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, _threads)
_owner = not (_workers and os.environ.get("DEFSENT_TEST_SCRATCH"))
if _owner:
    os.environ["DEFSENT_TEST_SCRATCH"] = tempfile.mkdtemp(prefix="defsent_test_")
_scratch = os.environ["DEFSENT_TEST_SCRATCH"]
os.environ["DEFSENT_CACHE"] = os.path.join(_scratch, "cache")
os.environ["DEFSENT_RESULTS"] = os.path.join(_scratch, "results")

# Test and repository tooling lives beside the package, never in it: tests/nbcompare.py (the
# notebook comparison plugin), tests/workers.py (the work units of `-n 2`) and
# tools/run_notebooks.py are imported from their folders.
_repo = Path(__file__).resolve().parent
sys.path[:0] = [str(_repo / "tests"), str(_repo / "tools")]
pytest_plugins = ["nbcompare", "workers"]


def pytest_unconfigure(config):
    if _owner:
        shutil.rmtree(_scratch, ignore_errors=True)
