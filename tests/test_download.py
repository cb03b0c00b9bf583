"""Issue 13, points 6-7: a download is complete or absent, sources are independent, the command
line says what it did. A local HTTP server on 127.0.0.1 plays the publishers."""
import hashlib
import io
import os
import signal
import subprocess
import sys
import time
import zipfile

import pytest

from defsent_lite.data import download, sources
from http_site import site, tar_gz_bytes, zip_bytes  # noqa: F401 (site is a fixture)

DOC = b"line one\tA\nline two\tB\n" * 50


def sha(b):
    return hashlib.sha256(b).hexdigest()


def quiet(*a):
    pass


def test_sources_download_verify_and_are_not_fetched_twice(site, tmp_path):
    site.routes["/a.zip"] = zip_bytes({"d/x.txt": DOC, "d/y.txt": DOC[:100]})
    site.routes["/b.tar.gz"] = tar_gz_bytes({"s/t.csv": DOC[:50]})
    site.routes["/plain"] = DOC[:10]
    sources = [dict(name="z", url=site.url("/a.zip"), sha256=None, members={"d/x.txt": "sts/x.txt", "d/y.txt": "sts/y.txt"}),
               dict(name="t", url=site.url("/b.tar.gz"), sha256=sha(site.routes["/b.tar.gz"]), members={"s/t.csv": "sts/t.csv"}),
               dict(name="p", url=site.url("/plain"), sha256=None, members={"": "senteval/plain"})]
    sums = {"sts/x.txt": sha(DOC), "sts/y.txt": sha(DOC[:100]), "senteval/plain": sha(DOC[:10])}
    root = tmp_path / "root"
    reports = download.download(root, sources=sources, checksums=sums, log=quiet)
    assert [r.status for r in reports] == ["fetched"] * 3, reports
    assert (root / "sts/t.csv").read_bytes() == DOC[:50]
    assert set(download.verify(root, sums, sources).values()) == {"ok"}  # t.csv: recorded at download
    again = download.download(root, sources=sources, checksums=sums, log=quiet)
    assert [r.status for r in again] == ["already present"] * 3
    assert not list(root.glob(".download-*"))


def test_a_connection_closed_halfway_leaves_no_file(site, tmp_path):
    site.routes["/f"] = ("half", DOC)
    src = dict(name="f", url=site.url("/f"), sha256=None, members={"": "nli/train/f.csv"})
    (report,) = download.download(tmp_path, sources=[src], checksums={"nli/train/f.csv": sha(DOC)}, log=quiet)
    assert report.status == "failed" and site.url("/f") in report.detail
    assert f"of the {len(DOC)} announced" in report.detail or "connection closed" in report.detail
    assert not (tmp_path / "nli/train/f.csv").exists() and not list(tmp_path.glob(".download-*"))


def test_a_later_member_failing_its_checksum_writes_nothing(site, tmp_path):
    good_old = tmp_path / "sts/x.txt"
    good_old.parent.mkdir(parents=True)
    good_old.write_bytes(b"the good copy")
    site.routes["/a.zip"] = zip_bytes({"x.txt": DOC, "y.txt": b"tampered"})
    src = dict(name="z", url=site.url("/a.zip"), sha256=None, members={"x.txt": "sts/x.txt", "y.txt": "sts/y.txt"})
    (report,) = download.download(tmp_path, sources=[src], checksums={"sts/x.txt": sha(DOC), "sts/y.txt": sha(b"y")},
                                  log=quiet)
    assert report.status == "failed" and "y.txt" in report.detail and "pinned" in report.detail
    assert good_old.read_bytes() == b"the good copy" and not (tmp_path / "sts/y.txt").exists()


def test_a_zip_bomb_is_refused_without_inflating_it(site, tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("big.txt", "w") as f:
            block = b"\0" * (1 << 20)
            for _ in range(300):
                f.write(block)
    site.routes["/bomb.zip"] = buf.getvalue()
    assert len(buf.getvalue()) < 400 << 10
    src = dict(name="bomb", url=site.url("/bomb.zip"), sha256=None, members={"big.txt": "sts/big.txt"})
    (report,) = download.download(tmp_path, sources=[src], checksums={"sts/big.txt": "0" * 64}, log=quiet)
    assert report.status == "failed" and "inflates to 314572800 bytes" in report.detail


@pytest.mark.parametrize("route, member, message", [
    (("html", None), "", "HTML page"),
    (zip_bytes({"x.txt": DOC})[:-200], "x.txt", "could not read"),
    (zip_bytes({"x.txt": DOC}), "y.txt", "has no member 'y.txt'"),
    (b"not an archive at all", "x.txt", "could not read"),
])
def test_bad_responses_name_the_url_and_what_was_expected(site, tmp_path, route, member, message):
    site.routes["/s"] = route
    src = dict(name="s", url=site.url("/s"), sha256=None, members={member: "sts/s.txt"})
    (report,) = download.download(tmp_path, sources=[src], checksums={"sts/s.txt": sha(DOC)}, log=quiet)
    assert report.status == "failed" and site.url("/s") in report.detail and message in report.detail
    assert not (tmp_path / "sts/s.txt").exists()


def test_one_failed_source_does_not_stop_the_others(site, tmp_path, monkeypatch, capsys):
    site.routes["/ok"] = DOC
    sources = [dict(name="gone", url=site.url("/gone"), sha256=None, members={"": "a/gone.txt"}),
               dict(name="ok", url=site.url("/ok"), sha256=None, members={"": "a/ok.txt"})]
    monkeypatch.setattr(download.catalogue, "SOURCES", sources)
    monkeypatch.setattr(download, "known_checksums", lambda: {"a/gone.txt": sha(DOC), "a/ok.txt": sha(DOC)})
    assert download.main(["fetch", "--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    assert "gone  failed" in out and "HTTP Error 404" in out and "ok    fetched" in out and "1 failed" in out
    assert (tmp_path / "a/ok.txt").read_bytes() == DOC


def test_an_unknown_only_name_is_an_error_listing_the_valid_ones(capsys):
    with pytest.raises(SystemExit) as e:
        download.main(["fetch", "--only", "SICK", "--root", "/nonexistent"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "unknown source SICK" in err and "SICK-test_annotated" in err and "nli_for_simcse" in err


def test_verify_reports_a_directory_where_a_file_should_be(tmp_path):
    (tmp_path / "sts/x.txt").mkdir(parents=True)
    src = dict(name="z", url="http://unused", sha256=None, members={"x.txt": "sts/x.txt"})
    assert download.verify(tmp_path, {"sts/x.txt": sha(DOC)}, [src]) == {"sts/x.txt": "not a file"}


def test_verify_checks_what_the_downloader_writes_and_the_shared_copy():
    report = download.verify()  # DEFSENT_DATA = ../shared/data: every downloadable file it holds
    unpinned = ("ishiwatari", "nli_for_simcse", "wordnet")  # not in ../shared/data, or not the same bytes
    assert all(v == "ok" for rel, v in report.items() if not any(u in rel for u in unpinned))
    # issue 46: the offline WordNet (Debian's bytes, not NLTK's package) is pinned as an offline copy
    assert {v for rel, v in report.items() if "wordnet" in rel} == {"ok"}
    assert set(download.verify(every_known=True).values()) == {"ok"}


def test_verify_fails_on_a_file_without_a_checksum_and_a_cut_wordnet(tmp_path, capsys):
    """Issue 46: `verify` exits non-zero where a file the downloader writes has no digest, and the
    offline WordNet cut at a line boundary no longer passes."""
    wordnet = "dictionary/wordnet/nltk_data/corpora/wordnet"
    shared = download.config.data_root()
    (tmp_path / wordnet).mkdir(parents=True)
    for f in (shared / wordnet).iterdir():
        (tmp_path / wordnet / f.name).write_bytes(f.read_bytes())
    src = next(s for s in download.catalogue.SOURCES if s["name"] == "wordnet")
    assert set(download.verify(tmp_path, sources=[src]).values()) == {"ok"}
    noun = tmp_path / wordnet / "data.noun"
    lines = noun.read_bytes().splitlines(keepends=True)
    noun.write_bytes(b"".join(lines[:len(lines) // 2]))
    assert download.verify(tmp_path, sources=[src])[f"{wordnet}/data.noun"] == "MISMATCH"
    assert f"{wordnet}/data.noun" in sources.changed_files(tmp_path, [f"{wordnet}/data.noun"])
    (tmp_path / "sts").mkdir()
    (tmp_path / "sts/x.txt").write_bytes(DOC)
    lone = dict(name="z", url="http://unused", sha256=None, members={"x.txt": "sts/x.txt"})
    assert download.verify(tmp_path, {}, [lone]) == {"sts/x.txt": "no checksum"}
    download.catalogue.SOURCES.append(lone)
    try:
        assert download.main(["verify", "--root", str(tmp_path)]) == 1
    finally:
        download.catalogue.SOURCES.remove(lone)
    assert "no checksum sts/x.txt" in capsys.readouterr().out


def _add_lines(root, start):
    from defsent_lite.data import download as d
    for i in range(start, start + 10):
        d.add_to_record(root, {f"f/{i:03d}": f"{i:064x}"})


def test_concurrent_downloads_keep_every_line_of_the_record(tmp_path):
    """Issue 46: eight writers adding ten digests each at once: all 80 lines survive (the
    read-modify-write is under a lock; before, 7-8 of 80 were lost)."""
    import multiprocessing
    ctx = multiprocessing.get_context("fork")
    workers = [ctx.Process(target=_add_lines, args=(tmp_path, 10 * k)) for k in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(download.read_record(tmp_path)) == 80


def test_an_unpinned_source_is_checked_by_content(site, tmp_path):
    site.routes["/nli.csv"] = b"sent0,sent1,hard_neg\na,b,c\n"
    src = dict(name="nli", rows=275601, url=site.url("/nli.csv"), sha256=None, members={"": "nli/train/x.csv"})
    (report,) = download.download(tmp_path, sources=[src], checksums={}, log=quiet)
    assert report.status == "failed" and "1 rows, expected 275601" in report.detail


KILLED = """
import sys
from defsent_lite.data import download
download.catalogue.SOURCES = [dict(name="slow", url=sys.argv[2], sha256=None, members={"": "a/slow.bin"})]
sys.exit(download.main(["fetch", "--root", sys.argv[1]]))
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_a_killed_download_leaves_no_temporary_folder(site, tmp_path, sig):
    site.routes["/slow"] = ("stall", DOC * 1000)
    proc = subprocess.Popen([sys.executable, "-c", KILLED, str(tmp_path), site.url("/slow")],
                            env=dict(os.environ, OMP_NUM_THREADS="1"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not list(tmp_path.glob(".download-*")) and time.time() < deadline:
        time.sleep(0.1)
    assert list(tmp_path.glob(".download-*")), "the download never started"
    time.sleep(0.5)
    proc.send_signal(sig)
    proc.wait(timeout=30)
    if sig == signal.SIGKILL:  # nothing can clean up after SIGKILL: the next download does
        download.download(tmp_path, sources=[], log=quiet)
    assert not list(tmp_path.glob(".download-*")) and not (tmp_path / "a/slow.bin").exists()


def test_an_archive_pinned_by_the_publishers_md5_is_refused_when_it_differs(site, tmp_path):
    site.routes["/w.zip"] = zip_bytes({"wordnet/lexnames": DOC})
    src = dict(name="w", url=site.url("/w.zip"), md5=hashlib.md5(b"another archive").hexdigest(),
               members={"wordnet/lexnames": "dictionary/lexnames"})
    (report,) = download.download(tmp_path, sources=[src], checksums={}, log=quiet)
    assert report.status == "failed" and "does not match the publisher's" in report.detail
    src["md5"] = hashlib.md5(site.routes["/w.zip"]).hexdigest()
    (report,) = download.download(tmp_path, sources=[src], checksums={}, log=quiet)
    assert report.status == "fetched" and download.verify(tmp_path, {}, [src]) == {"dictionary/lexnames": "ok"}


def test_a_second_host_serves_the_same_bytes_when_the_first_fails(site, tmp_path):
    """Issue 33 (hosts with one URL): the downloader tries each host in order; a plain-file copy of an
    archive member is checked by the member's pinned SHA-256 (the archive's own digest is the first host's)."""
    site.routes["/copy/x.txt"] = DOC
    src = dict(name="z", url=site.url("/gone.zip"), sha256="0" * 64, members={"d/x.txt": "nli/sick/x.txt"},
               mirrors=[dict(url=site.url("/copy/x.txt"), members={"": "nli/sick/x.txt"})])
    said = []
    (report,) = download.download(tmp_path, sources=[src], checksums={"nli/sick/x.txt": sha(DOC)}, log=said.append)
    assert report.status == "fetched" and (tmp_path / "nli/sick/x.txt").read_bytes() == DOC
    assert site.url("/copy/x.txt") in report.detail and site.url("/gone.zip") in report.detail   # which host, after which failure
    assert any(site.url("/gone.zip") in line and "404" in line for line in said), said


def test_every_host_failing_is_named(site, tmp_path):
    site.routes["/copy/x.txt"] = b"another file"
    src = dict(name="z", url=site.url("/gone.zip"), sha256=None, members={"d/x.txt": "nli/sick/x.txt"},
               mirrors=[dict(url=site.url("/copy/x.txt"), members={"": "nli/sick/x.txt"})])
    (report,) = download.download(tmp_path, sources=[src], checksums={"nli/sick/x.txt": sha(DOC)}, log=quiet)
    assert report.status == "failed" and report.detail.startswith("every host failed (2)")
    assert site.url("/gone.zip") in report.detail and site.url("/copy/x.txt") in report.detail
    assert "is pinned to" in report.detail   # the second copy's bytes differ: refused, not written
    assert not (tmp_path / "nli/sick/x.txt").exists() and not list(tmp_path.glob(".download-*"))


def test_every_second_host_is_checked_by_pinned_bytes():
    """A second host writes only destinations of its source, each pinned in checksums.sha256 (a copy
    that is not the same bytes is refused), at a fixed commit where it is a repository."""
    from defsent_lite.data import sources
    pinned = download.known_checksums()
    with_mirrors = [s for s in sources.SOURCES if s.get("mirrors")]
    assert with_mirrors, "no source has a second host"
    for src in with_mirrors:
        for host in download.hosts(src)[1:]:
            assert set(host["members"].values()) <= set(src["members"].values()), src["name"]
            assert all(rel in pinned for rel in host["members"].values()), src["name"]
            if "raw.githubusercontent.com" in host["url"]:
                assert len(host["url"].split("/")[5]) == 40, host["url"]   # a commit, not a branch
