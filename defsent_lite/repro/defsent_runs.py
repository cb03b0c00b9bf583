"""DefSent's protocol: a cached training run, the learning-rate search, the seeded final runs
and their plan (the method itself is defsent_lite.defsent; its dictionary dataset is
data.dictionary.defsent_dataset, its model with the frozen head
runtime.defsent_model.load)."""

import json
import math
from pathlib import Path
from typing import NamedTuple

import torch

from defsent_lite import checks, defsent, train
from defsent_lite.checks import best_of, require_nonempty
from defsent_lite.runtime import cache, config, defsent_model, models
from defsent_lite.data import dictionary
from defsent_lite.repro import seed_scores, variants

# What the released code (hppRC/defsent) does and what the paper's text says where they differ.
# "official" is the default; "paper" keeps the text (and, where the text is silent, what this
# repository did before it followed the code).
# Tables 2, 3, 5 and 8 average 10 seeds; SentEval (Tables 4 and 9) "three evaluations with
# different random seeds": the first three seeds of the scale.
SENTEVAL_SEEDS = 3

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
        "linear over 10% of the data, then constant",
        "factor step / (0.1 x steps) from 0, then 1",
        "(step + 1) / floor(0.1 x steps), then 1",
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
    return variants.pick("DefSent", VARIANTS, variant)


def differences():
    """The DefSent settings where the paper's text and the official code differ."""
    return variants.differences_table(
        DIFFERENCES, ["setting", "paper text", "official code (default)", 'variant="paper"']
    )


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


def run(cfg, dataset=None, data_dir=None, need_checkpoint=True):
    """Train DefSent once for `cfg` on `dataset` (dictionary.defsent_dataset's, built from
    data_dir when None) and return its result dict; cached by cfg and the dataset's content.

    cfg keys: model, pooling, lr, seed, batch_size, train_max, eval_max, optimizer, warmup_ratio,
    variant and its settings (VARIANTS; a setting in cfg overrides the variant's) (and `scoring`,
    used by final_runs, not in the key). The trained encoder is saved in the run's folder
    (`result["path"]`); a second call with the same cfg and data reuses it. A run whose checkpoint
    was dropped (lr_search keeps only the chosen rate's) is trained again when need_checkpoint, else
    returned with path None.
    """
    checks.rate(cfg["lr"], "DefSent lr")  # before a message formats it
    if dataset is None:
        dataset = dictionary.defsent_dataset(
            models.load_tokenizer(cfg["model"]),
            data_dir,
            variant_settings(cfg["variant"])["data"],
            paper_data=cfg.get("paper_data", False),
        )
    splits, report = dataset
    v = dict(
        variant_settings(cfg["variant"]), **{k: cfg[k] for k in VARIANTS["official"] if k in cfg}
    )
    if report.get("prep") != v["data"]:
        raise ValueError(
            f"DefSent variant {cfg['variant']!r} trains on data prepared as {v['data']}, but the "
            "dataset "
            f"given was prepared as {report.get('prep')}: build it with dictionary.defsent_dataset("
            f"..., prep=defsent_runs.variant_settings({cfg['variant']!r})['data'])"
        )
    key = run_key(cfg, splits)
    what = f"DefSent run {cache.config_key(key)} ({cfg['pooling']}, lr {cfg['lr']:g}, seed {cfg['seed']})"

    def compute(folder):
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
            mixed_precision=variants.autocast_training(cfg, v),
            compile_mode=config.compile_mode(),
        )

        def loss_fn(m, b):
            batch = defsent.collate(tokenizer, b, v["max_length"], cfg["pooling"])
            return defsent.loss(m, head, batch, cfg["pooling"], tokenizer.mask_token_id)

        history = train.train(
            model,
            loss_fn,
            defsent.tokenize_definition_batches(
                tokenizer, batches, v["max_length"], cfg["pooling"]
            ),
            settings,
            params=defsent.trainable_parameters(model, v["freeze_embedding_layer"]),
            describe_batch=lambda b: f"words {[w for w, _, _ in b.examples[:4]]}...",
            desc=what,
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

    entry = cache.cached_run("defsent", key, compute, need_files=need_checkpoint)
    return dict(
        entry.result,
        path=str(entry.folder / "model") if entry.folder else None,
        key=cache.config_key(key),
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


def lr_grid(xs=None):
    """DefSent's learning-rate grid 2^x * 1e-6, x in {0, 0.5, ..., 7}."""
    xs = LR_GRID_XS if xs is None else xs
    return {x: 2.0**x * 1e-6 for x in xs}


def lr_exponents(xs, model, pooling):
    """The exponents x (lr 2^x * 1e-6) final_runs tries for `model` and `pooling`: xs = "table5" is
    the one rate the official run scripts pin (Table 5; hppRC/defsent experiments/scripts), a list
    is a search on dev MRR (the paper's text: `LR_GRID_XS`)."""
    if xs != PINNED:
        return list(xs)
    from defsent_lite.paper import aggregate  # the paper's numbers, only for the pinned rates
    from defsent_lite.paper import defsent as paper_defsent

    label = (aggregate.paper_model_label(model), aggregate.POOLING_LABELS.get(pooling))
    if label not in paper_defsent.TABLE5_LR_X:
        raise ValueError(
            f"defsent_lr_xs={PINNED!r}: Table 5 pins no rate for {model!r} with {pooling!r} "
            "pooling; "
            f"give the exponents to search instead (defsent_runs.LR_GRID_XS is the paper's grid)"
        )
    return [paper_defsent.TABLE5_LR_X[label]]


def lr_search(base_cfg, xs=None, dataset=None, data_dir=None):
    """Train once per learning rate of the grid; return (best x by dev MRR, {x: result}). Only the
    chosen rate's checkpoint is kept (it is the first seed's final run); the others' are dropped as
    soon as a better rate is seen, so at most two are on disk (results stay cached, path None)."""
    results = {}
    for x, lr in lr_grid(xs).items():
        results[x] = run(dict(base_cfg, lr=lr), dataset, data_dir, need_checkpoint=False)
        best = best_of(
            results,
            lambda r: r["dev"]["mrr"],
            f"DefSent learning-rate search ({base_cfg['pooling']})",
        )
        results = cache.drop_all_but("defsent", results, best)
    return best, results


def base_config(scale, model, data_dir=None, variant="official"):
    """The run config shared by every DefSent run of a scale (pooling, lr and seed added later);
    `scoring`: the evaluations every seed gets before its checkpoint is dropped (final_runs);
    variant: "official" (the released code, default) or "paper" (VARIANTS), in the run's key."""
    return dict(
        model=model,
        batch_size=scale["defsent_batch_size"],
        train_max=scale["defsent_train_max"],
        eval_max=scale["defsent_eval_max"],
        optimizer="adam",
        warmup_ratio=0.1,
        variant=variant,
        **without_data(variant_settings(variant)),
        paper_data=scale["paper_protocol"],
        allow_head_fallback=not scale["paper_protocol"],
        **(
            {"train_autocast": scale["train_autocast"]}
            if scale["train_autocast"] is not None
            else {}
        ),
        scoring=seed_scores.seed_scoring(scale, data_dir),
    )


def without_data(settings):
    """A variant's training settings (its data preparation is the dataset's)."""
    return {k: v for k, v in settings.items() if k != "data"}


class FinalRuns(NamedTuple):
    """What final_runs chose and trained: the learning-rate exponent, the search, one run per
    seed."""

    lr_x: float
    search: dict
    runs: list


def final_runs(base, pooling, xs, seeds, dataset=None, data_dir=None):
    """Choose the learning rate on dev MRR (first seed) among lr_exponents(xs, ...) (one pinned
    rate: no choice), then train every seed with it.

    Returns FinalRuns(lr_x, search {x: result}, runs [result per seed]); all runs are cached. Only
    the first seed's checkpoint is kept (notebooks 13 and 22 load it): every later seed is scored on
    STS and SentEval (`base["scoring"]`, cached by run key) right after training, then its
    checkpoint is dropped (path None); it is trained again only if those scores are not cached."""
    require_nonempty(seeds, f"DefSent {pooling}: seeds")
    if dataset is None:
        dataset = dictionary.defsent_dataset(
            models.load_tokenizer(base["model"]),
            data_dir,
            variant_settings(base["variant"])["data"],
            paper_data=base.get("paper_data", False),
        )
    best_x, search = lr_search(
        dict(base, pooling=pooling, seed=seeds[0]),
        lr_exponents(xs, base["model"], pooling),
        dataset,
    )
    lr = lr_grid([best_x])[best_x]
    return FinalRuns(
        best_x, search, [seed_run(base, pooling, s, lr, i, dataset) for i, s in enumerate(seeds)]
    )


def seed_run(base, pooling, seed, lr, index, dataset):
    """final_runs' training of its `index`-th seed: the first keeps its checkpoint (notebooks 13
    and 22 load it), every later one is scored and its checkpoint dropped (scored_run)."""
    if index == 0:
        return run(dict(base, pooling=pooling, seed=seed, lr=lr), dataset)
    return scored_run(seed_config(base, pooling, seed, lr, index), dataset)


def seed_run_needs_training(base, pooling, seed, lr, index, dataset):
    """Whether seed_run(...) would train; scoring a kept checkpoint is no training."""
    if index == 0:
        return needs_training(dict(base, pooling=pooling, seed=seed, lr=lr), dataset[0])
    cfg = seed_config(base, pooling, seed, lr, index)
    found = cache.lookup("defsent", run_key(cfg, dataset[0]))
    if found is None or found.folder is not None:
        return found is None
    if not cfg.get("scoring"):
        return True
    result = dict(found.result, key=cache.config_key(run_key(cfg, dataset[0])))
    return not seed_scores.trained_scores_cached(result, pooling, cfg["scoring"])


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
        return run(cfg, dataset)
    result = run(cfg, dataset, need_checkpoint=False)
    if result["path"] is None and seed_scores.trained_scores_cached(
        result, cfg["pooling"], scoring
    ):
        return result
    if result["path"] is None:
        result = run(cfg, dataset, need_checkpoint=True)
    seed_scores.score_trained(result, cfg["pooling"], scoring)
    cache.drop_files("defsent", result["key"])
    return dict(result, path=None)


# ----------------------------------------------------------- what a notebook will run (paper scale)


def plan(base, poolings, xs, seeds, dataset, extra_encoded=0):
    """final_runs over `poolings`: trainings, steps and definitions scored, timed by a warm-up
    here (budget, eval_sizes and warmup load only when a plan is made: the protocol's scales)."""
    from defsent_lite.repro import plans, eval_sizes

    splits, _ = dataset
    n_train = len(subsample(splits["train"], base["train_max"], 0))
    n_eval = sum(len(subsample(splits[k], base["eval_max"], 0)) for k in ("dev", "test"))
    n_rates = [len(lr_exponents(xs, base["model"], p)) for p in poolings]
    # the search's best rate is the first seed's run
    trainings = sum(n_rates) + len(poolings) * (len(seeds) - 1)
    if base.get(
        "scoring"
    ):  # later seeds are scored on STS (and the first 3 on SentEval) right after training
        with_transfer = min(len(seeds), SENTEVAL_SEEDS) - 1
        extra_encoded += len(poolings) * (
            (len(seeds) - 1) * scoring_sentences(dict(base["scoring"], transfer=None))
            + with_transfer * scoring_sentences(dict(base["scoring"], sts_max_pairs=0))
        )
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
        mixed_precision=variants.autocast_training(base, v),
    )
    rates = "the pinned Table 5 rate" if xs == PINNED else f"{len(xs)} learning rates"
    what = f"DefSent, {len(poolings)} pooling(s) x ({rates} + {len(seeds) - 1} more seeds)"
    definition_tokens = plans.row_tokens(
        tokenizer, [d for _, d, _ in splits["train"]], base["batch_size"]
    )
    eval_tokens = trainings * n_eval * plans.row_tokens(
        tokenizer, [d for _, d, _ in splits["dev"]]
    ) + (
        extra_encoded
        * eval_sizes.eval_sentence_tokens(tokenizer, (base.get("scoring") or {}).get("data_dir"))
        if extra_encoded
        else 0
    )
    return plans.Plan(
        what,
        trainings,
        trainings * math.ceil(n_train / base["batch_size"]),
        trainings * n_eval + extra_encoded,
        step_s,
        batch_s,
        64,
        plans.device_name(next(model.parameters()).device),
        plans.parameters(model),
        trainings * n_train * definition_tokens,
        eval_tokens,
        variants.autocast_training(base, v),
    )


def scoring_sentences(scoring):
    """Sentences one `scoring` (STS + SentEval) of a trained encoder encodes (sts_max_pairs 0: no
    STS; transfer None: no SentEval)."""
    from defsent_lite.repro import eval_sizes

    sts = (
        eval_sizes.sts_sentences(scoring["data_dir"], scoring["sts_max_pairs"])
        if scoring["sts_max_pairs"] != 0
        else 0
    )
    transfer = (
        eval_sizes.transfer_sentences(scoring["data_dir"], scoring["transfer"])
        if scoring["transfer"] is not None
        else 0
    )
    return sts + transfer


def senteval_poolings(scale, reported):
    """The poolings whose SentEval rows notebook 12 scores: at smoke scale only `reported` (the
    pooling of Table 4's row; SentEval is the slowest part there), else all three (Table 9)."""
    return [reported] if scale["name"] == "smoke" else ["cls", "mean", "max"]
