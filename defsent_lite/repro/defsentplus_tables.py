"""DefSent+'s tables as its notebooks show them, one call each: our rows (the untrained model,
DefSent, and every PST step's mean over seeds; the final encoder's SentEval) beside the paper's
rows of the same model (Table 2, STS; Table 4, SentEval)."""

from typing import NamedTuple

import pandas as pd

from defsent_lite.checks import best_of
from defsent_lite.evaluation import senteval
from defsent_lite.paper import aggregate, results
from defsent_lite.paper import defsent as paper_defsent
from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.repro import defsent_scores, defsentplus_protocol, eval_sizes, plans

# Table 7's SentEval pooling by hub name (the BERT encoders' Table 7 row is their ICA one)
SENTEVAL_POOLING = {
    hub: paper_defsentplus.table7_poolings(label)[1]
    for hub, label in {**aggregate.PAPER_MODEL_LABELS, **paper_defsentplus.DATA_AUGMENTED}.items()
}


def table2_row(model, setting, ica=False):
    """The key of Table 2's row for our "1st-(CLS,AMP)-a" setting (step and dataset; the paper's
    combination may differ at a later step), ICA or not; None where the paper has none. The
    released RoBERTa rows ("*") are not ICA runs and pair with nothing of ours."""
    step, dataset = setting.split("-")[0], setting.split("-")[-1]
    return aggregate.paper_row(
        paper_defsentplus.TABLE2,
        model,
        f" {step}-",
        f")-{dataset}",
        *(["ICA"] if ica else []),
        exclude=() if ica else ("ICA", "*"),
    )


def paired_label(our_setting, paper_key):
    """Our setting, with the paper's in brackets where its combination differs."""
    theirs = paper_defsentplus.setting_of(paper_key) if paper_key else None
    return (
        our_setting
        if theirs is None or our_setting.split()[0] == theirs
        else f"{our_setting} (paper: {theirs})"
    )


def senteval_pooling(model, result):
    """(pooling, why) for SentEval: Table 7's for a raw model the paper trained, else the
    pooling with the best STS average of the run (what the paper does for STS)."""
    best = best_of(result["sts"], lambda s: s["avg"], "inference pooling by STS avg")  # no NaN
    if model in SENTEVAL_POOLING:
        return SENTEVAL_POOLING[model], f"Table 7's SentEval pooling for {model}"
    return best, f"{model} is not in Table 7: the best STS pooling of the run"


class OurRows(NamedTuple):
    """Our rows of Table 2: STS (results.STS_COLS) and the pooling of each row."""

    table: pd.DataFrame  # one row per label, a "pooling" column first
    stds: dict  # {label: std over seeds} of the DefSent+ rows
    counts: dict  # {label: runs averaged}


class Beside(NamedTuple):
    table: pd.DataFrame  # results.side_by_side: the paper's row above ours, per pair
    pairs: dict  # {label: (the paper's row or None, our row)}
    note: str  # whose rows the paper's are, and which of ours stand beside them
    verdict: str  # results.spread_verdict ("" where the paper gives no std)


def defsent_row_pooling(model):
    """The pooling ("cls", "mean", "max") of Table 2's DefSent row of `model`: DefSent's Table 8
    row of the same model with the same numbers (BERT-base: Mean, 75.11); None for a model the
    papers did not run. DefSent+ reports DefSent at each model's best pooling."""
    label = aggregate.PAPER_MODEL_LABELS.get(str(model))
    row = paper_defsentplus.TABLE2.get(f"DefSent {label}")
    found = [
        p
        for p, name in aggregate.POOLING_LABELS.items()
        if paper_defsent.TABLE8.get((label, name)) == row
    ]
    return found[0] if row and found else None


def defsent_row(scale, model, data_dir=None, variant="official"):
    """(label, pooling, STS row, runs) of Table 2's DefSent row: DefSent trained as notebook 10
    trains it, at the model's best pooling as DefSent+ reports it, the mean over every seed,
    scored as the DefSent+ rows beside it are (SentEval's tokenised files, the same pairs)."""
    pooling = defsent_row_pooling(aggregate.reference_model(model)[0]) or "cls"
    seeds = defsent_scores.sts(  # on the DefSent+ rows' files
        scale, model, [pooling], data_dir, variant, defsentplus_protocol.STS_FILES
    ).trained[pooling]
    row = [sum(s[c] for s in seeds) / len(seeds) for c in results.STS_COLS]
    return f"DefSent ({aggregate.POOLING_LABELS[pooling]})", pooling, row, len(seeds)


def table2_rows(runs, untrained, defsent):
    """Our rows: the untrained model and DefSent (`defsent_row`) under their best pooling, then
    for each dataset's PST steps (runs: {"c"|"b"|"a": defsentplus_protocol.run's steps}) each candidate space's
    mean over seeds under the pooling with the best mean (the paper's statistical result)."""
    rows, poolings = {}, {}
    poolings["untrained"], rows["untrained"] = defsentplus_protocol.best_pooling_scores(untrained)
    label, poolings[label], rows[label], n = defsent
    stds, counts = {}, {label: n}
    for name, steps in runs.items():
        for st in steps:
            combo = defsentplus_protocol.combination_name(*st["combination"]).replace(" ", "")
            for space in defsentplus_protocol.spaces_of(st):
                label = f"DefSent+ {defsentplus_protocol.ordinal(st['step'])}-{combo}-{name}"
                label += " (ICA)" if space != "plain" else ""
                seed_table = defsentplus_protocol.seed_table(st, space)
                poolings[label], mean, stds[label] = defsentplus_protocol.best_pooling_row(
                    seed_table
                )
                counts[label] = int(seed_table.n.iloc[0])
                rows[label] = mean.tolist()
    table = pd.DataFrame.from_dict(rows, orient="index", columns=results.STS_COLS)
    table.insert(0, "pooling", pd.Series(poolings))
    return OurRows(table, stds, counts)


def table2(ours, model, scale, runs):
    """Table 2 beside ours (OurRows): DefSent's row and each DefSent+ row found by model, step,
    dataset and space, with the paper's std (runs: our seeds per row)."""
    reference, note = aggregate.reference_model(model)
    table = paper_defsentplus.TABLE2
    defsent_label = next(k for k in ours.table.index if k.startswith("DefSent ("))
    pairs = {
        defsent_label: (
            aggregate.paper_row(table, reference, "DefSent ", exclude=("DefSent+",)),
            defsent_label,
        )
    }
    for label in [k for k in ours.table.index if k.startswith("DefSent+")]:
        key = table2_row(reference, label.split()[1], label.endswith("(ICA)"))
        pairs[paired_label(label.replace("DefSent+ ", ""), key)] = (key, label)
    side = results.side_by_side(
        results.paper_table(table, results.STS_COLS),
        ours.table[results.STS_COLS],
        pairs,
        compare=aggregate.comparable(model, scale),
        std=results.paper_table(paper_defsentplus.TABLE2_STD, results.STS_COLS),
        runs=runs,
    )
    return Beside(side, pairs, note, results.spread_verdict(side))


class FinalSentEval(NamedTuple):
    """Table 4's rows of ours: the final PST encoder and the untrained one on SentEval."""

    ours: pd.DataFrame  # senteval.transfer_before_after's two rows: untrained, final PST
    steps: list  # defsentplus_protocol.run's steps (the last one's best run is the final encoder)
    pooling: str  # the inference pooling scored (senteval_pooling)
    why: str  # ... and why that one
    report: dict  # the entry dataset's report (source, entries)


def final_senteval(scale, model, dataset, combination=None, data_dir=None, variant="official"):
    """PST run as notebook 21 runs it (or its cached steps), then SentEval of its final encoder and
    of the untrained one, under the pooling Table 7 gives the model (else the run's best on STS);
    the plan, printed first, counts both encodings of the SentEval sentences."""
    reference = aggregate.reference_model(model)[0]
    cfg, _ = defsentplus_protocol.model_pst_config(
        scale, model, dataset, reference, combination, variant=variant
    )
    encoded = 2 * eval_sizes.transfer_sentences(data_dir, senteval.transfer_settings(scale))
    plans.print_plan(
        scale, lambda: defsentplus_protocol.plan(cfg, data_dir=data_dir, extra_encoded=encoded)
    )
    steps, report = defsentplus_protocol.run(cfg, data_dir)
    final = steps[-1]["best_run"]
    pooling, why = senteval_pooling(model, final)  # refuses a NaN STS avg
    names = (f"untrained ({pooling})", f"DefSent+ final PST ({pooling})")
    ours = senteval.transfer_before_after(
        model, final["path"], pooling, scale, data_dir, names=names
    )
    return FinalSentEval(ours, steps, pooling, why, report)


def table4(ours, steps, model, scale):
    """Table 4 beside ours (senteval.transfer_before_after's two rows: untrained, final
    PST): our final encoder beside the paper's DefSent+ row of the model in the same space (its ICA
    row only when our last step kept the ICA space)."""
    reference, note = aggregate.reference_model(model)
    space = steps[-1]["best"][0]
    ica = space != "plain"
    final_key = aggregate.paper_row(
        paper_defsentplus.TABLE4,
        reference,
        "DefSent+",
        "3rd-",
        *(["ICA"] if ica else []),
        exclude=("simcse", "snscse") + (() if ica else ("ICA",)),
    )
    note += f"\nour final encoder's space: {space}; the paper's row in that space: {final_key}"
    untrained_name, trained_name = ours.index
    pairs = {untrained_name: (None, untrained_name), trained_name: (final_key, trained_name)}
    side = results.side_by_side(
        results.paper_table(paper_defsentplus.TABLE4, results.TRANSFER_COLS),
        ours,
        pairs,
        compare=aggregate.comparable(model, scale),
    )
    return Beside(side, pairs, note, "")
