"""Open a notebook in Colab and run it: the install cell every notebook starts with, the badges,
and the runtime setup (Drive, paths, what the GPU will compute in).

REPOSITORY names where the repository is published; the badges in README.md and in each
notebook's title cell, and each notebook's install cell, are written from it by
`python tools/sync_colab.py` (`--check`: exit 1 if any is out of date; a unit test does this).
An install cell pins the commit that last changed the package (its code and pyproject.toml): the
code the notebook was committed with, so a later commit never orphans a Drive cache; the tools
find that commit in git, since a commit cannot name itself.
"""

import os
from pathlib import Path

import torch

from defsent_lite import encode
from defsent_lite.runtime import config

REPOSITORY = "defsent-lite/defsent_lite"  # owner/name on GitHub: change it where you publish, then run tools/sync_colab.py
BRANCH = "main"  # the badges open the notebooks of this branch
DRIVE_HOME = "/content/drive/MyDrive/defsent_lite"
LOCAL_HOME = "/content/defsent_lite"

INSTALL_CELL = """# Colab only: install the package; drive=True keeps data, cache and results on Google Drive.
import subprocess, sys
if "google.colab" in sys.modules:
    commit = "{commit}"   # last to change the package
    package = "defsent_lite[offline] @ git+https://github.com/{repository}@" + commit
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True)
    from defsent_lite.repro import colab
    colab.setup(drive=False)"""
BADGE = "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


def notebook_url(name, repository=REPOSITORY, branch=BRANCH):
    return f"https://colab.research.google.com/github/{repository}/blob/{branch}/notebooks/{name}"


def badge(name, repository=REPOSITORY):
    return BADGE.format(url=notebook_url(name, repository))


def install_cell(commit, repository=REPOSITORY):
    """The first code cell of every notebook: installs the package at `commit` (a full hash)."""
    if not (
        isinstance(commit, str)
        and len(commit) == 40
        and all(c in "0123456789abcdef" for c in commit)
    ):
        raise ValueError(f"install_cell: {commit!r} is not a full commit hash (40 hex digits)")
    return INSTALL_CELL.format(repository=repository, commit=commit)


def device_report(device=None):
    """One line: the GPU, its memory and the precision training will use (or that there is none)."""
    device = config.device(device)
    if device.type != "cuda":
        return (
            "no GPU: cpu, fp32. Smoke scale runs here; paper scale needs a GPU "
            "(Colab: Runtime > Change runtime type > GPU)"
        )
    props = torch.cuda.get_device_properties(device)
    return (
        f"GPU: {props.name}, {props.total_memory / 2**30:.1f} GiB, compute capability {props.major}.{props.minor}"
        f" -> {encode.precision_name(device)}"
    )


def setup(drive=False):
    """On Colab: mount Drive on request, point DEFSENT_HOME there (else /content/defsent_lite) so
    that data, cache and results survive where the user wants, and print the device."""
    if drive:
        from google.colab import drive as google_drive

        google_drive.mount("/content/drive")
    os.environ.setdefault("DEFSENT_HOME", DRIVE_HOME if drive else LOCAL_HOME)
    Path(os.environ["DEFSENT_HOME"]).mkdir(parents=True, exist_ok=True)
    print("DEFSENT_HOME:", os.environ["DEFSENT_HOME"], "| data, cache and results go there")
    print(device_report())
