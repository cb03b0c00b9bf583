"""SICK (SemEval-2014: sentence pairs with a relatedness score and an NLI label; read both as an
STS set, SICK-R, and as an NLI test set) and the gold similarity scores on 0-5 that STS 2012-2016,
STS-B and SICK share, read with readers' checks."""

import math

from defsent_lite.data.readers import (
    check_header,
    check_nonempty,
    nonempty_rows,
    read_lines,
    split_fields,
)


def number_in(path, lineno, text, what):
    """A finite float read from a field, or an error naming file:line."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{path}:{lineno}: {what} {text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{path}:{lineno}: {what} {text!r} is not finite")
    return value


def gold_score(path, lineno, text, what):
    """A gold similarity score on 0-5 (STS 2012-2016, STS-B and SICK-R all score on 0-5), or an
    error naming file:line."""
    value = number_in(path, lineno, text, what)
    if not 0 <= value <= 5:
        raise ValueError(f"{path}:{lineno}: {what} {text!r} is outside 0-5")
    return value


def read_sick(path):
    """SemEval-2014 SICK file (CRLF, header): dicts with sentences, relatedness and NLI label."""
    rows = []
    for i, line in enumerate(read_lines(path), 1):
        if i == 1:
            check_header(
                path,
                line,
                ["pair_ID", "sentence_A", "sentence_B", "relatedness_score", "entailment_judgment"],
            )
            continue
        f = split_fields(path, i, line, 5)
        check_nonempty(path, i, f[1], f[2])
        score = gold_score(path, i, f[3], "relatedness")
        rows.append(
            dict(
                pair_id=f[0],
                sentence_a=f[1],
                sentence_b=f[2],
                relatedness=score,
                label=sick_label(path, i, f[4]),
            )
        )
    return nonempty_rows(path, rows)


SICK_LABELS = ("entailment", "neutral", "contradiction")


def sick_label(path, lineno, text):
    if text.lower() not in SICK_LABELS:
        raise ValueError(f"{path}:{lineno}: label {text!r} is not one of {SICK_LABELS} (any case)")
    return text.lower()
