"""The publishers' files in their upstream formats, built from ../shared/data, served by a local
mirror, and a data root downloaded through it (the download tests and the rehearsal run share it).

Three upstream files are not in ../shared/data as the same bytes: Ishiwatari's Oxford archive
(we hold only valid/test, in another format), NLTK's WordNet zip (NLTK packs other files than our
Debian copy) and SimCSE's nli_for_simcse.csv (not offline at all). For them stand-ins are built in
the upstream format, and the pinned archive digest / row count is replaced by the stand-in's;
every other file must match the SHA-256 pinned from ../shared/data. STAND-INS, not the papers'
data: the Oxford *train* member is a copy of the valid split, nli_for_simcse.csv holds the 7,409
offline triplets.
"""
import csv
import hashlib
import io
import json
import urllib.parse

from defsent_lite.runtime import config
from defsent_lite.data import dictionary_readers, download, nli_readers, sources
from http_site import Site, tar_gz_bytes, zip_bytes

SHARED = config.data_root()


def nli_jsonl(rel):
    """Our csv back in SNLI/MNLI's jsonl (the keys the converter reads, plus one it ignores)."""
    with open(SHARED / rel, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))[1:]
    return "".join(json.dumps(dict(annotator_labels=[r[3]], gold_label=r[3], pairID=r[0], sentence1=r[1],
                                   sentence2=r[2])) + "\n" for r in rows).encode()


def ishiwatari(rel):
    """Oxford valid/test TSV back in Ishiwatari's `word%oxford.N<TAB>pos<TAB>oxford<TAB>definition` lines."""
    pairs = dictionary_readers.read_oxford_tsv(SHARED / rel)
    return "".join(f"{w}%oxford.{i}\tpos\toxford\t{d}\t[]\t[]\n" for i, (w, d) in enumerate(pairs)).encode()


def simcse_csv():
    rows = nli_readers.read_triplets(SHARED / "nli/train/triplets.tsv")
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["sent0", "sent1", "hard_neg"])
    w.writerows([r["premise"], r["entailment"], r["contradiction"]] for r in rows)
    return buf.getvalue().encode(), len(rows)


def member_bytes(src, member, rel):
    if src["name"] in ("SNLI", "MNLI"):
        return nli_jsonl(rel)
    if src["name"] == "oxford":
        return ishiwatari("dictionary/oxford/valid.tsv" if "train" in member else rel.replace("ishiwatari/", "")
                          .replace(".txt", ".tsv"))
    return (SHARED / rel).read_bytes()


def upstream(src):
    """The source's file as its publisher serves it, built from ../shared/data."""
    if src["name"] == "nli_for_simcse":
        return simcse_csv()[0]
    members = {m: member_bytes(src, m, rel) for m, rel in src["members"].items()}
    if "" in members:
        return members[""]
    if src["url"].endswith(".zip"):
        return zip_bytes(dict(members, **{"README.txt": b"not one of ours"}))
    return tar_gz_bytes(members, mode="w:gz" if src["url"].endswith(".gz") else "w")


def serve():
    """(site serving every source's upstream file, the catalogue with the stand-ins' digests)."""
    site = Site()
    catalogue = []
    for src in sources.SOURCES:
        same_url = [o for o in sources.SOURCES if o["url"] == src["url"]]  # one archive, several sources
        body = upstream(dict(src, members={m: r for o in same_url for m, r in o["members"].items()}))
        site.routes[urllib.parse.urlsplit(src["url"]).path] = body
        src = dict(src)
        if src["name"] == "oxford":
            src["sha256"] = hashlib.sha256(body).hexdigest()
        if src["name"] == "wordnet":
            src["md5"] = hashlib.md5(body).hexdigest()
        if src["name"] == "nli_for_simcse":
            src["rows"] = simcse_csv()[1]
        catalogue.append(src)
    return site, catalogue


def download_root(root, site, catalogue):
    """Every source fetched through the mirror into `root`; the download reports."""
    return download.download(root, sources=catalogue, mirror=site.base, log=lambda *a: None)
