"""Run the notebooks top to bottom, each after fetching what it reads and lacks (needs internet
only then): executed copies in runs/notebooks/ (their tables and figures in runs/notebooks/results/
unless DEFSENT_RESULTS says), or with --stored the stored outputs and results/.

    python tools/run_notebooks.py            # all notebooks/NN_*.py, in order, into runs/notebooks/
    python tools/run_notebooks.py 01 90      # those whose name starts with 01 or 90
    python tools/run_notebooks.py --stored   # rewrite the stored outputs (the .ipynb beside each .py)
    DEFSENT_SCALE=rehearsal python tools/run_notebooks.py --out DIR 10   # executed copies in DIR

The stored outputs are the smoke scale's, which nbval compares: at another scale --stored is
refused.

Progress bars are turned off (DEFSENT_PROGRESS=0) and the stored outputs are computed on the
CPU (DEFSENT_DEVICE=cpu, as under pytest) so that they are the ones `pytest --nbval` reproduces.
The run cache starts empty (a fresh temporary folder, deleted at the
end, whatever DEFSENT_CACHE says): stored outputs are those of a cold-cache run, never of stale
cached runs. Notebooks run in order and share that cache (11 reuses the encoders 10 trained).
At paper scale no cell has a time limit (a training cell runs for hours); otherwise one hour.
"""

import os
import shutil
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def run(py_path, timeout=None, out=None, parameters="", kernel=None):
    """Sync one paired notebook from its .py and execute it in its folder; returns the .ipynb
    path and [(seconds, first source line)] per code cell (the timings are not stored).
    out: where the executed notebook is written (default: beside the .py, the stored outputs);
    parameters: lines appended to the cell tagged "parameters" (e.g. 'MODEL = "roberta-base"');
    kernel: a SharedKernel to run in (default: a fresh kernel, as a reader's)."""
    import jupytext
    import nbformat
    from jupytext.combine import combine_inputs_with_outputs
    from nbclient import NotebookClient

    nb_path, stored = (
        Path(out) if out else py_path.with_suffix(".ipynb"),
        py_path.with_suffix(".ipynb"),
    )
    # the cell metadata the .py leaves out (a cell's `tolerance`) kept from the stored notebook
    nb = (
        combine_inputs_with_outputs(jupytext.read(py_path), jupytext.read(stored))
        if stored.exists()
        else jupytext.read(py_path)
    )
    if parameters:
        cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        cell.source += "\n" + parameters
    if timeout is None:
        timeout = -1 if os.environ.get("DEFSENT_SCALE") == "paper" else 3600  # -1: no limit
    if kernel is not None:
        nb.cells.insert(0, nbformat.v4.new_code_cell(kernel.reset_source(py_path.parent)))
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        record_timing=True,
        km=kernel.km if kernel else None,
        resources={"metadata": {"path": str(py_path.parent)}},
    )
    try:
        client.execute()
    finally:
        if kernel is not None and client.kc is not None:
            client.kc.stop_channels()  # the kernel stays; this notebook's connection goes
    if kernel is not None:
        nb.cells.pop(0)
    times = [
        (
            cell_seconds(c.metadata.pop("execution", {})),
            [x for x in c.source.splitlines() if not x.startswith("#")][:1],
        )
        for c in nb.cells
        if c.cell_type == "code"
    ]
    nbformat.write(nb, nb_path)
    return nb_path, times


class SharedKernel:
    """One kernel that runs many notebooks in turn, each from an empty namespace, in its folder
    and with the environment the calling process has then: the imports (8-10 s a kernel on two
    cores) are paid once. For the rehearsal's two dozen runs; a reader's notebook, and the smoke
    run that nbval compares, each get a fresh kernel."""

    def __init__(self):
        from jupyter_client.manager import AsyncKernelManager
        from nbclient.util import run_sync

        self.km = AsyncKernelManager(kernel_name="python3")
        run_sync(self.km.start_kernel)(cwd=str(NOTEBOOKS))

    @staticmethod
    def reset_source(folder):
        """The hidden first cell: the last notebook's names, figures and once-only warning
        records gone; the environment and folder a fresh kernel would start with."""
        env = dict(os.environ)
        return (
            "%reset -f\n"
            "import os as _os, sys as _sys\n"
            "import matplotlib.pyplot as _plt\n"
            f"_os.environ.clear(); _os.environ.update({env!r}); _os.chdir({str(folder)!r})\n"
            "_plt.close('all')\n"
            "for _m in list(_sys.modules.values()):\n"
            "    try:\n"
            "        _m.__warningregistry__.clear()\n"
            "    except Exception:\n"
            "        pass\n"
            "del _os, _sys, _plt, _m"
        )

    def close(self):
        from nbclient.util import run_sync

        run_sync(self.km.shutdown_kernel)(now=True)


def cell_seconds(execution):
    """Seconds between a cell's start and its reply (nbclient's recorded timing)."""
    start, end = execution.get("iopub.execute_input"), execution.get("shell.execute_reply")
    if not start or not end:
        return 0.0
    parse = lambda t: datetime.fromisoformat(t.replace("Z", "+00:00"))  # noqa: E731
    return (parse(end) - parse(start)).total_seconds()


def main(args):
    stored, args = "--stored" in args, [a for a in args if a != "--stored"]
    out = NOTEBOOKS.parent / "runs" / "notebooks"
    if "--out" in args:
        i = args.index("--out")
        if i + 1 >= len(args):
            raise SystemExit("--out needs a folder")
        out, args = Path(args[i + 1]), args[:i] + args[i + 2 :]
    scale = os.environ.get("DEFSENT_SCALE", "smoke")
    if stored and scale != "smoke":
        raise SystemExit(
            f"DEFSENT_SCALE={scale}: the stored notebook outputs are the smoke scale's (nbval compares "
            "them); leave out --stored to write executed copies (--out DIR)"
        )
    if not stored:  # the committed results/ stay as they are too
        out.mkdir(parents=True, exist_ok=True)
        os.environ.setdefault("DEFSENT_RESULTS", str(out / "results"))
    return run_all(args, None if stored else out, fetch=True)


def run_all(prefixes, out=None, fetch=False):
    """Run the notebooks whose names start with `prefixes` (all when empty), in order, sharing one
    fresh cache; out None: the stored outputs; fetch: download what each lacks first."""
    os.environ["DEFSENT_PROGRESS"] = "0"
    if out is None:  # the stored outputs are CPU numbers, which the tests compare on the CPU
        os.environ["DEFSENT_DEVICE"] = "cpu"
    cache = tempfile.mkdtemp(prefix="defsent_cache_")
    os.environ["DEFSENT_CACHE"] = cache
    paths = sorted(
        p
        for p in NOTEBOOKS.glob("[0-9][0-9]_*.py")
        if not prefixes or p.name.startswith(tuple(prefixes))
    )
    try:
        for p in paths:
            if fetch:  # what the notebook reads and lacks (the install cell's fetch on Colab)
                from defsent_lite.data import download

                if download.main(
                    [
                        "fetch",
                        "--for",
                        p.name[:2],
                        "--scale",
                        os.environ.get("DEFSENT_SCALE", "smoke"),
                        *(
                            ["--root", os.environ["DEFSENT_DATA"]]
                            if os.environ.get("DEFSENT_DATA")
                            else []
                        ),
                    ]
                ):
                    raise SystemExit(
                        f"{p.name}: the data it reads could not be fetched (above); nothing ran"
                    )
            t0 = time.perf_counter()
            print(f"running {p.name} ...", flush=True)
            written, times = run(p, out=out / p.with_suffix(".ipynb").name if out else None)
            print(
                f"  wrote {written} in {time.perf_counter() - t0:.0f} s; slowest cells:",
                "; ".join(
                    f"{t:.0f} s {(src or [''])[0][:50]!r}"
                    for t, src in sorted(times, reverse=True)[:3]
                ),
                flush=True,
            )
    finally:
        shutil.rmtree(cache, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
