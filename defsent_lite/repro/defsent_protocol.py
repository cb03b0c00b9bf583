"""DefSent's training protocol, read top to bottom: its settings (official code / paper text), a
cached training run, the learning-rate search, the seeded final runs, the plan, and the word
prediction tables (2 and 5) beside the paper's rows. What a trained seed is scored on (STS,
SentEval: Tables 3, 4, 8, 9) is defsent_scores. The method itself is defsent_lite.defsent; its
dictionary dataset data.dictionary.defsent_dataset; its model with the frozen head
runtime.defsent_model.load."""

import json
import math
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import torch

from defsent_lite import checks, defsent, train
from defsent_lite.checks import best_of, require_nonempty
from defsent_lite.data import dictionary
from defsent_lite.paper import aggregate, results
from defsent_lite.paper import defsent as paper_defsent
from defsent_lite.paper.aggregate import POOLING_LABELS
from defsent_lite.repro import plans
from defsent_lite.runtime import cache, config, defsent_model, models, speed

# What the released code (hppRC/defsent) does and what the paper's text says where they differ.
# "official" is the default; "paper" keeps the text (and, where the text is silent, what this
# repository did before it followed the code).

VARIANTS = {
    "official": dict(
        freeze_embedding_layer=True,
        shuffle=False,
        mixed_precision=False,
        fractional_warmup=True,
        max_length=512,
        mrr_cutoff=None,
        prefix_space=True,
        data=dict(dictionary.OFFICIAL_PREP),
    ),
    "paper": dict(
        freeze_embedding_layer=False,
        shuffle=True,
        mixed_precision=True,
        fractional_warmup=False,
        max_length=128,
        mrr_cutoff=None,
        prefix_space=False,
        data=dict(detokenise=False, dedupe=True, grouped=False),
    ),
}
DIFFERENCES = [  # (setting, paper text, official code, variant="paper")
    (
        "frozen",
        "the word prediction layer (tied to the word embeddings)",
        "the word prediction layer and the whole embeddings module (word, position, token type, "
        "LayerNorm)",
        "the word prediction layer and the word embeddings",
    ),
    (
        "batch order",
        "not stated",
        "not shuffled: the train file's order, a word's definitions together",
        "shuffled once (seeded)",
    ),
    (
        "precision",
        "not stated",
        "fp32 (precision: 32)",
        "bf16 / fp16 autocast on GPU (fp32 on CPU)",
    ),
    (
        "warm-up",
        "linear over 10% of the training data (after it: not stated)",
        "factor step / (0.1 x steps) from 0, then 1",
        "(step + 1) / floor(0.1 x steps), then 1 (our reading: constant)",
    ),
    (
        "definition text",
        "Ishiwatari et al.'s Oxford data",
        "detokenised (' .' -> '.', ``x'' -> X, ...; 9.87 words on valid+test)",
        "the tokenised text (10.97 words)",
    ),
    (
        "repeated definitions",
        "not stated",
        "kept (one training pair per line)",
        "a word's repeated definition once",
    ),
    (
        "RoBERTa input",
        "not stated",
        "tokenizer with add_prefix_space (the first word of a definition gets its space)",
        "no leading space on the first word",
    ),
    ("definition length", "not stated", "cut at the model's 512 tokens", "cut at 128 tokens"),
    (
        "MRR",
        "mean reciprocal rank",
        "from the top 10 (a gold word ranked below 10 counts 0): not the default, result key "
        "mrr_top10",
        "both variants: over the whole vocabulary, as the paper's numbers were computed (its "
        "untrained rows' MRR exceeds the most a top-10 MRR can reach with their own top-1/3/10 "
        "accuracies: Max .0327 > .0315, Mean .0132 > .0072, CLS .0009 > 0)",
    ),
    (
        "split",
        "8:1:1 by word",
        "all words split (unseeded shuffle, boundaries floor(0.8 n), floor(0.9 n)), then each "
        "split keeps its words of one token: Table 1's All row is floor's 29,413 / 3,677 / 3,677, "
        "its BERT rows 7,732 / 936 / 979 are not 8:1:1",
        "both variants: the same order and boundaries; a seeded shuffle (seed 0), so not the "
        "official run's words",
    ),
    (
        "SentEval seeds",
        "the mean of three evaluations with different random seeds (Table 9)",
        "sets no seed: SentEval's default 1111 (its folds and classifier) in every evaluation",
        "both variants: the first three training seeds' encoders, each evaluated with seed 1111 "
        "(the same folds)",
    ),
    (
        "learning rate",
        "searched: 2^x 1e-6, x in 0, 0.5, ..., 7, on dev MRR (Table 5: the chosen)",
        "run scripts pin Table 5's rate per model and pooling",
        "both variants: the scale's defsent_lr_xs (paper scale 'table5', the scripts'; LR_GRID_XS "
        "searches)",
    ),
    (
        "STS / SentEval encoding",
        "not stated",
        "fp32, cut at 512 tokens",
        "both variants: the same as official",
    ),
    (
        "SentEval classifier",
        "SentEval (not detailed)",
        "SentEval's torch classifier, 10 folds",
        "both variants: the scale's transfer_classifier (paper scale: SentEval's torch classifier)",
    ),
]


def variant_settings(variant):
    """The settings of a DefSent variant (VARIANTS); an unknown name is an error."""
    return config.pick("DefSent", VARIANTS, variant)


def differences():
    """The DefSent settings where the paper's text and the official code differ."""
    return aggregate.differences_table(DIFFERENCES)


# ---------------------------------------------------------------- data


def subsample(examples, n, seed):
    """A seeded random subset of n examples (all when n is None or larger)."""
    if (
        checks.count(n, "the number of examples to keep (train_max / eval_max)") is None
        or len(examples) <= n
    ):
        return list(examples)
    g = torch.Generator().manual_seed(seed)
    return [examples[i] for i in sorted(torch.randperm(len(examples), generator=g)[:n].tolist())]


def top_k_strings(loaded, sentences, pooling, k=5):
    """top_k_words of a LoadedModel, each sentence's words joined by spaces (the tables' cells)."""
    return [
        " ".join(words)
        for words in defsent.top_k_words(
            loaded.model, loaded.tokenizer, loaded.head, sentences, pooling, k
        )
    ]


# ---------------------------------------------------------------- saving


def save(model, tokenizer, head_kind, folder, meta):
    """save_pretrained (with the MLM head only when it is the real one), a metadata file, and a
    sentence-transformers pooling config so both libraries load the encoder as trained."""
    folder = Path(folder)
    target = model if head_kind == defsent.PRETRAINED else model.base_model
    target.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    (folder / "defsent_meta.json").write_text(json.dumps(dict(meta, head=head_kind), indent=1))
    models.write_sentence_transformers_config(folder, meta["pooling"], model.config.hidden_size)
    return folder


# ---------------------------------------------------------------- one cached training run


def run_settings(cfg):
    """The variant's settings of a run, each overridden by the same key in cfg (VARIANTS)."""
    return dict(
        variant_settings(cfg["variant"]), **{k: cfg[k] for k in VARIANTS["official"] if k in cfg}
    )


def nonempty(dataset):
    """The dataset's splits, refused when one is empty (a dev split without a definition would
    score NaN after the whole training)."""
    splits, report = dataset
    for k in ("train", "dev", "test"):
        if not splits.get(k):
            raise ValueError(
                f"the DefSent dataset ({report.get('source', 'given')}) has no {k} definition: "
                "its dictionary is too small for the 8:1:1 split by word (10 words at least)"
            )
    return splits


def train_and_score(cfg, dataset, folder, what):
    """One DefSent training (Sec. 2.3: cross-entropy of the defined word, predicted from the pooled
    definition through the frozen head) on the dataset's train split, then its dev and test word
    prediction; the trained encoder saved in `folder`/model."""
    splits, report, v = nonempty(dataset), dataset[1], run_settings(cfg)
    config.set_seed(cfg["seed"])
    model, tokenizer, head, head_kind = defsent_model.load(
        cfg["model"],
        prefix_space=v["prefix_space"],
        allow_fallback=cfg.get("allow_head_fallback", True),
    )
    train_set = subsample(splits["train"], cfg["train_max"], cfg["seed"])
    batches = train.batched(
        train_set, cfg["batch_size"], seed=cfg["seed"] if v["shuffle"] else None
    )
    settings = train.Settings(
        lr=cfg["lr"],
        optimizer=cfg["optimizer"],
        warmup_ratio=cfg["warmup_ratio"],
        fractional_warmup=v["fractional_warmup"],
        warmup_from_zero=v["fractional_warmup"],
        mixed_precision=config.autocast_training(cfg, v),
    )
    history = train.train(
        model,
        lambda m, b: defsent.loss(
            m,
            head,
            defsent.collate(tokenizer, b, v["max_length"], cfg["pooling"]),
            cfg["pooling"],
            tokenizer.mask_token_id,
        ),
        defsent.tokenize_definition_batches(tokenizer, batches, v["max_length"], cfg["pooling"]),
        settings,
        params=defsent.trainable_parameters(model, v["freeze_embedding_layer"]),
        describe_batch=lambda b: f"words {[w for w, _, _ in b.examples[:4]]}...",
        desc=what,
        around=speed.training(model, len(batches)),  # compiles when it pays
        resume=cache.resume_file(folder),
    )
    evals = {
        k: defsent.evaluate(
            model,
            tokenizer,
            head,
            subsample(splits[k], cfg["eval_max"], 0),
            cfg["pooling"],
            max_length=v["max_length"],
            what=f"{what} {k}",
            mrr_cutoff=v["mrr_cutoff"],
        )
        for k in ("dev", "test")
    }
    meta = dict(
        method="DefSent",
        base_model=cfg["model"],
        pooling=cfg["pooling"],
        seed=cfg["seed"],
        lr=cfg["lr"],
        variant=cfg["variant"],
        data=report["source"],
        train_definitions=len(train_set),
    )
    save(model, tokenizer, head_kind, folder / "model", meta)
    return dict(
        dev=evals["dev"],
        test=evals["test"],
        head=head_kind,
        steps=history["steps"],
        final_loss=history["loss"][-1],
        train_definitions=len(train_set),
        data=report,
    )


def run(cfg, dataset=None, data_dir=None, need_checkpoint=True):
    """train_and_score(cfg) once on `dataset` (dictionary.defsent_dataset's, built from data_dir
    when None), cached by cfg and the dataset's content; returns its result dict.

    cfg keys: model, pooling, lr, seed, batch_size, train_max, eval_max, optimizer, warmup_ratio,
    variant and its settings (VARIANTS; a setting in cfg overrides the variant's) (and `scoring`,
    defsent_scores', not in the key). The trained encoder is saved in the run's folder
    (`result["path"]`); a second call with the same cfg and data reuses it. A run whose checkpoint
    was dropped (final_runs' search keeps only the chosen rate's) is trained again when need_checkpoint, else
    returned with path None.
    """
    checks.rate(cfg["lr"], "DefSent lr")  # before a message formats it
    dataset = dataset or dataset_of(cfg, data_dir)
    if dataset[1].get("prep") != run_settings(cfg)["data"]:
        raise ValueError(
            f"DefSent variant {cfg['variant']!r} trains on data prepared as "
            f"{run_settings(cfg)['data']}, but the dataset given was prepared as "
            f"{dataset[1].get('prep')}: build it with dictionary.defsent_dataset(..., "
            f"prep=defsent_protocol.variant_settings({cfg['variant']!r})['data'])"
        )
    key = run_key(cfg, dataset[0])
    what = f"DefSent run {cache.config_key(key)} ({cfg['pooling']}, lr {cfg['lr']:g}, seed {cfg['seed']})"
    entry = cache.cached_run(
        "defsent",
        key,
        lambda folder: train_and_score(cfg, dataset, folder, what),
        need_files=need_checkpoint,
    )
    return dict(
        entry.result,
        path=str(entry.folder / "model") if entry.folder else None,
        key=cache.config_key(key),
    )


def dataset_of(cfg, data_dir=None):
    """dictionary.defsent_dataset as cfg's model, variant and data ask (cached)."""
    data = variant_settings(cfg["variant"])["data"]
    tokenizer = models.load_tokenizer(cfg["model"])
    return dictionary.defsent_dataset(
        tokenizer, data_dir, data, paper_data=cfg.get("paper_data", False)
    )


def run_key(cfg, splits):
    """The cache key of run(cfg) on `splits`: its settings (scoring aside) and the data's
    content."""
    return dict(
        {k: v for k, v in cfg.items() if k != "scoring"}, dataset=cache.content_digest(splits)
    )


def needs_training(cfg, splits, need_checkpoint=True):
    """Whether run(cfg, need_checkpoint=...) on `splits` would train: no cached entry, or one whose
    checkpoint was dropped when it is needed."""
    found = cache.lookup("defsent", run_key(cfg, splits))
    return found is None or (need_checkpoint and found.folder is None)


LR_GRID_XS = [i / 2 for i in range(15)]  # the paper's search: 2^x * 1e-6, x in {0, 0.5, ..., 7}
PINNED = "table5"  # the rate the official run scripts pin per model and pooling (Table 5)


def learning_rates(xs, model, pooling):
    """The rates 2^x * 1e-6 final_runs tries for `model` and `pooling`, the one place a rate is
    resolved (numbers from here to the optimizer): xs = "table5" is the one rate the official run
    scripts pin (Table 5; hppRC/defsent experiments/scripts), a list of exponents x is a search on
    dev MRR (the paper's text: `LR_GRID_XS`)."""
    if xs == PINNED:
        label = (aggregate.paper_model_label(model), aggregate.POOLING_LABELS.get(pooling))
        if label not in paper_defsent.TABLE5_LR_X:
            raise ValueError(
                f"defsent_lr_xs={PINNED!r}: Table 5 pins no rate for {model!r} with {pooling!r} "
                "pooling; give the exponents to search instead (defsent_protocol.LR_GRID_XS is "
                "the paper's grid)"
            )
        xs = [paper_defsent.TABLE5_LR_X[label]]
    return [2.0**x * 1e-6 for x in xs]


def rate_label(lr):
    """A rate as the paper writes it: 2^x e-6."""
    return f"2^{math.log2(lr / 1e-6):g}e-6"


def searched_rate(base, pooling, seed, rates, dataset):
    """The rate final_runs' search chooses (best dev MRR) once every rate's run is cached, else
    None (also without the data: dataset None). The launcher's seeds wait for it."""
    cfgs = {lr: dict(base, pooling=pooling, seed=seed, lr=lr) for lr in rates}
    found = (
        {lr: cache.lookup("defsent", run_key(c, dataset[0])) for lr, c in cfgs.items()}
        if dataset
        else {}
    )
    if not found or None in found.values():
        return None
    mrr = lambda r: r["dev"]["mrr"]  # noqa: E731
    return best_of(
        {lr: f.result for lr, f in found.items()}, mrr, f"DefSent learning-rate search ({pooling})"
    )


def run_steps(base, dataset=None):
    """Optimizer steps of one run: its training definitions (without the data, dataset None: the
    paper's Table 1 count) capped by train_max, at the batch size."""
    label = "In RoBERTa vocab." if "roberta" in base["model"] else "In BERT vocab."
    n = len(dataset[0]["train"]) if dataset else paper_defsent.TABLE1[(label, "Train")][1]
    return math.ceil(min(n, base["train_max"] or math.inf) / base["batch_size"])


def base_config(scale, model, variant="official"):
    """The run config shared by every DefSent run of a scale (pooling, lr and seed added later);
    variant: "official" (the released code, default) or "paper" (VARIANTS), in the run's key
    (defsent_scores.base_config adds what a later seed is scored on)."""
    return dict(
        model=model,
        batch_size=scale["defsent_batch_size"],
        train_max=scale["defsent_train_max"],
        eval_max=scale["defsent_eval_max"],
        optimizer="adam",
        warmup_ratio=0.1,
        variant=variant,
        **{
            k: v for k, v in variant_settings(variant).items() if k != "data"
        },  # data: the dataset's
        paper_data=scale["paper_protocol"],
        allow_head_fallback=not scale["paper_protocol"],
        **(
            {"train_autocast": scale["train_autocast"]}
            if scale["train_autocast"] is not None
            else {}
        ),
    )


class FinalRuns(NamedTuple):
    """What final_runs chose and trained: the learning rate, the search, one run per seed."""

    lr: float
    search: dict
    runs: list


def final_runs(base, pooling, xs, seeds, dataset=None, data_dir=None, train_seed=None):
    """The learning-rate search on dev MRR (first seed) among learning_rates(xs, ...) (one pinned
    rate: no choice), then every seed at the chosen rate: train_seed(base, pooling, seed, lr, index,
    dataset), this module's `seed_run` when None.

    Returns FinalRuns(lr, search {lr: result}, runs [result per seed]); all runs are cached. Only
    the chosen rate's checkpoint is kept (it is the first seed's run): the others' are dropped as
    soon as a better rate is seen, so at most two are on disk (results stay cached, path None).
    The first seed's checkpoint is needed (notebooks 13 and 22 load it); a later seed's is kept
    until defsent_scores.seed_run scores it on STS and SentEval and drops it (notebooks 11, 12 and
    the launcher), and never trained again for its word prediction alone."""
    require_nonempty(seeds, f"DefSent {pooling}: seeds")
    rates = require_nonempty(
        learning_rates(xs, base["model"], pooling), f"DefSent {pooling}: rates"
    )
    dataset, search = dataset or dataset_of(base, data_dir), {}
    for lr in rates:
        search[lr] = run(
            dict(base, pooling=pooling, seed=seeds[0], lr=lr), dataset, need_checkpoint=False
        )
        best = best_of(
            search, lambda r: r["dev"]["mrr"], f"DefSent learning-rate search ({pooling})"
        )
        search = cache.drop_all_but("defsent", search, best)
    train_seed = train_seed or seed_run
    runs = [train_seed(base, pooling, s, best, i, dataset) for i, s in enumerate(seeds)]
    return FinalRuns(best, search, runs)


def seed_run(base, pooling, seed, lr, index, dataset):
    """The `index`-th seed's run of final_runs: the first seed's checkpoint is needed, a later one's
    only its word prediction (its checkpoint, when defsent_scores has dropped it, is not trained
    again)."""
    return run(dict(base, pooling=pooling, seed=seed, lr=lr), dataset, need_checkpoint=index == 0)


# ----------------------------------------------------------- what a notebook will run (paper scale)


def plan(base, poolings, xs, seeds, dataset):
    """final_runs over `poolings`: trainings, steps and definitions scored, timed by a warm-up
    here (defsent_scores.plan adds the later seeds' scoring)."""
    splits = nonempty(dataset)
    n_train = len(subsample(splits["train"], base["train_max"], 0))
    n_eval = sum(len(subsample(splits[k], base["eval_max"], 0)) for k in ("dev", "test"))
    n_rates = [len(learning_rates(xs, base["model"], p)) for p in poolings]
    # the search's best rate is the first seed's run
    trainings = sum(n_rates) + len(poolings) * (len(seeds) - 1)
    v = variant_settings(base["variant"])
    model, tokenizer, head, _ = defsent_model.load(
        base["model"],
        prefix_space=v["prefix_space"],
        allow_fallback=base.get("allow_head_fallback", True),
    )
    p, mask_id = poolings[0], tokenizer.mask_token_id
    batches = train.batched(
        subsample(splits["train"], base["train_max"], seeds[0]),
        base["batch_size"],
        seed=seeds[0] if v["shuffle"] else None,
    )  # the first seed's run's batches
    evaluated = plans.spaced_sample(subsample(splits["dev"], base["eval_max"], 0), 128)
    step_s, batch_s = plans.measure(
        model,
        lambda m, b: defsent.loss(
            m, head, defsent.collate(tokenizer, b, v["max_length"], p), p, mask_id
        ),
        plans.spread_batches(tokenizer, batches, lambda b: [d for _, d, _ in b]),
        lambda m: defsent.evaluate(m, tokenizer, head, evaluated, p, max_length=v["max_length"]),
        len(evaluated),
        mixed_precision=config.autocast_training(base, v),
    )
    rates = "the pinned Table 5 rate" if xs == PINNED else f"{len(xs)} learning rates"
    what = f"DefSent, {len(poolings)} pooling(s) x ({rates} + {len(seeds) - 1} more seeds)"
    definition_tokens = plans.row_tokens(
        tokenizer, [d for _, d, _ in splits["train"]], base["batch_size"]
    )
    eval_tokens = trainings * n_eval * plans.row_tokens(tokenizer, [d for _, d, _ in splits["dev"]])
    return plans.Plan(
        what,
        trainings,
        trainings * math.ceil(n_train / base["batch_size"]),
        trainings * n_eval,
        step_s,
        batch_s,
        64,
        plans.device_name(next(model.parameters()).device),
        plans.parameters(model),
        trainings * n_train * definition_tokens,
        eval_tokens,
        config.autocast_training(base, v),
    )


# ---------------------------------------------------------------- tables beside the paper's


class Beside(NamedTuple):
    """A table of ours beside the paper's, and what it was built from."""

    table: pd.DataFrame  # results.side_by_side: the paper's row above ours, per pair
    ours: pd.DataFrame  # our rows, indexed (kind, pooling)
    pairs: dict  # {label: (the paper's row or None, our row)}
    seeds: aggregate.SeedTable  # DefSent's metrics over seeds, indexed by pooling
    reference: str  # the model whose paper rows stand beside ours
    note: str  # aggregate.reference_model's line: whose rows, and why
    verdict: str  # results.spread_verdict: which rows lie outside the paper's spread


def ours_per_pooling(untrained, per_seed, columns, untrained_kind, what):
    """(DefSent's metrics over seeds: a SeedTable indexed by pooling, our rows): the rows are
    (untrained_kind, pooling) from `untrained` ({pooling: {metric: value}}) and ("DefSent",
    pooling), the mean of per_seed ({pooling: [[value per column] per seed]})."""
    seeds = aggregate.table_over_seeds(per_seed, columns, what)
    rows = {}
    for p in seeds.mean.index:
        rows[(untrained_kind, p)] = [untrained[p][c] for c in columns]
        rows[("DefSent", p)] = seeds.mean.loc[p].tolist()
    return seeds, results.paper_table(rows, columns)


def beside(
    paper_rows, paper_std, columns, ours, pairs, seeds, reference, note, model, scale, digits=2
):
    """The paper's rows beside ours; compared (a difference, its z) only for the paper's own model
    under its protocol (aggregate.comparable), else context."""
    table = results.side_by_side(
        results.paper_table(paper_rows, columns),
        ours,
        pairs,
        digits=digits,
        compare=aggregate.comparable(model, scale),
        std=results.paper_table(paper_std, columns),
        runs=int(seeds.n.min()),
    )
    return Beside(table, ours, pairs, seeds, reference, note, results.spread_verdict(table))


def table2(untrained, final, model, scale):
    """Table 2, word prediction on the test words: per pooling the untrained encoder ("no
    fine-tuning") and DefSent's final runs (mean over seeds), beside the paper's rows of the
    model with Table 5's std. untrained: {pooling: metrics}; final: {pooling: FinalRuns}."""
    cols = paper_defsent.TABLE2_COLS
    per_seed = {p: [[r["test"][c] for c in cols] for r in f.runs] for p, f in final.items()}
    seeds, ours = ours_per_pooling(
        untrained, per_seed, cols, "no fine-tuning", "DefSent word prediction"
    )
    reference, note = aggregate.reference_model(model)
    pairs = {}
    for p in final:
        label = POOLING_LABELS[p]
        untrained_key = aggregate.paper_row(
            paper_defsent.TABLE2, reference, label, "no fine-tuning"
        )
        trained_key = aggregate.paper_row(
            paper_defsent.TABLE2, reference, label, exclude=("no fine-tuning",)
        )
        pairs[f"no fine-tuning / {label}"] = (untrained_key, ("no fine-tuning", p))
        pairs[f"DefSent / {label}"] = (trained_key, ("DefSent", p))
    paper, std = paper_defsent.TABLE2, paper_defsent.TABLE5_STD
    return beside(paper, std, cols, ours, pairs, seeds, reference, note, model, scale, digits=4)


def lr_search_table(final):
    """The learning-rate search of Table 5: dev MRR and final loss of every (pooling, rate
    2^x * 1e-6) run. final: {pooling: FinalRuns}."""
    rows = {
        (p, rate_label(lr)): {"dev MRR": r["dev"]["mrr"], "final loss": r["final_loss"]}
        for p, f in final.items()
        for lr, r in f.search.items()
    }
    return pd.DataFrame(rows).T


def whole_table2(t2):
    """The paper's whole Table 2, every model's rows, with each of ours below the row it stands
    beside (t2: table2's result)."""
    ours = t2.ours.copy()
    ours.index = [f"{kind}, {p}" for kind, p in t2.ours.index]
    pairs = {f"{kind}, {p}": key for key, (kind, p) in t2.pairs.values()}
    return results.whole_paper_table(paper_defsent.TABLE2, paper_defsent.TABLE2_COLS, ours, pairs)


def table5(lrs, seeds, model):
    """DefSent's Table 5 beside ours, one row per pooling: the learning rate (2^x x 1e-6) the search
    chose and the paper's, then each metric as "mean ± std" over seeds, ours and the paper's (the
    paper's columns are empty for a model it did not run). lrs: {pooling: rate}; seeds: a SeedTable
    of the test metrics indexed by pooling."""
    label = aggregate.paper_model_label(model)
    rows = {}
    for p, lr in lrs.items():
        key = (label, POOLING_LABELS[p])
        row = {
            "lr (ours)": rate_label(lr),
            "lr (paper)": f"2^{paper_defsent.TABLE5_LR_X[key]:g}e-6"
            if key in paper_defsent.TABLE5_LR_X
            else "",
        }
        for i, c in enumerate(paper_defsent.TABLE2_COLS):
            n = seeds.n[p]
            m, s = seeds.mean.at[p, c], seeds.std.at[p, c]
            row[c] = f"{m:.4f}" if n < 2 else f"{m:.4f} ± {s:.4f}"
            row[f"{c} (paper)"] = (
                f"{paper_defsent.TABLE2[key][i]:.4f} ± {paper_defsent.TABLE5_STD[key][i]:.4f}"
                if key in paper_defsent.TABLE5_STD
                else ""
            )
        rows[POOLING_LABELS[p]] = row
    return pd.DataFrame(rows).T
