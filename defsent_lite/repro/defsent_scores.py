"""What a trained DefSent seed is scored on and the tables of those scores: STS and SentEval of
every seed (a later seed's checkpoint dropped once scored), the scores notebooks 11 and 12 show,
and Tables 3, 4, 8 and 9 beside the paper's rows. The training itself is defsent_protocol's."""

import statistics
from typing import NamedTuple

import pandas as pd

from defsent_lite import checks
from defsent_lite.evaluation import senteval as senteval_eval, sts as sts_eval
from defsent_lite.paper import aggregate, results
from defsent_lite.paper import defsent as paper_defsent
from defsent_lite.paper.aggregate import POOLING_LABELS
from defsent_lite.repro import defsent_protocol as dp, eval_sizes, plans
from defsent_lite.repro.defsent_protocol import Beside, beside, ours_per_pooling
from defsent_lite.runtime import cache, config, models


# Tables 2, 3, 5 and 8 average 10 seeds; SentEval (Tables 4 and 9) "three evaluations with
# different random seeds": the first three seeds of the scale.
SENTEVAL_SEEDS = 3


def base_config(scale, model, data_dir=None, variant="official"):
    """defsent_protocol.base_config with `scoring`: what every later seed is scored on before its
    checkpoint is dropped (not in the run's key)."""
    return dict(
        dp.base_config(scale, model, variant=variant), scoring=seed_scoring(scale, data_dir)
    )


def final_runs(base, pooling, xs, seeds, dataset=None):
    """defsent_protocol.final_runs with every later seed scored and its checkpoint dropped."""
    return dp.final_runs(base, pooling, xs, seeds, dataset, train_seed=seed_run)


def seed_run(base, pooling, seed, lr, index, dataset=None, data_dir=None):
    """final_runs' training of its `index`-th seed: the first keeps its checkpoint (notebooks 13
    and 22 load it), every later one is scored and its checkpoint dropped (scored_run)."""
    dataset = dataset or dp.dataset_of(base, data_dir)
    if index == 0:
        return dp.seed_run(base, pooling, seed, lr, index, dataset)
    return scored_run(seed_config(base, pooling, seed, lr, index), dataset)


def seed_run_needs_training(base, pooling, seed, lr, index, dataset):
    """Whether seed_run(...) would train; scoring a kept checkpoint is no training."""
    if index == 0:
        return dp.needs_training(dict(base, pooling=pooling, seed=seed, lr=lr), dataset[0])
    cfg = seed_config(base, pooling, seed, lr, index)
    found = cache.lookup("defsent", dp.run_key(cfg, dataset[0]))
    if found is None or found.folder is not None:
        return found is None
    if not cfg.get("scoring"):
        return True
    result = dict(found.result, key=cache.config_key(dp.run_key(cfg, dataset[0])))
    return not trained_scores_cached(result, pooling, cfg["scoring"])


def seed_config(base, pooling, seed, lr, index):
    """The run config of the `index`-th seed; SentEval scores only the first SENTEVAL_SEEDS
    seeds."""
    cfg = dict(base, pooling=pooling, seed=seed, lr=lr)
    if cfg.get("scoring") and index >= SENTEVAL_SEEDS:
        cfg["scoring"] = dict(cfg["scoring"], transfer=None)
    return cfg


def scored_run(cfg, dataset):
    """A run whose STS and SentEval scores (cfg["scoring"]) are cached and whose checkpoint is
    dropped."""
    scoring = cfg.get("scoring")
    if scoring is None:  # a config without scoring keeps its checkpoint
        return dp.run(cfg, dataset)
    result = dp.run(cfg, dataset, need_checkpoint=False)
    if result["path"] is None and trained_scores_cached(result, cfg["pooling"], scoring):
        return result
    if result["path"] is None:
        result = dp.run(cfg, dataset, need_checkpoint=True)
    score_trained(result, cfg["pooling"], scoring)
    cache.drop_files("defsent", result["key"])
    return dict(result, path=None)


def seed_scoring(scale, data_dir=None):
    """What a trained DefSent seed is scored on before its checkpoint is dropped: the STS and
    SentEval evaluations that notebooks 11 and 12 show, and STS as DefSent+ scores it (SentEval's
    tokenised files, its pairs: notebook 22's DefSent row beside the DefSent+ rows), with the
    scale's settings."""
    return dict(
        sts_max_pairs=scale["sts_max_pairs"],
        dsp_sts_max_pairs=scale["dsp_sts_max_pairs"],
        transfer=senteval_eval.transfer_settings(scale),
        batch_size=scale["encode_batch_size"],
        data_dir=str(config.data_root(data_dir)),
    )


def score_trained(run, pooling, scoring):
    """Cache the STS and SentEval scores of a trained run (`seed_scoring`'s evaluations; SentEval
    skipped where scoring["transfer"] is None)."""
    for max_pairs, files in sts_scorings(scoring):
        sts_eval.trained_sts(
            run, pooling, max_pairs, scoring["data_dir"], scoring["batch_size"], files
        )
    if scoring["transfer"] is not None:
        senteval_eval.trained_transfer(
            run, pooling, scoring["transfer"], scoring["data_dir"], scoring["batch_size"]
        )


def trained_scores_cached(run, pooling, scoring):
    """Whether both of `seed_scoring`'s evaluations of this run are in the cache."""
    d = scoring["data_dir"]
    return all(
        cache.lookup_json("sts_trained", sts_eval.trained_sts_key(run, pooling, n, d, files))
        for n, files in sts_scorings(scoring)
    ) and (
        scoring["transfer"] is None
        or cache.lookup_json(
            "transfer_trained",
            senteval_eval.trained_transfer_key(run, pooling, scoring["transfer"], d),
        )
        is not None
    )


def sts_scorings(scoring):
    """(pairs per task, files) of each STS scoring of a seed: DefSent's (the raw files) and
    DefSent+'s (SentEval's tokenised files: defsentplus_protocol.STS_FILES)."""
    return [(scoring["sts_max_pairs"], "raw"), (scoring["dsp_sts_max_pairs"], "senteval")]


def plan(base, poolings, xs, seeds, dataset, extra_encoded=0):
    """defsent_protocol.plan with the later seeds' scoring (STS; SentEval for the first
    SENTEVAL_SEEDS) and `extra_encoded` more evaluation sentences encoded."""
    with_transfer = min(len(seeds), SENTEVAL_SEEDS) - 1
    scoring = base["scoring"]
    extra_encoded += len(poolings) * (
        (len(seeds) - 1) * scoring_sentences(dict(scoring, transfer=None))
        + with_transfer * scoring_sentences(dict(scoring, sts_max_pairs=0))
    )
    planned = dp.plan(base, poolings, xs, seeds, dataset)
    tokenizer = models.load_tokenizer(base["model"])
    tokens = extra_encoded * eval_sizes.eval_sentence_tokens(tokenizer, scoring["data_dir"])
    return planned._replace(
        encoded=planned.encoded + extra_encoded,
        encoded_tokens=planned.encoded_tokens + (tokens if extra_encoded else 0),
    )


def scoring_sentences(scoring):
    """Sentences one `scoring` (STS + SentEval) of a trained encoder encodes (sts_max_pairs 0: no
    STS; transfer None: no SentEval)."""
    sts_count = (
        sum(eval_sizes.sts_sentences(scoring["data_dir"], n) for n, _ in sts_scorings(scoring))
        if scoring["sts_max_pairs"] != 0
        else 0
    )
    transfer = (
        eval_sizes.transfer_sentences(scoring["data_dir"], scoring["transfer"])
        if scoring["transfer"] is not None
        else 0
    )
    return sts_count + transfer


def senteval_poolings(scale, reported):
    """The poolings whose SentEval rows notebook 12 scores: at smoke scale only `reported` (the
    pooling of Table 4's row; SentEval is the slowest part there), else all three (Table 9)."""
    return [reported] if scale["name"] == "smoke" else ["cls", "mean", "max"]


ALL_POOLINGS = ("cls", "mean", "max")


class Scored(NamedTuple):
    """The scores of a notebook's DefSent runs, and what its tables and saved files name."""

    untrained: dict  # {pooling: scores of the encoder as loaded}
    trained: dict  # {pooling: [scores of each seed's run]}
    dev_mrr: dict  # {pooling: mean dev MRR over the seeds}
    poolings: list  # the poolings scored
    head_kind: str  # defsent.PRETRAINED or FALLBACK
    data: str  # where the definitions came from (the dataset report's source)
    reported: str = ""  # SentEval: Table 4's one pooling (reported_pooling)
    why: str = ""  # ... and why that one


def sts(scale, model, poolings, data_dir=None, variant="official", files="raw"):
    """Table 8's and Table 3's numbers: STS of every pooling, untrained and after DefSent (each
    seed); the plan counts the training and the STS sentences encoded untrained and trained.
    files="senteval": scored as DefSent+ scores (its files and pairs per task; notebook 22)."""
    base = base_config(scale, model, data_dir, variant)
    dataset = dp.dataset_of(
        base, data_dir
    )  # notebook 10's: Ishiwatari's Oxford splits at the paper scale
    lr_xs, seeds, batch_size = scale["defsent_lr_xs"], scale["seeds"], scale["encode_batch_size"]
    max_pairs = scale["sts_max_pairs" if files == "raw" else "dsp_sts_max_pairs"]
    encoded = len(poolings) * 2 * scoring_sentences(dict(base["scoring"], transfer=None))
    plans.print_plan(
        scale,
        lambda: plan(base, poolings, lr_xs, seeds, dataset, extra_encoded=encoded),
    )
    untrained = sts_eval.untrained_sts(model, poolings, max_pairs, data_dir, batch_size, files)
    trained, dev_mrr = {}, {}
    for pooling in poolings:
        runs = final_runs(base, pooling, lr_xs, seeds, dataset).runs
        trained[pooling] = [
            sts_eval.trained_sts(r, pooling, max_pairs, data_dir, batch_size, files) for r in runs
        ]
        dev_mrr[pooling] = statistics.fmean(r["dev"]["mrr"] for r in runs)
    head_kind, source = runs[0]["head"], dataset[1]["source"]  # the head each run trained with
    return Scored(untrained, trained, dev_mrr, list(poolings), head_kind, source)


def senteval(scale, model, poolings=None, data_dir=None, variant="official"):
    """Table 9's and Table 4's numbers: SentEval of each pooling scored (None: the scale's choice,
    senteval_poolings), untrained and after DefSent (its first SENTEVAL_SEEDS seeds,
    as Table 9). Every pooling is trained, since Table 4's pooling is the best by dev MRR."""
    base = base_config(scale, model, data_dir, variant)
    dataset = dp.dataset_of(base, data_dir)
    lr_xs, seeds, batch_size = scale["defsent_lr_xs"], scale["seeds"], scale["encode_batch_size"]
    transfer = senteval_eval.transfer_settings(scale)
    encoded = len(ALL_POOLINGS) * 2 * scoring_sentences(dict(base["scoring"], sts_max_pairs=0))
    plans.print_plan(
        scale,
        lambda: plan(base, list(ALL_POOLINGS), lr_xs, seeds, dataset, extra_encoded=encoded),
    )
    final = {q: final_runs(base, q, lr_xs, seeds, dataset) for q in ALL_POOLINGS}
    dev_mrr = {q: statistics.fmean(r["dev"]["mrr"] for r in f.runs) for q, f in final.items()}
    reference = aggregate.reference_model(model)[0]
    reported, why = reported_pooling(scale, reference, dev_mrr)
    poolings = poolings or senteval_poolings(scale, reported)
    untrained, trained = {}, {}
    for q in poolings:
        untrained[q] = senteval_eval.untrained_transfer(model, [q], scale, data_dir, batch_size)[q]
        seed_runs = final[q].runs[:SENTEVAL_SEEDS]  # Table 9: three seeds
        trained[q] = [
            senteval_eval.trained_transfer(r, q, transfer, data_dir, batch_size) for r in seed_runs
        ]
    head_kind, source = final[poolings[0]].runs[0]["head"], dataset[1]["source"]
    return Scored(untrained, trained, dev_mrr, list(poolings), head_kind, source, reported, why)


def table8(untrained, trained, model, scale):
    """Table 8, STS of every pooling: the untrained encoder and DefSent's runs (mean over seeds)
    beside the paper's DefSent rows of the model, with its std (the paper has no untrained row
    here). untrained: {pooling: STS scores}; trained: {pooling: [STS scores of each seed]}."""
    cols = results.STS_COLS
    per_seed = {p: [[s[c] for c in cols] for s in runs] for p, runs in trained.items()}
    seeds, ours = ours_per_pooling(untrained, per_seed, cols, "untrained", "DefSent STS")
    reference, note = aggregate.reference_model(model)
    pairs = {}
    for p in trained:
        label = POOLING_LABELS[p]
        pairs[f"untrained ({label})"] = (None, ("untrained", p))
        pairs[f"DefSent ({label})"] = (
            aggregate.paper_row(paper_defsent.TABLE8, reference, label),
            ("DefSent", p),
        )
    paper, std = paper_defsent.TABLE8, paper_defsent.TABLE8_STD
    return beside(paper, std, cols, ours, pairs, seeds, reference, note, model, scale)


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
    pools the same way and is not Table 9's row again, and Table 4's raw-BERT rows (BERT-base
    only), with Table 9's std.
    untrained: {pooling: scores}; trained: {pooling: [scores of each seed]}."""
    cols = results.TRANSFER_COLS
    per_seed = {p: [[s[c] for c in cols] for s in runs] for p, runs in trained.items()}
    seeds, ours = ours_per_pooling(untrained, per_seed, cols, "untrained", "DefSent SentEval")
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
    pairs, twice = {}, set()  # twice: a Table 4 row that is Table 9's, shown once
    for p in trained:
        key9 = aggregate.paper_row(paper_defsent.TABLE9, reference, POOLING_LABELS[p])
        pairs[f"DefSent ({p}) vs Table 9"] = (
            f"Table 9: {key9[0]} ({key9[1]})" if key9 else None,
            ("DefSent", p),
        )
        if key4 and f"({POOLING_LABELS[p]})" in key4:  # Table 4's row pools as the paper's best
            pairs[f"DefSent ({p}) vs {key4}"] = (key4, ("DefSent", p))
            if paper_defsent.TABLE4[key4] == paper_defsent.TABLE9.get(key9):
                twice.add(f"DefSent ({p}) vs {key4}")
        if p in paper_defsent.UNTRAINED_ROWS.get(reference, {}):
            pairs[f"untrained ({p})"] = (
                paper_defsent.UNTRAINED_ROWS[reference][p],
                ("untrained", p),
            )
    table = results.side_by_side(
        paper,
        ours,
        {label: pair for label, pair in pairs.items() if label not in twice},
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
