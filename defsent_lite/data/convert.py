"""Turn an upstream file format into the canonical layout of ../shared/data (used by download.py).

SNLI and MultiNLI are published as jsonl (one JSON object per pair, with parses and annotator
labels); the layout keeps four columns as csv: pairID,sentence1,sentence2,label (label = the
pair's gold_label, '-' where annotators did not agree), rows in the original order, text as is.
"""

import csv
import json
from pathlib import Path

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
