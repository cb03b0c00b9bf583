"""The installed package is the methods and their machinery: no module imports test or notebook
tooling (nbval, pytest, jupytext, nbclient, nbformat) or the tests' stand-in models."""
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "defsent_lite"
TOOLING = {"nbval", "pytest", "jupytext", "nbclient", "nbformat", "standins", "nbcompare", "run_notebooks"}


def imported_names(path):
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            yield (node.module or "").split(".")[0]
            yield from (a.name for a in node.names)   # from . import standins


def test_no_module_of_the_package_imports_test_or_notebook_tooling():
    found = {p.name: sorted(set(imported_names(p)) & TOOLING) for p in sorted(PACKAGE.glob("*.py"))}
    assert {name: names for name, names in found.items() if names} == {}


def test_the_check_sees_a_tooling_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("from . import standins\nimport jupytext\n")
    assert set(imported_names(bad)) & TOOLING == {"standins", "jupytext"}
