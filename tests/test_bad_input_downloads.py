"""Issue 36, downloads, preflight and the data identity: a trickling server is given up, a body
that is not the expected CSV and a malformed digest record are named errors, a relative root
resolves as the readers resolve it, a model folder or path that cannot load is said so, and the
files behind a symlinked data folder belong to its identity."""
import hashlib
import os
import time
import tracemalloc

import pytest

from defsent_lite.runtime import cache
from defsent_lite.data import download, nli_readers, sources
from defsent_lite.repro import preflight
from http_site import site  # noqa: F401 (a fixture)


def quiet(*a):
    pass


def test_a_server_trickling_bytes_is_given_up_at_the_deadline(site, tmp_path):
    site.routes["/slow"] = ("trickle", b"x" * 400)   # 100 s at a byte every 0.25 s
    start = time.monotonic()
    with pytest.raises(download.DownloadError, match="still arriving after 1 s"):
        download.fetch(site.url("/slow"), tmp_path / "f", deadline=1)
    assert time.monotonic() - start < 10


def test_a_body_that_is_not_the_csv_is_a_named_download_error(site, tmp_path):
    site.routes["/nli.csv"] = b"sent0,sent1,hard_neg\n\"" + b"a" * 200_000 + b"\",b,c\n"   # a field over csv's limit
    src = dict(name="nli", url=site.url("/nli.csv"), rows=300, members={"": "nli/train/nli_for_simcse.csv"})
    (report,) = download.download(tmp_path, sources=[src], checksums={}, log=quiet)
    assert report.status == "failed" and "not the expected CSV (Error: field larger than field limit" in report.detail


def test_a_body_far_larger_than_its_rows_is_refused_before_parsing(site, tmp_path):
    site.routes["/nli.csv"] = b"<not csv>" * 500_000   # 4.5 MB for 3 rows
    src = dict(name="nli", url=site.url("/nli.csv"), rows=3, members={"": "nli/train/nli_for_simcse.csv"})
    (report,) = download.download(tmp_path, sources=[src], checksums={}, log=quiet)
    assert report.status == "failed" and "4500000 bytes for 3 rows, over the 3000-byte cap" in report.detail
    assert not (tmp_path / "nli/train/nli_for_simcse.csv").exists()


def test_the_row_count_check_streams_a_large_csv(tmp_path):
    """A 10 MB CSV is counted with a flat memory: rows are never held (reading it whole would hold
    every row as a dict, several times the file)."""
    path = tmp_path / "nli_for_simcse.csv"
    row = "a premise sentence here,an entailed one here,a contradiction here for the pair\n"
    path.write_text("sent0,sent1,hard_neg\n" + row * 130_000)
    tracemalloc.start()
    assert nli_readers.count_simcse_nli(path) == 130_000
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 1_000_000, peak
    assert len(nli_readers.read_simcse_nli(path)) == 130_000


def test_a_malformed_digest_record_names_its_line(tmp_path):
    (tmp_path / download.RECORD_FILE).write_text("a" * 64 + "  nli/x.csv\nnot a digest line\n")
    with pytest.raises(ValueError, match=r"\.defsent-downloads\.sha256:2: expected '<sha256>  <relative path>'"):
        download.read_record(tmp_path)


def test_a_relative_root_resolves_as_the_readers_resolve_it(site, tmp_path, monkeypatch):
    home, elsewhere = tmp_path / "home", tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("DEFSENT_HOME", str(home))
    monkeypatch.chdir(elsewhere)
    site.routes["/plain"] = b"hello\n"
    src = dict(name="p", url=site.url("/plain"), members={"": "senteval/plain"})
    pinned = {"senteval/plain": hashlib.sha256(b"hello\n").hexdigest()}
    (report,) = download.download("reldata", sources=[src], checksums=pinned, log=quiet)
    assert report.status == "fetched" and (home / "reldata/senteval/plain").is_file()
    assert not (elsewhere / "reldata").exists()
    assert download.verify("reldata", pinned, [src]) == {"senteval/plain": "ok"}


def test_a_model_folder_without_weights_or_tokenizer_and_a_missing_path_are_said_so(tmp_path):
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    problem = preflight.model_problem(str(folder))
    assert problem.startswith(f"{folder}, a folder without weights") and "a tokenizer" in problem
    assert preflight.model_problem(str(tmp_path / "no" / "such" / "model")) == \
        f"{tmp_path / 'no' / 'such' / 'model'}: no such folder here, and not a hub model name (owner/name)"


def test_the_files_behind_a_symlinked_data_folder_are_its_identity(tmp_path):
    real = tmp_path / "elsewhere" / "snli"
    real.mkdir(parents=True)
    (real / "snli_1.0_dev.csv").write_text("pairID,sentence1,sentence2,label\n1,a,b,entailment\n")
    root = tmp_path / "data"
    (root / "nli").mkdir(parents=True)
    os.symlink(real, root / "nli" / "snli")
    os.symlink(real, real / "loop")   # a link back: walked once
    before = cache.data_identity(root, "nli/snli")
    (real / "snli_1.0_dev.csv").write_text("pairID,sentence1,sentence2,label\n1,a,b,contradiction\n")
    assert cache.data_identity(root, "nli/snli") != before


def test_data_cut_at_a_line_boundary_stops_the_preflight(tmp_path):
    """Issue 36: STS12 MSRpar input and gold cut at the same line still parse (2,381 of 3,108
    pairs); only their bytes tell. The preflight checks every file it finds against its pinned SHA-256."""
    import shutil
    from pathlib import Path
    shared = Path(os.environ["DEFSENT_DATA"])
    root = tmp_path / "data"
    shutil.copytree(shared / "sts", root / "sts")
    shutil.copytree(shared / "senteval", root / "senteval")
    assert sources.check_data("01", "smoke", root).changed == []
    for name in ("input", "gs"):
        path = root / "sts/raw/STS12" / f"STS.{name}.MSRpar.txt"
        lines = path.read_bytes().split(b"\n")
        path.write_bytes(b"\n".join(lines[:500]) + b"\n")
    changed = sources.check_data("01", "smoke", root).changed
    assert changed and {p for _, paths in changed for p in paths} == {"sts/raw/STS12/STS.input.MSRpar.txt",
                                                                      "sts/raw/STS12/STS.gs.MSRpar.txt"}
    with pytest.raises(preflight.PreflightFailed, match=r"(?s)STS.*differ\(s\) from the pinned SHA-256.*fetch --for 01"):
        preflight.check("01", "smoke", root, [], log=quiet)


def test_the_command_line_names_a_malformed_record_without_a_traceback(tmp_path, capsys):
    (tmp_path / download.RECORD_FILE).write_text("oops\n")
    assert download.main(["verify", "--root", str(tmp_path)]) == 2
    assert download.main(["fetch", "--root", str(tmp_path), "--only", "STS12"]) == 2
    err = capsys.readouterr().err
    assert err.count(f"{tmp_path / download.RECORD_FILE}:1: expected '<sha256>  <relative path>'") == 2
