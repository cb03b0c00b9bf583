"""Run the notebooks top to bottom: sync each jupytext `.py` to its `.ipynb`, execute in place.

    python -m defsent_lite.run_notebooks            # all notebooks/NN_*.py, in order
    python -m defsent_lite.run_notebooks 01 90      # those whose name starts with 01 or 90

Progress bars are turned off (DEFSENT_PROGRESS=0) so that the stored outputs are the ones
`pytest --nbval` reproduces; a fresh cache is used unless DEFSENT_CACHE is set, so stored
outputs never come from stale cached runs.
"""
import os
import sys
import tempfile
import time
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def run(py_path, timeout=3600):
    """Sync one paired notebook from its .py and execute it in its folder."""
    import jupytext
    import nbformat
    from nbclient import NotebookClient

    nb_path = py_path.with_suffix(".ipynb")
    nb = jupytext.read(py_path)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                            resources={"metadata": {"path": str(py_path.parent)}})
    client.execute()
    nbformat.write(nb, nb_path)
    return nb_path


def main(prefixes):
    os.environ["DEFSENT_PROGRESS"] = "0"
    if "DEFSENT_CACHE" not in os.environ:
        os.environ["DEFSENT_CACHE"] = tempfile.mkdtemp(prefix="defsent_cache_")
    paths = sorted(p for p in NOTEBOOKS.glob("[0-9][0-9]_*.py") if not prefixes or p.name.startswith(tuple(prefixes)))
    for p in paths:
        t0 = time.perf_counter()
        print(f"running {p.name} ...", flush=True)
        run(p)
        print(f"  wrote {p.with_suffix('.ipynb').name} in {time.perf_counter() - t0:.0f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
