"""Issue 14, point 1: one setting (colab.REPOSITORY) writes every badge and install cell; the
install cell follows every notebook's parameters (so it fetches the data of the notebook's scale:
issue 69), and does nothing off Colab."""
import json
import re
import subprocess
import sys

import pytest

import sync_colab
from defsent_lite.runtime import config
from defsent_lite.repro import colab

NOTEBOOKS = sorted(sync_colab.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))
SOME_COMMIT = "0123456789abcdef0123456789abcdef01234567"


def pinned_commit():
    """The commit notebook 00's install cell installs."""
    code = [c for c in json.loads(NOTEBOOKS[0].read_text())["cells"] if c["cell_type"] == "code"][1]
    return re.search(r"commit = \"([0-9a-f]{40})\"", "".join(code["source"])).group(1)


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
    scale = "SCALE" if "\nSCALE = " in "".join(code[0]["source"]) else '"smoke"'
    assert "".join(code[1]["source"]) == sync_colab.install_cell(pinned_commit(), notebook=nb.name[:2], scale=scale)
    assert code[1]["outputs"] == []


def test_the_install_cell_does_nothing_off_colab(monkeypatch):
    calls = []
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a))
    assert "google.colab" not in sys.modules
    exec(sync_colab.install_cell(SOME_COMMIT), {})
    assert calls == []


def test_changing_the_setting_rewrites_every_link(tmp_path):
    py = next(sync_colab.NOTEBOOKS.glob("30_*.py"))
    text = py.read_text()
    moved = sync_colab.synced_notebook(text, "30_gausscse_nli.ipynb", SOME_COMMIT, "someone/fork")
    assert f"github.com/someone/fork@\" + commit" in moved and SOME_COMMIT in moved and "github/someone/fork/blob/main/notebooks/30_gausscse_nli.ipynb" in moved
    assert colab.REPOSITORY not in moved and sync_colab.synced_notebook(moved, "30_gausscse_nli.ipynb", SOME_COMMIT, "someone/fork") == moved
    assert sync_colab.synced_notebook(moved, "30_gausscse_nli.ipynb", pinned_commit()) == text
    readme = sync_colab.synced_readme(sync_colab.README.read_text(), "someone/fork")
    assert colab.REPOSITORY not in readme and readme.count("github/someone/fork/blob/main/notebooks/") == len(NOTEBOOKS)


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


def test_the_install_cell_installs_a_commit_that_holds_this_checkouts_package():
    """Issue 47: the cells pinned a tag (@v0.5.0) the landed repository did not have. They pin the
    commit that last changed the package: a commit of this history (HEAD or before it) whose
    package and pyproject.toml are this checkout's, so what pip installs is what the tests ran (and
    a later commit never orphans a Drive cache: issue 33). A tag or a branch is refused."""
    def git(*args):
        return subprocess.run(["git", "-C", str(config.REPO), *args], capture_output=True, text=True)
    if git("rev-parse", "--is-shallow-repository").stdout.strip() != "false":
        pytest.skip("not a git checkout with its whole history: the pinned commit cannot be looked up")
    commit = pinned_commit()
    assert git("merge-base", "--is-ancestor", commit, "HEAD").returncode == 0, \
        f"{commit} is not in this history: run python tools/sync_colab.py and commit the notebooks"
    changed = git("diff", "--name-only", commit, "--", *sync_colab.PACKAGE_PATHS).stdout.split()
    assert changed == [], f"the package changed since the pinned {commit[:10]}: {changed[:5]}; commit, then " \
                          "run python tools/sync_colab.py and commit the notebooks"
    for ref in ("v0.5.0", "main", commit[:10]):
        with pytest.raises(ValueError, match="not a full commit hash"):
            sync_colab.install_cell(ref)
