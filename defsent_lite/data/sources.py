"""Where every data file comes from (SOURCES) and which files each notebook reads (NEEDS).

A source is one upstream file (an archive or a plain file) and the members we keep from it,
each written to its place in the layout of ../shared/data. Files that are the same bytes as
our verified copies are pinned in checksums.sha256; an upstream that is not the same (WordNet
as NLTK packs it, Ishiwatari's Oxford archive, SimCSE's training csv) is pinned by the
archive's digest and/or checked by content, and its files' SHA-256 recorded at the first
download (RECORD_FILE). The preflight reads the digests here, without loading the downloader.
"""

from pathlib import Path
from typing import NamedTuple

from defsent_lite.runtime import config
from defsent_lite.runtime.config import file_digest

# The STS 2012-2016 subsets each task reads (eval_readers.load_sts), and so the files it needs.
STS_SUBSETS = {
    "STS12": ["MSRpar", "MSRvid", "SMTeuroparl", "surprise.OnWN", "surprise.SMTnews"],
    "STS13": ["FNWN", "headlines", "OnWN"],  # SMT is not redistributable: never used
    "STS14": ["deft-forum", "deft-news", "headlines", "images", "OnWN", "tweet-news"],
    "STS15": ["answers-forums", "answers-students", "belief", "headlines", "images"],
    "STS16": ["answer-answer", "headlines", "plagiarism", "postediting", "question-question"],
}


def _sts_members(task, subdir, prefix="STS."):
    names = STS_SUBSETS[task] + (["SMT"] if task == "STS13" else [])
    out = {}
    for name in names:
        for kind in ("input", "gs"):
            if task == "STS13" and name == "SMT" and kind == "input":
                continue  # the SMT input is not redistributed; only its gold file is in the archive
            fname = f"{prefix}{kind}.{name}.txt"
            out[f"{subdir}/{fname}"] = f"sts/raw/{task}/{fname}"
    return out


def _senteval_sts_members():
    """STS12-16, STS-B test and SICK test as SentEval's get_transfer_data.bash writes them
    (Moses-tokenised; SimCSE's senteval.tar holds SentEval's data/downstream folder): what DefSent+
    scores STS on."""
    out = {
        f"STS/{task}-en-test/STS.{kind}.{name}.txt": f"sts/senteval/{task}/STS.{kind}.{name}.txt"
        for task, names in STS_SUBSETS.items()
        for name in names
        for kind in ("input", "gs")
    }
    out["STS/STSBenchmark/sts-test.csv"] = "sts/senteval/STSBenchmark/sts-test.csv"
    out["SICK/SICK_test_annotated.txt"] = "sts/senteval/SICK/SICK_test_annotated.txt"
    return out


STSWIKI = "http://ixa2.si.ehu.es/stswiki/images"
SENTEVAL_DATA = "https://dl.fbaipublicfiles.com/senteval/senteval_data"
SICK_URL = "http://alt.qcri.org/semeval2014/task1/data/uploads"
SICK_GITHUB = "https://raw.githubusercontent.com/kkalouli/SICK-processing/0848f4aec60870122a4ca18de08ba0e25f6f9a75"
SIMCSE_DATA = "https://huggingface.co/datasets/princeton-nlp/datasets-for-simcse/resolve/main"
SENTEVAL_TRANSFER = {
    "MR": ("rt-polarity.pos", "rt-polarity.neg"),
    "CR": ("custrev.pos", "custrev.neg"),
    "SUBJ": ("subj.objective", "subj.subjective"),
    "MPQA": ("mpqa.pos", "mpqa.neg"),
    "TREC": ("train_5500.label", "TREC_10.label"),
}
# what NLTK's WordNet reader opens (3.9: index.sense too)
WORDNET_FILES = (
    ["lexnames", "index.sense"]
    + [f"{kind}.{pos}" for kind in ("index", "data") for pos in ("adj", "adv", "noun", "verb")]
    + [f"{pos}.exc" for pos in ("adj", "adv", "noun", "verb")]
)

# name, url, sha256 of the archive (None: every member is pinned in checksums.sha256 instead, or
# checked by content), md5 (the publisher's own digest where no SHA-256 could be recorded),
# members {member, or "" for a plain file: destination}, convert (convert.CONVERTERS key),
# rows (content check of a csv without a pinned digest), mirrors (second hosts, tried in order after
# url: [{url, members of its own if it serves a member as a plain file}], see download.hosts).
SOURCES = (
    [
        dict(
            name="STS12",
            url=f"{STSWIKI}/4/40/STS2012-en-test.zip",
            members=_sts_members("STS12", "test-gold"),
        ),
        dict(
            name="STS13",
            url=f"{STSWIKI}/2/2f/STS2013-en-test.zip",
            members=_sts_members("STS13", "test-gs"),
        ),
        dict(
            name="STS14",
            url=f"{STSWIKI}/8/8c/STS2014-en-test.zip",
            members=_sts_members("STS14", "sts-en-test-gs-2014"),
        ),
        dict(
            name="STS15",
            url=f"{STSWIKI}/d/da/STS2015-en-test.zip",
            members=_sts_members("STS15", "test_evaluation_task2a"),
        ),
        dict(
            name="STS16",
            url=f"{STSWIKI}/9/98/STS2016-en-test.zip",
            members=_sts_members("STS16", "sts2016-english-with-gs-v1.0", prefix="STS2016."),
        ),
        dict(
            name="STSB",
            url=f"{STSWIKI}/4/48/Stsbenchmark.tar.gz",
            members={
                f"stsbenchmark/sts-{s}.csv": f"sts/raw/STSBenchmark/sts-{s}.csv"
                for s in ("train", "dev", "test")
            },
        ),
    ]
    + [
        dict(
            name=f"SICK-{s}",
            url=f"{SICK_URL}/sick_{s}.zip",
            members={f"SICK_{s}.txt": f"sts/raw/SICK/SICK_{s}.txt"},
        )
        for s in ("train", "trial", "test_annotated")
    ]
    + [
        dict(
            name=f"SST2-{s}",
            url=f"https://raw.githubusercontent.com/PrincetonML/SIF/master/data/sentiment-{s}",
            members={"": f"senteval/SST/binary/sentiment-{s}"},
        )
        for s in ("train", "dev", "test")
    ]
    + [
        dict(
            name=f"MRPC-{s}",
            url=f"{SENTEVAL_DATA}/msr_paraphrase_{s}.txt",
            members={"": f"senteval/MRPC/msr_paraphrase_{s}.txt"},
        )
        for s in ("train", "test")
    ]
    + [
        # MR/CR/SUBJ/MPQA/TREC after SentEval's tokenisation, as SimCSE's evaluation bundle serves
        # them (the original pages serve raw text that SentEval's script then rewrites); the members
        # are the same bytes as ../shared/data/senteval (see its SOURCES.md).
        dict(
            name="senteval",
            url=f"{SIMCSE_DATA}/senteval.tar",
            members={
                f"{task}/{f}": f"senteval/{task}/{f}"
                for task, files in SENTEVAL_TRANSFER.items()
                for f in files
            },
        ),
        # The same archive's STS files (the bytes pinned are SentEval's verified output in
        # ../shared/data; a differently processed copy is refused by its checksum, naming the file).
        dict(
            name="senteval-sts", url=f"{SIMCSE_DATA}/senteval.tar", members=_senteval_sts_members()
        ),
        dict(
            name="SNLI",
            url="https://nlp.stanford.edu/projects/snli/snli_1.0.zip",
            convert="nli_jsonl",
            members={
                f"snli_1.0/snli_1.0_{s}.jsonl": f"nli/snli/snli_1.0_{s}.csv"
                for s in ("dev", "test")
            },
        ),
        dict(
            name="MNLI",
            url="https://cims.nyu.edu/~sbowman/multinli/multinli_1.0.zip",
            convert="nli_jsonl",
            members={
                f"multinli_1.0/multinli_1.0_dev_{s}.jsonl": f"nli/mnli/multinli_1.0_dev_{s}.csv"
                for s in ("matched", "mismatched")
            },
        ),
        # Second host: the same SICK.txt bytes (checked against checksums.sha256) in a public GitHub
        # repository, at a fixed commit.
        dict(
            name="SICK-full",
            url="https://zenodo.org/record/2787612/files/SICK.zip",
            members={"SICK.txt": "nli/sick/SICK.txt"},
            mirrors=[dict(url=f"{SICK_GITHUB}/SICK.txt", members={"": "nli/sick/SICK.txt"})],
        ),
        # NLTK's WordNet 3.0 package. Its files differ in size from our Debian copy (36,353,991 vs
        # 36,428,613 bytes unpacked), so the archive is checked by NLTK's own index digest (md5) and
        # the files' SHA-256 recorded at the first download.
        dict(
            name="wordnet",
            url="https://raw.githubusercontent.com/nltk/nltk_data/gh-pages/packages/corpora/wordnet.zip",
            md5="b3f38606f626e54c6f060548546f71f0",
            members={
                f"wordnet/{f}": f"dictionary/wordnet/nltk_data/corpora/wordnet/{f}"
                for f in WORDNET_FILES
            },
        ),
        dict(
            name="oxford",
            url="http://www.tkl.iis.u-tokyo.ac.jp/~ishiwatari/naacl_data.zip",
            sha256="d8775ea04757c9281f13e9a45ef5234eec5f9eea91b5411ea0781a93e3a134b2",
            members={
                f"data/oxford/{s}.txt": f"dictionary/oxford/ishiwatari/{s}.txt"
                for s in ("train", "valid", "test")
            },
        ),
        # SNLI+MNLI train triplets (275,601 rows) as supervised SimCSE and GaussCSE train on. No
        # SHA-256 could be recorded offline: checked by content (header and row count), digest
        # recorded at the first download, which `verify` then checks.
        dict(
            name="nli_for_simcse",
            rows=275601,
            url=f"{SIMCSE_DATA}/nli_for_simcse.csv",
            members={"": "nli/train/nli_for_simcse.csv"},
        ),
    ]
)


def source_names(sources=None):
    return [s["name"] for s in sources or SOURCES]


def by_name(name, sources=None):
    for s in sources or SOURCES:
        if s["name"] == name:
            return s
    raise ValueError(f"unknown source {name}; choose from: {' '.join(source_names(sources))}")


# ---------------------------------------------------------------- what each notebook reads


class Option(NamedTuple):
    """One way to satisfy a need: files from these sources, or (offline) files of ../shared/data."""

    sources: tuple = ()
    files: tuple = ()
    note: str = ""

    def paths(self, sources=None):
        # its own files and its sources' members' destinations, relative to the data root
        return list(self.files) + [
            rel for n in self.sources for rel in by_name(n, sources)["members"].values()
        ]


class Need(NamedTuple):
    what: str
    options: tuple  # the first option with sources is the one `download fetch --for` fetches


STS = Need(
    "STS12-16, STS-B, SICK-R",
    (Option(("STS12", "STS13", "STS14", "STS15", "STS16", "STSB", "SICK-test_annotated")),),
)
STS_SENTEVAL = Need(
    "STS12-16, STS-B, SICK-R as SentEval tokenises them (DefSent+)", (Option(("senteval-sts",)),)
)
TRANSFER = Need(
    "SentEval transfer tasks",
    (Option(("senteval", "SST2-train", "SST2-dev", "SST2-test", "MRPC-train", "MRPC-test")),),
)
NLI_EVAL = Need(
    "SNLI, MNLI and SICK evaluation sets",
    (Option(("SNLI", "MNLI", "SICK-test_annotated", "SICK-full")),),
)
WORDNET = Need("WordNet 3.0", (Option(("wordnet",)),))
OXFORD_PAPER = Need("Oxford dictionary (train, valid, test)", (Option(("oxford",)),))
OXFORD_ANY = Need(
    "Oxford dictionary",
    (
        Option(("oxford",)),
        Option(
            files=("dictionary/oxford/valid.tsv", "dictionary/oxford/test.tsv"),
            note="offline copy: Oxford valid+test only, WordNet stands in for the train split (not the paper's dataset)",
        ),
    ),
)
NLI_TRAIN_PAPER = Need(
    "NLI training triplets (SNLI+MNLI train, nli_for_simcse.csv)", (Option(("nli_for_simcse",)),)
)
NLI_TRAIN_ANY = Need(
    "NLI training triplets",
    (
        Option(("nli_for_simcse",)),
        Option(
            files=("nli/train/triplets.tsv",),
            note="offline stand-in: 7,409 triplets of nli/train/triplets.tsv, not the paper's SNLI+MNLI train",
        ),
    ),
)


def needs(notebook, scale="smoke"):
    """The data a notebook reads at a scale, as a list of Need (the paper scale allows no offline
    stand-in)."""
    paper = config.scale(scale)["paper_protocol"]  # paper and rehearsal: the papers' datasets only
    # offline: WordNet replaces the train split
    oxford = [OXFORD_PAPER] if paper else [OXFORD_ANY, WORDNET]
    dictionary = [OXFORD_PAPER if paper else OXFORD_ANY, WORDNET]  # DefSent+ dataset a adds WordNet
    # DefSent's later seeds are scored (defsent_scores.seed_scoring) by 11 and 12, or by the
    # launcher right after training, which checks 10's and 13's needs
    scored = [STS, STS_SENTEVAL, TRANSFER] if len(config.scale(scale)["seeds"]) > 1 else []
    nli = [NLI_EVAL, NLI_TRAIN_PAPER if paper else NLI_TRAIN_ANY]
    table = {
        "00": [STS, TRANSFER, NLI_EVAL, OXFORD_PAPER if paper else OXFORD_ANY],
        "01": [STS, TRANSFER],
        "10": oxford + scored,
        "11": oxford + [STS] + scored,
        "12": oxford + [TRANSFER] + scored,
        "13": oxford + scored,
        "20": dictionary,
        "21": dictionary + [STS_SENTEVAL],
        "22": dictionary + [STS_SENTEVAL] + scored,
        "23": dictionary + [STS_SENTEVAL],
        "24": dictionary + [STS_SENTEVAL, TRANSFER],
        "25": dictionary + [STS_SENTEVAL],
        "30": nli,
        "31": nli,
        "32": nli,
        "33": nli,
        "40": dictionary + [STS, TRANSFER] + nli,  # every method from one encoder, one evaluator
        # its DefSent and entry benchmarks read the dictionary
        "90": [
            STS,
            NLI_TRAIN_ANY,
            OXFORD_ANY,
            WORDNET,
        ],
    }
    key = str(notebook)
    # "10" or a file name "10_..."; not "10x"
    key = key[:2] if len(key) > 3 and key[2] == "_" else key
    if key not in table:
        raise ValueError(f"unknown notebook {notebook!r}; choose from {' '.join(sorted(table))}")
    return list(dict.fromkeys(table[key]))  # each once


NOTEBOOKS = (
    "00",
    "01",
    "10",
    "11",
    "12",
    "13",
    "20",
    "21",
    "22",
    "23",
    "24",
    "25",
    "30",
    "31",
    "32",
    "33",
    "40",
    "90",
)


def sources_for(notebook, scale="smoke"):
    """The sources `download fetch --for NN` fetches: each need's downloadable option."""
    out = []
    for need in needs(notebook, scale):
        option = next(o for o in need.options if o.sources)
        out += [s for s in option.sources if s not in out]
    return out


# ---------------------------------------------------------------- what is here


class DataCheck(NamedTuple):
    missing: list  # (need, [relative paths missing from its downloadable option])
    stand_ins: list  # notes of offline options in use
    # (need, [relative paths whose bytes differ from their pinned or recorded SHA-256])
    changed: list = []


def check_data(notebook, scale, data_dir=None, catalogue=None):
    """Which needs of the notebook are unmet under the data root, and which offline stand-ins are
    used."""
    root = config.data_root(data_dir)
    missing, stand_ins, changed = [], [], []
    for need in needs(notebook, scale):
        complete = [
            o for o in need.options if all((root / p).is_file() for p in o.paths(catalogue))
        ]
        if complete:
            if complete[0].note:
                stand_ins.append(f"{need.what}: {complete[0].note}")
            differ = changed_files(root, complete[0].paths(catalogue))
            if differ:
                changed.append((need.what, differ))
            continue
        option = next(o for o in need.options if o.sources)
        missing.append(
            (need.what, [p for p in option.paths(catalogue) if not (root / p).is_file()])
        )
    return DataCheck(missing, stand_ins, changed)


def changed_files(root, paths):
    """The paths whose bytes differ from their pinned (checksums.sha256) or recorded (at the first
    download) SHA-256: a file cut at a line boundary still parses, so only its bytes tell."""
    pinned, recorded, offline = (
        known_checksums(),
        read_record(root),
        offline_copies(),
    )
    known = {p: accepted(p, pinned, recorded, offline) for p in paths}
    return [p for p in paths if known[p] and file_digest(root / p) not in known[p]]


# ---------------------------------------------------------------- the SHA-256 each file should have
# pinned in checksums.sha256 (the verified copies), or recorded at its first download where no pin
# exists

CHECKSUMS_FILE = Path(__file__).with_name("checksums.sha256")
# The verified copies of files whose downloaded bytes differ (../shared/data's WordNet is Debian's,
# not NLTK's package): accepted by verify and the preflight, never asked of a download.
OFFLINE_COPIES_FILE = Path(__file__).with_name("offline_copies.sha256")
RECORD_FILE = ".defsent-downloads.sha256"  # digests of files written without a pinned checksum


def known_checksums(path=CHECKSUMS_FILE):
    """{relative path: sha256} of the data files, recorded from the verified copies in
    ../shared/data."""
    out = {}
    for line in Path(path).read_text().splitlines():
        digest, rel = line.split(maxsplit=1)
        out[rel] = digest
    return out


def offline_copies():
    """{relative path: sha256} of the offline copies whose bytes differ from a download's."""
    return known_checksums(OFFLINE_COPIES_FILE)


def accepted(rel, pinned, recorded, offline):
    """The digests a file may have: its pin, else its record, and its offline copy's."""
    return {d for d in (pinned.get(rel) or recorded.get(rel), offline.get(rel)) if d}


def read_record(root):
    """{relative path: sha256} recorded by earlier downloads for files without a pinned checksum."""
    path = Path(root) / RECORD_FILE
    if not path.exists():
        return {}
    record = {}
    for i, line in enumerate(path.read_text().splitlines(), 1):
        parts = line.split(maxsplit=1)
        if not parts:
            continue
        if (
            len(parts) != 2
            or len(parts[0]) != 64
            or any(c not in "0123456789abcdef" for c in parts[0])
        ):
            raise ValueError(
                f"{path}:{i}: expected '<sha256>  <relative path>', got {line[:80]!r} "
                "(delete the line, or the file, and download again)"
            )
        record[parts[1]] = parts[0]
    return record
