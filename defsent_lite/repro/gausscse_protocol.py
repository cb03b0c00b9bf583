"""GaussCSE's protocol, read top to bottom: the settings (the released code's and the paper text's,
the rates each scale trains at), the data (NLI triplets, SNLI dev, the test sets, the pairs whose
direction is scored), scores of a trained model, one cached run per loss setting and seed, the
plan, the cosine baseline, Appendix E's grid (notebooks 30-33 train them; the launcher too: `launch
30 --scale cpu`); gausscse_tables scores them beside the paper's rows. The method is
defsent_lite.gausscse."""

import json
import warnings
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import torch
from safetensors.torch import load_file, save_file

from defsent_lite import checks, encode, gausscse, train
from defsent_lite.data import nli_readers, sources
from defsent_lite.data.nli_readers import NLI_TEST_SETS, eval_data, evenly_spaced
from defsent_lite.evaluation import nli
from defsent_lite.evaluation.nli import SICK_PAIRS, direction_pairs
from defsent_lite.paper import aggregate
from defsent_lite.paper import gausscse as paper_gausscse
from defsent_lite.runtime import cache, config, models, speed


# ----------------------------------------- settings: the released code's, the paper text's, scales

# What the released code (yoda122/GaussCSE) does and what the paper's text says, where they differ.
VARIANTS = {
    "official": dict(
        head="official",
        reduction="mean_per_dim",
        weight_decay=0.01,
        warmup_ratio=0.1,
        decay=True,
        warmup_from_zero=True,
        metrics="official",
        drop_last=True,
        epochs=1,
    ),
    "paper": dict(
        head="paper",
        reduction="sum",
        weight_decay=0.0,
        warmup_ratio=1.0,
        decay=False,
        warmup_from_zero=False,
        metrics="paper",
        drop_last=False,
        epochs=3,
    ),
}
DIFFERENCES = [  # (setting, paper text, official code, ours)
    ("mean head", "linear map of CLS", "tanh(linear map of CLS)", "variant's"),
    (
        "variance",
        "not specified (positive)",
        "exp(linear map of CLS)",
        "official: exp, floored at float32's smallest normal; paper: softplus + 1e-4",
    ),
    (
        "similarity",
        "1 / (1 + sum_d KL_d) (Eq. 2)",
        "mean_d 1 / (1 + KL_d)",
        "variant's (reduction setting)",
    ),
    (
        "optimiser",
        "AdamW (decay not stated)",
        "AdamW, weight decay 0.01 on every parameter",
        "variant's",
    ),
    (
        "schedule",
        "linear warm-up over the run (Appendix E)",
        "10% warm-up from 0, then linear decay",
        "variant's",
    ),
    (
        "epochs",
        "3",
        "1 (its default; run.sh sets none)",
        "paper scale: the variant's; smoke and cpu scales: 1",
    ),
    ("AUPRC", "thresholds 0..1 step 0.001", "sklearn precision_recall_curve + auc", "variant's"),
    (
        "NLI threshold",
        "most accurate on SNLI dev",
        "grid of 1,001, score >= t",
        "official: grid, >=; paper: midpoints, >",
    ),
    (
        "last partial batch",
        "not stated",
        "dropped (drop_last)",
        "official: dropped; paper: kept (unless 1 triplet)",
    ),
    (
        "model selection",
        "SNLI-dev AUPRC every 100 steps",
        "the same, also before training (step 0); the steps after the last multiple of 100 are "
        "never scored",
        "every 100 steps and at the last step, not step 0 (kept: they differ only at the two ends "
        "of a run)",
    ),
    (
        "batch size, lr",
        "Table 5's grid optimum (BERT-base: 16, 5e-5)",
        "run.sh: BERT-base 16, 1e-5 (no other model); the grid scripts scripts/n4/*.sh ran every "
        "cell",
        "paper scale: Table 5's optimum, what produced the published numbers (run.sh was "
        "committed after the paper, 3 min before the grid scripts were deleted, and does not "
        "parse: bash -n fails at its line 12); rates='run.sh' for its (16, 1e-5)",
    ),
    (
        "SICK direction pairs",
        "one direction only: A entails B xor B entails A (794 test pairs)",
        "every entailment pair, premise -> hypothesis (1,414 here)",
        "the text's (its length-baseline row, 69.14, is reproduced exactly; all pairs give "
        "60.11): sick_pairs='all' for the code's; 10 test pairs absent from SICK.txt are excluded "
        "and counted",
    ),
]


def variant_settings(variant):
    """The settings of a GaussCSE variant (VARIANTS); an unknown name is an error."""
    return config.pick("GaussCSE", VARIANTS, variant)


def differences():
    """The GaussCSE settings where the paper's text and the official code differ, and what we
    run."""
    return aggregate.differences_table(
        DIFFERENCES, ["setting", "paper text", "official code", "ours"]
    )


def paper_hyperparameters(model):
    """(batch size, lr) with the best SNLI-dev AUPRC in the paper's grid (Table 5), or None for a
    model the paper does not report."""
    cells = {
        (batch, lr): auprc
        for (name, batch), row in paper_gausscse.TABLE5.items()
        if name == model
        for lr, auprc in zip(paper_gausscse.GRID_LRS, row)
    }
    return max(cells, key=cells.get) if cells else None


RUN_SH = {
    "bert-base-uncased": (16, 1e-5)
}  # (batch, lr) the official run.sh pins (yoda122/GaussCSE)
RATES = ("table5", "run.sh")


def base_config(
    scale, model, data_dir=None, variant="official", sick_pairs="one-way", rates="table5"
):
    """A scale's GaussCSE config (setting added per run). At paper scale the batch size and lr are
    the model's Table 5 optimum (BERT-base (16, 5e-5): the grid's best cell produced the published
    numbers), or with rates="run.sh" what the official run.sh pins (BERT-base (16, 1e-5); it names
    no other model), else the scale's defaults with a warning. variant: "official" (the released
    code's behaviour, the default) or "paper" (the text's); sick_pairs: direction_pairs' SICK
    reading."""
    if rates not in RATES:
        raise ValueError(f"rates={rates!r}: choose one of {', '.join(RATES)}")
    batch_size, lr = scale["gauss_batch_size"], scale["gauss_lr"]
    if scale["paper_protocol"]:
        pinned = RUN_SH.get(model) if rates == "run.sh" else None
        best = pinned or paper_hyperparameters(model)
        if best is None:
            warnings.warn(
                f"{model!r} is not in GaussCSE's Table 5 grid: using batch {batch_size}, lr {lr}; "
                "notebook 33 searches it (its SETTING and MODEL)"
            )
        batch_size, lr = best or (batch_size, lr)
    if sick_pairs not in SICK_PAIRS:
        raise ValueError(f"sick_pairs={sick_pairs!r}: choose one of {', '.join(SICK_PAIRS)}")
    return dict(
        model=model,
        lr=lr,
        batch_size=batch_size,
        epochs=scale["gauss_epochs"] or variant_settings(variant)["epochs"],
        seed=scale["gauss_seeds"][0],
        train_max=scale["gauss_train_max"],
        eval_every=100,
        dev_max=scale["gauss_dev_max"],
        test_max=scale["gauss_test_max"],
        reduction=variant_settings(variant)["reduction"],
        exclude_sources=[],
        train_source=nli_readers.train_source(scale["name"], data_dir),
        variant=variant,
        sick_pairs=sick_pairs,
    )


# ------------------------------------------------- data: triplets, SNLI dev, test sets, directions


class FrozenVectors(NamedTuple):
    """The GaussCSE miniature's data: one frozen CLS vector per distinct sentence and, as rows of
    it, the training triplets and the SNLI-test entailment pairs."""

    vectors: torch.Tensor  # [sentences, hidden] float32
    triplets: torch.Tensor  # [triplets, 3] rows of (premise, entailment, contradiction)
    premises: torch.Tensor  # [pairs] the entailing sentence of each SNLI-test entailment pair
    hypotheses: torch.Tensor  # [pairs] the sentence it entails


def frozen_cls_vectors(
    model_name, data_dir=None, source="offline", max_triplets=10_000, max_length=64, batch_size=128
):
    """CLS vectors of the untrained encoder for every sentence of the training triplets (`source`, a
    seeded sample of at most max_triplets: all 7,409 offline ones) and of SNLI test's entailment
    pairs, each distinct sentence encoded once (cached): notebook 30's miniature trains only the
    Gaussian head on them."""
    triplets = nli_readers.training_triplets(data_dir, max_triplets=max_triplets, source=source)
    pairs = direction_pairs("SNLI", nli_readers.load_nli(NLI_TEST_SETS["SNLI"], data_dir), [])
    sentences = list(
        dict.fromkeys([s for t in triplets for s in t] + pairs.entailing + pairs.entailed)
    )
    cfg = dict(
        model=str(model_name), sentences=cache.content_digest(sentences), max_length=max_length
    )

    def compute():
        model, tokenizer = models.load(model_name)
        return encode.encode(
            model, tokenizer, sentences, "cls", batch_size, max_length, desc="CLS vectors"
        )

    vectors = cache.cached_tensor("gauss_frozen_cls", cfg, compute)
    row = {s: i for i, s in enumerate(sentences)}
    rows = lambda column: torch.tensor([row[s] for s in column], dtype=torch.long)  # noqa: E731
    return FrozenVectors(
        vectors,
        torch.tensor([[row[s] for s in t] for t in triplets], dtype=torch.long),
        rows(pairs.entailing),
        rows(pairs.entailed),
    )


# ------------------------------------------------------------------------------- scores of a model


def sentence_gaussians(model, tokenizer, sentences, batch_size=64):
    """(mu, var, row of each sentence): every distinct sentence encoded once, for all the pairs
    built on them."""
    uniq = list(dict.fromkeys(sentences))
    mu, var = gausscse.encode(model, tokenizer, uniq, batch_size=batch_size)
    return mu, var, {s: i for i, s in enumerate(uniq)}


def similarities_in(gaussians, first, second, reduction="sum"):
    """sim(first[k]||second[k]) and sim(second[k]||first[k]) for each k, from sentence_gaussians'
    table."""
    mu, var, pos = gaussians
    a = torch.tensor([pos[s] for s in first], dtype=torch.long)
    b = torch.tensor([pos[s] for s in second], dtype=torch.long)
    fwd = gausscse.kl_similarity(mu[a], var[a], mu[b], var[b], reduction)
    bwd = gausscse.kl_similarity(mu[b], var[b], mu[a], var[a], reduction)
    return fwd.numpy(), bwd.numpy()


def nli_scores(model, tokenizer, rows, reduction="mean_per_dim"):
    """sim(hyp||pre) per NLI row (the score thresholded for entailment)."""
    hyps, pres = [r["hypothesis"] for r in rows], [r["premise"] for r in rows]
    return similarities_in(
        sentence_gaussians(model, tokenizer, hyps + pres), hyps, pres, reduction
    )[0]


def dev_auprc_fn(tokenizer, dev_rows, reduction, what="GaussCSE", metrics="official"):
    """eval_fn for train.train: SNLI-dev AUPRC (the paper's model selection, every 100 steps)."""
    labels = nli.binary_labels(dev_rows)
    return lambda model: nli.area_under_pr(
        nli_scores(model, tokenizer, dev_rows, reduction),
        labels,
        metrics,
        what=f"{what}: SNLI-dev AUPRC",
    )


def evaluate(
    model,
    tokenizer,
    dev_rows,
    test_sets,
    sick_full,
    reduction="mean_per_dim",
    what="GaussCSE",
    metrics="official",
    sick_pairs="one-way",
):
    """Table 1/3 (accuracy with the SNLI-dev threshold, AUPRC) and Table 2/4 (direction) rows,
    plus per-example correctness for McNemar's test. `what` names the run in errors; metrics:
    one of nli.METRICS."""
    dev_scores, dev_labels = (
        nli_scores(model, tokenizer, dev_rows, reduction),
        nli.binary_labels(dev_rows),
    )
    threshold = nli.threshold_for(
        dev_scores, dev_labels, metrics, what=f"{what}: SNLI-dev threshold"
    )
    out = dict(
        threshold=threshold,
        dev_auprc=nli.area_under_pr(
            dev_scores, dev_labels, metrics, what=f"{what}: SNLI-dev AUPRC"
        ),
        nli={},
        direction={},
        nli_correct={},
        direction_correct={},
    )
    for name, rows in test_sets.items():
        hyps, pres = [r["hypothesis"] for r in rows], [r["premise"] for r in rows]
        entailing, entailed = direction_pairs(name, rows, sick_full, sick_pairs)[:2]
        # NLI and direction share it
        table = sentence_gaussians(model, tokenizer, hyps + pres + entailing + entailed)
        scores, labels = similarities_in(table, hyps, pres, reduction)[0], nli.binary_labels(rows)
        out["nli"][name] = dict(
            acc=100 * nli.accuracy(scores, labels, threshold, f"{what}: {name} accuracy", metrics),
            auprc=100 * nli.area_under_pr(scores, labels, metrics, what=f"{what}: {name} AUPRC"),
        )
        out["nli_correct"][name] = (
            (nli.predicted_entailment(scores, threshold, metrics) == (labels == 1))
            .astype(int)
            .tolist()
        )
        fwd, bwd = similarities_in(table, entailed, entailing, reduction)  # sim(B||A), sim(A||B)
        out["direction"][name] = 100 * nli.direction_accuracy(fwd, bwd)
        out["direction_correct"][name] = (fwd > bwd).astype(int).tolist()
    return out


def sentence_vectors(model, tokenizer, sentences, pooling):
    """Encoder vectors for a cosine baseline: a pooling of encode.POOLINGS, or "pooler" (the
    CLS state through the encoder's pooler, dense + tanh: where supervised SimCSE's released
    checkpoints keep the MLP their sentence vectors pass through)."""
    if pooling != "pooler":
        return encode.encode(model, tokenizer, sentences, pooling=pooling)
    cls = encode.encode(model, tokenizer, sentences, pooling="cls")
    pooler = getattr(model.base_model, "pooler", None)
    if pooler is None:
        raise ValueError(
            f"{type(model).__name__} has no pooler: use a pooling of {encode.POOLINGS}"
        )
    device = next(model.parameters()).device
    with torch.no_grad():
        return pooler.activation(pooler.dense(cls.to(device))).float().cpu()


# ---------------------------------------------------------------- a trained model saved and loaded

HEAD_FILE, META_FILE = "gauss_head.safetensors", "gausscse_meta.json"


class GaussianEmbedder(NamedTuple):
    """A trained GaussCSE model as load_embedder returns it: encode(sentences) -> (mu, var);
    similarity(a, b) -> sim(a_i||b_i) with the similarity it was trained with."""

    model: gausscse.GaussModel
    tokenizer: object
    reduction: str
    meta: dict

    def encode(self, sentences, batch_size=64):
        return gausscse.encode(self.model, self.tokenizer, sentences, batch_size)

    def similarity(self, first, second, batch_size=64):
        (mu_a, var_a), (mu_b, var_b) = (
            self.encode(first, batch_size),
            self.encode(second, batch_size),
        )
        return gausscse.kl_similarity(mu_a, var_a, mu_b, var_b, self.reduction)


def save_embedder(model, tokenizer, folder, reduction, meta):
    """The encoder and tokenizer with save_pretrained (any transformers user loads them), the
    head's two linear layers as safetensors, and a JSON file naming the head and similarity."""
    folder = Path(folder)
    model.encoder.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    save_file(
        {k: v.detach().cpu().contiguous() for k, v in model.head.state_dict().items()},
        folder / HEAD_FILE,
    )
    (folder / META_FILE).write_text(
        json.dumps(dict(meta, head=model.head.head, reduction=reduction), indent=1)
    )
    return folder


def load_embedder(folder, device=None):
    """The GaussianEmbedder saved in `folder` by save_embedder, on `device` (cuda when present)."""
    folder = Path(folder)
    missing = [f for f in (HEAD_FILE, META_FILE) if not (folder / f).exists()]
    if missing:
        raise FileNotFoundError(
            f"{folder} is not a saved GaussCSE model: {', '.join(missing)} missing"
        )
    meta = json.loads((folder / META_FILE).read_text())
    encoder, tokenizer = models.load(str(folder), device=device)
    model = gausscse.GaussModel(encoder, meta["head"])
    model.head.load_state_dict(load_file(folder / HEAD_FILE))
    model.to(next(encoder.parameters()).device).eval()
    return GaussianEmbedder(model, tokenizer, meta["reduction"], meta)


# ----------------------------------------------------- runs: one cached training per setting, seed


def describe_batch(model, tokenizer):
    """For NonFiniteLoss: the batch's first premises and the range of its means and variances."""

    def describe(batch):
        batch = batch.triplets if isinstance(batch, gausscse.TokenizedTriplets) else batch
        with torch.no_grad():
            mu, var = gausscse.encode(model, tokenizer, [s for t in batch for s in t])
        return (
            f"premises {[p[:30] for p, _, _ in batch[:2]]}..., mu in [{mu.min():.3g}, "
            f"{mu.max():.3g}], var in [{var.min():.3g}, {var.max():.3g}]"
        )

    return describe


def run_name(cfg):
    """How progress bars and errors name a run."""
    return f"GaussCSE {cfg['setting']} (lr {cfg['lr']:g}, batch {cfg['batch_size']}, seed {cfg['seed']})"


def training_batches(cfg, triplets, drop_last):
    """The run's batches, epoch after epoch (each epoch its own seeded order). A last partial batch
    is dropped as the official code does (drop_last), else only a 1-triplet one: it has no in-batch
    negatives."""
    epochs = checks.count(cfg["epochs"], "epochs", allow_none=False)
    batches = [
        b
        for e in range(epochs)
        for b in train.batched(triplets, cfg["batch_size"], cfg["seed"] + e)
    ]
    smallest = cfg["batch_size"] if drop_last else 2
    batches = [b for b in batches if len(b) >= smallest]
    if not batches:
        raise ValueError(
            f"{run_name(cfg)}: no training batches: {len(triplets)} training triplets make no batch "
            f"of {smallest} (the official variant drops a last partial batch, as its code does)"
        )
    return batches


def train_and_score(cfg, data_dir=None, folder=None, resume=None):
    """One GaussCSE training (Eq. 3 on batches of triplets, the checkpoint with the best SNLI-dev
    AUPRC kept), then its scores of Tables 1-4; the trained model saved in `folder` when given;
    resume: train.train's (a file to go on from)."""
    v, what = variant_settings(cfg.get("variant", "official")), run_name(cfg)
    config.set_seed(cfg["seed"])
    encoder, tokenizer = models.load(cfg["model"], eval_mode=False)
    model = gausscse.GaussModel(encoder, v["head"]).to(next(encoder.parameters()).device)
    triplets = nli_readers.training_triplets(
        data_dir, cfg["exclude_sources"], cfg["train_max"], cfg["seed"], cfg["train_source"]
    )
    batches = training_batches(cfg, triplets, v["drop_last"])
    dev, tests, sick_full = eval_data(cfg["test_max"], data_dir)
    dev = evenly_spaced(dev, cfg["dev_max"])
    settings = train.Settings(
        lr=cfg["lr"],
        optimizer="adamw",
        weight_decay=v["weight_decay"],
        warmup_ratio=v["warmup_ratio"],
        decay=v["decay"],
        warmup_from_zero=v["warmup_from_zero"],
    )
    history = train.train(
        model,
        lambda m, b: gausscse.triplet_loss(m, tokenizer, b, cfg["setting"], cfg["reduction"]),
        gausscse.tokenize_triplet_batches(tokenizer, batches),  # once, before the steps
        settings,
        eval_fn=dev_auprc_fn(tokenizer, dev, cfg["reduction"], what, v["metrics"]),
        eval_every=cfg["eval_every"],
        describe_batch=describe_batch(model, tokenizer),
        desc=what,
        around=speed.training(model, len(batches), "gausscse"),  # when it pays
        resume=resume,
    )
    tests = tests if cfg.get("evaluate_tests", True) else {}  # the grid needs SNLI dev's AUPRC only
    result = evaluate(
        model,
        tokenizer,
        dev,
        tests,
        sick_full,
        cfg["reduction"],
        what,
        v["metrics"],
        cfg.get("sick_pairs", "one-way"),
    )
    if folder is not None:
        meta = dict(setting=cfg["setting"], base_model=str(cfg["model"]), seed=cfg["seed"])
        save_embedder(model, tokenizer, folder, cfg["reduction"], meta)
    return dict(
        result,
        steps=history["steps"],
        best_step=history["best_step"],
        eval=history["eval"],
        loss_curve=history["loss"],
        triplets=len(triplets),
    )


def run(cfg, data_dir=None, keep_model=False):
    """train_and_score(cfg) once, cached by its settings and data; with keep_model the trained
    model stays in the cache (the result's "path" loads it with load_embedder), else only its
    scores are kept.

    cfg: model, setting, lr, batch_size, epochs, seed, train_max, eval_every, dev_max,
    test_max, reduction, exclude_sources, train_source, variant (VARIANTS: head, optimiser,
    schedule and metrics; the similarity's reduction is its own key, set from the variant).
    """
    variant_settings(cfg.get("variant", "official"))  # an unknown variant before anything runs
    checks.rate(cfg["lr"], "GaussCSE lr")  # before a message formats it
    checks.count(cfg["eval_every"], "GaussCSE eval_every")  # 0 would never evaluate, yet be cached
    key = run_key(cfg, data_dir)
    entry = cache.cached_run(
        "gausscse",
        key,
        lambda folder: train_and_score(
            cfg, data_dir, folder / "model" if keep_model else None, cache.resume_file(folder)
        ),
        need_files=keep_model,
    )
    model = entry.folder / "model" if entry.folder is not None else None
    if model is not None and not model.exists():
        model = None
        if not keep_model:  # nothing was saved: the entry says so, a keep_model call retrains
            cache.drop_files("gausscse", key)
    return dict(entry.result, path=str(model) if model else None)


def run_key(cfg, data_dir=None):
    """The cache key of run(cfg): its settings and the NLI and SICK files' identity."""
    return dict(cfg, data=cache.data_identity(data_dir, "nli", "sts/raw/SICK"))


def needs_training(cfg, data_dir=None, keep_model=False):
    """Whether run(cfg, data_dir, keep_model) would train: no cached entry, or (keep_model) one
    without its model."""
    found = cache.lookup("gausscse", run_key(cfg, data_dir))
    return found is None or (
        keep_model and (found.folder is None or not (found.folder / "model").exists())
    )


def average_runs(results):
    """Mean NLI and direction scores (and dev AUPRC) over seeds, as the paper reports; the
    per-example correctness that McNemar's test needs is the first seed's."""
    first = results[0]
    if len(results) == 1:
        return first

    def mean(get):  # non-finite runs are refused, never averaged
        return aggregate.over_seeds([get(r) for r in results], "GaussCSE over seeds").mean

    nli_means = {
        t: {k: mean(lambda r: r["nli"][t][k]) for k in first["nli"][t]} for t in first["nli"]
    }
    direction = {t: mean(lambda r: r["direction"][t]) for t in first["direction"]}
    return dict(
        first,
        nli=nli_means,
        direction=direction,
        dev_auprc=mean(lambda r: r["dev_auprc"]),
        seeds=len(results),
    )


def run_settings(base, seeds, data_dir=None, settings=gausscse.LOSS_SETTINGS):
    """One cached run per loss setting and seed; {setting: seed-averaged result}. The first seed's
    model of each setting is kept ("path": load_embedder loads it), the others'
    scores only."""
    return {
        s: average_runs(
            [run(cfg, data_dir, keep_model=keep) for cfg, keep in seed_runs(base, s, seeds)]
        )
        for s in settings
    }


def seed_runs(base, setting, seeds):
    """run_settings' trainings of one loss setting: (cfg, keep_model) per seed, the first kept."""
    return [(dict(base, setting=setting, seed=k), k == seeds[0]) for k in seeds]


def notebook_runs(notebook, base, scale):
    """(cfg, keep_model) of each training notebook 30-33 runs with its defaults: the four loss
    settings x the scale's seeds (30, 31), the ent+rev run (32), the Appendix E grid (33)."""
    if notebook == "33":
        grid = dict(
            base,
            train_max=scale["gauss_grid_train_max"],
            dev_max=scale["gauss_grid_dev_max"] or base["dev_max"],
        )
        cells = grid_cells(
            grid, "ent+con+rev", scale["gauss_grid_batch_sizes"], paper_gausscse.GRID_LRS
        )
        return [(cfg, False) for cfg in cells.values()]
    if notebook == "32":
        return [(dict(base, setting="ent+rev"), False)]
    return [r for s in gausscse.LOSS_SETTINGS for r in seed_runs(base, s, scale["gauss_seeds"])]


def triplet_count(cfg, data_dir=None, published=False):
    """The training triplets of a run (published: the 275,601 of nli_for_simcse.csv, without the
    data here) capped by train_max."""
    if published:
        return min(sources.by_name("nli_for_simcse")["rows"], cfg["train_max"] or float("inf"))
    return len(
        nli_readers.training_triplets(
            data_dir, cfg["exclude_sources"], cfg["train_max"], 0, cfg["train_source"]
        )
    )


# ---------------------------------------------------------- what a notebook will run (paper scale)


def plan(base, seeds, data_dir=None, settings=gausscse.LOSS_SETTINGS, lrs=None):
    """run_settings: trainings (setting x seed), steps, NLI sentences encoded (SNLI dev every
    eval_every steps, the test sets at the end), timed by a warm-up here. lrs: one training per
    rate as well (a row of the grid: grid_search at base's batch size). budget and
    warmup load only when a plan is made (the protocol's scales)."""
    from defsent_lite.repro import plans

    triplets = nli_readers.training_triplets(
        data_dir, base["exclude_sources"], base["train_max"], 0, base["train_source"]
    )
    checks.count(base["eval_every"], "GaussCSE eval_every")  # refused as run() refuses it
    drop_last = variant_settings(base.get("variant", "official"))["drop_last"]
    first = dict(base, seed=seeds[0], setting=settings[0])
    batches = training_batches(first, triplets, drop_last)  # none: refused, as by run()
    steps = len(batches)
    dev, tests, _ = eval_data(base["test_max"], data_dir)
    dev = evenly_spaced(dev, base["dev_max"])

    def distinct(rows):  # each distinct sentence is encoded once (sentence_gaussians)
        return len({s for r in rows for s in (r["premise"], r["hypothesis"])})

    encoded = distinct(dev) * (steps // base["eval_every"] + 2) + sum(
        distinct(rows) for rows in tests.values()
    )
    encoder, tokenizer = models.load(base["model"], eval_mode=False)
    model = gausscse.GaussModel(encoder).to(next(encoder.parameters()).device)
    dev_sentences = sorted({s for r in dev for s in (r["premise"], r["hypothesis"])})
    evaluated = plans.spaced_sample(dev_sentences, plans.ENCODE_SAMPLE)
    step_s, batch_s = plans.measure(
        model,
        lambda m, b: gausscse.triplet_loss(m, tokenizer, b, settings[0], base["reduction"]),
        plans.spread_batches(tokenizer, batches, lambda b: [s for t in b for s in t]),
        lambda m: gausscse.encode(m, tokenizer, evaluated),
        len(evaluated),
    )
    trainings = len(settings) * len(seeds) * len(lrs or [None])
    rates = f" x {len(lrs)} learning rates at batch {base['batch_size']}" if lrs else ""
    # a training batch pads premises, entailments and contradictions together (3 x batch rows)
    per_triplet = 3 * plans.row_tokens(
        tokenizer, [s for t in triplets[:4096] for s in t], 3 * base["batch_size"]
    )
    return plans.Plan(
        f"GaussCSE, {len(settings)} loss settings x {len(seeds)} seeds{rates}, {len(triplets):,} "
        "triplets",
        trainings,
        trainings * steps,
        trainings * encoded,
        step_s,
        batch_s,
        64,
        plans.device_name(next(model.parameters()).device),
        plans.parameters(model),
        trainings * steps * base["batch_size"] * per_triplet,
        trainings
        * encoded
        * plans.row_tokens(tokenizer, [s for r in dev for s in (r["premise"], r["hypothesis"])]),
        True,
        True,
    )


# ------------------------------------------------------ Tables 1/3's baseline: an encoder's cosine

# Tables 1/3's baseline (BERT-base)
SIMCSE_BASELINE = (
    "princeton-nlp/sup-simcse-bert-base-uncased",
    "pooler",
)


def baseline_encoder(scale, model):
    """(model, pooling) of the cosine baseline row: under the paper's protocol supervised
    SimCSE-BERT-base through its pooler (the paper's row), else `model` with mean pooling."""
    return SIMCSE_BASELINE if scale["paper_protocol"] else (model, "mean")


def cosine_baseline(model_name, pooling, base, data_dir=None):
    """The baseline row of Tables 1/3: cosine(hypothesis, premise) of an encoder as the entailment
    score, thresholded on SNLI dev with the variant's metrics; {test set: {acc, auprc}} x100
    (cached)."""
    metrics = variant_settings(base.get("variant", "official"))["metrics"]
    cfg = dict(
        model=str(model_name),
        pooling=pooling,
        dev_max=base["dev_max"],
        test_max=base["test_max"],
        metrics=metrics,
    )
    what = f"cosine baseline {model_name} ({pooling})"

    def compute():
        model, tokenizer = models.load(model_name)
        dev, tests, _ = eval_data(base["test_max"], data_dir)
        dev = evenly_spaced(dev, base["dev_max"])

        def scores(rows):
            hyps, pres = [r["hypothesis"] for r in rows], [r["premise"] for r in rows]
            uniq = list(dict.fromkeys(hyps + pres))
            vectors = torch.nn.functional.normalize(
                sentence_vectors(model, tokenizer, uniq, pooling), dim=-1
            )
            pos = {s: i for i, s in enumerate(uniq)}
            return (
                (vectors[[pos[h] for h in hyps]] * vectors[[pos[p] for p in pres]]).sum(-1).numpy()
            )

        threshold = nli.threshold_for(
            scores(dev), nli.binary_labels(dev), metrics, what=f"{what}: SNLI-dev threshold"
        )
        out = {}
        for name, rows in tests.items():
            s, labels = scores(rows), nli.binary_labels(rows)
            out[name] = dict(
                acc=100 * nli.accuracy(s, labels, threshold, f"{what}: {name} accuracy", metrics),
                auprc=100 * nli.area_under_pr(s, labels, metrics, what=f"{what}: {name} AUPRC"),
            )
        return dict(nli=out, threshold=threshold)

    return cache.cached_json(
        "gauss_baseline", dict(cfg, data=cache.data_identity(data_dir, "nli")), compute
    )


# ----------------------------------------- Appendix E's grid (Table 5): batch size x learning rate


def grid_cells(base, setting, batch_sizes, lrs):
    """grid_search's trainings: one cfg per (batch size, lr) cell, the test sets not scored."""
    return {
        (b, lr): dict(base, setting=setting, batch_size=b, lr=lr, evaluate_tests=False)
        for b in batch_sizes
        for lr in lrs
    }


def grid_search(
    base, setting, batch_sizes=(16, 32, 64, 128), lrs=tuple(paper_gausscse.GRID_LRS), data_dir=None
):
    """Appendix E: SNLI-dev AUPRC x100 of the best checkpoint for each batch size (rows) and lr
    (columns); the test sets are not scored (the grid selects on SNLI dev only)."""
    cells = {
        cell: 100 * run(cfg, data_dir)["dev_auprc"]
        for cell, cfg in grid_cells(base, setting, batch_sizes, lrs).items()
    }
    grid = pd.Series(cells).unstack().rename_axis(index="batch size", columns="lr")
    return grid.rename(columns=lambda lr: f"{lr:g}")
