"""Readers of SentEval's transfer tasks (MR, CR, SUBJ, MPQA, SST-2, TREC, MRPC) under
<data root>/senteval; a malformed line is an error naming file:line (readers' checks)."""

from defsent_lite.runtime import config
from defsent_lite.data.readers import (
    check_header,
    check_nonempty,
    nonempty_rows,
    read_lines,
    require,
    split_fields,
)

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
        out[split] = (nonempty_rows(path, sents), labels)
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
