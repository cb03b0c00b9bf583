"""The evaluation sets' readers: STS 2012-2016 in the "all" setting (every subset of a year
pooled), STS-B and SICK-R, raw (the papers' files) or as SentEval ships them; and SentEval's
transfer tasks (MR, CR, SUBJ, MPQA, SST-2, TREC, MRPC) under <data root>/senteval. Pairs with an
empty gold score are dropped (SentEval does the same); anything else malformed names its file and
line (readers' checks). A file whose bytes differ from its pinned SHA-256 is refused: a file cut
at a line boundary still parses, so only its bytes tell (`whole`)."""

from defsent_lite.runtime import config
from defsent_lite.data.readers import (
    check_header,
    check_nonempty,
    nonempty_rows,
    read_lines,
    require,
    split_fields,
)
from defsent_lite.data import sources
from defsent_lite.data.sick import gold_score, read_sick

STS_TASKS = ["STS12", "STS13", "STS14", "STS15", "STS16", "STSB", "SICKR"]
# A file of this name at a data root marks it a deliberate excerpt (the tests' cut copies).
EXCERPT = "EXCERPT"


def whole(root, path):
    """`path` (under `root`), refused when its bytes differ from its pinned or recorded SHA-256
    (cut at a line boundary or edited); a root holding EXCERPT is read as it is."""
    if not (root / EXCERPT).exists() and sources.changed_files(
        root, [path.relative_to(root).as_posix()]
    ):
        raise ValueError(
            f"{path}: its bytes differ from the pinned SHA-256 (cut at a line or edited?); "
            f"fetch it again: python -m defsent_lite.data.download fetch --root {root}"
        )
    return path


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
        a, b = split_fields(input_path, i, line, fields, exact=True)[:2]
        check_nonempty(input_path, i, a, b)
        gold.append(gold_score(gold_path, i, g, "gold score"))
        s1.append(a)
        s2.append(b)
    nonempty_rows(gold_path, s1)
    return s1, s2, gold


def _sts_year(task, root, variant):
    folder = root / "sts" / variant / task
    raw16 = task == "STS16" and variant == "raw"
    prefix = "STS2016." if raw16 else "STS."
    s1, s2, gold = [], [], []
    for name in sources.STS_SUBSETS[task]:
        a, b, g = read_sts_subset(
            whole(root, folder / f"{prefix}input.{name}.txt"),
            whole(root, folder / f"{prefix}gs.{name}.txt"),
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
        f = split_fields(path, i, line, 7)
        check_nonempty(path, i, f[5], f[6])
        gold.append(gold_score(path, i, f[4], "score"))
        s1.append(f[5])
        s2.append(f[6])
    nonempty_rows(path, s1)
    return s1, s2, gold


def load_sts(task, data_dir=None, variant="raw", split="test"):
    """(sent1, sent2, gold) of one STS task: STS12-16 "all" setting, STSB or SICKR (test by
    default)."""
    if variant not in ("raw", "senteval"):
        raise ValueError(f"unknown STS variant {variant!r}: use 'raw' or 'senteval'")
    root = require(config.data_root(data_dir))
    if task in sources.STS_SUBSETS:
        return _sts_year(task, root, variant)
    if task == "STSB":
        return read_stsb(whole(root, root / "sts" / variant / "STSBenchmark" / f"sts-{split}.csv"))
    if task == "SICKR":
        name = {"test": "test_annotated"}.get(split, split)
        rows = read_sick(whole(root, root / "sts" / variant / "SICK" / f"SICK_{name}.txt"))
        return (
            [r["sentence_a"] for r in rows],
            [r["sentence_b"] for r in rows],
            [r["relatedness"] for r in rows],
        )
    raise ValueError(f"unknown STS task {task!r}; choose from {STS_TASKS}")


# ---------------------------------------------------------------- SentEval's transfer tasks

BINARY_FILES = {  # task: (positive file, negative file); SentEval reads them as latin-1
    "MR": ("MR/rt-polarity.pos", "MR/rt-polarity.neg"),
    "CR": ("CR/custrev.pos", "CR/custrev.neg"),
    "SUBJ": ("SUBJ/subj.objective", "SUBJ/subj.subjective"),
    "MPQA": ("MPQA/mpqa.pos", "MPQA/mpqa.neg"),
}


def load_binary_task(task, data_dir=None):
    """MR/CR/SUBJ/MPQA: (sentences, labels), positives first; empty lines kept as SentEval does."""
    data_root = require(config.data_root(data_dir))
    root = data_root / "senteval"
    sentences, labels = [], []
    for label, rel in zip((1, 0), BINARY_FILES[task]):
        lines = read_lines(whole(data_root, root / rel), encoding="latin-1")
        if not any(line.strip() for line in lines):
            raise ValueError(f"{root / rel}: every line is blank")
        sentences += [" ".join(line.split()) for line in lines]
        labels += [label] * len(lines)
    return sentences, labels


def load_sst2(data_dir=None):
    """SST-2 {train, dev, test}: (sentences, labels)."""
    data_root = require(config.data_root(data_dir))
    out = {}
    for split in ("train", "dev", "test"):
        path = whole(data_root, data_root / "senteval" / "SST" / "binary" / f"sentiment-{split}")
        sents, labels = [], []
        for i, line in enumerate(read_lines(path), 1):
            f = split_fields(path, i, line, 2)
            if f[1] not in ("0", "1"):
                raise ValueError(f"{path}:{i}: label {f[1]!r} is not 0 or 1")
            check_nonempty(path, i, f[0])
            sents.append(" ".join(f[0].split()))
            labels.append(int(f[1]))
        out[split] = (nonempty_rows(path, sents), labels)
    return out


TREC_CLASSES = ["ABBR", "DESC", "ENTY", "HUM", "LOC", "NUM"]


def load_trec(data_dir=None):
    """TREC {train, test}: (questions, coarse-label ids)."""
    data_root = require(config.data_root(data_dir))
    out = {}
    for split, name in (("train", "train_5500.label"), ("test", "TREC_10.label")):
        path = whole(data_root, data_root / "senteval" / "TREC" / name)
        sents, labels = [], []
        for i, line in enumerate(read_lines(path, encoding="latin-1"), 1):
            target, _, rest = line.strip().partition(":")
            coarse_fine, _, question = rest.partition(" ")
            if target not in TREC_CLASSES or not question.strip():
                raise ValueError(f"{path}:{i}: expected '<CLASS>:<fine> <question>'")
            sents.append(" ".join(question.split()))
            labels.append(TREC_CLASSES.index(target))
        out[split] = (nonempty_rows(path, sents), labels)
    return out


def load_mrpc(data_dir=None):
    """MRPC {train, test}: (sentences A, sentences B, labels)."""
    data_root = require(config.data_root(data_dir))
    out = {}
    for split in ("train", "test"):
        path = whole(data_root, data_root / "senteval" / "MRPC" / f"msr_paraphrase_{split}.txt")
        a, b, y = [], [], []
        for i, line in enumerate(read_lines(path, encoding="utf-8-sig"), 1):
            if i == 1:
                check_header(path, line, ["Quality", "#1 ID", "#2 ID", "#1 String", "#2 String"])
                continue
            # a tab inside a sentence would shift the columns
            f = split_fields(path, i, line, 5, exact=True)
            if f[0] not in ("0", "1"):
                raise ValueError(f"{path}:{i}: label {f[0]!r} is not 0 or 1")
            check_nonempty(path, i, f[3], f[4])
            a.append(f[3])
            b.append(f[4])
            y.append(int(f[0]))
        out[split] = (nonempty_rows(path, a), b, y)
    return out
