"""DefSent+ on data-augmented checkpoints (Sec. 4.2): which paper rows a checkpoint has (Tables
3-7), and our rows before and after PST beside them."""

from typing import NamedTuple

import pandas as pd

from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.paper import defsentplus_senteval as paper_defsentplus_senteval
from defsent_lite.paper import results
from defsent_lite.paper.results import STS_COLS, TRANSFER_COLS
from defsent_lite.repro import pst
from defsent_lite.runtime import config

FAMILIES = {
    "simcse": ("SIMCSE", "SimCSE"),
    "snscse": ("SNCSE", "SNCSE"),  # label prefix -> the name of the
    "synscse": ("SynCSE (partial)", "SynCSE (partial)"),
}  # checkpoint in Tables 3 and 4


class Release(NamedTuple):
    checkpoint: str  # hub name or local folder
    label: str  # the paper's, e.g. "simcse-BERT-base", "synscse-partial-RoBERTa-base"
    table3_key: str  # the checkpoint's own row of Table 3
    table6_key: str  # the released DefSent+ encoder's row of Table 6 (mean of 10 runs)
    combinations: (
        tuple  # (pooling, entry pooling) of each PST step (Table 4's name; Sec. 4.2 for a 1st step)
    )
    lrs: tuple  # Table 5: one rate per PST step
    table4_keys: tuple  # (the checkpoint's row, the released DefSent+ encoder's row) of Table 4
    senteval_pooling: str  # Table 7: the released encoder's pooling for SentEval
    checkpoint_poolings: tuple  # Table 4's caption: the checkpoint's row is the best of these

    @property
    def steps(self):
        return len(self.lrs)


def labels():
    """The paper's labels of the data-augmented encoders (Table 6's names)."""
    return [
        key.split()[1]
        for key in paper_defsentplus.TABLE6
        if key.split()[1].split("-")[0] in FAMILIES
    ]


def release(checkpoint, label=None):
    """The paper's rows for a data-augmented checkpoint: its label is found by hub name
    (paper_defsentplus.DATA_AUGMENTED) or given (a local folder, e.g. SNCSE's); else an error."""
    label = label or paper_defsentplus.DATA_AUGMENTED.get(str(checkpoint))
    if label is None:
        raise ValueError(
            f"no DefSent+ rows for checkpoint {checkpoint!r}: the tables name these by hub name: "
            f"{', '.join(paper_defsentplus.DATA_AUGMENTED)}; for another checkpoint give "
            "PAPER_LABEL, "
            f"one of {', '.join(labels())}"
        )
    if label not in labels():
        raise ValueError(
            f"PAPER_LABEL {label!r} is not a data-augmented encoder of Table 6: "
            f"{', '.join(labels())}"
        )
    family, _, model = label.partition("-")
    model = model.removeprefix("partial-")
    table3_name, table4_name = FAMILIES[family]
    table6_key = paper_defsentplus.released_row(label)[0]
    table4_defsentplus = next(
        k for k in paper_defsentplus_senteval.TABLE4 if k.split()[:2] == ["DefSent+", label]
    )
    lrs = tuple(paper_defsentplus.table5_rates(label))
    senteval = paper_defsentplus.table7_poolings(label)[1]
    final = paper_defsentplus.combination_of(table4_defsentplus.split()[2])
    first = paper_defsentplus.FIRST_TRAINING_COMBINATION.get(label, final)
    return Release(
        str(checkpoint),
        label,
        f"{table3_name} {model}",
        table6_key,
        (first,) + (final,) * (len(lrs) - 1),
        lrs,
        (f"{table4_name} {model}", table4_defsentplus),
        senteval,
        paper_defsentplus_senteval.TABLE4_CHECKPOINT_POOLINGS[family],
    )


def model_to_train(scale_name, checkpoint, model=None):
    """The model notebook 25 trains: `model` when given, else the checkpoint itself under the
    paper's protocol, else None (the scale's offline model stands in for it)."""
    if model is not None:
        return model
    return checkpoint if config.scale(scale_name)["paper_protocol"] else None


def pst_config(scale, model, rel, steps=None, variant="official"):
    """The PST run of a release on dataset a: its combinations and, under the paper's protocol,
    Table 5's rates (a stand-in trains at the scale's rates). steps: None = as many as Table 5's."""
    lrs = rel.lrs if scale["paper_protocol"] else None
    cfg = pst.pst_config(
        scale,
        model,
        "a",
        *rel.combinations[0],
        ica=False,
        steps=steps or rel.steps,
        variant=variant,
        later_combinations=rel.combinations[1:],
        lrs=lrs,
    )
    if "RoBERTa" in rel.label:  # the pooler's dense layer from the original RoBERTa's MLM head,
        cfg["mlm_head_from"] = f"roberta-{rel.label.rsplit('-', 1)[1]}"  # a folder too (SNCSE)
    return cfg


def rows(untrained, steps):
    """(our STS rows, best pooling per row, runs per row): the checkpoint itself under its best
    pooling, then each PST step's mean over seeds under the pooling with the best mean."""
    table, poolings, counts = {}, {}, {}
    poolings["checkpoint"], table["checkpoint"] = pst.best_pooling_scores(untrained)
    for st in steps:
        label = f"DefSent+ {pst.ordinal(st['step'])} Training"
        seed_table = pst.seed_table(st, "plain")
        poolings[label], mean, _ = pst.best_pooling_row(seed_table)
        table[label], counts[label] = mean.tolist(), int(seed_table.n.iloc[0])
    return pd.DataFrame.from_dict(table, orient="index", columns=STS_COLS), poolings, counts


def beside_paper(ours, rel, compare=True):
    """Side-by-side with the paper: the checkpoint beside its Table 3 row, our last PST step beside
    Table 6's released encoder (its step named where it differs), earlier steps beside nothing.
    compare=False (another model stands in for the checkpoint): the paper's rows are context."""
    paper = results.paper_table(
        {
            rel.table3_key: paper_defsentplus.TABLE3[rel.table3_key],
            rel.table6_key: paper_defsentplus.TABLE6[rel.table6_key],
        },
        STS_COLS,
    )
    last = ours.index[-1]
    pairs = {"checkpoint": (rel.table3_key, "checkpoint")}
    for label in ours.index[1:]:
        pairs[label] = (rel.table6_key if label == last else None, label)
    return results.side_by_side(paper, ours, pairs, compare=compare)


def transfer_beside_paper(ours, rel, compare=True):
    """Table 4 side by side: our checkpoint row beside the paper's checkpoint row, our final
    encoder beside the paper's released DefSent+ encoder (ours: rows "checkpoint", "DefSent+", as
    transfer_scores.transfer_before_after names them)."""
    paper = results.paper_table(
        {k: paper_defsentplus_senteval.TABLE4[k] for k in rel.table4_keys}, TRANSFER_COLS
    )
    return results.side_by_side(
        paper,
        ours,
        {
            "checkpoint": (rel.table4_keys[0], "checkpoint"),
            "DefSent+": (rel.table4_keys[1], "DefSent+"),
        },
        compare=compare,
    )


def paper_rows_text(rel):
    """Which paper row stands beside each of ours (the tables' row labels are ours)."""
    return (
        f"paper rows: checkpoint = Table 3 / 4 '{rel.table3_key}' / '{rel.table4_keys[0]}'; the "
        f"last DefSent+ step = Table 6 '{rel.table6_key}', Table 4 '{rel.table4_keys[1]}'"
    )
