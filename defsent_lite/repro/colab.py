"""A notebook on Colab: the runtime setup its install cell calls (Drive, paths, what the GPU will
compute in), and where the repository is published (REPOSITORY, BRANCH): the badges and install
cells are written from them by `python tools/sync_colab.py` (repository tooling, with the cell's
text; `--check`: exit 1 if any is out of date, a unit test does this).
"""

import importlib.metadata
import json
import os
import subprocess
import sys
from pathlib import Path

import torch

from defsent_lite import __version__, forward
from defsent_lite.runtime import config

# owner/name on GitHub: change it where you publish, then run tools/sync_colab.py
REPOSITORY = "defsent-lite/defsent_lite"
BRANCH = "main"  # the badges open the notebooks of this branch
DRIVE_HOME = "/content/drive/MyDrive/defsent_lite"
LOCAL_HOME = "/content/defsent_lite"


def device_report(device=None):
    """One line: the GPU, its memory and the precision training will use (or that there is none)."""
    device = config.device(device)
    if device.type != "cuda":
        return (
            "no GPU: cpu, fp32. Smoke scale runs here; paper scale needs a GPU (Colab: Runtime > "
            "Change runtime type > GPU)"
        )
    props = torch.cuda.get_device_properties(device)
    return (
        f"GPU: {props.name}, {props.total_memory / 2**30:.1f} GiB, compute capability "
        f"{props.major}.{props.minor} -> {forward.precision_name(device)}"
    )


def installed_commit():
    """The commit pip installed the package from (its direct_url.json), or None (an editable
    install of a checkout): the commit to cite and to open the notebooks of."""
    text = importlib.metadata.distribution("defsent_lite").read_text("direct_url.json")
    return json.loads(text or "{}").get("vcs_info", {}).get("commit_id")


def setup(notebook, scale, data_dir=None, drive=None):
    """On Colab: mount Drive (drive=None: at every scale but smoke, where a cut-off session's runs
    are worth keeping), point DEFSENT_HOME there (else /content/defsent_lite) so that data, cache
    and results survive where the user wants, print the device, then fetch what
    `notebook` reads at `scale` (None: a notebook without scales, 90) and lacks: the downloader's
    own command (`python -m defsent_lite.data.download fetch --for NN`), in a process of its own.
    On a GPU the smoke scale (a CPU's stand-ins) stops here unless DEFSENT_SCALE asks for it."""
    if scale == "smoke" and torch.cuda.is_available() and "DEFSENT_SCALE" not in os.environ:
        raise ValueError(
            "SCALE is 'smoke' (the offline stand-in model on data subsets, for a CPU) on a GPU: set "
            "SCALE = 'colab' (one Colab session, the papers' models) or 'paper' in the first cell, "
            "or os.environ['DEFSENT_SCALE'] = 'smoke' to run the smoke scale here on purpose"
        )
    drive = scale not in (None, "smoke") if drive is None else drive
    if drive:
        from google.colab import drive as google_drive

        google_drive.mount("/content/drive")
    os.environ.setdefault("DEFSENT_HOME", DRIVE_HOME if drive else LOCAL_HOME)
    Path(os.environ["DEFSENT_HOME"]).mkdir(parents=True, exist_ok=True)
    print("DEFSENT_HOME:", os.environ["DEFSENT_HOME"], "| data, cache and results go there")
    print(f"defsent_lite {__version__}, commit {installed_commit() or 'of this checkout'}")
    print(device_report())
    done = subprocess.run(
        [sys.executable, "-m", "defsent_lite.data.download", "fetch", "--for", notebook]
        + ["--scale", scale or "smoke", *(["--root", data_dir] if data_dir else [])],
        capture_output=True,
        text=True,
    )
    print(done.stdout + done.stderr)
    done.check_returncode()
