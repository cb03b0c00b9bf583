"""Keep every notebook's Colab badge and install cell, and README's badges, in step with
defsent_lite.repro.colab (REPOSITORY, BRANCH). Repository tooling, never imported by the package.

    python tools/sync_colab.py            # rewrite badges and install cells
    python tools/sync_colab.py --check    # exit 1 if any is out of date (a unit test does this)

Run it after changing REPOSITORY or BRANCH, or a notebook's parameters cell. A package change needs
nothing: the install cell installs the branch its badge opens, so notebook and package come from one
commit.
"""

import argparse
import re
import sys

from defsent_lite.runtime import config
from defsent_lite.repro import colab

NOTEBOOKS = config.REPO / "notebooks"
README = config.REPO / "README.md"
BADGE_RE = re.compile(
    r"\[!\[Open In Colab\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]\([^)]*\)"
)
CELL_RE = re.compile(r"# %%\n# Colab[^\n]*install.*?colab\.setup\([^\n]*\)\n\n?", re.S)

# The badge opens BRANCH's notebook and the cell installs BRANCH's package: the two come from the
# same commit (the branch's tip), with no commit per package change to keep them in step (issue 69).
INSTALL_CELL = """# Colab only: install the package from the branch the badge opened this notebook from, and fetch
# what this notebook reads at its scale into DRIVE's choice of home (a parameter above).
import subprocess, sys
if "google.colab" in sys.modules:
    package = "defsent_lite[offline] @ git+https://github.com/{repository}@{branch}"
    subprocess.run([sys.executable, "-m", "pip", "install", "-q", package], check=True)
    from defsent_lite.repro import colab
    colab.setup("{notebook}", {scale}, DATA_ROOT, drive=DRIVE)"""
BADGE = "[![Open In Colab](https://colab.research.google.com/assets/colab-badge.svg)]({url})"


def notebook_url(name, repository=colab.REPOSITORY, branch=colab.BRANCH):
    return f"https://colab.research.google.com/github/{repository}/blob/{branch}/notebooks/{name}"


def badge(name, repository=colab.REPOSITORY):
    return BADGE.format(url=notebook_url(name, repository))


def install_cell(repository=colab.REPOSITORY, notebook="00", scale="SCALE", branch=colab.BRANCH):
    """The code cell after every notebook's parameters: on Colab it installs the package from
    `branch` and fetches what `notebook` reads at `scale` (an expression of the parameters)."""
    return INSTALL_CELL.format(repository=repository, branch=branch, notebook=notebook, scale=scale)


def synced_notebook(text, name, repository=colab.REPOSITORY):
    """A jupytext .py with its badge (the line after the title) and install cell (the cell after
    the parameters) written from `repository`."""
    text = re.sub(r"\n#\n# " + BADGE_RE.pattern, "", text)
    title_end = text.index("\n", text.index("# # "))
    text = text[:title_end] + "\n#\n# " + badge(name, repository) + text[title_end:]
    text = CELL_RE.sub("", text, count=1)
    parameters = text.index('# %% tags=["parameters"]')
    after = text.index("\n# %%", parameters) + 1
    scale = "SCALE" if "\nSCALE = " in text[parameters:after] else "None"
    cell = "# %%\n" + install_cell(repository, name[:2], scale) + "\n"
    return text[:after] + cell + "\n" + text[after:]


def synced_readme(text, repository=colab.REPOSITORY):
    """README with every notebook badge pointing at `repository`."""
    return re.sub(
        r"\(https://colab\.research\.google\.com/github/[^/]+/[^/]+/blob/[^/]+/notebooks/",
        f"(https://colab.research.google.com/github/{repository}/blob/{colab.BRANCH}/notebooks/",
        text,
    )


def out_of_date(repository=colab.REPOSITORY):
    """{path: synced text} for every notebook .py and README.md that differs from its synced form."""
    texts = {
        path: path.read_text() for path in [*sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py")), README]
    }
    synced = {
        path: synced_readme(text, repository)
        if path == README
        else synced_notebook(text, path.with_suffix(".ipynb").name, repository)
        for path, text in texts.items()
    }
    return {path: text for path, text in synced.items() if text != texts[path]}


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python tools/sync_colab.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
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
