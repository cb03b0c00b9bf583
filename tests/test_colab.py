"""Issue 14, point 1: one setting (colab.REPOSITORY) writes every badge and install cell; the
install cell follows every notebook's parameters (so it fetches the data of the notebook's scale:
issue 69), and does nothing off Colab."""
import json
import os
import re
import subprocess
import sys

import pytest

import sync_colab
from defsent_lite.runtime import config
from defsent_lite.repro import colab

NOTEBOOKS = sorted(sync_colab.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def cells(nb_path):
    return json.loads(nb_path.read_text())["cells"]


def test_badges_and_install_cells_follow_the_one_setting():
    assert sync_colab.out_of_date() == {}, "run python tools/sync_colab.py"
    readme = sync_colab.README.read_text()
    for nb in NOTEBOOKS:
        assert sync_colab.badge(nb.name) in readme
        title = "".join(cells(nb)[0]["source"])
        assert sync_colab.badge(nb.name) in title and f"/blob/{colab.BRANCH}/notebooks/{nb.name}" in title


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_the_install_cell_follows_the_parameters_and_has_no_output(nb):
    code = [c for c in cells(nb) if c["cell_type"] == "code"]
    assert "parameters" in code[0]["metadata"].get("tags", [])
    scale = "SCALE" if "\nSCALE = " in "".join(code[0]["source"]) else "None"
    assert "".join(code[1]["source"]) == sync_colab.install_cell(notebook=nb.name[:2], scale=scale)
    assert code[1]["outputs"] == []


def test_the_install_cell_does_nothing_off_colab(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a))
    assert "google.colab" not in sys.modules
    exec(sync_colab.install_cell(), {})
    assert calls == []


def test_changing_the_setting_rewrites_every_link(tmp_path):
    py = next(sync_colab.NOTEBOOKS.glob("30_*.py"))
    text = py.read_text()
    moved = sync_colab.synced_notebook(text, "30_gausscse_nli.ipynb", "someone/fork")
    assert "git+https://github.com/someone/fork@main\"" in moved
    assert "github/someone/fork/blob/main/notebooks/30_gausscse_nli.ipynb" in moved
    assert colab.REPOSITORY not in moved
    assert sync_colab.synced_notebook(moved, "30_gausscse_nli.ipynb", "someone/fork") == moved
    assert sync_colab.synced_notebook(moved, "30_gausscse_nli.ipynb") == text
    readme = sync_colab.synced_readme(sync_colab.README.read_text(), "someone/fork")
    assert colab.REPOSITORY not in readme
    assert readme.count("github/someone/fork/blob/main/notebooks/") == len(NOTEBOOKS)


def test_setup_points_paths_at_its_home_names_the_device_and_fetches_what_is_missing(monkeypatch, tmp_path,
                                                                                  capsys):
    """The fetch is the downloader's command, in a process of its own (no notebook imports the
    downloader): with the data at hand it fetches nothing and says so."""
    monkeypatch.setenv("DEFSENT_HOME", str(tmp_path / "home"))
    colab.setup("00", "smoke", str(config.data_root()), drive=False)
    out = capsys.readouterr().out
    assert f"DEFSENT_HOME: {tmp_path / 'home'}" in out and "no GPU: cpu, fp32" in out
    assert "notebook 00 at smoke scale: all it reads is here" in out
    assert config.data_root("data") == tmp_path / "home" / "data"


def test_the_install_cell_installs_the_branch_its_badge_opens_whatever_the_commit(monkeypatch):
    """Issue 69: no commit per package change. The badge opens BRANCH's notebook and the cell
    installs BRANCH's package, so both come from the branch's tip; the cells are written without
    git (a package commit leaves them true), and setup names the commit pip installed, to cite."""
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: pytest.fail(f"sync_colab ran {a}"))
    assert sync_colab.out_of_date() == {}
    cell = sync_colab.install_cell(notebook="30")
    assert f"git+https://github.com/{colab.REPOSITORY}@{colab.BRANCH}\"" in cell
    assert f"/blob/{colab.BRANCH}/notebooks/" in sync_colab.badge("30_gausscse_nli.ipynb")

    class Installed:
        def read_text(self, name):
            assert name == "direct_url.json"
            return json.dumps({"url": "https://github.com/x/y", "vcs_info": {"vcs": "git", "commit_id": "abc123"}})
    monkeypatch.setattr(colab.importlib.metadata, "distribution", lambda name: Installed())
    assert colab.installed_commit() == "abc123"
    Installed.read_text = lambda self, name: json.dumps({"url": "file:///x", "dir_info": {"editable": True}})
    assert colab.installed_commit() is None


def test_readmes_cpu_times_sum_to_the_total_it_states():
    """Issue 71: README's CPU-smoke column comes from one dated run and sums to the total its text
    states (a time edited alone, or a total left stale, fails here)."""
    readme = sync_colab.README.read_text()
    rows = re.findall(r"(?m)^\| `(\d\d)_\w+` \|.*\| (\d+) s \|$", readme)
    assert sorted(n for n, _ in rows) == sorted(nb.name[:2] for nb in NOTEBOOKS)
    total = re.search(r"measured (\d{4}-\d\d-\d\d) in one run of.{0,300}?total (\d+) s\.", readme, re.S)
    assert total, "README states no dated run and total for its CPU-smoke column"
    assert sum(int(t) for _, t in rows) == int(total.group(2))


def test_setup_on_a_gpu_stops_the_smoke_scale_unless_asked_for(monkeypatch, tmp_path):
    """Issue 71: a Colab GPU user who left SCALE at "smoke" gets a message saying what to set,
    before anything is fetched; DEFSENT_SCALE=smoke runs it on purpose; a notebook without
    scales (90) is not stopped."""
    import torch
    monkeypatch.setenv("DEFSENT_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("DEFSENT_SCALE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(colab, "device_report", lambda: "GPU: test")
    fetched = []
    monkeypatch.setattr(subprocess, "run", lambda args, **k: fetched.append(args) or subprocess.CompletedProcess(args, 0, "", ""))
    with pytest.raises(ValueError, match="SCALE = 'colab'"):
        colab.setup("30", "smoke", str(config.data_root()))
    assert fetched == []
    colab.setup("90", None, str(config.data_root()))
    monkeypatch.setenv("DEFSENT_SCALE", "smoke")
    colab.setup("30", "smoke", str(config.data_root()))
    assert [a[a.index("--for"):a.index("--for") + 4] for a in fetched] == [["--for", "90", "--scale", "smoke"],
                                                                          ["--for", "30", "--scale", "smoke"]]


@pytest.mark.parametrize("scale, drive, mounted", [("colab", None, True), ("paper", None, True),
                                                   ("smoke", None, False), (None, None, False),
                                                   ("paper", False, False), ("smoke", True, True)])
def test_drive_holds_the_home_by_default_at_every_scale_but_smoke(monkeypatch, tmp_path, scale, drive, mounted):
    """Issue 71: every notebook's parameters cell has DRIVE = None, which its install cell passes
    to setup: Google Drive is mounted and holds data, cache and results at the colab and paper
    scales (a run cut off with the session resumes there), not at smoke; DRIVE = True / False
    decides."""
    import types
    mounts = []
    fake = types.ModuleType("google.colab")
    fake.drive = types.SimpleNamespace(mount=mounts.append)
    monkeypatch.setitem(sys.modules, "google", types.ModuleType("google"))
    monkeypatch.setitem(sys.modules, "google.colab", fake)
    monkeypatch.setattr(colab, "DRIVE_HOME", str(tmp_path / "drive"))
    monkeypatch.setattr(colab, "LOCAL_HOME", str(tmp_path / "local"))
    monkeypatch.setenv("DEFSENT_HOME", "set by the test")
    monkeypatch.delenv("DEFSENT_HOME")
    monkeypatch.setattr(subprocess, "run", lambda args, **k: subprocess.CompletedProcess(args, 0, "", ""))
    colab.setup("30", scale, str(config.data_root()), drive=drive)
    assert mounts == (["/content/drive"] if mounted else [])
    assert os.environ["DEFSENT_HOME"] == str(tmp_path / ("drive" if mounted else "local"))


def test_every_notebook_has_the_drive_parameter_its_install_cell_reads():
    for nb in NOTEBOOKS:
        code = [c for c in cells(nb) if c["cell_type"] == "code"]
        assert "\nDRIVE = None  # " in "".join(code[0]["source"]), nb.name
        assert "drive=DRIVE)" in "".join(code[1]["source"]), nb.name
