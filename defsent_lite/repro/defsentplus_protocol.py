"""DefSent+'s protocol, read top to bottom: its settings (official code / paper text), one cached
training against a frozen entry space, Progressive Separate Training (Sec. 3.2, Eq. 3-13) handed to
the method's loop with the ICA candidate space, its tables of steps, the data-augmented checkpoints
(Sec. 4.2, Tables 3-7), the encoding grid (Table 8) and the plan (notebooks 20-25 show them; the
launcher trains their runs: `launch 21 --scale cpu`). The method is
defsent_lite.defsentplus; its model with the pooler runtime/defsentplus_model's.

Step k builds the entry embeddings with the best encoder of step k-1 (the original model at step 1)
and trains again *from the original weights*, one epoch; at the last step the candidate space may
also be ICA-transformed (Eq. 11); every candidate and seed is trained and the best run by STS
average (the paper's "optimal encoder out of the runs") goes on. Inference (Eq. 14) pools last
hidden states (CLS, Mean or Prompt); the pooler is only for training.
"""

import json
import math
import warnings
from functools import partial
from pathlib import Path
from typing import NamedTuple

import numpy as np
import pandas as pd
import torch

from defsent_lite import defsentplus, encode, train
from defsent_lite.checks import best_of
from defsent_lite.data import entries
from defsent_lite.defsentplus import ENTRY_POOLINGS, build_entry_embeddings
from defsent_lite.evaluation import sts
from defsent_lite.paper import aggregate, results
from defsent_lite.paper import defsentplus as paper_defsentplus
from defsent_lite.paper.results import STS_COLS, TRANSFER_COLS
from defsent_lite.runtime import cache, config, defsentplus_model, models, speed

# (pooling during training, entry pooling): the paper's four encoding combinations
COMBINATIONS = (("cls", "mean"), ("mean", "mean"), ("cls", "cls"), ("mean", "cls"))
BATCH_SIZE = {"a": 32, "b": 16, "c": 16}  # Appendix A
# Table 5's learning rates, by hub name.
STS_FILES = "senteval"  # SentEval's Moses-tokenised STS files (footnote 9, the released TestSTS.py)
PAPER_LRS = {
    # 1st, 2nd, 3rd Training; as many as the model's PST steps
    hub: paper_defsentplus.table5_rates(label)
    for hub, label in {**aggregate.PAPER_MODEL_LABELS, **paper_defsentplus.DATA_AUGMENTED}.items()
}
# What the released code (ryuliuxiaodong/DefSent-Plus) does and what the paper's text says where
# they differ. "official" is the default; "paper" reads "the default optimizer setting of
# fine-tuning BERT" (Devlin et al.) as AdamW with weight decay 0.01 and 10% warm-up.
VARIANTS = {
    "official": dict(
        optimizer=dict(
            optimizer="adamw",
            weight_decay=0.0,
            eps=1e-6,
            warmup_ratio=0.0,
            decay=True,
            grad_clip=1.0,
        ),
        max_length=512,
        ica_standardise=True,
        mixed_precision=False,
    ),
    "paper": dict(
        optimizer=dict(
            optimizer="adamw",
            weight_decay=0.01,
            eps=1e-8,
            warmup_ratio=0.1,
            decay=True,
            grad_clip=None,
        ),
        max_length=128,
        ica_standardise=False,
        mixed_precision=True,
    ),
}
DIFFERENCES = [  # (setting, paper text, official code, variant="paper")
    (
        "optimiser",
        "BERT's default fine-tuning setting",
        "AdamW (transformers), eps 1e-6, weight decay 0",
        "AdamW, eps 1e-8, weight decay 0.01",
    ),
    (
        "schedule",
        "BERT's default (warm-up, linear decay)",
        "no warm-up, linear decay",
        "10% warm-up, linear decay",
    ),
    ("gradient clipping", "not stated", "global norm 1.0", "none"),
    (
        "definition length",
        "not stated",
        "padded to the longest definition (cut only at the models' 512 positions)",
        "cut at 128 tokens",
    ),
    ("training precision", "not stated", "fp32", "bf16 / fp16 autocast on GPU (fp32 on CPU)"),
    (
        "entry embeddings (Eq. 2)",
        "not stated",
        "fp32, no cut (models' 512 positions)",
        "the same as official",
    ),
    ("STS / SentEval encoding", "not stated", "fp32, cut at 512 tokens", "the same as official"),
    (
        "repeated pairs (b, c)",
        "not stated (a: merged)",
        "kept: the code removes none from the file it reads",
        "kept, as the code (a: merged and deduplicated, as the text says). Table 1's b and c "
        "(122,209; 67,553) are 110 and 63 below DefSent's Table 1 totals of the same data "
        "(122,319; 67,616), but repeats do not explain it: 7 of the 24,464 valid+test pairs at "
        "hand repeat",
    ),
    (
        "prompt template",
        'This sentence: "s" means [MASK]. (Sec. 3.4)',
        'This sentence : "s" means [MASK] . (spaces before ":" and ".", a trailing space)',
        "the same as official",
    ),
    (
        "ICA candidate",
        "BERT-base and BERT-large (Table 2's (ICA) rows); none named for RoBERTa",
        "ICA-transform.py transforms any entry embeddings it is given",
        "both variants: for BERT (a model outside the paper as BERT-base), not RoBERTa; ica='all' "
        "for every model",
    ),
    (
        "pooling of a row",
        "the best of Mean, CLS, Prompt (Sec. 4; Appendix B)",
        "TestSTS.py scores the pooling it is given",
        "both variants: dataset c rows and Table 3's checkpoint rows under the best pooling of "
        "their own scores (notebooks 22, 25: a selection by the test scores, as the text's "
        '"best" reads, not a rule the paper states); Table 4\'s checkpoint '
        "rows under the better SentEval average of the poolings its caption names (SimCSE, "
        "SynCSE: own or Prompt; SNCSE: Prompt, CLS or Mean)",
    ),
    (
        "Table 2's DefSent rows",
        "DefSent's best pooling (DefSent's Table 8 row with the same numbers: 10 seeds' mean on "
        "the raw STS files)",
        "not in the code (copied from DefSent)",
        "both variants: our DefSent encoders' mean over seeds, scored on the DefSent+ rows' files "
        "and pairs (notebook 22; notebook 11 scores them on the raw files, as DefSent does)",
    ),
    (
        "ICA",
        "FastICA, unit-variance whitening",
        "StandardScaler, then the same FastICA",
        "FastICA on the raw space",
    ),
]


def variant_settings(variant):
    """The settings of a DefSent+ variant (VARIANTS); an unknown name is an error."""
    return config.pick("DefSent+", VARIANTS, variant)


def differences():
    """The DefSent+ settings where the paper's text and the official code differ."""
    return aggregate.differences_table(DIFFERENCES)


def combination_name(pooling, entry_pooling):
    """'(CLS, AMP)' style label of an encoding combination."""
    return f"({'CLS' if pooling == 'cls' else 'Mean'}, {ENTRY_POOLINGS[entry_pooling]})"


# ---------------------------------------------------------------- one training (cached)


def sts_scores(
    model, tokenizer, poolings, max_pairs, batch_size=64, data_dir=None, files=STS_FILES
):
    """{pooling: STS scores dict} of an encoder, last hidden states pooled (Eq. 14), on SentEval's
    tokenised STS files by default (footnote 9; the released TestSTS.py reads the same files)."""
    return sts.evaluate_each(
        encode.embedders(model, tokenizer, poolings, batch_size=batch_size),
        data_dir,
        variant=files,
        max_pairs=max_pairs,
    )


def paper_combination(model, dataset):
    """(pooling, entry pooling, why): the encoding combination of the model's 1st Training on the
    dataset in Table 2 (model: a hub name, as aggregate.reference_model gives it); BERT-base's
    (CLS, AMP) for a model the paper did not train. On dataset a Table 2's numbers decide, not its
    labels (paper_defsentplus.table8_combination: BERT-large (CLS, AMP), both RoBERTas (Mean, AC)).
    A later step's combination: paper_later_combinations."""
    label = aggregate.paper_model_label(model)
    combos = paper_defsentplus.first_training_combinations(label) if label else {}
    if dataset in combos:
        pooling, entry = combos[dataset]
        return pooling, entry, f"Table 2's 1st Training of {label} on {dataset}"
    return (
        "cls",
        "mean",
        f"{model} has no 1st Training row on {dataset} in Table 2: BERT-base's (CLS, AMP)",
    )


def paper_later_combinations(model, dataset):
    """[(pooling, entry pooling)] of the 2nd and 3rd Training in Table 2 for the model on the
    dataset (PST runs on *a* only), [] where the table has none (the 1st's is then kept)."""
    label = aggregate.paper_model_label(model)
    return paper_defsentplus.pst_combinations(label)[1:] if label and dataset == "a" else []


def best_sts_avg(result):
    """The run's STS average under its best inference pooling (the paper reports the best
    pooling)."""
    scores = [s["avg"] for s in result["sts"].values()]
    # a selection over runs refuses NaN
    return max(scores) if all(map(math.isfinite, scores)) else math.nan


def save_encoder_files(folder, cfg, sts_by_pooling, dim):
    """Beside save_pretrained's files: sentence-transformers' modules.json with the training
    pooling (CLS or Mean: SentenceTransformer(folder) then encodes as trained) and a metadata file
    with the run's settings and its best STS pooling (Prompt pooling needs encode.embedders)."""
    models.write_sentence_transformers_config(folder, cfg["pooling"], dim)
    best = max(sts_by_pooling, key=lambda p: sts_by_pooling[p]["avg"])
    meta = dict(
        method="DefSent+",
        base_model=str(cfg["model"]),
        training_pooling=cfg["pooling"],
        best_sts_pooling=best,
        lr=cfg["lr"],
        seed=cfg["seed"],
        dataset=cfg["dataset"],
    )
    (Path(folder) / "defsentplus_meta.json").write_text(json.dumps(meta, indent=1))


def train_and_score(cfg, space, ds, data_dir, folder):
    """One DefSent+ training (Eq. 5: the definitions' pooled vectors against a frozen entry space,
    one epoch from the original weights), its encoder saved in `folder`/model, then its STS under
    each inference pooling (Eq. 14)."""
    v, files = variant_settings(cfg.get("variant", "official")), cfg.get("sts_files", STS_FILES)
    config.set_seed(cfg["seed"])
    model, tokenizer = defsentplus_model.load(cfg["model"], mlm_head_from=cfg.get("mlm_head_from"))
    E = torch.as_tensor(space, dtype=torch.float32, device=next(model.parameters()).device)
    examples = list(zip(ds["ids"], ds["definitions"]))
    batches = train.batched(examples, cfg["batch_size"], seed=cfg["seed"])
    settings = train.Settings(
        lr=cfg["lr"], mixed_precision=config.autocast_training(cfg, v), **v["optimizer"]
    )
    history = train.train(
        model,
        lambda m, b: defsentplus.loss(m, tokenizer, b, cfg["pooling"], E, v["max_length"]),
        batches,
        settings,
        describe_batch=lambda b: f"definitions {[d[:40] for _, d in b[:3]]}...",
        desc=f"DefSent+ {cfg['pooling']} (lr {cfg['lr']:g}, seed {cfg['seed']})",
        around=speed.training(model, len(batches)),  # compiles when it pays
        resume=cache.resume_file(folder),
    )
    model.save_pretrained(folder / "model")
    tokenizer.save_pretrained(folder / "model")
    pairs, poolings = cfg["sts_max_pairs"], cfg["inference_poolings"]
    scores = sts_scores(model, tokenizer, poolings, pairs, data_dir=data_dir, files=files)
    save_encoder_files(folder / "model", cfg, scores, model.config.hidden_size)
    # the losses of the full batches: a partial last batch's mean is over a few definitions
    losses = history["loss"][: len(examples) // cfg["batch_size"]] or history["loss"]
    return dict(
        sts=scores,
        steps=history["steps"],
        first_loss=losses[0],
        final_loss=losses[-1],
        loss_curve=losses[:: max(1, len(losses) // 100)],
        chance_loss=math.log(len(E)),
        entries=len(E),
        definitions=len(examples),
    )


def train_once(cfg, space, ds, data_dir=None, need_checkpoint=True):
    """train_and_score once, cached by cfg and the content of the space, the dataset and the STS
    data; the result with the saved encoder's path and the run's cache key (path None for a run
    whose checkpoint was dropped, unless need_checkpoint: then it is trained again).

    cfg: model, dataset, max_entries, pooling, lr, seed, batch_size, space_key (what the space
    is: its encoder, entry pooling and transform), inference_poolings, sts_max_pairs, variant
    (VARIANTS: optimiser, schedule, clipping, definition length; default "official").
    """
    key = dict(
        cfg,
        space=cache.content_digest(torch.as_tensor(space)),
        entries=cache.content_digest(ds),
        sts_data=cache.data_identity(data_dir, f"sts/{cfg.get('sts_files', STS_FILES)}"),
    )
    entry = cache.cached_run(
        "defsentplus",
        key,
        lambda folder: train_and_score(cfg, space, ds, data_dir, folder),
        need_files=need_checkpoint,
    )
    return dict(
        entry.result,
        path=str(entry.folder / "model") if entry.folder else None,
        key=cache.config_key(key),
    )


# ---------------------------------------------------------------- Progressive Separate Training


def entry_space(encoder, encoder_id, entry_pooling, ds, dataset_key, batch_size=128):
    """Entry embeddings (Eq. 2) of the dataset built with `encoder` (name or path), cached and
    keyed by encoder_id (the model name, or the cache key of the run that trained it)."""

    def compute():
        model, tokenizer = models.load(encoder)
        return build_entry_embeddings(
            model,
            tokenizer,
            ds["ids"],
            ds["definitions"],
            entry_pooling,
            batch_size=batch_size,
            n_entries=len(ds["names"]),
        )

    return cache.cached_tensor(
        "dsp_space",
        dict(encoder=encoder_id, entry_pooling=entry_pooling, data=dataset_key),
        compute,
    )


def space_views(space, n_points=3000, seed=0):
    """2-d views of an entry space (Figures 1-2): SVD of the uncentered matrix (top two right
    singular vectors) and whitened PCA (centered, divided by sqrt of the eigenvalues), for a
    seeded sample of n_points entries; the projections use every entry."""
    X = torch.as_tensor(np.asarray(space), dtype=torch.float64)
    _, _, Vh = torch.linalg.svd(X, full_matrices=False)
    svd = X @ Vh[:2].T
    Xc = X - X.mean(0)
    evals, evecs = torch.linalg.eigh(Xc.T @ Xc / (len(X) - 1))
    top = evecs[:, [-1, -2]]
    pca = (Xc @ top) / evals[[-1, -2]].sqrt()
    g = torch.Generator().manual_seed(seed)
    pick = torch.randperm(len(X), generator=g)[:n_points]
    return dict(
        svd=svd[pick].tolist(),
        pca_whitened=pca[pick].tolist(),
        explained_variance_top2=(evals[[-1, -2]] / evals.sum()).tolist(),
    )


def candidates(space, last_step, ica, max_iter=1000, space_key=None, standardise=True):
    """Eq. 11: the plain space, and at the last step also its ICA transform (when asked;
    cached under space_key when given)."""
    out = {"plain": space}
    if last_step and ica:

        def compute():
            return torch.as_tensor(
                defsentplus.ica_transform(
                    space.numpy(), max_iter=max_iter, standardise=standardise
                ),
                dtype=torch.float32,
            )

        key = f"ica{max_iter}" + ("" if standardise else "_raw")
        cfg = space_key and dict(
            space_key, space=cache.content_digest(space), max_iter=max_iter, standardise=standardise
        )
        out[key] = cache.cached_tensor("dsp_ica", cfg, compute) if space_key else compute()
    return out


class Space(NamedTuple):
    """A step's entry space (Eq. 2) and what it is."""

    vectors: torch.Tensor
    key: dict  # its cache key: encoder (the model name, or the key of the run that trained it),
    # entry pooling, data
    step: int
    warnings: list  # what FastICA said while the step's candidates were built (step_candidates)


class Candidate(NamedTuple):
    """A space one run trains against (Eq. 11: the plain space or its ICA transform)."""

    vectors: torch.Tensor
    space_key: dict  # what the space is: its encoder, entry pooling and transform
    dataset: dict  # the entry dataset's cache key


class Bookkeeping(NamedTuple):
    """What run_pst keeps between the core loop's calls: each run's config and space (to train a
    dropped best again) and the runs of the step so far (their checkpoints dropped but the best)."""

    trained: dict  # {key: (run config, Candidate, step)}
    runs: dict  # {key: run} of the step being trained


def build_space(cfg, ds, dataset_key, encoder, step):
    """Eq. 2: the entry space of step `step` built with `encoder` ((path, id): the original model
    at step 1, else the best run of the step before)."""
    (path, encoder_id), entry_pooling = encoder, step_combination(cfg, step)[1]
    space = entry_space(path, encoder_id, entry_pooling, ds, dataset_key)
    key = dict(encoder=encoder_id, entry_pooling=entry_pooling, data=dataset_key)
    return Space(space, key, step, [])


def step_candidates(cfg, space, last=None):
    """Eq. 11: the spaces of a step's runs, one per (candidate, seed): the plain space, and at the
    last step of cfg (whatever the core loop's `last` says: a job replays a prefix of the steps)
    also its ICA transform; FastICA's warnings kept for the notebook."""
    standardise = variant_settings(cfg.get("variant", "official"))["ica_standardise"]
    last = space.step == len(cfg["lrs"])
    with warnings.catch_warnings(record=True) as found:
        warnings.simplefilter("always")
        spaces = candidates(
            space.vectors, last, cfg["ica"], cfg.get("ica_max_iter", 1000), space.key, standardise
        )
    space.warnings[:] = [str(w.message) for w in found]
    what = dict(encoder=space.key["encoder"], entry_pooling=space.key["entry_pooling"])
    return {
        (name, seed): Candidate(vectors, dict(what, transform=name), space.key["data"])
        for name, vectors in spaces.items()
        for seed in cfg["seeds"]
    }


def run_config(cfg, cand, lr, step, seed):
    """The config of one PST run (train_once): the step's pooling, rate and seed, its space."""
    return dict(
        model=cfg["model"],
        dataset=cand.dataset,
        pooling=step_combination(cfg, step)[0],
        lr=lr,
        seed=seed,
        batch_size=cfg["batch_size"],
        inference_poolings=cfg["inference_poolings"],
        sts_max_pairs=cfg["sts_max_pairs"],
        sts_files=cfg.get("sts_files", STS_FILES),
        variant=cfg.get("variant", "official"),
        **(
            {"train_autocast": cfg["train_autocast"]}
            if cfg.get("train_autocast") is not None
            else {}
        ),
        space_key=cand.space_key,
    )


def train_candidate(book, cfg, ds, data_dir, cand, lr, step, key):
    """Eq. 5: one run of a step (key: (candidate, seed)), cached; the checkpoints of the step's
    runs so far dropped but the best's (at most two on disk)."""
    run_cfg = run_config(cfg, cand, lr, step, key[1])
    book.trained[key] = (run_cfg, cand, step)
    book.runs[key] = train_once(run_cfg, cand.vectors, ds, data_dir, need_checkpoint=False)
    so_far = best_of(
        selectable(book.runs, cfg), best_sts_avg, f"PST step {step} (candidate space, seed)"
    )
    book.runs.update(cache.drop_all_but("defsentplus", book.runs, so_far))
    return book.runs[key]


def select_best(book, cfg, ds, data_dir, runs):
    """The run a step keeps (the best STS average: the paper's "optimal encoder out of the
    runs"); every other checkpoint dropped, the best's trained again if an earlier call dropped it."""
    runs.update(book.runs)  # the checkpoints dropped since each run was trained
    step = book.trained[next(iter(runs))][2]
    best = best_of(selectable(runs, cfg), best_sts_avg, f"PST step {step} (candidate space, seed)")
    runs.update(cache.drop_all_but("defsentplus", runs, best))
    if runs[best]["path"] is None:
        run_cfg, cand, _ = book.trained[best]
        runs[best] = train_once(run_cfg, cand.vectors, ds, data_dir)
    book.runs.clear()
    return best


def run_pst(cfg, ds, dataset_key, data_dir=None, steps=None):
    """The PST loop of the method (defsentplus.progressive_separate_training) handed the
    protocol's functions: cached spaces and runs, a run per candidate space and seed, the best by
    STS average kept, at most two checkpoints on disk. cfg: model, dataset, max_entries, pooling,
    entry_pooling, lrs (one per step), seeds, batch_size, ica, inference_poolings, sts_max_pairs.
    steps: how many of cfg's steps to run (None: all; a job replays the cached steps before its
    share). Returns one record per step: the space's views, every run, the best run."""
    book = Bookkeeping({}, {})
    done = defsentplus.progressive_separate_training(
        (cfg["model"], cfg["model"]),
        cfg["lrs"][:steps],
        partial(build_space, cfg, ds, dataset_key),
        partial(train_candidate, book, cfg, ds, data_dir),
        encoder_of=lambda run: (run["path"], run["key"]),
        candidates=partial(step_candidates, cfg),
        select=partial(select_best, book, cfg, ds, data_dir),
    )
    return [step_record(cfg, st) for st in done]


def step_record(cfg, st):
    """What a notebook shows of one PST step."""
    return dict(
        step=st["step"],
        lr=st["lr"],
        space_from=st["space"].key["encoder"],
        views=space_views(st["space"].vectors),
        runs=st["runs"],
        best=st["best"],
        best_run=st["runs"][st["best"]],
        warnings=st["space"].warnings,
        space_name=ENTRY_POOLINGS[step_combination(cfg, st["step"])[1]],
        combination=step_combination(cfg, st["step"]),
    )


def selectable(runs, cfg):
    """The runs a step may keep: all of them, or only the plain space's where the ICA candidate is
    scored but not chosen (cfg["ica_selectable"] False: the smoke scale, where FastICA cannot
    converge)."""
    if cfg.get("ica_selectable", True):
        return runs
    return {key: run for key, run in runs.items() if key[0] == "plain"}


def step_combination(cfg, step):
    """(pooling, entry pooling) of PST step `step` (1-based): cfg["later_combinations"][step - 2]
    from the 2nd step on where given (the paper changes it for some models), else the 1st's; past
    the list the last one again."""
    later = cfg.get("later_combinations") or []
    if step == 1 or not later:
        return cfg["pooling"], cfg["entry_pooling"]
    return tuple(later[min(step - 2, len(later) - 1)])


def pst_config(
    scale,
    model,
    dataset,
    pooling="cls",
    entry_pooling="mean",
    ica=True,
    steps=None,
    variant="official",
    later_combinations=None,
    max_entries=None,
    lrs=None,
):
    """The PST config of a scale: Table 5 learning rates (per model at paper scale), Appendix A
    batch size, the scale's subset. A data-augmented checkpoint (Table 3) is just another model
    name; at paper scale it runs as many steps as its Table 5 row (1 or 2). steps: None (that count)
    or any number: past the listed rates each further Training repeats the last one (Appendix A: a
    step's rate is no bigger than the previous one), e.g. 4 for the 4th Training of Figure 7.
    max_entries: the entries sampled (None: the scale's dsp_max_entries, dsp_max_entries_b_c for b,
    c). lrs: the rates of the steps (None: Table 5's row of a hub model at paper scale, else the
    scale's); a checkpoint given as a folder takes its row from release().
    later_combinations: [(pooling, entry pooling)] of the 2nd, 3rd, ... step (None: the 1st's
    throughout; paper_combination gives the paper's per step). variant: "official"
    (the released code, default) or "paper" (VARIANTS)."""
    variant_settings(variant)
    paper_lrs = PAPER_LRS.get(model) if scale["paper_protocol"] else None
    lrs = list(lrs if lrs is not None else paper_lrs or scale["dsp_lrs"])
    if steps is not None and steps < 1:
        raise ValueError(f"PST steps must be at least 1, got {steps}")
    lrs = lrs[:steps] + [lrs[-1]] * max(0, (steps or 0) - len(lrs))
    if max_entries is None:  # the scale's sample (None: every entry), b's and c's their own if set
        b_c = dataset in ("b", "c") and scale["dsp_max_entries_b_c"] is not None
        max_entries = scale["dsp_max_entries_b_c" if b_c else "dsp_max_entries"]
    return dict(
        model=model,
        dataset=dataset,
        max_entries=max_entries,
        pooling=pooling,
        entry_pooling=entry_pooling,
        lrs=lrs,
        seeds=list(scale["seeds"]),
        batch_size=BATCH_SIZE[dataset],
        ica=ica,
        ica_max_iter=scale["dsp_ica_max_iter"],
        ica_selectable=scale["dsp_ica_selectable"],
        inference_poolings=list(scale["dsp_inference_poolings"]),
        sts_max_pairs=scale["dsp_sts_max_pairs"],
        sts_files=STS_FILES,
        paper_data=scale["paper_protocol"],
        variant=variant,
        later_combinations=[tuple(c) for c in later_combinations or []],
        **({} if scale["train_autocast"] is None else dict(train_autocast=scale["train_autocast"])),
    )


def published_steps(cfg):
    """Optimizer steps of one training of cfg counted from Table 1's sizes (its entries' share of
    the dataset's definitions when it samples entries): what the launcher plans with."""
    definitions, entries = next(
        v for k, v in paper_defsentplus.TABLE1.items() if k[0] == cfg["dataset"]
    )[:2]
    n = definitions if cfg["max_entries"] is None else cfg["max_entries"] * definitions / entries
    return math.ceil(round(n) / cfg["batch_size"])


def entry_dataset(cfg, data_dir=None):
    """(dataset, its cache key) of a PST config: the entries and definitions it trains on
    (cached)."""
    ds = entries.load_entry_dataset(
        cfg["dataset"], cfg["max_entries"], data_dir, paper_data=cfg.get("paper_data", False)
    )
    return ds, dict(
        dataset=cfg["dataset"],
        max_entries=cfg["max_entries"],
        seed=0,
        entries=cache.content_digest(ds),
    )


def model_pst_config(
    scale,
    model,
    dataset,
    reference=None,
    combination=None,
    ica=True,
    steps=None,
    variant="official",
):
    """(pst_config, why): with combination None, the encoding combination of each step as Table 2
    gives it for `reference` (the hub model whose paper rows stand beside ours, None: model's, as
    aggregate.reference_model finds it: its 1st Training on the dataset, and on *a* its 2nd and
    3rd); else (pooling, entry pooling) at every step.
    ica=True trains the ICA candidate where the paper does: not for a RoBERTa reference (Table 2
    names an ICA space for BERT-base and BERT-large only; a model outside the paper runs as
    BERT-base); ica="all" for every model, False never."""
    if ica not in (True, False, "all"):
        raise ValueError(
            f"model_pst_config: ica={ica!r}: choose True (BERT, as the paper), 'all' or False"
        )
    reference = reference or aggregate.reference_model(model)[0]
    ica = ica == "all" or (ica is True and "roberta" not in str(reference).lower())
    if combination is None:
        pooling, entry_pooling, why = paper_combination(reference, dataset)
        later = paper_later_combinations(reference, dataset)
    else:
        (pooling, entry_pooling), later, why = combination, [], "given"
    cfg = pst_config(
        scale,
        model,
        dataset,
        pooling,
        entry_pooling,
        ica=ica,
        steps=steps,
        variant=variant,
        later_combinations=later,
    )
    return cfg, why


def combinations_text(cfg):
    """The combination of each step, e.g. "(CLS, AMP); 2nd-3rd (Mean, AC)", for printing."""
    names = [combination_name(*step_combination(cfg, k)) for k in range(1, len(cfg["lrs"]) + 1)]
    return (
        "; ".join(f"{ordinal(k)}: {n}" for k, n in enumerate(names, 1))
        if len(set(names)) > 1
        else names[0]
    )


def run(cfg, data_dir=None):
    """Load the dataset of cfg (cached) and run PST; returns (steps, dataset report)."""
    ds, key = entry_dataset(cfg, data_dir)
    return run_pst(cfg, ds, key, data_dir), ds["report"]


def run_share(cfg, data_dir=None, step=1, seeds=()):
    """One job's share of PST step `step` (repro/launch.py): the steps before it replayed from the
    cache, then the runs of `seeds` against every candidate space of the step (none: the space and
    its candidates only), into the cache."""
    ds, key = entry_dataset(cfg, data_dir)
    before = run_pst(cfg, ds, key, data_dir, steps=step - 1)
    best = before[-1]["best_run"] if before else dict(path=cfg["model"], key=cfg["model"])
    space = build_space(cfg, ds, key, (best["path"], best["key"]), step)
    book, lr = Bookkeeping({}, {}), cfg["lrs"][step - 1]
    for cand_key, cand in step_candidates(cfg, space).items():
        if cand_key[1] in seeds:
            train_candidate(book, cfg, ds, data_dir, cand, lr, step, cand_key)


def following_space_views(steps, cfg, data_dir=None):
    """Views of the entry space the next Training would use, built by the last step's best encoder
    (Figure 7: "built from encoders after 3rd Training of PST for 4th Training"); nothing is
    trained."""
    ds, key = entry_dataset(cfg, data_dir)
    best = steps[-1]["best_run"]
    return space_views(
        entry_space(best["path"], best["key"], step_combination(cfg, len(steps) + 1)[1], ds, key)
    )


def seed_table(step, space):
    """STS of one step's runs against one candidate space, over its seeds: an aggregate.SeedTable
    indexed by inference pooling (mean and std of the seeds, as the paper's statistical results)."""
    seeds = [r for (name, _), r in step["runs"].items() if name == space]
    poolings = list(seeds[0]["sts"])
    return aggregate.table_over_seeds(
        {p: [[r["sts"][p][c] for c in STS_COLS] for r in seeds] for p in poolings},
        STS_COLS,
        f"PST step {step['step']}, {space} space",
    )


def best_pooling_row(table):
    """(pooling, mean row, std row) of a seed_table under the pooling with the best mean STS
    average."""
    pooling = best_of(dict(table.mean["avg"]), float, "inference pooling by mean STS avg")
    return pooling, table.mean.loc[pooling], table.std.loc[pooling]


def best_pooling_scores(per_pooling):
    """(pooling, STS row in results.STS_COLS order) of one run's {pooling: scores} under its best
    average."""
    pooling = best_of(per_pooling, lambda s: s["avg"], "inference pooling by STS avg")
    return pooling, [per_pooling[pooling][c] for c in STS_COLS]


def ordinal(step):
    """The papers' name of a PST step: 1st, 2nd, 3rd, 4th, ..."""
    return f"{step}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(step if step < 20 else step % 10, 'th') }"


def spaces_of(step):
    """The candidate spaces a step trained against, in order ("plain", then "ICA" at the last
    step)."""
    return list(dict.fromkeys(name for name, _ in step["runs"]))


def steps_table(steps, untrained=None):
    """STS rows (pooling at inference) for every step and candidate space, the mean over seeds;
    `untrained` ({pooling: scores}) adds the original model's rows."""
    rows = {("untrained", "-", p): [s[c] for c in STS_COLS] for p, s in (untrained or {}).items()}
    for st in steps:
        for space in spaces_of(st):
            for p, row in seed_table(st, space).mean.iterrows():
                rows[(f"{ordinal(st['step'])} Training", space, p)] = row.tolist()
    df = pd.DataFrame.from_dict(rows, orient="index", columns=STS_COLS)
    df.index = pd.MultiIndex.from_tuples(df.index, names=["PST step", "space", "pooling"])
    return df


def loss_drop(steps, k=3):
    """How far each step's training loss falls within its one epoch: the mean of the first k and
    of the last k logged batches, and the drop (first - last), per step and candidate space (the
    seed of the step's best run); chance is log(entries)."""
    rows = {}
    for st in steps:
        for (space, seed), run in st["runs"].items():
            if seed == st["best"][1]:
                curve = run["loss_curve"]
                first, last = float(np.mean(curve[:k])), float(np.mean(curve[-k:]))
                rows[(f"{ordinal(st['step'])} Training", space)] = dict(
                    chance=run["chance_loss"], first=first, last=last, drop=first - last
                )
    df = pd.DataFrame.from_dict(rows, orient="index")
    df.index = pd.MultiIndex.from_tuples(df.index, names=["PST step", "space"])
    return df


def plan(cfg, ds=None, data_dir=None, extra_encoded=0):
    """run_pst for cfg: trainings (candidate x seed per step), steps, sentences encoded (entry
    spaces, STS after every training), timed by a warm-up here (ds: the cfg's dataset when None;
    plans and eval_sizes load only when a plan is made: the protocol's scales)."""
    from defsent_lite.repro import eval_sizes, plans

    ds = ds or entry_dataset(cfg, data_dir)[0]
    n_steps = len(cfg["lrs"])
    trainings = sum(
        len(cfg["seeds"]) * (2 if k == n_steps and cfg["ica"] else 1) for k in range(1, n_steps + 1)
    )
    n_defs = len(ds["definitions"])
    sts_sentences = eval_sizes.sts_sentences(data_dir, cfg["sts_max_pairs"]) * len(
        cfg["inference_poolings"]
    )
    model, tokenizer = defsentplus_model.load(cfg["model"], mlm_head_from=cfg.get("mlm_head_from"))
    device = next(model.parameters()).device
    space = torch.randn(len(ds["names"]), model.config.hidden_size, device=device)
    examples = list(zip(ds["ids"], ds["definitions"]))
    evaluated = plans.spaced_sample(examples, plans.ENCODE_SAMPLE)
    amp = config.autocast_training(cfg, variant_settings(cfg.get("variant", "official")))
    batches = train.batched(examples, cfg["batch_size"], seed=cfg["seeds"][0])
    step_s, batch_s = plans.measure(
        model,
        lambda m, b: defsentplus.loss(m, tokenizer, b, cfg["pooling"], space),
        plans.spread_batches(tokenizer, batches, lambda b: [d for _, d in b]),
        lambda m: build_entry_embeddings(  # what each step's entry space encodes
            m, tokenizer, list(range(len(evaluated))), [d for _, d in evaluated], "cls"
        ),
        len(evaluated),
        mixed_precision=amp,
    )
    what = f"DefSent+ PST on {cfg['dataset']}, {n_steps} step(s) x {len(cfg['seeds'])} seeds" + (
        " + ICA" if cfg["ica"] else ""
    )
    definitions = ds["definitions"]
    encoded_tokens = n_steps * n_defs * plans.row_tokens(tokenizer, definitions) + (
        trainings * sts_sentences + extra_encoded
    ) * eval_sizes.eval_sentence_tokens(tokenizer, data_dir)
    trained_tokens = (
        trainings * n_defs * plans.row_tokens(tokenizer, definitions, cfg["batch_size"])
    )
    return plans.Plan(
        what,
        trainings,
        trainings * math.ceil(n_defs / cfg["batch_size"]),
        n_steps * n_defs + trainings * sts_sentences + extra_encoded,
        step_s,
        batch_s,
        64,
        plans.device_name(device),
        plans.parameters(model),
        trained_tokens,
        encoded_tokens,
        amp,
    )


# ---------------------------------------------------------------- data-augmented checkpoints (Sec. 4.2)


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


def release_labels():
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
            f"PAPER_LABEL, one of {', '.join(release_labels())}"
        )
    if label not in release_labels():
        raise ValueError(
            f"PAPER_LABEL {label!r} is not a data-augmented encoder of Table 6: "
            f"{', '.join(release_labels())}"
        )
    family, _, model = label.partition("-")
    model = model.removeprefix("partial-")
    table3_name, table4_name = FAMILIES[family]
    table6_key = paper_defsentplus.released_row(label)[0]
    table4_defsentplus = next(
        k for k in paper_defsentplus.TABLE4 if k.split()[:2] == ["DefSent+", label]
    )
    lrs = tuple(paper_defsentplus.table5_rates(label))
    senteval_pooling = paper_defsentplus.table7_poolings(label)[1]
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
        senteval_pooling,
        paper_defsentplus.TABLE4_CHECKPOINT_POOLINGS[family],
    )


def model_to_train(scale_name, checkpoint, model=None):
    """Notebook 25's model: `model`, else the checkpoint (paper protocol), else all-MiniLM-L6-v2."""
    if model is not None:
        return model
    return checkpoint if config.scale(scale_name)["paper_protocol"] else config.OFFLINE_MODEL


def release_pst_config(scale, model, rel, steps=None, variant="official"):
    """The PST run of a release on dataset a: its combinations and, under the paper's protocol,
    Table 5's rates (a stand-in trains at the scale's rates). steps: None = as many as Table 5's."""
    lrs = rel.lrs if scale["paper_protocol"] else None
    cfg = pst_config(
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


RELEASE_CHECKPOINT = "princeton-nlp/unsup-simcse-bert-base-uncased"  # notebook 25's by default


def notebook_configs(notebook, scale, model=None, variant="official"):
    """The PST configs notebook 21-25 trains with its defaults, as its cells make them (21 and 24:
    PST on a; 22: the 1st Training on c and b, PST with ICA on a; 23: the four combinations' 1st
    Training; 25: the release's PST); the launcher trains these."""
    scale = config.scale(scale)
    if notebook == "25":
        model = model_to_train(scale["name"], RELEASE_CHECKPOINT, model) or scale["model"]
        return [release_pst_config(scale, model, release(RELEASE_CHECKPOINT), variant=variant)]
    model = model or scale["model"]
    if notebook == "23":
        grid = dict(ica=False, steps=1, variant=variant, max_entries=scale["dsp_grid_max_entries"])
        return [pst_config(scale, model, "a", *combination, **grid) for combination in COMBINATIONS]
    return [
        model_pst_config(
            scale, model, d, ica=d == "a", steps=None if d == "a" else 1, variant=variant
        )[0]
        for d in ("cba" if notebook == "22" else "a")
    ]


def release_rows(untrained, steps):
    """(our STS rows, best pooling per row, runs per row): the checkpoint itself under its best
    pooling, then each PST step's mean over seeds under the pooling with the best mean."""
    table, poolings, counts = {}, {}, {}
    poolings["checkpoint"], table["checkpoint"] = best_pooling_scores(untrained)
    for st in steps:
        label = f"DefSent+ {ordinal(st['step'])} Training"
        over_seeds = seed_table(st, "plain")
        poolings[label], mean, _ = best_pooling_row(over_seeds)
        table[label], counts[label] = mean.tolist(), int(over_seeds.n.iloc[0])
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
    senteval.transfer_before_after names them)."""
    paper = results.paper_table(
        {k: paper_defsentplus.TABLE4[k] for k in rel.table4_keys}, TRANSFER_COLS
    )
    pairs = {
        "checkpoint": (rel.table4_keys[0], "checkpoint"),
        "DefSent+": (rel.table4_keys[1], "DefSent+"),
    }
    return results.side_by_side(paper, ours, pairs, compare=compare)


def paper_rows_text(rel):
    """Which paper row stands beside each of ours (the tables' row labels are ours)."""
    return (
        f"paper rows: checkpoint = Table 3 / 4 '{rel.table3_key}' / '{rel.table4_keys[0]}'; the "
        f"last DefSent+ step = Table 6 '{rel.table6_key}', Table 4 '{rel.table4_keys[1]}'"
    )


# ---------------------------------------------------------------- Table 8, the encoding grid


class Grid(NamedTuple):
    """Table 8, the encoding grid: our STS averages and the paper's table with our best row."""

    ours: pd.DataFrame  # STS average per combination (rows) and inference pooling, and the best
    table: pd.DataFrame  # the paper's Table 8, our best row below (and its difference, compared)
    note: str  # aggregate.reference_model's line: whose rows, and why


def table8(grid, model, scale):
    """Table 8 (mean over runs, best inference pooling): grid is {combination: seed_table of
    its 1st Training}; the difference from the paper's row only for its own model and protocol."""
    ours = pd.DataFrame({combo: t.mean["avg"] for combo, t in grid.items()}).T
    ours["best"] = ours.max(axis=1)
    reference, note = aggregate.reference_model(model)
    paper = results.paper_table(paper_defsentplus.TABLE8, paper_defsentplus.TABLE8_COLS)
    key = aggregate.paper_row(paper_defsentplus.TABLE8, reference)
    mine = ours["best"].reindex(paper.columns)
    rows = {f"ours: {model.split('/')[-1]}": mine}
    if key and aggregate.comparable(model, scale):
        rows[f"ours - {key}"] = mine - paper.loc[key]
    return Grid(ours, pd.concat([paper, pd.DataFrame(rows).T]).round(2), note)
