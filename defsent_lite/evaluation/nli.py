"""GaussCSE evaluation: two-way NLI by a threshold on sim(hyp||pre), AUPRC, entailment direction,
the length baseline and McNemar's test between loss settings.

Two metric sets (`METRICS`): "official" (the released code: entailment when score >= t, t the
most accurate of the grid 0, 0.001, ..., 1 on SNLI dev (the smallest on ties); AUPRC as
scikit-learn's precision_recall_curve integrated by trapezoids) and "paper" (Appendix C's text as
we read it: entailment when score > t, t the most accurate of every midpoint between scores;
AUPRC over the thresholds 0, 0.001, ..., 1)."""

from typing import NamedTuple

import numpy as np
from scipy.stats import binomtest, chi2
from sklearn.metrics import auc, precision_recall_curve

from defsent_lite.checks import require_finite, require_nonempty

AUPRC_THRESHOLDS = np.round(np.arange(0, 1001) / 1000, 3)  # 0, 0.001, ..., 1 (Appendix C)
METRICS = ("official", "paper")


def binary_labels(rows):
    """1 for entailment, 0 for the rest (neutral, contradiction and SNLI/MNLI's '-')."""
    return np.array([r["label"] == "entailment" for r in rows], dtype=int)


def checked_scores(scores, labels, what):
    """Scores and labels as arrays: the same non-zero length, every score finite."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, int)
    require_nonempty(scores, what)
    if len(scores) != len(labels):
        raise ValueError(f"{what}: {len(scores)} scores for {len(labels)} labels")
    return require_finite(scores, what), labels


def best_threshold(scores, labels, what="NLI threshold"):
    """The threshold t maximising accuracy of (score > t): every midpoint between distinct
    sorted scores (and below the minimum) is tried, so no grid limits the optimum."""
    scores, labels = checked_scores(scores, labels, what)
    s = np.unique(scores)
    cands = (
        np.concatenate([[s[0] - 1.0], (s[:-1] + s[1:]) / 2])
        if len(s) > 1
        else np.array([s[0] - 1.0])
    )
    order = np.sort(scores)
    pos_sorted = np.sort(scores[labels == 1])
    n, n_pos = len(scores), int(labels.sum())
    pred_pos = n - np.searchsorted(order, cands, side="right")  # predicted entailment
    tp = n_pos - np.searchsorted(pos_sorted, cands, side="right")
    correct = tp + (n - n_pos) - (pred_pos - tp)
    return float(cands[int(np.argmax(correct))])


def grid_threshold(scores, labels, num=1000, what="NLI threshold"):
    """The official code's threshold: of t = 0, 1/num, ..., 1 the one whose (score >= t) is most
    accurate, the smallest on ties."""
    scores, labels = checked_scores(scores, labels, what)
    grid = np.arange(num + 1) / num
    order, pos_sorted = np.sort(scores), np.sort(scores[labels == 1])
    n, n_pos = len(scores), int(labels.sum())
    pred_pos = n - np.searchsorted(order, grid, side="left")  # scores >= t
    tp = n_pos - np.searchsorted(pos_sorted, grid, side="left")
    correct = tp + (n - n_pos) - (pred_pos - tp)
    return float(grid[int(np.argmax(correct))])


def predicted_entailment(scores, threshold, metrics="official"):
    """score >= t (official code) or score > t (paper metrics)."""
    return (
        np.asarray(scores) >= threshold if metrics == "official" else np.asarray(scores) > threshold
    )


def accuracy(scores, labels, threshold, what="NLI accuracy", metrics="paper"):
    """Share of pairs where the predicted entailment (`predicted_entailment`) equals the label."""
    scores, labels = checked_scores(scores, labels, what)
    require_finite(threshold, f"{what}: threshold")
    return float(np.mean(predicted_entailment(scores, threshold, metrics) == (labels == 1)))


def official_auprc(scores, labels, what="AUPRC"):
    """The official code's AUPRC: scikit-learn's precision-recall curve, trapezoids
    (sklearn.metrics.auc)."""
    scores, labels = checked_scores(scores, labels, what)
    precision, recall, _ = precision_recall_curve(labels, scores)
    return float(auc(recall, precision))


def threshold_for(scores, labels, metrics, what="NLI threshold"):
    """The SNLI-dev threshold under a metric set."""
    check_metrics(metrics)
    return (
        grid_threshold(scores, labels, what=what)
        if metrics == "official"
        else best_threshold(scores, labels, what)
    )


def area_under_pr(scores, labels, metrics, what="AUPRC"):
    """AUPRC under a metric set."""
    check_metrics(metrics)
    return (
        official_auprc(scores, labels, what)
        if metrics == "official"
        else auprc(scores, labels, what=what)
    )


def check_metrics(metrics):
    if metrics not in METRICS:
        raise ValueError(f"unknown GaussCSE metric set {metrics!r}; choose from {METRICS}")


def precision_recall_points(scores, labels, thresholds=AUPRC_THRESHOLDS):
    """(precision, recall) of (score > t) for every threshold; precision is 1 when nothing is
    predicted."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, int)
    order, pos_sorted = np.sort(scores), np.sort(scores[labels == 1])
    pred = len(scores) - np.searchsorted(order, thresholds, side="right")
    tp = labels.sum() - np.searchsorted(pos_sorted, thresholds, side="right")
    precision = np.where(pred > 0, tp / np.maximum(pred, 1), 1.0)
    recall = tp / max(1, labels.sum())
    return precision, recall


def auprc(scores, labels, thresholds=AUPRC_THRESHOLDS, what="AUPRC"):
    """Area under the precision-recall curve traced by thresholds 0..1 step 0.001 (trapezoids)."""
    scores, labels = checked_scores(scores, labels, what)
    precision, recall = precision_recall_points(scores, labels, thresholds)
    # walk the curve from the highest threshold (recall 0) down
    order = np.argsort(thresholds)[::-1]
    return float(np.trapezoid(precision[order], recall[order]))


def direction_accuracy(sim_b_given_a, sim_a_given_b):
    """A (the gold entailing sentence) is predicted to entail B when sim(B||A) > sim(A||B)."""
    fwd, bwd = np.asarray(sim_b_given_a, float), np.asarray(sim_a_given_b, float)
    require_nonempty(fwd, "direction: pairs")
    if fwd.shape != bwd.shape:
        raise ValueError(f"direction: {len(fwd)} sim(B||A) for {len(bwd)} sim(A||B)")
    return float(
        np.mean(
            require_finite(fwd, "direction: sim(B||A)")
            > require_finite(bwd, "direction: sim(A||B)")
        )
    )


def sentence_lengths(sentences, unit="chars"):
    """Length of each sentence in characters (the paper's length baseline) or whitespace words."""
    if unit not in ("chars", "words"):
        raise ValueError(f"unknown length unit {unit!r}: use 'chars' or 'words'")
    return np.array([len(s) if unit == "chars" else len(s.split()) for s in sentences])


def length_baseline_accuracy(entailing, entailed, unit="chars", ties="wrong"):
    """The longer sentence is predicted to entail. Defaults reproduce the paper's Table 2 row
    exactly on the full test sets (92.64 / 82.65 / 69.14 with characters and a tie counted as
    wrong; the paper truncates to 92.63 / 82.64); ties="half" scores a tie one half."""
    if ties not in ("wrong", "half"):
        raise ValueError(f"unknown tie rule {ties!r}: use 'wrong' or 'half'")
    a, b = sentence_lengths(entailing, unit), sentence_lengths(entailed, unit)
    return float(np.mean((a > b) + (0.5 if ties == "half" else 0.0) * (a == b)))


def mcnemar(correct_1, correct_2, exact=True):
    """McNemar's test on paired per-example correctness: (b, c, p-value), b = only model 1 right.

    exact: two-sided binomial test on the discordant pairs; else chi-square with continuity
    correction.
    """
    c1, c2 = np.asarray(correct_1, bool), np.asarray(correct_2, bool)
    b, c = int(np.sum(c1 & ~c2)), int(np.sum(~c1 & c2))
    if b + c == 0:
        return b, c, 1.0
    if exact:
        return b, c, float(binomtest(b, b + c, 0.5).pvalue)
    stat = (abs(b - c) - 1) ** 2 / (b + c)
    return b, c, float(chi2.sf(stat, 1))


class DirectionPairs(NamedTuple):
    entailing: list  # the sentence that entails
    entailed: list  # the sentence it entails (same order)
    bilateral: int  # SICK pairs excluded: both A entails B and B entails A (no unique direction)
    missing: int = 0  # SICK test pairs excluded: absent from the full file (SICK.txt), no direction


def sick_direction_pairs(rows):
    """SICK entailment pairs with one direction: DirectionPairs, with the count of bilateral pairs
    excluded."""
    entailing, entailed, bilateral = [], [], 0
    for r in rows:
        ab, ba = r["ab"] == "A_entails_B", r["ba"] == "B_entails_A"
        if ab and ba:
            bilateral += 1
        elif ab:
            entailing.append(r["sentence_a"]), entailed.append(r["sentence_b"])
        elif ba:
            entailing.append(r["sentence_b"]), entailed.append(r["sentence_a"])
    return DirectionPairs(entailing, entailed, bilateral)


# SICK direction pairs: the paper's text (default) or the official code's
SICK_PAIRS = ("one-way", "all")


def direction_pairs(name, rows, sick_full, sick_pairs="one-way"):
    """DirectionPairs of a test set's entailment pairs (premise entails hypothesis). SICK,
    sick_pairs="one-way" (the paper's text; its length-baseline row is reproduced exactly): the
    directions from the full file (SICK.txt), bilateral pairs and pairs absent from it (10 of the
    test set's) excluded and counted; "all" (the official code): every entailment pair read
    premise -> hypothesis."""
    if sick_pairs not in SICK_PAIRS:
        raise ValueError(f"sick_pairs={sick_pairs!r}: choose one of {', '.join(SICK_PAIRS)}")
    if name == "SICK" and sick_pairs == "one-way":
        ids = {r["pair_id"] for r in rows if r["label"] == "entailment"}
        found = [r for r in sick_full if r["pair_id"] in ids]
        return sick_direction_pairs(found)._replace(
            missing=len(ids - {r["pair_id"] for r in found})
        )
    ent = [r for r in rows if r["label"] == "entailment"]
    return DirectionPairs([r["premise"] for r in ent], [r["hypothesis"] for r in ent], 0)


def length_baselines(tests, sick_full, sick_pairs="one-way"):
    """Length-baseline direction accuracy (%) on each test set's entailment pairs."""
    return {
        name: 100
        * length_baseline_accuracy(*direction_pairs(name, rows, sick_full, sick_pairs)[:2])
        for name, rows in tests.items()
    }
