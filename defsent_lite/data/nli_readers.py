"""Readers of the NLI data under <data root>/nli: SNLI and MNLI, SICK with both directions'
labels, SimCSE's NLI triplets, and GaussCSE's triplet files (readers' checks); the training
triplets a GaussCSE run reads, and which file they come from."""

import csv
import io

import numpy as np
import torch

from defsent_lite import checks
from defsent_lite.runtime import config
from defsent_lite.data.readers import (
    check_header,
    check_nonempty,
    nonempty_rows,
    read_lines,
    read_text,
    require,
    split_fields,
)
from defsent_lite.data.sick import read_sick, sick_label

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
        check_nonempty(path, reader.line_num, rec[1], rec[2])
        rows.append(dict(pair_id=rec[0], premise=rec[1], hypothesis=rec[2], label=rec[3]))
    return nonempty_rows(path, rows)


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
            check_header(
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
        f = split_fields(path, i, line, 12)
        check_nonempty(path, i, f[1], f[2])
        for value, allowed in ((f[5], SICK_AB), (f[6], SICK_BA)):
            if value not in allowed:
                raise ValueError(f"{path}:{i}: direction label {value!r} is not one of {allowed}")
        rows.append(
            dict(
                pair_id=f[0],
                sentence_a=f[1],
                sentence_b=f[2],
                label=sick_label(path, i, f[3]),
                ab=f[5],
                ba=f[6],
                split=f[11],
            )
        )
    return nonempty_rows(path, rows)


SICK_AB = ("A_entails_B", "A_neutral_B", "A_contradicts_B")
SICK_BA = ("B_entails_A", "B_neutral_A", "B_contradicts_A")


def read_simcse_nli(path):
    """SimCSE's nli_for_simcse.csv (sent0, sent1, hard_neg) as triplet rows (source
    'nli_for_simcse')."""
    rows = [
        dict(premise=a, entailment=b, contradiction=c, source="nli_for_simcse")
        for a, b, c in _simcse_nli_fields(path, io.StringIO(read_text(path), newline=""))
    ]
    return nonempty_rows(path, rows)


def count_simcse_nli(path):
    """The number of rows of nli_for_simcse.csv, checked as read_simcse_nli checks them but
    streamed: memory stays flat however large the file (the downloader's content check)."""
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
            check_header(path, line, ["premise", "entailment", "contradiction"])
            width = len(line.split("\t"))  # 3, or 4 with a source column: every row as many
            continue
        f = split_fields(path, i, line, width, exact=True)
        check_nonempty(path, i, *f[:3])
        rows.append(
            dict(
                premise=f[0], entailment=f[1], contradiction=f[2], source=f[3] if len(f) > 3 else ""
            )
        )
    return nonempty_rows(path, rows)


def training_triplets(
    data_dir=None, exclude_sources=(), max_triplets=None, seed=0, source="offline"
):
    """(premise, entailment, contradiction) triplets: source "simcse" = nli_for_simcse.csv (the
    paper's SNLI+MNLI train; `python -m defsent_lite.data.download fetch --only nli_for_simcse`),
    "offline" = nli/train/triplets.tsv, the stand-in without SNLI dev/test, MNLI dev_mismatched or
    SICK."""
    train_dir = config.data_root(data_dir) / "nli" / "train"
    if source not in ("offline", "simcse"):
        raise ValueError(f"unknown training source {source!r}: use 'offline' or 'simcse'")
    rows = (
        read_simcse_nli(train_dir / "nli_for_simcse.csv")
        if source == "simcse"
        else read_triplets(train_dir / "triplets.tsv")
    )
    rows = [r for r in rows if r["source"] not in exclude_sources]
    if checks.count(max_triplets, "max_triplets (train_max)") and len(rows) > max_triplets:
        g = torch.Generator().manual_seed(seed)
        rows = [
            rows[i] for i in sorted(torch.randperm(len(rows), generator=g)[:max_triplets].tolist())
        ]
    return [(r["premise"], r["entailment"], r["contradiction"]) for r in rows]


def train_source(scale_name, data_dir=None):
    """Paper and rehearsal scale: SimCSE's nli_for_simcse.csv (SNLI+MNLI train). Smoke/cpu: the
    offline stand-in nli/train/triplets.tsv where it exists (../shared/data), else a sample of
    nli_for_simcse.csv."""
    if config.scale(scale_name)["paper_protocol"]:
        return "simcse"
    train_dir = config.data_root(data_dir) / "nli" / "train"
    offline = (train_dir / "triplets.tsv").is_file() or not (
        train_dir / "nli_for_simcse.csv"
    ).is_file()
    return "offline" if offline else "simcse"


# ---------------------------------------------------------------- the evaluation sets

NLI_TEST_SETS = {
    "SNLI": "snli_test",
    "MNLI": "mnli_dev_mismatched",
    "SICK": "sick_test",
}  # MNLI dev_mismatched = test


DEV_SET = "snli_dev"


def evenly_spaced(rows, n):
    """n evenly spaced rows (all when n is None or larger): a fixed, order-preserving subset."""
    if (
        checks.count(n, "the number of pairs to keep (dev_max / test_max)") is None
        or len(rows) <= n
    ):
        return list(rows)
    return [rows[i] for i in np.linspace(0, len(rows) - 1, n).round().astype(int)]


def eval_data(max_pairs=None, data_dir=None):
    """SNLI dev, the three test sets (evenly spaced subsets when max_pairs) and full SICK."""
    dev = evenly_spaced(load_nli(DEV_SET, data_dir), max_pairs)
    tests = {k: evenly_spaced(load_nli(v, data_dir), max_pairs) for k, v in NLI_TEST_SETS.items()}
    sick_full = read_sick_full(config.data_root(data_dir) / "nli" / "sick" / "SICK.txt")
    return dev, tests, sick_full
