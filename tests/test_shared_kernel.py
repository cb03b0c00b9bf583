"""The rehearsal's shared kernel (tools/run_notebooks.SharedKernel): a notebook run in it starts
as in a fresh kernel: none of the last notebook's names, the environment and folder of the
calling process at that moment, a once-only warning shown again."""
import os

import run_notebooks

FIRST = '''# %%
import shared_kernel_probe   # a module stays imported across notebooks, its warning records too
left_behind = 1
shared_kernel_probe.warn()
'''

PROBE = '''import warnings


def warn():
    warnings.warn("shown once per place")
'''

SECOND = '''# %%
import os, warnings
print("left_behind" in dir(), os.environ["SHARED_KERNEL_PROBE"], os.getcwd())
'''


def test_a_notebook_in_the_shared_kernel_starts_clean(tmp_path, monkeypatch):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first, second = tmp_path / "a" / "first.py", tmp_path / "b" / "second.py"
    first.write_text(FIRST)
    (tmp_path / "a" / "shared_kernel_probe.py").write_text(PROBE)
    second.write_text(SECOND)
    kernel = run_notebooks.SharedKernel()
    try:
        monkeypatch.setenv("SHARED_KERNEL_PROBE", "one")
        runs = [run_notebooks.run(first, timeout=120, out=tmp_path / f"first{i}.ipynb", kernel=kernel)[0]
                for i in range(2)]
        monkeypatch.setenv("SHARED_KERNEL_PROBE", "two")
        out, _ = run_notebooks.run(second, timeout=120, out=tmp_path / "second.ipynb", kernel=kernel)
    finally:
        kernel.close()
    assert all("shown once per place" in p.read_text() for p in runs)   # the warning both times
    text = out.read_text()
    assert f"False two {tmp_path / 'b'}" in text, text
    assert "%reset" not in text   # the reset cell is not written with the notebook
    assert os.environ["SHARED_KERNEL_PROBE"] == "two"


def test_a_stored_run_keeps_the_cell_metadata_the_py_leaves_out(tmp_path):
    """A cell's `tolerance` lives in the .ipynb only (the .py's header filters it out): re-running
    the stored notebook from its .py keeps it (it was dropped, and nbval then compared exactly)."""
    import jupytext
    py = tmp_path / "n.py"
    py.write_text('# ---\n# jupyter:\n#   jupytext:\n#     cell_metadata_filter: tags,-tolerance\n# ---\n\n'
                  '# %%\nprint(0.5)\n')
    nb = jupytext.read(py)
    nb.cells[0].metadata["tolerance"] = "fraction"
    jupytext.write(nb, tmp_path / "n.ipynb")
    stored, _ = run_notebooks.run(py, timeout=120)
    cell = jupytext.read(stored).cells[0]
    assert cell.metadata.get("tolerance") == "fraction" and cell.outputs[0]["text"] == "0.5\n"
