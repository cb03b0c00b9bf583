"""Issue 14, point 1: one setting (colab.REPOSITORY) writes every badge and install cell; the
install cell is the first code cell of every notebook, identical, and does nothing off Colab."""
import json
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
        assert colab.badge(nb.name) in readme
        title = "".join(cells(nb)[0]["source"])
        assert colab.badge(nb.name) in title and f"/blob/{colab.BRANCH}/notebooks/{nb.name}" in title


@pytest.mark.parametrize("nb", NOTEBOOKS, ids=lambda p: p.name[:2])
def test_the_first_code_cell_is_the_install_cell_and_has_no_output(nb):
    code = [c for c in cells(nb) if c["cell_type"] == "code"]
    assert "".join(code[0]["source"]) == colab.install_cell()
    assert code[0]["outputs"] == [] and "parameters" in code[1]["metadata"].get("tags", [])


def test_the_install_cell_does_nothing_off_colab(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a))
    assert "google.colab" not in sys.modules
    exec(colab.install_cell(), {})
    assert calls == []


def test_changing_the_setting_rewrites_every_link(tmp_path):
    py = next(sync_colab.NOTEBOOKS.glob("30_*.py"))
    text = py.read_text()
    moved = sync_colab.synced_notebook(text, "30_gausscse_nli.ipynb", "someone/fork")
    assert f"github.com/someone/fork@{colab.RELEASE}" in moved and "github/someone/fork/blob/main/notebooks/30_gausscse_nli.ipynb" in moved
    assert colab.REPOSITORY not in moved and sync_colab.synced_notebook(moved, "30_gausscse_nli.ipynb", "someone/fork") == moved
    assert sync_colab.synced_notebook(moved, "30_gausscse_nli.ipynb") == text
    readme = sync_colab.synced_readme(sync_colab.README.read_text(), "someone/fork")
    assert colab.REPOSITORY not in readme and readme.count("github/someone/fork/blob/main/notebooks/") == len(NOTEBOOKS)


def test_setup_points_paths_at_its_home_and_names_the_device(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("DEFSENT_HOME", str(tmp_path / "home"))
    colab.setup(drive=False)
    out = capsys.readouterr().out
    assert f"DEFSENT_HOME: {tmp_path / 'home'}" in out and "no GPU: cpu, fp32" in out
    assert config.data_root("data") == tmp_path / "home" / "data"


def test_the_install_cell_installs_the_release_the_notebook_was_committed_with():
    """Issue 33: b806a5a installed @main, and cache keys hold the package source, so any later
    commit orphaned a Drive cache of GPU-hours. The cell carries the package's version tag."""
    import tomllib
    from defsent_lite import __version__
    version = tomllib.loads((colab.config.REPO / "pyproject.toml").read_text())["project"]["version"]
    assert version == __version__ and colab.RELEASE == f"v{version}"
    assert f"@v{version}\"" in colab.install_cell() and "@main" not in colab.install_cell()
