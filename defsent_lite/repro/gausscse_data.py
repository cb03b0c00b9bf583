"""GaussCSE's data: the NLI training triplets, SNLI dev and the three test sets, the entailment
pairs whose direction is scored, and the frozen CLS vectors of notebook 30's miniature."""

from typing import NamedTuple

import numpy as np
import torch

from defsent_lite import checks, encode
from defsent_lite.runtime import cache, config, models
from defsent_lite.data import nli_readers
from defsent_lite.evaluation import nli


NLI_TEST_SETS = {
    "SNLI": "snli_test",
    "MNLI": "mnli_dev_mismatched",
    "SICK": "sick_test",
}  # MNLI dev_mismatched = test


DEV_SET = "snli_dev"


# SICK direction pairs: the paper's text (default) or the official code's
SICK_PAIRS = ("one-way", "all")


def evenly_spaced(rows, n):
    """n evenly spaced rows (all when n is None or larger): a fixed, order-preserving subset."""
    if (
        checks.count(n, "the number of pairs to keep (dev_max / test_max)") is None
        or len(rows) <= n
    ):
        return list(rows)
    return [rows[i] for i in np.linspace(0, len(rows) - 1, n).round().astype(int)]


def direction_pairs(name, rows, sick_full, sick_pairs="one-way"):
    """nli.DirectionPairs of a test set's entailment pairs (premise entails hypothesis). SICK,
    sick_pairs="one-way" (the paper's text; its length-baseline row is reproduced exactly): the
    directions from the full file (SICK.txt), bilateral pairs and pairs absent from it (10 of the
    test set's) excluded and counted; "all" (the official code): every entailment pair read
    premise -> hypothesis."""
    if sick_pairs not in SICK_PAIRS:
        raise ValueError(f"sick_pairs={sick_pairs!r}: choose one of {', '.join(SICK_PAIRS)}")
    if name == "SICK" and sick_pairs == "one-way":
        ids = {r["pair_id"] for r in rows if r["label"] == "entailment"}
        found = [r for r in sick_full if r["pair_id"] in ids]
        return nli.sick_direction_pairs(found)._replace(
            missing=len(ids - {r["pair_id"] for r in found})
        )
    ent = [r for r in rows if r["label"] == "entailment"]
    return nli.DirectionPairs([r["premise"] for r in ent], [r["hypothesis"] for r in ent], 0)


def eval_data(max_pairs=None, data_dir=None):
    """SNLI dev, the three test sets (evenly spaced subsets when max_pairs) and full SICK."""
    dev = evenly_spaced(nli_readers.load_nli(DEV_SET, data_dir), max_pairs)
    tests = {
        k: evenly_spaced(nli_readers.load_nli(v, data_dir), max_pairs)
        for k, v in NLI_TEST_SETS.items()
    }
    sick_full = nli_readers.read_sick_full(config.data_root(data_dir) / "nli" / "sick" / "SICK.txt")
    return dev, tests, sick_full


def length_baselines(tests, sick_full, sick_pairs="one-way"):
    """Length-baseline direction accuracy (%) on each test set's entailment pairs."""
    return {
        name: 100
        * nli.length_baseline_accuracy(*direction_pairs(name, rows, sick_full, sick_pairs)[:2])
        for name, rows in tests.items()
    }


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
