"""Tables 1/3's baseline row: an encoder's cosine(hypothesis, premise) as the entailment score,
thresholded on SNLI dev like GaussCSE's own scores (supervised SimCSE under the paper's
protocol)."""

import torch

from defsent_lite.runtime import cache, models
from defsent_lite.evaluation import nli
from defsent_lite.repro import gausscse_data, gausscse_eval
from defsent_lite.repro.gausscse_settings import variant_settings


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
        dev, tests, _ = gausscse_data.eval_data(base["test_max"], data_dir)
        dev = gausscse_data.evenly_spaced(dev, base["dev_max"])

        def scores(rows):
            hyps, pres = [r["hypothesis"] for r in rows], [r["premise"] for r in rows]
            uniq = list(dict.fromkeys(hyps + pres))
            vectors = torch.nn.functional.normalize(
                gausscse_eval.sentence_vectors(model, tokenizer, uniq, pooling), dim=-1
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
