"""Keep every notebook's Colab badge and install cell, and README's badges, in step with
defsent_lite.repro.colab (REPOSITORY, BRANCH, RELEASE): repository tooling, never imported by the package.

    python tools/sync_colab.py            # rewrite badges and install cells
    python tools/sync_colab.py --check    # exit 1 if any is out of date (a unit test does this)
"""
import argparse
import re
import sys

from defsent_lite.runtime import config
from defsent_lite.repro import colab

NOTEBOOKS = config.REPO / "notebooks"
README = config.REPO / "README.md"
BADGE_RE = re.compile(r"\[!\[Open In Colab\]\(https://colab\.research\.google\.com/assets/colab-badge\.svg\)\]\([^)]*\)")
CELL_RE = re.compile(r"# %%\n# Colab[^\n]*install.*?colab\.setup\(drive=[^)\n]*\)\n", re.S)


def synced_notebook(text, name, repository=colab.REPOSITORY):
    """A jupytext .py with its badge (the line after the title) and install cell (the first code
    cell) written from `repository`."""
    text = re.sub(r"\n#\n# " + BADGE_RE.pattern, "", text)
    title_end = text.index("\n", text.index("# # "))
    text = text[:title_end] + "\n#\n# " + colab.badge(name, repository) + text[title_end:]
    cell = "# %%\n" + colab.install_cell(repository) + "\n"
    if CELL_RE.search(text):
        return CELL_RE.sub(lambda _: cell, text, count=1)
    first_code = text.index("# %% tags=[\"parameters\"]")
    return text[:first_code] + cell + "\n" + text[first_code:]


def synced_readme(text, repository=colab.REPOSITORY):
    """README with every notebook badge pointing at `repository`."""
    return re.sub(r"\(https://colab\.research\.google\.com/github/[^/]+/[^/]+/blob/[^/]+/notebooks/",
                  f"(https://colab.research.google.com/github/{repository}/blob/{colab.BRANCH}/notebooks/", text)


def out_of_date(repository=colab.REPOSITORY):
    """{path: synced text} for every notebook .py and README.md that differs from its synced form."""
    out = {}
    for py in sorted(NOTEBOOKS.glob("[0-9][0-9]_*.py")):
        text = py.read_text()
        new = synced_notebook(text, py.with_suffix(".ipynb").name, repository)
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
