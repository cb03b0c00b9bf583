"""One encoder, one benchmark (notebook 40): DefSent, DefSent+, GaussCSE and the field's SimCSE
trained from the same encoder, seeds and number of updates, and scored by one frozen evaluator.

Each method keeps its training data and loss (`METHODS` says what differs); every trained state is
scored at its last step (the rule shared by every method), and where a paper selects a checkpoint
on a dev set, its own rule is scored too (STS average of the checkpoint it keeps).
"""

import copy
import math
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F
from tqdm.auto import tqdm

from defsent_lite import checks, defsent, defsentplus, encode, forward, gausscse, simcse, train
from defsent_lite.data import dictionary, entries, eval_readers, nli_readers
from defsent_lite.evaluation import nli, senteval, sts
from defsent_lite.repro import plans
from defsent_lite.runtime import cache, config, defsent_model, defsentplus_model, models


class Method(NamedTuple):
    """A row of the table: how it was trained and how it is scored."""

    training: str  # the run it comes from (TRAININGS), None: the encoder as loaded
    data: str
    loss: str
    pooling: str  # the vector scored
    similarity: str
    paper_batch: str  # the paper's batch (the comparison shares `compare_batch_size`)
    own_rule: str  # the paper's checkpoint selection


OWN_LAST = "the last step (shared)"
METHODS = {
    "raw encoder CLS": Method(None, "-", "-", "CLS", "cosine", "-", "-"),
    "raw encoder mean": Method(None, "-", "-", "mean", "cosine", "-", "-"),
    "DefSent": Method(
        "DefSent",
        "DefSent's dictionary train split",
        "Eq. 1: defined word via the frozen MLM head",
        "mean",
        "cosine",
        "16",
        OWN_LAST,
    ),
    "DefSent+ 1st": Method(
        "DefSent+",
        "dataset a's definitions and entries",
        "Eq. 5: the definition's entry (AMP entries)",
        "CLS",
        "cosine",
        "32",
        OWN_LAST,
    ),
    "DefSent+ PST": Method(
        "DefSent+",
        "dataset a; entries rebuilt twice",
        "Eq. 5, 3 steps from the original",
        "CLS",
        "cosine",
        "32",
        OWN_LAST,
    ),
    "GaussCSE mean": Method(
        "GaussCSE",
        "NLI triplets",
        "Eq. 3, ent+con+rev",
        "Gaussian mean",
        "cosine",
        "16",
        "best SNLI-dev AUPRC",
    ),
    "GaussCSE KL": Method(
        "GaussCSE",
        "NLI triplets",
        "Eq. 3, ent+con+rev",
        "Gaussian",
        "1/(1+KL) (STS: both ways' mean)",
        "16",
        "best SNLI-dev AUPRC",
    ),
    "unsup SimCSE": Method(
        "unsup SimCSE",
        "the NLI triplets' sentences, unlabelled",
        "dropout positive (SimCSE Eq. 1)",
        "CLS",
        "cosine",
        "64",
        "best STS-B dev",
    ),
    "sup SimCSE": Method(
        "sup SimCSE",
        "NLI triplets",
        "SimCSE Eq. 5: entailment +, contradiction -",
        "CLS + MLP",
        "cosine",
        "512",
        "best STS-B dev",
    ),
}
TRAININGS = ("DefSent", "DefSent+", "GaussCSE", "unsup SimCSE", "sup SimCSE")
# the papers' BERT-base optimizers (DefSent: its official Adam; DefSent+: its official AdamW, no
# warm-up, decay, clipping; GaussCSE: AdamW with warm-up and decay; SimCSE: transformers' Trainer)
SIMCSE_OPTIMIZER = dict(optimizer="adamw", warmup_ratio=0.0, decay=True)
OPTIMIZERS = {
    "DefSent": dict(optimizer="adam", warmup_ratio=0.1, fractional_warmup=True),
    "DefSent+": dict(optimizer="adamw", eps=1e-6, warmup_ratio=0.0, decay=True, grad_clip=1.0),
    "GaussCSE": dict(
        optimizer="adamw", weight_decay=0.01, warmup_ratio=0.1, decay=True, warmup_from_zero=True
    ),
    "unsup SimCSE": SIMCSE_OPTIMIZER,
    "sup SimCSE": SIMCSE_OPTIMIZER,
}
# the pairs of the whole files ("all": each STS year's subsets concatenated; the NLI test sets);
# fewer at a scale that caps them, else a different file set is refused
PAIRS = dict(STS12=3108, STS13=1500, STS14=3750, STS15=3000, STS16=1186, STSB=1379, SICKR=4927)
NLI_PAIRS = dict(SNLI=10000, MNLI=10000, SICK=4927)
DIRECTION = "GaussCSE KL"  # the only asymmetric similarity: the one row with direction scores


# ---------------------------------------------------------------- the frozen evaluator


class Evaluator:
    """STS12-16, STS-B, SICK-R ("all": each year's subsets concatenated), SentEval's seven tasks and
    NLI AUPRC on SNLI / MNLI / SICK, the same files and sizes for every method; entailment
    direction for an asymmetric similarity, with the length baseline beside it."""

    def __init__(self, scale, data_dir=None):
        self.scale, self.data_dir = scale, data_dir
        self.sts = sts.load_tasks(data_dir=data_dir, max_pairs=scale["sts_max_pairs"])
        self.transfer = senteval.transfer_settings(scale)
        self.nli_dev, self.nli, self.sick = nli_readers.eval_data(scale["gauss_test_max"], data_dir)
        self.nli_dev = nli_readers.evenly_spaced(self.nli_dev, scale["gauss_dev_max"])
        self.pairs = {
            name: nli.direction_pairs(name, rows, self.sick)[:2] for name, rows in self.nli.items()
        }
        self.length_baseline = nli.length_baselines(self.nli, self.sick)
        found = {t: len(g) for t, (_, _, g) in self.sts.items()} | {
            n: len(rows) for n, rows in self.nli.items()
        }
        for name, whole in (PAIRS | NLI_PAIRS).items():
            cap = scale["sts_max_pairs" if name in PAIRS else "gauss_test_max"]
            if found[name] != (whole if cap is None else min(cap, whole)):
                raise ValueError(
                    f"{name}: {found[name]} pairs where the evaluator's files give {whole} (cap "
                    f"{cap}): another version of the file under {config.data_root(data_dir)}?"
                )

    def counts(self):
        """{file set: pairs or examples} of what is scored."""
        out = {f"{t} pairs": len(g) for t, (_, _, g) in self.sts.items()}
        out.update({f"{n} NLI pairs": len(rows) for n, rows in self.nli.items()})
        out.update({f"{n} direction pairs": len(p[0]) for n, p in self.pairs.items()})
        return out

    def score(self, vectors=None, gaussians=None):
        """{metric: value} of `vectors(sentences) -> [n, d]` (cosine) or of `gaussians(sentences)
        -> (mu, var)` (sim(a||b) = 1/(1+KL), the official per-dimension mean); a metric that does
        not apply is left out."""
        if gaussians is not None:
            return self._sts(gaussians, kl=True) | self._nli(gaussians, kl=True)
        out = self._sts(vectors) | self._nli(vectors)
        transfer = senteval.evaluate(vectors, data_dir=self.data_dir, **self.transfer)
        return out | {("avg transfer" if t == "avg" else t): v for t, v in transfer.items()}

    def sts_avg(self, vectors=None, gaussians=None):
        """The STS average alone (a paper's own rule, scored on its selected checkpoint)."""
        return self._sts(gaussians or vectors, kl=gaussians is not None)["avg STS"]

    def _similarities(self, embed, first, second, kl=False):
        """sim(first[k]||second[k]) and sim(second[k]||first[k]) (cosine: the same)."""
        uniq = list(dict.fromkeys(first + second))
        pos = {s: i for i, s in enumerate(uniq)}
        a, b = [torch.tensor([pos[s] for s in side]) for side in (first, second)]
        if not kl:
            v = F.normalize(torch.as_tensor(np.asarray(embed(uniq)), dtype=torch.float32), dim=-1)
            cos = (v[a] * v[b]).sum(-1).double().numpy()
            return cos, cos
        mu, var = embed(uniq)
        sim = lambda x, y: gausscse.kl_similarity(mu[x], var[x], mu[y], var[y], "mean_per_dim")
        return sim(a, b).double().numpy(), sim(b, a).double().numpy()

    def _sts(self, embed, kl=False):
        out = {}
        for task, (s1, s2, gold) in self.sts.items():
            fwd, bwd = self._similarities(embed, s1, s2, kl)
            out[task] = sts.spearman_x100((fwd + bwd) / 2, gold, task)
        return out | {"avg STS": float(np.mean(list(out.values())))}

    def _nli(self, embed, kl=False):
        out = {}
        for name, rows in self.nli.items():
            hyps, pres = [r["hypothesis"] for r in rows], [r["premise"] for r in rows]
            scores = self._similarities(embed, hyps, pres, kl)[0]  # sim(hyp||pre)
            out[f"{name} AUPRC"] = 100 * nli.official_auprc(
                scores, nli.binary_labels(rows), f"{name} AUPRC"
            )
            if kl:  # sim(B||A) > sim(A||B): A entails B
                fwd, bwd = self._similarities(embed, self.pairs[name][1], self.pairs[name][0], kl)
                out[f"{name} direction"] = 100 * nli.direction_accuracy(fwd, bwd)
        return out

    def dev_score(self, kind):
        """The papers' own selection scores of an embed function: "snli" (SNLI-dev AUPRC of
        sim(hypothesis||premise), Gaussians) or "stsb" (STS-B dev Spearman, cosine)."""
        if kind == "snli":
            hyps, pres = [[r[k] for r in self.nli_dev] for k in ("hypothesis", "premise")]
            labels = nli.binary_labels(self.nli_dev)
            return lambda gaussians: nli.official_auprc(
                self._similarities(gaussians, hyps, pres, kl=True)[0], labels, "SNLI-dev AUPRC"
            )
        s1, s2, gold = eval_readers.load_sts("STSB", self.data_dir, split="dev")
        keep = nli_readers.evenly_spaced(list(range(len(gold))), self.scale["sts_max_pairs"])
        s1, s2, gold = [[x[i] for i in keep] for x in (s1, s2, gold)]
        return lambda embed: sts.spearman_x100(
            self._similarities(embed, s1, s2)[0], gold, "STS-B dev"
        )


# ---------------------------------------------------------------- training, one method a function


def sample(items, n, seed):
    """n items in a seeded order (one pass; repeated passes when n exceeds the items)."""
    items, g = list(items), torch.Generator().manual_seed(seed)
    order = [
        i
        for _ in range(math.ceil(n / len(items)))
        for i in torch.randperm(len(items), generator=g).tolist()
    ]
    return [items[i] for i in order[:n]]


def fit(model, loss_fn, examples, training, setup, seed, on_last, dev=None, lr=None, desc=None):
    """Train `model` on `examples` (compare_steps batches of 16) at `training`'s optimizer and rate
    (`lr` when given: a PST step's) and score its last step with on_last(model) (the shared rule);
    dev(model) -> float, when given, is a paper's own rule, evaluated every eval_every steps, whose
    best state is left in `model`. -> (on_last's result, the own rule's step)."""
    batches = train.batched(examples, setup["batch_size"])
    lr = setup["rates"][training] if lr is None else lr
    settings = train.Settings(lr=lr, mixed_precision=False, **OPTIMIZERS[training])
    last, evals_left = {}, [math.ceil(len(batches) / setup["eval_every"]) if dev else 0]

    def eval_fn(m):
        evals_left[0] -= 1
        if evals_left[0] == 0:  # the last step: the shared rule's scores first
            last["scores"] = on_last(m)
        return dev(m)

    torch.manual_seed(seed)  # dropout and new heads; the batch order is the sample's
    history = train.train(
        model,
        loss_fn,
        batches,
        settings,
        eval_fn=dev and eval_fn,
        eval_every=setup["eval_every"],
        desc=desc or training,
        progress=False,
    )
    if not dev:
        last["scores"] = on_last(model)
    return last["scores"], history["best_step"] or history["steps"]


def cls_vectors(model, tokenizer, through=None):
    """embed(sentences) -> [n, d]: the encoder's CLS state, through `through` (a head) if given."""

    def embed(sentences):
        v = encode.encode(model, tokenizer, sentences, "cls")
        if through is not None:
            with torch.no_grad():
                v = through(v.to(next(through.parameters()).device)).float().cpu()
        return v.numpy()

    return embed


def train_defsent(setup, data, ev, seed):
    """DefSent from the encoder: the defined word through its own frozen MLM head (Eq. 1)."""
    model, tok, head, head_kind = defsent_model.load(
        setup["model"], allow_fallback=not setup["paper_data"]
    )
    defsent.trainable_parameters(model, freeze_embedding_layer=True)  # the official code's
    loss_fn = lambda m, b: defsent.loss(m, head, defsent.collate(tok, b, 128, "mean"), "mean")
    examples = sample(data["defsent"], setup["steps"] * setup["batch_size"], seed)
    on_last = lambda m: ev.score(encode.embedder(m, tok, "mean"))
    scores, _ = fit(model, loss_fn, examples, "DefSent", setup, seed, on_last)
    return {"DefSent": dict(scores=scores, head=head_kind)}


def train_defsentplus(setup, data, ev, seed):
    """DefSent+'s PST (Eq. 2, 5), each step from the original weights; the 1st and 3rd scored.
    The original encoder's entries (the 1st step's) are the same for every seed: built once."""
    original, tok = defsentplus_model.load(setup["model"])
    ds, out = data["entries"], {}
    examples = sample(zip(ds["ids"], ds["definitions"]), setup["steps"] * setup["batch_size"], seed)

    def build(encoder, step):  # Eq. 2, AMP
        if step == 1 and "original entries" in data:
            return data["original entries"]
        space = defsentplus.build_entry_embeddings(
            encoder, tok, ds["ids"], ds["definitions"], "mean", n_entries=len(ds["names"])
        )
        data.update({"original entries": space} if step == 1 else {})
        return space

    def train_against(space, lr, step, key):  # Eq. 5
        student, row = copy.deepcopy(original).train(), {1: "DefSent+ 1st", 3: "DefSent+ PST"}
        loss_fn = lambda m, b: defsentplus.loss(m, tok, b, "cls", space, 128)
        on_last = lambda m: ev.score(encode.embedder(m, tok, "cls")) if step in row else None
        desc = f"DefSent+ step {step}"
        scores, _ = fit(
            student, loss_fn, examples, "DefSent+", setup, seed, on_last, lr=lr, desc=desc
        )
        if step in row:
            out[row[step]] = dict(scores=scores)
        return student

    rates = setup["rates"]["DefSent+"]
    defsentplus.progressive_separate_training(original, rates, build, train_against)
    return out


def own_rule(last, step, setup, sts_avg):
    """The own rule's (step, STS average): the last step's scores when it kept the last step."""
    avg = last["avg STS"] if step == setup["steps"] else sts_avg()
    return dict(scores=last, own_step=step, own_sts=avg)


def train_gausscse(setup, data, ev, seed):
    """GaussCSE (Eq. 3, ent+con+rev) with the official head; selected on SNLI-dev AUPRC."""
    encoder, tok = models.load(setup["model"], eval_mode=False)
    config.set_seed(seed)  # the new head
    model, dev = gausscse.GaussModel(encoder, "official"), ev.dev_score("snli")
    gaussians = lambda m: lambda s: gausscse.encode(m, tok, s, max_length=encode.EVAL_MAX_LENGTH)
    means = lambda m: lambda s: gaussians(m)(s)[0].numpy()
    loss_fn = lambda m, b: gausscse.triplet_loss(m, tok, b, "ent+con+rev", "mean_per_dim")
    on_last = lambda m: dict(mean=ev.score(means(m)), KL=ev.score(gaussians=gaussians(m)))
    examples = sample(data["triplets"], setup["steps"] * setup["batch_size"], seed)
    dev_fn = lambda m: dev(gaussians(m))
    last, step = fit(model, loss_fn, examples, "GaussCSE", setup, seed, on_last, dev=dev_fn)
    own = dict(
        mean=lambda: ev.sts_avg(means(model)), KL=lambda: ev.sts_avg(gaussians=gaussians(model))
    )
    return {f"GaussCSE {k}": own_rule(last[k], step, setup, own[k]) for k in own}


def train_simcse(setup, data, ev, seed, supervised):
    """SimCSE (unsupervised: dropout positives; supervised: NLI triplets); selected on STS-B dev."""
    encoder, tok = models.load(setup["model"], eval_mode=False)
    config.set_seed(seed)  # the new MLP
    model, dev = simcse.SimCSEModel(encoder), ev.dev_score("stsb")
    vectors = lambda m: cls_vectors(m.encoder, tok, m.mlp if supervised else None)
    name = "sup SimCSE" if supervised else "unsup SimCSE"
    examples = data["triplets"] if supervised else data["sentences"]
    examples = sample(examples, setup["steps"] * setup["batch_size"], seed)
    loss_fn, on_last = lambda m, b: simcse.loss(m, tok, b), lambda m: ev.score(vectors(m))
    dev_fn = lambda m: dev(vectors(m))
    scores, step = fit(model, loss_fn, examples, name, setup, seed, on_last, dev=dev_fn)
    return {name: own_rule(scores, step, setup, lambda: ev.sts_avg(vectors(model)))}


TRAINERS = {
    "DefSent": train_defsent,
    "DefSent+": train_defsentplus,
    "GaussCSE": train_gausscse,
    "unsup SimCSE": lambda *a: train_simcse(*a, supervised=False),
    "sup SimCSE": lambda *a: train_simcse(*a, supervised=True),
}


def score_raw(setup, data, ev, seed):
    """The encoder as loaded, CLS and mean pooling (no seed: nothing is trained)."""
    model, tok = models.load(setup["model"])
    return {
        f"raw encoder {p if p == 'mean' else 'CLS'}": dict(
            scores=ev.score(encode.embedder(model, tok, p))
        )
        for p in ("cls", "mean")
    }


# ---------------------------------------------------------------- every method over the seeds


def settings(scale):
    """What every method shares at a scale (encoder, seeds, updates, batch, evaluation sizes) and
    each method's rate (the scale's `compare_rates`: mini-BERT's at smoke and cpu, BERT-base's
    published ones at the papers' scales)."""
    steps = checks.count(scale["compare_steps"], "compare_steps", allow_none=False)
    return dict(
        model=scale["model"],
        seeds=list(scale["compare_seeds"]),
        steps=steps,
        batch_size=16,
        eval_every=max(1, steps // 5),
        rates={t: scale["compare_rates"][t] for t in TRAININGS},
        nli_source="simcse" if scale["paper_protocol"] else "offline",
        paper_data=scale["paper_protocol"],  # the papers' dictionary (Oxford train) or an error
        max_entries=scale["dsp_max_entries"],
        evaluation=dict(
            sts_max_pairs=scale["sts_max_pairs"],
            transfer=senteval.transfer_settings(scale),
            nli_test_max=scale["gauss_test_max"],
            nli_dev_max=scale["gauss_dev_max"],
        ),
    )


def training_data(setup, data_dir=None):
    """Each method's own training data: DefSent's dictionary train split, DefSent+'s dataset a,
    the NLI triplets, and their sentences unlabelled (unsupervised SimCSE)."""
    tokenizer, paper_data = models.load_tokenizer(setup["model"]), setup["paper_data"]
    splits, _ = dictionary.defsent_dataset(tokenizer, data_dir, paper_data=paper_data)
    triplets = nli_readers.training_triplets(data_dir, source=setup["nli_source"])
    return dict(
        defsent=splits["train"],
        entries=entries.load_entry_dataset(
            "a", setup["max_entries"], data_dir, paper_data=paper_data
        ),
        triplets=triplets,
        sentences=list(dict.fromkeys(s for t in triplets for s in t)),
    )


class Comparison(NamedTuple):
    """Every row's scores over the seeds, and what produced them."""

    scores: dict  # {row: [{metric: value} per seed]} (the raw encoder: one entry)
    own: dict  # {row: [(the own rule's step, its STS average) per seed]}
    setup: dict
    counts: dict  # {file set: pairs scored}
    length_baseline: dict  # {NLI test set: direction accuracy of "the longer one entails"}


def plan(setup):
    """What run() trains, printed first at the papers' scales: trainings, updates and the least GPU
    time they take (a BERT-base step at batch 16 is host-bound: plans.STEP_FLOOR_S)."""
    per_seed = len(TRAININGS) - 1 + len(setup["rates"]["DefSent+"])  # PST: one training a step
    scored = sum(m.training is not None for m in METHODS.values()) * len(setup["seeds"])
    steps = per_seed * len(setup["seeds"]) * setup["steps"]
    least = steps * plans.STEP_FLOOR_S["defsent"]
    return (
        f"plan (notebook 40): {len(TRAININGS)} methods x {len(setup['seeds'])} seed(s) = "
        f"{per_seed * len(setup['seeds'])} trainings (PST: {len(setup['rates']['DefSent+'])} a "
        f"seed) of {setup['steps']:,} updates at batch {setup['batch_size']} ({steps:,} in all): "
        f"at least {plans.hours(least)} of GPU ({plans.STEP_FLOOR_SOURCE}); and "
        f"{2 + scored} scorings by the whole evaluator, 3 entry "
        "builds over dataset a a seed. Trainings already in the cache are not repeated; "
        "`python -m defsent_lite.repro.launch 40` runs them on many GPUs."
    )


def run_one(scale, training, seed, data_dir=None, ev=None, data=None):
    """One method on one seed ("raw": the encoder's scoring), cached -> {row: scores}; `ev` and
    `data`, when given, are shared with the other runs (the launcher's call: neither)."""
    scale = config.scale(scale) if isinstance(scale, str) else scale
    setup, data = settings(scale), {} if data is None else data

    def compute():
        if training != "raw" and not data:
            data.update(training_data(setup, data_dir))
        trainer = score_raw if training == "raw" else TRAINERS[training]
        return trainer(setup, data, ev or Evaluator(scale, data_dir), seed)

    return cache.cached_json("compare", run_key(setup, training, seed, data_dir), compute)


def run_key(setup, training, seed, data_dir=None):
    """The cache key of one method on one seed: the shared setup, the data it reads."""
    parts = ("sts", "senteval", "nli", "dictionary")
    data = [cache.data_identity(data_dir, p) for p in parts]
    return dict(setup, data=data, training=training, seed=seed)


def jobs(setup):
    """(training, seed) of every run: the raw encoder's scoring first."""
    return [("raw", None)] + [(t, s) for s in setup["seeds"] for t in TRAININGS]


def run(scale, data_dir=None):
    """Train every method on every seed (cached per method and seed) and score each with the one
    evaluator -> Comparison. At the papers' scales its plan is printed first."""
    setup, ev, data, results = settings(scale), Evaluator(scale, data_dir), {}, {}
    plans.print_plan(scale, lambda: plan(setup))
    for training, seed in tqdm(jobs(setup), desc="trainings", disable=not forward.bars_shown()):
        for row, r in run_one(scale, training, seed, data_dir, ev, data).items():
            results.setdefault(row, []).append(r)
    scores = {row: [r["scores"] for r in results[row]] for row in METHODS}
    own = {
        row: [
            (r.get("own_step", setup["steps"]), r.get("own_sts", r["scores"]["avg STS"]))
            for r in results[row]
        ]
        for row in METHODS
    }
    return Comparison(scores, own, setup, ev.counts(), ev.length_baseline)
