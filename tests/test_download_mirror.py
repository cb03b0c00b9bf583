"""Issue 14, point 2 ("done when"): every source served in its upstream format by a local mirror
(archives built from ../shared/data by `mirror_site`, with stand-ins where the upstream bytes are
not offline), fetched through the mirror setting into an empty root; `verify` passes on it, and
then every notebook's preflight passes on that root.
"""
import re

import pytest

from defsent_lite.runtime import config
from defsent_lite.data import download, sources
from defsent_lite.repro import preflight


def test_every_source_arrives_through_the_mirror_and_verifies(mirrored):
    _, catalogue, root, reports = mirrored
    assert [(r.name, r.status) for r in reports] == [(c["name"], "fetched") for c in catalogue], \
        [r for r in reports if r.status != "fetched"]
    assert set(download.verify(root, sources=catalogue).values()) == {"ok"}
    pinned = download.known_checksums()
    converted = [rel for c in catalogue if c.get("convert") for rel in c["members"].values()]
    assert converted and all(download.digest_of(root / rel) == pinned[rel] for rel in converted)


@pytest.mark.parametrize("scale", ["smoke", "paper"])
def test_every_notebooks_data_is_there_after_the_download(mirrored, scale):
    _, catalogue, root, _ = mirrored
    for nb in sources.NOTEBOOKS:
        check = sources.check_data(nb, scale, root, catalogue)
        assert check.missing == [] and check.stand_ins == [], (nb, check)


def test_every_notebooks_preflight_passes_on_the_downloaded_root(mirrored, monkeypatch):
    _, catalogue, root, _ = mirrored
    monkeypatch.setattr(sources, "SOURCES", catalogue)
    lines = []
    for nb in sources.NOTEBOOKS:
        preflight.check(nb, "smoke", root, [config.OFFLINE_MODEL], log=lines.append)
    assert len(lines) == len(sources.NOTEBOOKS) and all(line.startswith("preflight:") for line in lines)


def test_a_second_download_fetches_nothing(mirrored):
    site_, catalogue, root, _ = mirrored
    again = download.download(root, sources=catalogue, mirror=site_.base, log=lambda *a: None)
    assert {r.status for r in again} == {"already present"}


def test_fetch_for_a_notebook_takes_only_what_it_reads(mirrored, tmp_path, monkeypatch):
    site_, catalogue, _, _ = mirrored
    monkeypatch.setattr(sources, "SOURCES", catalogue)
    reports = download.download(tmp_path, sources=download.select(notebook="30", scale="paper"), mirror=site_.base,
                                log=lambda *a: None)
    assert [r.name for r in reports] == ["SICK-test_annotated", "SNLI", "MNLI", "SICK-full", "nli_for_simcse"]
    assert sources.check_data("30", "paper", tmp_path, catalogue).missing == []
    assert sources.check_data("10", "paper", tmp_path, catalogue).missing[0][0].startswith("Oxford")


def test_the_fetch_for_a_notebook_takes_what_is_missing_then_the_preflight_passes(mirrored, tmp_path, monkeypatch,
                                                                                 capsys):
    """The install cell's fetch (`download fetch --for NN --scale S`) downloads what the notebook
    reads and lacks; the preflight downloads nothing (its message says how)."""
    site_, catalogue, _, _ = mirrored
    monkeypatch.setattr(sources, "SOURCES", catalogue)
    monkeypatch.setenv("DEFSENT_MIRROR", site_.base)  # the one setting that replaces every host
    with pytest.raises(preflight.PreflightFailed, match="fetch --for 31 --scale paper"):
        preflight.check("31", "paper", tmp_path, [])
    assert not any(tmp_path.iterdir())
    fetch = ["fetch", "--for", "31", "--scale", "paper", "--root", str(tmp_path)]
    download.main(fetch)
    text = capsys.readouterr().out
    assert re.search(r"nli_for_simcse +fetched", text) and "SNLI: fetching " + site_.base in text
    lines = []
    preflight.check("31", "paper", tmp_path, [], log=lines.append)
    assert lines[-1].startswith("preflight: 2 data needs met")
    assert download.main(fetch) == 0 and "all it reads is here" in capsys.readouterr().out   # nothing fetched
