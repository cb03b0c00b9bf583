"""Does each method work from a raw masked LM? Each paper's method from the repository's mini-BERT
(docs/mini_bert.md), before and after training, over seeds, printed with its spread (the measured
table: docs/mini_bert.md; on a GPU when one is present):

- DefSent: test-word MRR through its own frozen MLM head and STS-B test, before and after (the
  smoke scale's settings on every training definition: 49,760, 3,110 steps at batch 16, lr 1e-4);
- DefSent+: Progressive Separate Training on 1,000 entries (notebook 21's miniature with the whole
  encoder trained, rates 10x Table 5's): held-out entry MRR after each step, from the raw model's
  entry space, from a whitened (isotropic) copy of the same entries, and from that copy rescaled to
  the raw entries' mean norm (Eq. 5's logits keep their scale);
- GaussCSE: NLI AUPRC and entailment direction before (a fresh Gaussian head) and after (the cpu
  scale: all 7,409 offline triplets, batch 16, lr 5e-5, ent+con+rev), beside the length baseline.

    python tools/raw_start_check.py defsent gausscse pst --seeds 0 1 2 --out raw_start.json
"""

import argparse
import copy
import json
import time

import numpy as np
import torch

from defsent_lite import defsent, defsentplus, encode, gausscse, train
from defsent_lite.data import entries
from defsent_lite.evaluation import sts
from defsent_lite.repro import defsent_protocol, defsentplus_protocol, gausscse_protocol
from defsent_lite.runtime import config, defsent_model, defsentplus_model, models

MODEL = config.MINI_BERT


def spread(values):
    """mean, std, min, max of a list (std over seeds, ddof 1)."""
    v = np.asarray(values, dtype=float)
    return dict(mean=v.mean(), std=v.std(ddof=1) if len(v) > 1 else 0.0, min=v.min(), max=v.max())


def stsb(model, tokenizer, pooling):
    return sts.evaluate(encode.embedder(model, tokenizer, pooling), tasks=["STSB"])["STSB"]


def defsent_check(seeds, lr, train_max, eval_max=1000, poolings=("cls", "mean")):
    """Test-word MRR and STS-B of each pooling, untrained and after DefSent per seed."""
    scale = config.scale("smoke")
    base = dict(defsent_protocol.base_config(scale, MODEL), train_max=train_max, eval_max=eval_max)
    dataset = defsent_protocol.dataset_of(base)
    loaded = defsent_model.load(MODEL)
    test = defsent_protocol.subsample(dataset[0]["test"], eval_max, 0)
    out = {}
    for p in poolings:
        before = defsent.evaluate(loaded.model, loaded.tokenizer, loaded.head, test, p)["mrr"]
        row = dict(head=loaded.head_kind, mrr_before=before, sts_before=stsb(*loaded[:2], p))
        after, sts_after = [], []
        for seed in seeds:
            r = defsent_protocol.run(dict(base, pooling=p, seed=seed, lr=lr), dataset)
            trained, tok = models.load(r["path"])
            after.append(r["test"]["mrr"]), sts_after.append(stsb(trained, tok, p))
        row.update(mrr_after=spread(after), sts_after=spread(sts_after), steps=r["steps"])
        out[p] = row
        print("DefSent", p, json.dumps(row, default=float))
    return out


def gausscse_check(seeds, lr, batch_size=16):
    """NLI AUPRC and direction accuracy per test set: a fresh Gaussian head on the raw encoder,
    and after GaussCSE (the ent+con+rev setting, all offline triplets) per seed."""
    scale = config.scale("cpu")
    base = dict(gausscse_protocol.base_config(scale, MODEL), lr=lr, batch_size=batch_size)
    dev, tests, sick_full = gausscse_protocol.eval_data(None)
    dev = gausscse_protocol.evenly_spaced(dev, base["dev_max"])
    config.set_seed(0)
    encoder, tok = models.load(MODEL)
    fresh = gausscse.GaussModel(encoder, gausscse_protocol.variant_settings("official")["head"])
    before = gausscse_protocol.evaluate(fresh.eval(), tok, dev, tests, sick_full)
    after = [gausscse_protocol.run(dict(base, setting="ent+con+rev", seed=s)) for s in seeds]
    lengths = gausscse_protocol.length_baselines(tests, sick_full)
    out = {}
    for name in tests:
        out[name] = dict(
            auprc_before=before["nli"][name]["auprc"],
            auprc_after=spread([a["nli"][name]["auprc"] for a in after]),
            direction_before=before["direction"][name],
            direction_after=spread([a["direction"][name] for a in after]),
            length_baseline=lengths[name],
        )
        print("GaussCSE", name, json.dumps(out[name], default=float))
    return out


def whitened(space, same_norm=False):
    """The same entries made isotropic: centred, then decorrelated to unit variance (ZCA);
    same_norm: rescaled to the raw entries' mean norm (Eq. 5's logits keep their scale)."""
    x = space.double() - space.double().mean(0)
    eigval, eigvec = torch.linalg.eigh(x.T @ x / (len(x) - 1))
    w = x @ eigvec @ torch.diag(eigval.clamp(min=1e-12).rsqrt()) @ eigvec.T
    if same_norm:
        w = w * space.double().norm(dim=1).mean() / w.norm(dim=1).mean()
    return w.float()


def mean_cosine(space):
    unit = torch.nn.functional.normalize(space.double(), dim=1)
    return float((unit.sum(0).square().sum() - len(unit)) / (len(unit) * (len(unit) - 1)))


def pst_check(seeds, rates, n_entries=1000, batch_size=32, starts=("raw", "whitened")):
    """Held-out entry MRR after each PST step (notebook 21's miniature: 1,000 entries of dataset a,
    one held-out definition per entry with two or more), from each start."""
    mini = entries.load_entry_dataset("a", n_entries)
    train_examples, held_out = entries.held_out_split(mini)
    original, tok = defsentplus_model.load(MODEL)
    settings = defsentplus_protocol.variant_settings("official")

    def held_out_mrr(encoder, space):
        ids, definitions = zip(*held_out)
        batch = encode.tokenize_batch(tok, list(definitions), "cls")
        with torch.no_grad():
            scores = defsentplus.entry_logits(encoder.eval(), dict(batch), "cls", space)
        return defsent.rank_metrics(scores.cpu(), torch.tensor(ids))["mrr"]

    out = {}
    for start in starts:
        per_seed = []
        for seed in seeds:

            def build(encoder, step):
                ids, definitions = zip(*train_examples)
                space = defsentplus.build_entry_embeddings(
                    encoder, tok, list(ids), list(definitions), "mean",
                    n_entries=len(mini["names"]), progress=False)
                if start == "raw" or step > 1:
                    return space
                return whitened(space, same_norm=start == "whitened, raw norm")

            def train_against(space, lr, step, key):
                student = copy.deepcopy(original).train()
                torch.manual_seed(seed)
                batches = train.batched(train_examples, batch_size, seed=seed)
                loss_fn = lambda m, b: defsentplus.loss(m, tok, b, "cls", space, settings["max_length"])  # noqa: E731
                sched = train.Settings(lr=lr, mixed_precision=False, **settings["optimizer"])
                train.train(student, loss_fn, batches, sched, progress=False)
                return dict(encoder=student, mrr=held_out_mrr(student, space),
                            mean_cos=mean_cosine(space))

            steps = defsentplus.progressive_separate_training(
                original, rates, build, train_against, encoder_of=lambda r: r["encoder"])
            per_seed.append([(s["runs"]["plain"]["mean_cos"], s["runs"]["plain"]["mrr"]) for s in steps])
            print("PST", start, seed, per_seed[-1])
        first = build(original, 1)
        out[start] = dict(
            before=held_out_mrr(original, first), space_mean_cos_before=mean_cosine(first),
            after=[spread([ps[k][1] for ps in per_seed]) for k in range(len(rates))],
            space_mean_cos=[spread([ps[k][0] for ps in per_seed]) for k in range(len(rates))],
        )
        print("PST", start, json.dumps(out[start], default=float))
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checks", nargs="+", choices=["defsent", "gausscse", "pst"])
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--defsent-lr", type=float, default=1e-4)
    p.add_argument("--defsent-train-max", type=int, default=None, help="default: all definitions")
    p.add_argument("--gauss-lr", type=float, default=5e-5)
    p.add_argument("--pst-rates", type=float, nargs="+", default=[5e-4, 4e-4, 3e-4])
    p.add_argument("--pst-starts", nargs="+", default=["raw", "whitened", "whitened, raw norm"])
    p.add_argument("--out", default=None)
    a = p.parse_args()
    t0, out = time.time(), {}
    if "defsent" in a.checks:
        out["defsent"] = defsent_check(a.seeds, a.defsent_lr, a.defsent_train_max)
    if "gausscse" in a.checks:
        out["gausscse"] = gausscse_check(a.seeds, a.gauss_lr)
    if "pst" in a.checks:
        out["pst"] = pst_check(a.seeds, a.pst_rates, starts=a.pst_starts)
    out["seconds"] = time.time() - t0
    print(f"{out['seconds']:.0f} s")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(out, f, indent=1, default=float)


if __name__ == "__main__":
    main()
