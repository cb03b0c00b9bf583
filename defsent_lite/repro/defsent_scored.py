"""DefSent's final runs scored as notebooks 11 (STS) and 12 (SentEval) show them, one call each:
the plan printed first, every pooling's seeds trained (or found in the cache, where notebook 10
left them) and scored, the untrained encoder scored beside them."""

from typing import NamedTuple

import pandas as pd

from defsent_lite.runtime import defsent_model
from defsent_lite.data import dictionary
from defsent_lite.paper import aggregate, defsent_eval_tables
from defsent_lite.repro import defsent_runs, eval_sizes, preflight, scores, transfer_scores

ALL_POOLINGS = ("cls", "mean", "max")


class Scored(NamedTuple):
    """The scores of a notebook's DefSent runs, and what its tables and saved files name."""

    untrained: dict  # {pooling: scores of the encoder as loaded}
    trained: dict  # {pooling: [scores of each seed's run]}
    dev_mrr: dict  # {pooling: mean dev MRR over the seeds}
    poolings: list  # the poolings scored
    head_kind: str  # defsent.PRETRAINED or FALLBACK
    data: str  # where the definitions came from (the dataset report's source)
    reported: str = ""  # SentEval: Table 4's one pooling (defsent_eval_tables.reported_pooling)
    why: str = ""  # ... and why that one


class Prepared(NamedTuple):
    base: dict  # defsent_runs.base_config
    dataset: tuple  # (splits, report) as dictionary.defsent_dataset
    head_kind: str


def prepared(scale, model, data_dir=None, variant="official"):
    """The run settings, the dictionary dataset and the kind of head, as notebook 10 builds them."""
    prefix_space = defsent_runs.variant_settings(variant)["prefix_space"]
    loaded = defsent_model.load(model, prefix_space=prefix_space)
    paper_data = scale["paper_protocol"]  # Ishiwatari's Oxford splits, else what is at hand
    dataset = dictionary.defsent_dataset(
        loaded.tokenizer,
        data_dir,
        defsent_runs.variant_settings(variant)["data"],
        paper_data=paper_data,
    )
    base = defsent_runs.base_config(scale, model, data_dir, variant=variant)
    return Prepared(base, dataset, loaded.head_kind)


def mean_dev_mrr(runs):
    """The mean dev MRR of a pooling's seed runs (a list of run results)."""
    return pd.Series([r["dev"]["mrr"] for r in runs]).mean()


def sts(scale, model, poolings, data_dir=None, variant="official"):
    """Table 8's and Table 3's numbers: STS of every pooling, untrained and after DefSent (each
    seed); the plan counts the training and the STS sentences encoded untrained and trained."""
    p = prepared(scale, model, data_dir, variant)
    lr_xs, seeds = scale["defsent_lr_xs"], scale["seeds"]
    max_pairs, batch_size = scale["sts_max_pairs"], scale["encode_batch_size"]
    encoded = len(poolings) * 2 * eval_sizes.sts_sentences(data_dir, max_pairs)
    preflight.print_plan(
        scale,
        lambda: defsent_runs.plan(p.base, poolings, lr_xs, seeds, p.dataset, extra_encoded=encoded),
    )
    untrained = scores.untrained_sts(model, poolings, max_pairs, data_dir, batch_size)
    trained, dev_mrr = {}, {}
    for pooling in poolings:
        runs = defsent_runs.final_runs(p.base, pooling, lr_xs, seeds, p.dataset).runs
        trained[pooling] = [
            scores.trained_sts(r, pooling, max_pairs, data_dir, batch_size) for r in runs
        ]
        dev_mrr[pooling] = mean_dev_mrr(runs)
    source = p.dataset[1]["source"]
    return Scored(untrained, trained, dev_mrr, list(poolings), p.head_kind, source)


def senteval(scale, model, poolings=None, data_dir=None, variant="official"):
    """Table 9's and Table 4's numbers: SentEval of each pooling scored (None: the scale's choice,
    defsent_runs.senteval_poolings), untrained and after DefSent (its first SENTEVAL_SEEDS seeds,
    as Table 9). Every pooling is trained, since Table 4's pooling is the best by dev MRR."""
    p = prepared(scale, model, data_dir, variant)
    lr_xs, seeds, batch_size = scale["defsent_lr_xs"], scale["seeds"], scale["encode_batch_size"]
    transfer = transfer_scores.transfer_settings(scale)
    encoded = len(ALL_POOLINGS) * 2 * eval_sizes.transfer_sentences(data_dir, transfer)
    preflight.print_plan(
        scale,
        lambda: defsent_runs.plan(
            p.base, list(ALL_POOLINGS), lr_xs, seeds, p.dataset, extra_encoded=encoded
        ),
    )
    final = {q: defsent_runs.final_runs(p.base, q, lr_xs, seeds, p.dataset) for q in ALL_POOLINGS}
    dev_mrr = {q: mean_dev_mrr(f.runs) for q, f in final.items()}
    reference = aggregate.reference_model(model)[0]
    reported, why = defsent_eval_tables.reported_pooling(scale, reference, dev_mrr)
    poolings = poolings or defsent_runs.senteval_poolings(scale, reported)
    untrained, trained = {}, {}
    for q in poolings:
        untrained[q] = transfer_scores.untrained_transfer(model, [q], scale, data_dir, batch_size)[
            q
        ]
        seed_runs = final[q].runs[: defsent_runs.SENTEVAL_SEEDS]  # Table 9: three seeds
        trained[q] = [
            transfer_scores.trained_transfer(r, q, transfer, data_dir, batch_size)
            for r in seed_runs
        ]
    source = p.dataset[1]["source"]
    return Scored(untrained, trained, dev_mrr, list(poolings), p.head_kind, source, reported, why)
