"""Readers for the papers' data (STS, SentEval transfer, NLI, dictionaries); download.py fetches it.

Every reader takes a data root in the layout of `../shared/data` (see config.data_root):

    sts/raw/  sts/senteval/  senteval/  nli/  dictionary/

A missing file raises DataMissing naming the path and how to get the data; a malformed
line raises ValueError naming `file:line`. Nothing is skipped silently, except the STS
rule that a pair with an empty gold score is dropped (SentEval does the same).
"""

import csv
import functools
import io
import math
import os
import re
from pathlib import Path

from defsent_lite.runtime import cache, config
from defsent_lite.data.sources import STS_SUBSETS

HOW_TO_GET = (
    "point DEFSENT_DATA at a folder in the layout of ../shared/data, or run "
    "`python -m defsent_lite.data.download fetch --root <folder>` on a connected machine"
)


class DataMissing(FileNotFoundError):
    """A data file or root is not there."""


def require(path):
    """Return `path` if it exists, else raise DataMissing that says how to get it."""
    path = Path(path)
    if not path.exists():
        raise DataMissing(f"{path} not found: {HOW_TO_GET}")
    return path


def read_text(path, encoding="utf-8"):
    """A text file's contents; bytes that are not `encoding` are an error naming file:line. A UTF-8
    byte-order mark at the start is dropped (it is not text; doubled too), one elsewhere refused;
    a NUL byte is refused; a latin-1 file (SentEval's) with a line of UTF-8 multi-byte text is
    refused, naming the line, rather than decoded into mojibake."""
    raw = require(path).read_bytes()
    if encoding.replace("_", "-").lower() in ("utf-8", "utf8") and raw.startswith(b"\xef\xbb\xbf"):
        raw = raw[3:]
    if b"\x00" in raw:
        line = raw[: raw.index(b"\x00")].count(b"\n") + 1
        raise ValueError(f"{path}:{line}: a NUL byte (is this a text file?)")
    if (
        encoding.replace("_", "-").lower() in ("latin-1", "latin1", "iso-8859-1")
        and not raw.isascii()
    ):
        for line, text in enumerate(raw.split(b"\n"), 1):  # line by line: one UTF-8 line is enough
            if not text.isascii() and _is_utf8(text):
                raise ValueError(
                    f"{path}:{line}: UTF-8 text in a file read as latin-1 (SentEval's "
                    "encoding): it would be garbled; use the original latin-1 file"
                )
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        column = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
        raise ValueError(
            f"{path}:{line}: byte 0x{raw[e.start]:02x} at column {column} is not valid {encoding} "
            f"({e.reason})"
        ) from None
    text = text.lstrip("\ufeff")  # a byte-order mark written twice
    if "\ufeff" in text:
        line = text[: text.index("\ufeff")].count("\n") + 1
        raise ValueError(
            f"{path}:{line}: a byte-order mark (U+FEFF) inside the text (files joined "
            "together?); remove it"
        )
    return text


def _is_utf8(raw):
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def read_lines(path, encoding="utf-8"):
    """Lines of a text file without their terminators (LF or CRLF); an empty file is an error."""
    text = read_text(path, encoding)
    if not text:
        raise ValueError(f"{path}: the file is empty")
    return [line.rstrip("\r") for line in text.split("\n")[: -1 if text.endswith("\n") else None]]


def _fields(path, lineno, line, n, sep="\t", exact=False):
    """Split a line and check it has at least (exact: exactly) n fields."""
    parts = line.split(sep)
    if len(parts) < n or (exact and len(parts) != n):
        raise ValueError(
            f"{path}:{lineno}: expected {'' if exact else 'at least '}{n} tab-separated fields, "
            f"got {len(parts)}"
        )
    return parts


def _number(path, lineno, text, what):
    """A finite float read from a field, or an error naming file:line."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{path}:{lineno}: {what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{path}:{lineno}: {what} {text!r} is not finite")
    return value


def _header(path, line, expected, sep="\t"):
    """Check a file's first line starts with the expected column names (a file without its
    header would otherwise lose its first row)."""
    if line.split(sep)[: len(expected)] != list(expected):
        raise ValueError(
            f"{path}:1: expected a header starting with {sep.join(expected)!r}, got {line[:80]!r}"
        )


def _rows(path, rows):
    """Rows read from a file; none (an empty file or a header only) is an error."""
    if not rows:
        raise ValueError(f"{path}: no data lines (empty file or header only)")
    return rows


def _nonempty(path, lineno, *sentences, what="sentence"):
    for s in sentences:
        if not s.strip():
            raise ValueError(f"{path}:{lineno}: empty {what}")


STS_GOLD_RANGE = (0.0, 5.0)  # STS 2012-2016, STS-B and SICK-R all score similarity on 0-5


def _gold(path, lineno, text, what):
    """A gold similarity score in STS_GOLD_RANGE, or an error naming file:line."""
    value = _number(path, lineno, text, what)
    low, high = STS_GOLD_RANGE
    if not low <= value <= high:
        raise ValueError(f"{path}:{lineno}: {what} {text!r} is outside {low:g}-{high:g}")
    return value


# ---------------------------------------------------------------- STS

STS_TASKS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSB", "SICKR"]


def read_sts_subset(input_path, gold_path, fields=2):
    """One STS subset: (sent1, sent2, gold) lists; pairs with an empty gold line are dropped.
    Each input line has exactly `fields` tab-separated fields (raw STS16: 4, the first 2 text)."""
    inputs, golds = read_lines(input_path), read_lines(gold_path)
    if len(inputs) != len(golds):
        raise ValueError(f"{input_path}: {len(inputs)} lines but {gold_path} has {len(golds)}")
    s1, s2, gold = [], [], []
    for i, (line, g) in enumerate(zip(inputs, golds), 1):
        if not g.strip():
            continue
        a, b = _fields(input_path, i, line, fields, exact=True)[:2]
        _nonempty(input_path, i, a, b)
        gold.append(_gold(gold_path, i, g, "gold score"))
        s1.append(a)
        s2.append(b)
    _rows(gold_path, s1)
    return s1, s2, gold


def _sts_year(task, root, variant):
    folder = root / "sts" / variant / task
    raw16 = task == "STS16" and variant == "raw"
    prefix = "STS2016." if raw16 else "STS."
    s1, s2, gold = [], [], []
    for name in STS_SUBSETS[task]:
        a, b, g = read_sts_subset(
            folder / f"{prefix}input.{name}.txt",
            folder / f"{prefix}gs.{name}.txt",
            fields=4 if raw16 else 2,
        )
        s1 += a
        s2 += b
        gold += g
    return s1, s2, gold


def read_stsb(path):
    """STS Benchmark csv, split on tabs (never CSV-parse: unbalanced quotes)."""
    s1, s2, gold = [], [], []
    for i, line in enumerate(read_lines(path), 1):
        f = _fields(path, i, line, 7)
        _nonempty(path, i, f[5], f[6])
        gold.append(_gold(path, i, f[4], "score"))
        s1.append(f[5])
        s2.append(f[6])
    _rows(path, s1)
    return s1, s2, gold


def read_sick(path):
    """SemEval-2014 SICK file (CRLF, header): dicts with sentences, relatedness and NLI label."""
    rows = []
    for i, line in enumerate(read_lines(path), 1):
        if i == 1:
            _header(
                path,
                line,
                ["pair_ID", "sentence_A", "sentence_B", "relatedness_score", "entailment_judgment"],
            )
            continue
        f = _fields(path, i, line, 5)
        _nonempty(path, i, f[1], f[2])
        score = _gold(path, i, f[3], "relatedness")
        rows.append(
            dict(
                pair_id=f[0],
                sentence_a=f[1],
                sentence_b=f[2],
                relatedness=score,
                label=_sick_label(path, i, f[4]),
            )
        )
    return _rows(path, rows)


SICK_LABELS = ("entailment", "neutral", "contradiction")


def _sick_label(path, lineno, text):
    if text.lower() not in SICK_LABELS:
        raise ValueError(f"{path}:{lineno}: label {text!r} is not one of {SICK_LABELS} (any case)")
    return text.lower()


def load_sts(task, data_dir=None, variant="raw", split="test"):
    """(sent1, sent2, gold) of one STS task: STS12-16 "all" setting, STSB or SICKR (test by default)."""
    if variant not in ("raw", "senteval"):
        raise ValueError(f"unknown STS variant {variant!r}: use 'raw' or 'senteval'")
    root = require(config.data_root(data_dir))
    if task in STS_SUBSETS:
        return _sts_year(task, root, variant)
    if task == "STSB":
        return read_stsb(root / "sts" / variant / "STSBenchmark" / f"sts-{split}.csv")
    if task == "SICKR":
        name = {"test": "test_annotated"}.get(split, split)
        rows = read_sick(root / "sts" / variant / "SICK" / f"SICK_{name}.txt")
        return (
            [r["sentence_a"] for r in rows],
            [r["sentence_b"] for r in rows],
            [r["relatedness"] for r in rows],
        )
    raise ValueError(f"unknown STS task {task!r}; choose from {STS_TASKS}")


# ---------------------------------------------------------------- SentEval transfer tasks

BINARY_FILES = {  # task: (positive file, negative file); SentEval reads them as latin-1
    "MR": ("MR/rt-polarity.pos", "MR/rt-polarity.neg"),
    "CR": ("CR/custrev.pos", "CR/custrev.neg"),
    "SUBJ": ("SUBJ/subj.objective", "SUBJ/subj.subjective"),
    "MPQA": ("MPQA/mpqa.pos", "MPQA/mpqa.neg"),
}


def load_binary_task(task, data_dir=None):
    """MR/CR/SUBJ/MPQA: (sentences, labels), positives first; empty lines kept as SentEval does."""
    root = require(config.data_root(data_dir)) / "senteval"
    sentences, labels = [], []
    for label, rel in zip((1, 0), BINARY_FILES[task]):
        lines = read_lines(root / rel, encoding="latin-1")
        if not any(line.strip() for line in lines):
            raise ValueError(f"{root / rel}: every line is blank")
        sentences += [" ".join(line.split()) for line in lines]
        labels += [label] * len(lines)
    return sentences, labels


def load_sst2(data_dir=None):
    """SST-2 {train, dev, test}: (sentences, labels)."""
    root = require(config.data_root(data_dir)) / "senteval" / "SST" / "binary"
    out = {}
    for split in ("train", "dev", "test"):
        path = root / f"sentiment-{split}"
        sents, labels = [], []
        for i, line in enumerate(read_lines(path), 1):
            f = _fields(path, i, line, 2)
            if f[1] not in ("0", "1"):
                raise ValueError(f"{path}:{i}: label {f[1]!r} is not 0 or 1")
            _nonempty(path, i, f[0])
            sents.append(" ".join(f[0].split()))
            labels.append(int(f[1]))
        out[split] = (_rows(path, sents), labels)
    return out


TREC_CLASSES = ["ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"]


def load_trec(data_dir=None):
    """TREC {train, test}: (questions, coarse-label ids)."""
    root = require(config.data_root(data_dir)) / "senteval" / "TREC"
    out = {}
    for split, name in (("train", "train_5500.label"), ("test", "TREC_10.label")):
        path = root / name
        sents, labels = [], []
        for i, line in enumerate(read_lines(path, encoding="latin-1"), 1):
            target, _, rest = line.strip().partition(":")
            coarse_fine, _, question = rest.partition(" ")
            if target not in TREC_CLASSES or not question.strip():
                raise ValueError(f"{path}:{i}: expected '<CLASS>:<fine> <question>'")
            sents.append(" ".join(question.split()))
            labels.append(TREC_CLASSES.index(target))
        out[split] = (_rows(path, sents), labels)
    return out


def load_mrpc(data_dir=None):
    """MRPC {train, test}: (sentences A, sentences B, labels)."""
    root = require(config.data_root(data_dir)) / "senteval" / "MRPC"
    out = {}
    for split in ("train", "test"):
        path = root / f"msr_paraphrase_{split}.txt"
        a, b, y = [], [], []
        for i, line in enumerate(read_lines(path, encoding="utf-8-sig"), 1):
            if i == 1:
                _header(path, line, ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"])
                continue
            f = _fields(
                path, i, line, 5, exact=True
            )  # a tab inside a sentence would shift the columns
            if f[0] not in ("0", "1"):
                raise ValueError(f"{path}:{i}: label {f[0]!r} is not 0 or 1")
            _nonempty(path, i, f[3], f[4])
            a.append(f[3])
            b.append(f[4])
            y.append(int(f[0]))
        out[split] = (_rows(path, a), b, y)
    return out


# ---------------------------------------------------------------- NLI

NLI_FILES = {
    "snli_dev": "nli/snli/snli_1.0_dev.csv",
    "snli_test": "nli/snli/snli_1.0_test.csv",
    "mnli_dev_matched": "nli/mnli/multinli_1.0_dev_matched.csv",
    "mnli_dev_mismatched": "nli/mnli/multinli_1.0_dev_mismatched.csv",
}
NLI_LABELS = ("entailment", "neutral", "contradiction", "-")


def read_nli_csv(path):
    """SNLI/MNLI csv (pairID,sentence1,sentence2,label): dicts premise, hypothesis, label."""
    rows = []
    reader = csv.reader(io.StringIO(read_text(path), newline=""))
    for i, rec in enumerate(reader, 1):
        if i == 1:
            if rec[:4] != ["pairID", "sentence1", "sentence2", "label"]:
                raise ValueError(f"{path}:1: expected header pairID,sentence1,sentence2,label")
            continue
        if len(rec) != 4 or rec[3] not in NLI_LABELS:
            raise ValueError(
                f"{path}:{reader.line_num}: expected 4 fields with a label in {NLI_LABELS}"
            )
        _nonempty(path, reader.line_num, rec[1], rec[2])
        rows.append(dict(pair_id=rec[0], premise=rec[1], hypothesis=rec[2], label=rec[3]))
    return _rows(path, rows)


def load_nli(name, data_dir=None):
    """One NLI evaluation set by name: snli_dev, snli_test, mnli_dev_(mis)matched, sick_test."""
    root = require(config.data_root(data_dir))
    if name == "sick_test":
        return [
            dict(
                pair_id=r["pair_id"],
                premise=r["sentence_a"],
                hypothesis=r["sentence_b"],
                label=r["label"],
            )
            for r in read_sick(root / "sts" / "raw" / "SICK" / "SICK_test_annotated.txt")
        ]
    if name not in NLI_FILES:
        raise ValueError(
            f"unknown NLI set {name!r}; choose from {sorted(NLI_FILES) + ['sick_test']}"
        )
    return read_nli_csv(root / NLI_FILES[name])


def read_sick_full(path):
    """Full SICK.txt with the directional labels entailment_AB / entailment_BA."""
    rows = []
    for i, line in enumerate(read_lines(path), 1):
        if i == 1:
            _header(
                path,
                line,
                [
                    "pair_ID",
                    "sentence_A",
                    "sentence_B",
                    "entailment_label",
                    "relatedness_score",
                    "entailment_AB",
                    "entailment_BA",
                ],
            )
            continue
        f = _fields(path, i, line, 12)
        _nonempty(path, i, f[1], f[2])
        for value, allowed in ((f[5], SICK_AB), (f[6], SICK_BA)):
            if value not in allowed:
                raise ValueError(f"{path}:{i}: direction label {value!r} is not one of {allowed}")
        rows.append(
            dict(
                pair_id=f[0],
                sentence_a=f[1],
                sentence_b=f[2],
                label=_sick_label(path, i, f[3]),
                ab=f[5],
                ba=f[6],
                split=f[11],
            )
        )
    return _rows(path, rows)


SICK_AB = ("A_entails_B", "A_neutral_B", "A_contradicts_B")
SICK_BA = ("B_entails_A", "B_neutral_A", "B_contradicts_A")


def read_simcse_nli(path):
    """SimCSE's nli_for_simcse.csv (sent0, sent1, hard_neg) as triplet rows (source 'nli_for_simcse')."""
    rows = [
        dict(premise=a, entailment=b, contradiction=c, source="nli_for_simcse")
        for a, b, c in _simcse_nli_fields(path, io.StringIO(read_text(path), newline=""))
    ]
    return _rows(path, rows)


def count_simcse_nli(path):
    """The number of rows of nli_for_simcse.csv, checked as read_simcse_nli checks them but streamed:
    memory stays flat however large the file (the downloader's content check)."""
    with open(require(path), encoding="utf-8", newline="") as f:
        return sum(1 for _ in _simcse_nli_fields(path, f))


def _simcse_nli_fields(path, lines):
    reader = csv.reader(lines)
    header = next(reader, None)
    if header != ["sent0", "sent1", "hard_neg"]:
        raise ValueError(f"{path}:1: expected header sent0,sent1,hard_neg, got {str(header)[:200]}")
    for f3 in reader:
        if len(f3) != 3 or not all(x.strip() for x in f3):
            raise ValueError(
                f"{path}:{reader.line_num}: expected 3 non-empty fields, got {f3!r:.200}"
            )
        yield f3


def read_triplets(path):
    """NLI training triplets (premise, entailment, contradiction, source); no quoting."""
    rows = []
    for i, line in enumerate(read_lines(path), 1):
        if i == 1:
            _header(path, line, ["premise", "entailment", "contradiction"])
            width = len(line.split("\t"))  # 3, or 4 with a source column: every row as many
            continue
        f = _fields(path, i, line, width, exact=True)
        _nonempty(path, i, *f[:3])
        rows.append(
            dict(
                premise=f[0], entailment=f[1], contradiction=f[2], source=f[3] if len(f) > 3 else ""
            )
        )
    return _rows(path, rows)


# ---------------------------------------------------------------- dictionaries


def read_oxford_tsv(path):
    """Oxford TSV of ../shared/data (header word, definition, example): (word, definition) pairs."""
    pairs = []
    for i, line in enumerate(read_lines(path), 1):
        if i == 1:
            if not line.startswith("word\tdefinition"):
                raise ValueError(f"{path}:1: expected header 'word<TAB>definition<TAB>example'")
            width = len(line.split("\t"))  # every row has the header's columns
            continue
        f = _fields(path, i, line, width, exact=True)
        _word(path, i, f[0])
        _nonempty(path, i, f[1], what="definition")
        pairs.append((f[0], f[1]))
    return _rows(path, pairs)


def read_ishiwatari(path):
    """Ishiwatari et al. (2019) `<split>.txt`: field 1 `word%oxford.N`, field 4 the definition."""
    pairs = []
    for i, line in enumerate(read_lines(path), 1):
        f = _fields(path, i, line, 4)
        _nonempty(path, i, f[3], what="definition")
        pairs.append((_word(path, i, f[0].rsplit("%", 1)[0]), f[3]))
    return _rows(path, pairs)


def _word(path, lineno, word):
    if not word.strip():
        raise ValueError(f"{path}:{lineno}: empty word")
    return word


def load_oxford(data_dir=None):
    """Oxford definitions by split: the original archive layout if present, else the valid/test TSVs.

    Returns {split: [(word, definition), ...]}; a split that is not at hand is absent
    (offline: no 'train').
    """
    root = require(config.data_root(data_dir)) / "dictionary" / "oxford"
    out = {}
    for split in ("train", "valid", "test"):
        original, tsv = root / "ishiwatari" / f"{split}.txt", root / f"{split}.tsv"
        if original.exists():
            out[split] = read_ishiwatari(original)
        elif tsv.exists():
            out[split] = read_oxford_tsv(tsv)
    if not out:
        raise DataMissing(f"no Oxford split under {root}: {HOW_TO_GET}")
    return out


def wordnet_definitions(data_dir=None):
    """(lemma, gloss) for every (lemma, synset) pair of WordNet 3.0, lemmas with spaces, lowercased.
    Read once per process (about 0.5 s from the data files), then served from memory as a fresh list."""
    folder = wordnet_folder(data_dir)
    return list(
        _wordnet_definitions(
            str(config.data_root(data_dir)),
            str(folder) if folder else None,
            os.environ.get("NLTK_DATA", ""),
        )
    )


def wordnet_identity(data_dir=None):
    """What WordNet's glosses are read from, by content: the folder of data files found under the
    data root or NLTK_DATA, else (nltk's own reader) the data root's copy and NLTK_DATA."""
    folder = wordnet_folder(data_dir)
    if folder is not None:
        return dict(wordnet_files=cache.data_identity(str(folder.parent), folder.name))
    return dict(
        nltk_reader=cache.data_identity(data_dir, "dictionary/wordnet"),
        nltk_data=os.environ.get("NLTK_DATA", ""),
    )


@functools.lru_cache(maxsize=2)
def _wordnet_definitions(data_dir, folder, nltk_data):
    # keyed by the files actually read, and cached on disk too: later kernels load the parsed
    # glosses in about 1 s
    pairs = cache.cached_json(
        "wordnet", wordnet_identity(data_dir), lambda: _read_wordnet(data_dir)
    )
    return [tuple(p) for p in pairs]


def _read_wordnet(data_dir):
    folder = wordnet_folder(data_dir)
    return read_wordnet_data_files(folder) if folder else _read_wordnet_with_nltk(data_dir)


def wordnet_folder(data_dir=None):
    """The WordNet corpus folder (data.noun, ...) under the data root's nltk_data or NLTK_DATA, or
    None (a zipped or elsewhere-installed corpus, left to nltk's reader)."""
    roots = [config.data_root(data_dir) / "dictionary" / "wordnet" / "nltk_data"]
    roots += [Path(p) for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    return next(
        (
            r / "corpora" / "wordnet"
            for r in roots
            if (r / "corpora" / "wordnet" / "data.noun").is_file()
        ),
        None,
    )


WORDNET_POS_FILES = ("adj", "adv", "noun", "verb")  # nltk's all_synsets order
_SYNTACTIC_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")  # "galore(ip)" -> "galore"
_QUOTED_EXAMPLE = re.compile(r"[\"].*?[\"]")


def read_wordnet_data_files(folder):
    """(lemma, definition) pairs straight from WordNet's data.* files, exactly as nltk gives them
    (synset.definition(): the gloss without its quoted examples; lemma names without syntactic
    markers) in nltk's order, in about 0.5 s instead of nltk's 15 s."""
    pairs = []
    for pos in WORDNET_POS_FILES:
        path = Path(folder) / f"data.{pos}"
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if line[0].isspace():  # the license header
                    continue
                try:
                    pairs += synset_line_pairs(line)
                except (ValueError, IndexError):
                    raise ValueError(
                        f"{path}:{lineno}: not a WordNet synset line: {line[:80]!r}"
                    ) from None
    return pairs


def synset_line_pairs(line):
    """(lemma, definition) of each lemma of one synset line of a WordNet data file."""
    columns, gloss = line.strip().split("|")
    tokens = columns.split()
    names = tokens[4 : 4 + 2 * int(tokens[3], 16) : 2]
    definition = _QUOTED_EXAMPLE.sub("", gloss).strip().strip("; ")
    return [
        (_SYNTACTIC_MARKER.match(n).group(1).replace("_", " ").lower(), definition) for n in names
    ]


def _read_wordnet_with_nltk(data_dir):
    nltk_dir = config.data_root(data_dir) / "dictionary" / "wordnet" / "nltk_data"
    import nltk  # here, not at the top: importing nltk takes 1.5 s and only this fallback needs it
    from nltk.corpus import wordnet as wn

    if nltk_dir.exists() and str(nltk_dir.resolve()) not in os.environ.get("NLTK_DATA", ""):
        if str(nltk_dir) not in nltk.data.path:
            nltk.data.path.insert(0, str(nltk_dir))
    try:
        synsets = list(wn.all_synsets())
    except LookupError:
        raise DataMissing(
            f"WordNet not found (looked in {nltk_dir} and NLTK_DATA): {HOW_TO_GET}"
        ) from None
    return [
        (lemma.replace("_", " ").lower(), s.definition())
        for s in synsets
        for lemma in s.lemma_names()
    ]
