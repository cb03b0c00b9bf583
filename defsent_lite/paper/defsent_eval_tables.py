"""DefSent's evaluation tables as notebooks 11 and 12 show them, one call each: STS of every
pooling (Table 8) and the reported one (Table 3), SentEval per pooling (Table 9) and reported
(Table 4); our rows beside the paper's rows of the same model (defsent_tables.beside)."""

import pandas as pd

from defsent_lite import checks
from defsent_lite.paper import aggregate, results
from defsent_lite.paper import defsent as paper_defsent
from defsent_lite.paper.defsent_tables import Beside, beside, ours_per_pooling
from defsent_lite.paper.aggregate import POOLING_LABELS


def table8(untrained, trained, model, scale):
    """Table 8, STS of every pooling: the untrained encoder and DefSent's runs (mean over seeds)
    beside the paper's DefSent rows of the model, with its std (the paper has no untrained row
    here). untrained: {pooling: STS scores}; trained: {pooling: [STS scores of each seed]}."""
    cols = results.STS_COLS
    per_seed = {p: [[s[c] for c in cols] for s in runs] for p, runs in trained.items()}
    seeds = aggregate.table_over_seeds(per_seed, cols, "DefSent STS")
    ours = ours_per_pooling(untrained, seeds, cols, "untrained")
    reference, note = aggregate.reference_model(model)
    pairs = {}
    for p in trained:
        label = POOLING_LABELS[p]
        pairs[f"untrained ({label})"] = (None, ("untrained", p))
        pairs[f"DefSent ({label})"] = (
            aggregate.paper_row(paper_defsent.TABLE8, reference, label),
            ("DefSent", p),
        )
    return beside(
        paper_defsent.TABLE8,
        paper_defsent.TABLE8_STD,
        cols,
        ours,
        pairs,
        seeds,
        reference,
        note,
        model,
        scale,
    )


def reported_pooling(scale, reference, dev_mrr):
    """(pooling, why) of DefSent's one-pooling rows (Tables 3 and 4): under the paper's protocol
    the best by mean dev MRR, as the paper chose; at smoke and cpu scale the pooling of the paper's
    DefSent row for the reference model (BERT-base: CLS), because a short run's dev-MRR margins
    between poolings are within its seed spread (smoke: Max 0.0676 against Mean 0.0667)."""
    best = checks.best_of(dev_mrr, float, "pooling by dev MRR")  # refuses a NaN
    label = aggregate.paper_model_label(reference)
    row = next(
        (k for k in paper_defsent.TABLE3 if label and k.startswith(f"DefSent-{label} (")), None
    )
    if scale["paper_protocol"] or row is None:
        return best, "the best by dev MRR"
    pooling = {v: k for k, v in POOLING_LABELS.items()}[row.split("(")[-1].rstrip(")")]
    return (
        pooling,
        f"the pooling of the paper's row {row!r} (at this scale the dev-MRR margins are noise)",
    )


def table3(t8, dev_mrr, model, scale):
    """Table 3, one pooling beside the paper's DefSent row of the model: the pooling
    `reported_pooling` picks (dev_mrr: {pooling: mean dev MRR}), our rows from Table 8's (t8), and
    the untrained row where the paper computed one (BERT-base only). The note says which pooling
    and whether the paper's row pools the same way."""
    best, why = reported_pooling(scale, t8.reference, dev_mrr)
    paper_best = aggregate.paper_row(paper_defsent.TABLE3, t8.reference, "DefSent")
    best_label = f"({POOLING_LABELS[best]})"
    paper_key = aggregate.paper_row(paper_defsent.TABLE3, t8.reference, "DefSent", best_label)
    same = (
        "the same pooling"
        if paper_key
        else "another pooling, so no paper row beside it (Table 8 pairs every pooling)"
    )
    note = (
        f"pooling: {best} ({why})\nthe paper's Table 3 row: {paper_best}; ours pools with {best}: "
        f"{same}"
    )
    pairs = {f"DefSent ({best})": (paper_key, ("DefSent", best))}
    baseline_row = paper_defsent.UNTRAINED_ROWS.get(t8.reference, {})  # no raw Max row
    if best in baseline_row:
        pairs[f"untrained ({best})"] = (baseline_row[best], ("untrained", best))
    table = results.side_by_side(
        results.paper_table(paper_defsent.TABLE3, results.STS_COLS),
        t8.ours,
        pairs,
        compare=aggregate.comparable(model, scale),
    )
    return Beside(table, t8.ours, pairs, t8.seeds, t8.reference, note, "")


def table4(untrained, trained, model, scale):
    """Tables 9 and 4, SentEval: per pooling the untrained encoder and DefSent (mean over seeds;
    Table 9's three) beside Table 9's row of the model and pooling, Table 4's DefSent row where it
    pools the same way, and Table 4's raw-BERT rows (BERT-base only), with Table 9's std.
    untrained: {pooling: scores}; trained: {pooling: [scores of each seed]}."""
    cols = results.TRANSFER_COLS
    per_seed = {p: [[s[c] for c in cols] for s in runs] for p, runs in trained.items()}
    seeds = aggregate.table_over_seeds(per_seed, cols, "DefSent SentEval")
    ours = ours_per_pooling(untrained, seeds, cols, "untrained")
    reference, note = aggregate.reference_model(model)
    in9 = [f"Table 9: {m} ({p})" for m, p in paper_defsent.TABLE9]
    paper = pd.concat(
        [
            results.paper_table(paper_defsent.TABLE9, cols).set_axis(in9, axis=0),
            results.paper_table(paper_defsent.TABLE4, cols),
        ]
    )
    std9 = results.paper_table(paper_defsent.TABLE9_STD, cols).set_axis(
        [f"Table 9: {m} ({p})" for m, p in paper_defsent.TABLE9_STD], axis=0
    )
    key4 = aggregate.paper_row(paper_defsent.TABLE4, reference, "DefSent")
    pairs = {}
    for p in trained:
        key9 = aggregate.paper_row(paper_defsent.TABLE9, reference, POOLING_LABELS[p])
        pairs[f"DefSent ({p}) vs Table 9"] = (
            f"Table 9: {key9[0]} ({key9[1]})" if key9 else None,
            ("DefSent", p),
        )
        if key4 and f"({POOLING_LABELS[p]})" in key4:  # Table 4's row pools as the paper's best
            pairs[f"DefSent ({p}) vs {key4}"] = (key4, ("DefSent", p))
        if p in paper_defsent.UNTRAINED_ROWS.get(reference, {}):
            pairs[f"untrained ({p})"] = (
                paper_defsent.UNTRAINED_ROWS[reference][p],
                ("untrained", p),
            )
    table = results.side_by_side(
        paper,
        ours,
        pairs,
        compare=aggregate.comparable(model, scale),
        std=std9,
        runs=int(seeds.n.min()),
    )
    return Beside(table, ours, pairs, seeds, reference, note, results.spread_verdict(table))


def whole_table9(t4):
    """The paper's whole Table 9 with each of ours below the row it stands beside."""
    in9 = {f"Table 9: {m} ({p})": (m, p) for m, p in paper_defsent.TABLE9}
    pairs = {
        label.replace(" vs Table 9", ""): (in9.get(key), row)
        for label, (key, row) in t4.pairs.items()
        if label.endswith("vs Table 9")
    }
    return results.whole_beside(paper_defsent.TABLE9, results.TRANSFER_COLS, t4.ours, pairs)


def whole_table4(t4):
    """The paper's whole Table 4 with each of ours below the row it stands beside."""
    pairs = {
        label.split(" vs ")[0]: pair
        for label, pair in t4.pairs.items()
        if not label.endswith("vs Table 9")
    }
    return results.whole_beside(paper_defsent.TABLE4, results.TRANSFER_COLS, t4.ours, pairs)
