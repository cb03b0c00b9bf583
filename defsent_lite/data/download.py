"""Download the papers' data from the original publishers into the layout of ../shared/data.

    python -m defsent_lite.data.download fetch --root data [--only STS12 oxford] [--mirror URL]
    python -m defsent_lite.data.download verify --root data [--all]

A source is complete or absent: its archive must arrive whole (bytes = Content-Length), be no
HTML page, stay under the size caps, match its pinned SHA-256, and every member must exist and
match its own; only then are all of its files renamed into place together (staged in a hidden
folder of the root, removed on any error or interrupt). Sources are independent: one failure does
not stop the others, and a summary lists each as fetched, already present or failed (why).
"""

import argparse
import csv
import hashlib
import http.client
import json
import os
import shutil
import signal
import sys
import tarfile
import time
import urllib.parse
import urllib.request
import uuid
import zipfile
from pathlib import Path
from typing import NamedTuple

import filelock

from defsent_lite.runtime import cache, config
from defsent_lite.runtime.config import digest_of
from defsent_lite.data import nli_readers, sources as catalogue
from defsent_lite.data.sources import (
    RECORD_FILE,
    accepted,
    known_checksums,
    offline_copies,
    read_record,
)

MAX_DOWNLOAD_BYTES = 1 << 30  # 1 GiB: the largest source (naacl_data.zip) is far below
DOWNLOAD_DEADLINE = 2 * 3600  # seconds for one whole download: a server trickling bytes is given up
MAX_MEMBER_BYTES = 512 << 20  # 512 MiB per extracted file
MAX_INFLATION = 100  # an archive member may be at most 100x the archive (zip bombs)
MAX_BYTES_PER_ROW = (
    1_000  # a CSV checked by its row count (nli_for_simcse.csv: three short sentences a row)
)
STAGING_PREFIX = ".download-"


class DownloadError(RuntimeError):
    """A source could not be fetched completely and correctly; the message names its URL."""


class SourceReport(NamedTuple):
    name: str
    status: str  # fetched | already present | failed
    detail: str  # files written, or why it failed
    files: list


# ---------------------------------------------------------------- what to fetch


def select(only=None, sources=None, notebook=None, scale="smoke"):
    """The sources named in `only`, or those a notebook reads at a scale, or all; an unknown name
    is an error listing the valid ones."""
    sources = sources or catalogue.SOURCES
    if notebook is not None:
        only = list(only or []) + catalogue.sources_for(notebook, scale)
    for name in only or []:
        catalogue.by_name(name, sources)
    return [s for s in sources if not only or s["name"] in only]


def source_url(src, mirror=None):
    """The source's URL, or the same path under a mirror's base URL (a local copy of the hosts)."""
    if not mirror:
        return src["url"]
    return mirror.rstrip("/") + urllib.parse.urlsplit(src["url"]).path


# ---------------------------------------------------------------- fetching and extracting


def fetch(url, dest, max_bytes=MAX_DOWNLOAD_BYTES, timeout=60, deadline=DOWNLOAD_DEADLINE):
    """Stream `url` to `dest` and return its sha256. The whole body or an error: fewer bytes than
    Content-Length, more than max_bytes, an HTML page instead of data, or a body still arriving
    after `deadline` seconds (`timeout` bounds each read)."""
    received, h, announced = 0, hashlib.sha256(), None
    give_up = time.monotonic() + deadline
    try:
        with (
            urllib.request.urlopen(
                urllib.request.Request(url, headers={"User-Agent": "defsent_lite"}), timeout=timeout
            ) as r,
            open(dest, "wb") as f,
        ):
            announced = r.headers.get("Content-Length")
            if announced and int(announced) > max_bytes:
                raise DownloadError(
                    f"{url}: announces {announced} bytes, over the {max_bytes}-byte cap"
                )
            for block in iter(
                lambda: r.read1(1 << 20), b""
            ):  # read1: whatever has arrived, at most 1 MiB
                if time.monotonic() > give_up:
                    raise DownloadError(
                        f"{url}: still arriving after {deadline:g} s ({received} bytes so far); "
                        "the server is too slow, try again later or another host"
                    )
                if received == 0 and block.lstrip()[:15].lower().startswith(
                    (b"<!doctype html", b"<html")
                ):
                    raise DownloadError(
                        f"{url}: an HTML page came instead of the data file "
                        f"(Content-Type {r.headers.get('Content-Type')!r}); is the URL still "
                        "served?"
                    )
                received += len(block)
                if received > max_bytes:
                    raise DownloadError(f"{url}: more than {max_bytes} bytes, over the cap")
                h.update(block)
                f.write(block)
    except http.client.IncompleteRead as e:
        raise DownloadError(
            f"{url}: connection closed after {received + len(e.partial)} bytes of {announced}"
        ) from None
    except (OSError, http.client.HTTPException) as e:
        if isinstance(e, DownloadError):
            raise
        raise DownloadError(f"{url}: {type(e).__name__}: {e}") from None
    if announced is not None and received != int(announced):
        raise DownloadError(
            f"{url}: received {received} bytes of the {announced} announced (connection closed?)"
        )
    return h.hexdigest()


def extract(archive, member, dest, url, max_bytes=MAX_MEMBER_BYTES, inflation=MAX_INFLATION):
    """Copy one member of a zip or tar archive ('' = the file itself) to `dest`, refusing a member
    larger than max_bytes or `inflation` times the archive; a missing member or a truncated
    archive is an error naming the URL and the member."""
    archive, dest = Path(archive), Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    if member == "":
        shutil.copyfile(archive, dest)
        return
    cap = min(max_bytes, inflation * max(archive.stat().st_size, 1))
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                info = z.getinfo(member)
                _check_size(info.file_size, cap, url, member)
                with z.open(info) as src, open(dest, "wb") as out:
                    _copy_capped(src, out, cap, url, member)
            return
        with tarfile.open(archive) as t:
            info = t.getmember(member)
            if not info.isfile():
                raise DownloadError(f"{url}: {member} is not a file in the archive")
            _check_size(info.size, cap, url, member)
            with t.extractfile(info) as src, open(dest, "wb") as out:
                _copy_capped(src, out, cap, url, member)
    except KeyError:
        raise DownloadError(f"{url}: the archive has no member {member!r}") from None
    except (zipfile.BadZipFile, tarfile.TarError, EOFError, OSError) as e:
        if isinstance(e, DownloadError):
            raise
        raise DownloadError(
            f"{url}: could not read {member!r} from the archive ({type(e).__name__}: {e}); "
            "truncated or not a zip/tar?"
        ) from None


def _check_size(size, cap, url, member):
    if size > cap:
        raise DownloadError(
            f"{url}: member {member!r} inflates to {size} bytes, over the {cap}-byte cap"
        )


def _copy_capped(src, out, cap, url, member):
    n = 0
    for block in iter(lambda: src.read(1 << 20), b""):
        n += len(block)
        if n > cap:
            raise DownloadError(f"{url}: member {member!r} is larger than the {cap}-byte cap")
        out.write(block)


# ---------------------------------------------------------------- one source, all or nothing


def _staged_files(src, url, checksums, staging):
    """Fetch and check every file of a source into `staging`; {destination: staged path}."""
    archive = staging / "archive"
    digest = fetch(url, archive)
    if src.get("sha256") and digest != src["sha256"]:
        raise DownloadError(f"{url}: sha256 {digest} does not match the pinned {src['sha256']}")
    if src.get("md5") and digest_of(archive, "md5") != src["md5"]:
        raise DownloadError(
            f"{url}: md5 {digest_of(archive, 'md5')} does not match the publisher's {src['md5']}"
        )
    staged = {}
    for member, rel in src["members"].items():
        path = staging / "files" / rel
        if src.get("convert"):  # upstream format -> the layout's format, then checked like any file
            extract(archive, member, path.with_name(path.name + ".upstream"), url)
            _convert(src, path.with_name(path.name + ".upstream"), path, url)
        else:
            extract(archive, member, path, url)
        expected, got = checksums.get(rel), digest_of(path)
        if expected and got != expected:
            raise DownloadError(
                f"{url}: {member or 'the file'} has sha256 {got}, but {rel} is pinned to {expected}"
            )
        if not expected and not (src.get("sha256") or src.get("md5")):
            _check_content(src, path, url)
        staged[rel] = path
    return staged


def _convert(src, upstream, path, url):
    try:
        CONVERTERS[src["convert"]](upstream, path)
    except (ValueError, UnicodeDecodeError) as e:
        raise DownloadError(f"{url}: {e}") from None
    upstream.unlink()


def _check_content(src, path, url):
    """A source without a pinned checksum is checked by what it must contain: first its size
    against its row count, then every row, streamed (a huge body is never held in memory)."""
    if "rows" not in src:
        raise DownloadError(
            f"{url}: no pinned SHA-256 and no content check for {src['name']}; refusing"
        )
    size, cap = path.stat().st_size, src["rows"] * MAX_BYTES_PER_ROW
    if size > cap:
        raise DownloadError(
            f"{url}: {size} bytes for {src['rows']} rows, over the {cap}-byte cap "
            f"({MAX_BYTES_PER_ROW} bytes a row); not parsed"
        )
    try:
        rows = nli_readers.count_simcse_nli(path)
    except (ValueError, csv.Error) as e:  # a decoding error is a ValueError
        raise DownloadError(f"{url}: not the expected CSV ({type(e).__name__}: {e})") from None
    if rows != src["rows"]:
        raise DownloadError(f"{url}: {rows} rows, expected {src['rows']}")


def present(src, root, checksums, recorded):
    """True when every file of the source is already under root with a known checksum."""
    offline = offline_copies()
    for rel in src["members"].values():
        p, expected = root / rel, accepted(rel, checksums, recorded, offline)
        if not p.is_file() or not expected or digest_of(p) not in expected:
            return False
    return True


def hosts(src):
    """Where a source can be fetched from, in order: its url, then each second host in its
    `mirrors` (a copy with the same checksums). A second host that serves a member as a plain file
    names its own `members`; its files are then checked by their pinned SHA-256 alone."""
    second = []
    for m in src.get("mirrors", []):
        own = "members" in m
        second.append(
            dict(
                src,
                url=m["url"],
                members=m.get("members", src["members"]),
                sha256=None if own else src.get("sha256"),
                md5=None if own else src.get("md5"),
            )
        )
    return [src] + second


def download_source(src, root, checksums, mirror=None, log=print):
    """Fetch one source into root, all files or none, trying each of its hosts in order; returns its
    SourceReport (never raises for a download problem; a failure names every host tried)."""
    root = Path(root)
    recorded = read_record(root)
    if present(src, root, checksums, recorded):
        return SourceReport(src["name"], "already present", "checksums match", [])
    failures, places = [], hosts(src)
    for host in places:
        url = source_url(host, mirror)
        staging = root / f"{STAGING_PREFIX}{os.getpid()}-{src['name']}-{uuid.uuid4().hex[:8]}"
        staging.mkdir(parents=True)
        try:
            log(f"{src['name']}: fetching {url}")
            staged = _staged_files(host, url, checksums, staging)
            for rel, path in staged.items():  # every file checked: now all of them go into place
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, root / rel)
            unpinned = {rel: digest_of(root / rel) for rel in staged if rel not in checksums}
            if unpinned:
                add_to_record(root, unpinned)
            tried = f" (after {len(failures)} failed: {'; '.join(failures)})" if failures else ""
            return SourceReport(
                src["name"],
                "fetched",
                f"{len(staged)} files from {url}{tried}",
                [root / rel for rel in staged],
            )
        except DownloadError as e:
            failures.append(str(e))
            if len(places) > 1:
                log(f"{src['name']}: {e}")
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    if len(failures) == 1:
        return SourceReport(src["name"], "failed", failures[0], [])
    return SourceReport(
        src["name"], "failed", f"every host failed ({len(failures)}): " + " | ".join(failures), []
    )


def add_to_record(root, digests):
    """Add {relative path: sha256} to the root's download record, held exclusively while it is
    read, changed and written (filelock): two downloads into one root at once keep every line."""
    with filelock.FileLock(Path(root) / f"{RECORD_FILE}.lock"):
        write_record(root, dict(read_record(root), **digests))


def write_record(root, record):
    path = Path(root) / RECORD_FILE
    tmp = path.with_name(f"{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    tmp.write_text("".join(f"{sha}  {rel}\n" for rel, sha in sorted(record.items())))
    os.replace(tmp, path)


def remove_stale_staging(root):
    """Staging folders of downloads that were killed (their process is gone) are removed."""
    for folder in Path(root).glob(f"{STAGING_PREFIX}*"):
        pid = folder.name[len(STAGING_PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not cache.process_alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def download(root, only=None, sources=None, checksums=None, mirror=None, log=print):
    """Fetch the selected sources into root, each on its own; a list of SourceReport. mirror: a base
    URL replacing every host (default: DEFSENT_MIRROR)."""
    mirror = os.environ.get("DEFSENT_MIRROR") if mirror is None else mirror
    # a relative root resolves as the readers resolve it, not against the cwd
    root = config.data_root(root)
    root.mkdir(parents=True, exist_ok=True)
    remove_stale_staging(root)
    checksums = known_checksums() if checksums is None else checksums
    return [download_source(src, root, checksums, mirror, log) for src in select(only, sources)]


# ---------------------------------------------------------------- verify


def verify(data_dir=None, checksums=None, sources=None, every_known=False):
    """{relative path: 'ok' | 'missing' | 'MISMATCH' | 'not a file' | 'no checksum'} for the files
    the downloader writes (every_known: every file of ../shared/data's layout). Every such file has
    a digest (pinned, recorded at its download, or its offline copy's): 'no checksum' is a
    failure."""
    root = config.data_root(data_dir)
    checksums = known_checksums() if checksums is None else checksums
    recorded, offline = read_record(root), offline_copies()
    if every_known:
        wanted = list(checksums)
    else:
        wanted = [rel for src in sources or catalogue.SOURCES for rel in src["members"].values()]
    report = {}
    for rel in wanted:
        p, expected = root / rel, accepted(rel, checksums, recorded, offline)
        if not p.exists():
            report[rel] = "missing"
        elif not p.is_file():
            report[rel] = "not a file"
        elif not expected:
            report[rel] = "no checksum"
        else:
            report[rel] = "ok" if digest_of(p) in expected else "MISMATCH"
    return report


# ---------------------------------------------------------------- command line


def summary(reports):
    """The table printed at the end of a download."""
    width = max(len(r.name) for r in reports)
    return "\n".join(f"{r.name:<{width}}  {r.status:<15}  {r.detail}" for r in reports)


def main(argv=None):
    p = argparse.ArgumentParser(
        prog="python -m defsent_lite.data.download",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    f = sub.add_parser("fetch", help="fetch the original archives (needs internet)")
    f.add_argument("--root", default=str(config.data_root()))
    f.add_argument(
        "--only",
        nargs="+",
        metavar="SOURCE",
        help="source names: " + " ".join(catalogue.source_names()),
    )
    f.add_argument(
        "--for",
        dest="notebook",
        metavar="NN",
        choices=catalogue.NOTEBOOKS,
        help="what notebook NN reads at --scale and is missing or differs from its SHA-256 "
        "(nothing when all is there; the Colab install cell's fetch)",
    )
    f.add_argument(
        "--scale",
        default=config.scale_name(),
        choices=sorted(config.SCALES),
        help="the notebook's scale (paper needs the paper's datasets, no offline stand-ins)",
    )
    f.add_argument(
        "--mirror",
        default=os.environ.get("DEFSENT_MIRROR"),
        help="base URL that replaces every host (a local mirror; env DEFSENT_MIRROR)",
    )
    v = sub.add_parser(
        "verify", help="check the downloaded files under a data root against their SHA-256"
    )
    v.add_argument("--root", default=str(config.data_root()))
    v.add_argument(
        "--all",
        action="store_true",
        help="every file of the ../shared/data layout, not only downloaded ones",
    )
    args = p.parse_args(argv)
    return fetch_main(args, p) if args.cmd == "fetch" else verify_main(args)


def fetch_main(args, parser):
    """`fetch`: what the arguments select (a notebook's: only when it lacks something), a
    summary, exit 1 if a source failed."""
    if args.notebook and not args.only:
        found = catalogue.check_data(args.notebook, args.scale, args.root)
        if not (found.missing or found.changed):
            print(f"notebook {args.notebook} at {args.scale} scale: all it reads is here")
            return 0
    try:
        chosen = select(args.only, notebook=args.notebook, scale=args.scale)
    except ValueError as e:
        parser.error(str(e))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # a killed download cleans its staging
    try:
        reports = download(args.root, sources=chosen, mirror=args.mirror)
    except ValueError as e:  # e.g. a malformed digest record: named, no traceback
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(summary(reports))
    failed = sum(r.status == "failed" for r in reports)
    print(
        f"{len(reports) - failed} of {len(reports)} sources ready under "
        f"{config.data_root(args.root)}" + (f"; {failed} failed" if failed else "")
    )
    return 1 if failed else 0


def verify_main(args):
    """`verify`: each file that is not ok, a count, exit 1 if any."""
    try:
        report = verify(args.root, every_known=args.all)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for rel, status in report.items():
        if status != "ok":
            print(f"{status:11s} {rel}")
    bad = sum(s != "ok" for s in report.values())
    print(
        f"{sum(s == 'ok' for s in report.values())} of {len(report)} files ok under {args.root}"
        + (f"; {bad} missing, wrong or without a checksum" if bad else "")
    )
    return 1 if bad else 0


# Upstream formats turned into the canonical layout of ../shared/data. SNLI and MultiNLI are
# published as jsonl (one JSON object per pair, with parses and annotator labels); the layout keeps
# four columns as csv: pairID,sentence1,sentence2,label (label = the pair's gold_label, '-' where
# annotators did not agree), rows in the original order, text as is.
NLI_CSV_HEADER = ["pairID", "sentence1", "sentence2", "label"]
NLI_JSON_KEYS = ("pairID", "sentence1", "sentence2", "gold_label")


def nli_jsonl_to_csv(jsonl_path, csv_path):
    """SNLI/MNLI `<split>.jsonl` -> our csv; a line that is not a JSON object with the four keys
    is an error naming file:line. Returns the number of rows written."""
    jsonl_path, csv_path = Path(jsonl_path), Path(csv_path)
    rows = []
    with open(jsonl_path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{jsonl_path}:{lineno}: not JSON ({e.msg})") from None
            missing = [k for k in NLI_JSON_KEYS if not isinstance(record, dict) or k not in record]
            if missing:
                raise ValueError(f"{jsonl_path}:{lineno}: no {', '.join(missing)} in the record")
            rows.append([record[k] for k in NLI_JSON_KEYS])
    if not rows:
        raise ValueError(f"{jsonl_path}: no records")
    with open(csv_path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, lineterminator="\n")  # minimal quoting, LF: the layout's csv
        writer.writerow(NLI_CSV_HEADER)
        writer.writerows(rows)
    return len(rows)


CONVERTERS = {"nli_jsonl": nli_jsonl_to_csv}


if __name__ == "__main__":
    sys.exit(main())
