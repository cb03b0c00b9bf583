"""Keep every notebook's Colab badge and install cell, and README's badges, in step with
defsent_lite.repro.colab (REPOSITORY, BRANCH) and with git: each install cell pins the commit that
last changed the package (PACKAGE_PATHS). Repository tooling, never imported by the package.

    python tools/sync_colab.py            # rewrite badges and install cells
    python tools/sync_colab.py --check    # exit 1 if any is out of date (a unit test does this)

After a commit that changes the package: run it, then commit the notebooks it rewrote.
"""
import argparse
import re
import subprocess
import sys

from defsent_lite.runtime import config
from defsent_lite.repro import colab

NOTEBOOKS = config.REPO / "notebooks"
README = config.REPO / "README.md"
BADGE_RE = re.compile(r"\[!\[Open In Colab\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]\([^)]*\)")
CELL_RE = re.compile(r"# %%\n# Colab[^\n]*install.*?colab\.setup\([^\n]*\)\n(    (colab|download)\.fetch\([^\n]*\)\n|    root = .*?done\.check_returncode\(\)\n)?\n?", re.S)
PACKAGE_PATHS = ("defsent_lite", "pyproject.toml")   # what pip installs from the pinned commit

# An install cell pins the commit that last changed the package (its code and pyproject.toml): the
# code the notebook was committed with, so a later commit never orphans a Drive cache; this tool
# finds that commit in git, since a commit cannot name itself.
INSTALL_CELL = """# Colab only: install the package and fetch what this notebook reads at its scale (drive=True:
# data, cache and results on Google Drive).
import subprocess, sys
if "google.colab" in sys.modules:
    commit = "{commit}"   # last to change the package
    package = "defsent_lite[offline] @ git+https://github.com/{repository}@" + commit
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True)
    from defsent_lite.repro import colab
    colab.setup("{notebook}", {scale}, DATA_ROOT, drive=False)"""
BADGE = "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


def notebook_url(name, repository=colab.REPOSITORY, branch=colab.BRANCH):
    return f"https://colab.research.google.com/github/{repository}/blob/{branch}/notebooks/{name}"


def badge(name, repository=colab.REPOSITORY):
    return BADGE.format(url=notebook_url(name, repository))


def install_cell(commit, repository=colab.REPOSITORY, notebook="00", scale="SCALE"):
    """The code cell after every notebook's parameters: on Colab it installs the package at `commit`
    (a full hash) and fetches what `notebook` reads at `scale` (an expression of the parameters)."""
    if not (
        isinstance(commit, str)
        and len(commit) == 40
        and all(c in "0123456789abcdef" for c in commit)
    ):
        raise ValueError(f"install_cell: {commit!r} is not a full commit hash (40 hex digits)")
    return INSTALL_CELL.format(repository=repository, commit=commit, notebook=notebook, scale=scale)


def git(*args):
    done = subprocess.run(["git", "-C", str(config.REPO), *args], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"git {' '.join(args)}: {done.stderr.strip() or done.returncode} "
                         "(the install cells pin a commit: run this in a git checkout with its history)")
    return done.stdout.strip()


def package_commit():
    """The commit that last changed the package; refused while the package has changes not
    committed (a notebook would pin code that is not what this checkout runs)."""
    if git("status", "--porcelain", "--", *PACKAGE_PATHS):
        raise SystemExit("the package has changes not committed: commit them, then run python tools/sync_colab.py")
    return git("log", "-1", "--format=%H", "--", *PACKAGE_PATHS)


def synced_notebook(text, name, commit, repository=colab.REPOSITORY):
    """A jupytext .py with its badge (the line after the title) and install cell (the cell after
    the parameters, installing `commit`) written from `repository`."""
    text = re.sub(r"\n#\n# " + BADGE_RE.pattern, "", text)
    title_end = text.index("\n", text.index("# # "))
    text = text[:title_end] + "\n#\n# " + badge(name, repository) + text[title_end:]
    text = CELL_RE.sub("", text, count=1)
    parameters = text.index("# %% tags=[\"parameters\"]")
    after = text.index("\n# %%", parameters) + 1
    scale = "SCALE" if "\nSCALE = " in text[parameters:after] else '"smoke"'
    cell = "# %%\n" + install_cell(commit, repository, name[:2], scale) + "\n"
    return text[:after] + cell + "\n" + text[after:]


def synced_readme(text, repository=colab.REPOSITORY):
    """README with every notebook badge pointing at `repository`."""
    return re.sub(r"\(https://colab\.research\.google\.com/github/[^/]+/[^/]+/blob/[^/]+/notebooks/",
                  f"(https://colab.research.google.com/github/{repository}/blob/{colab.BRANCH}/notebooks/", text)


def out_of_date(repository=colab.REPOSITORY, commit=None):
    """{path: synced text} for every notebook .py and README.md that differs from its synced form
    (install cells pinning `commit`, default package_commit())."""
    commit = commit or package_commit()
    out = {}
    for py in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py")):
        text = py.read_text()
        new = synced_notebook(text, py.with_suffix(".ipynb").name, commit, repository)
        if new != text:
            out[py] = new
    text = README.read_text()
    if synced_readme(text, repository) != text:
        out[README] = synced_readme(text, repository)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python tools/sync_colab.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--check", action="store_true", help="only report what is out of date")
    args = p.parse_args(argv)
    stale = out_of_date()
    for path, text in stale.items():
        print(("out of date: " if args.check else "rewrote: ") + str(path.relative_to(config.REPO)))
        if not args.check:
            path.write_text(text)
    if stale and not args.check:
        print("now sync the notebooks: jupytext --update --to ipynb notebooks/[0-9]*.py")
    return 1 if stale and args.check else 0


if __name__ == "__main__":
    sys.exit(main())
