"""Measure the model card's numbers of the repository's mini-BERT (docs/mini_bert.md): its loss
curve, held-out masked-token accuracy, anisotropy and raw STS, beside its own random
initialisation (what pre-training changed) and all-MiniLM-L6-v2 (a trained sentence encoder).

    python tools/mini_bert_card.py            # writes card.json beside the weights, a figure in docs/

The measurements are functions of their own, so that tests/test_mini_bert.py checks the committed
model against card.json with the same code.
"""

import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import pretrain_mini_bert as pretrain  # noqa: E402

from defsent_lite import encode  # noqa: E402
from defsent_lite.evaluation import sts  # noqa: E402
from defsent_lite.runtime import config, models  # noqa: E402

FOLDER = config.bundled_model_path(config.MINI_BERT)
ROOT = Path(__file__).resolve().parents[1]


def held_out_sentences():
    """The 2,000 sentences pre-training held out (the script's corpus and seeded shuffle)."""
    sentences, _, _ = pretrain.corpus()
    pretrain.random.Random(pretrain.SEED).shuffle(sentences)
    return sentences[: pretrain.HELD_OUT]


def anisotropy(model, tokenizer, sentences):
    """{pooling: mean cosine of all pairs of distinct sentences, share of variance on the top
    principal direction and on the top 3 coordinates}, CLS and mean pooling."""
    out = {}
    vectors = encode.encode_poolings(model, tokenizer, sentences, ["cls", "mean"], progress=False)
    for pooling, v in vectors.items():
        v = v.double()
        unit = v / v.norm(dim=1, keepdim=True)
        n = len(unit)
        cos = ((unit.sum(0) @ unit.sum(0)) - n) / (n * (n - 1))
        centred = v - v.mean(0)
        eig = torch.linalg.eigvalsh(centred.T @ centred / (n - 1)).flip(0)
        per_dim = centred.var(0).sort(descending=True).values
        out[pooling] = dict(
            mean_cosine=float(cos),
            top1_pc_share=float(eig[0] / eig.sum()),
            top3_dims_share=float(per_dim[:3].sum() / per_dim.sum()),
        )
    return out


def raw_sts(model, tokenizer, tasks=None):
    """STS Spearman x100 ("all" setting, the raw files) of CLS and mean pooling, untrained."""
    return sts.evaluate_each(encode.embedders(model, tokenizer, ["cls", "mean"]), tasks=tasks)


def masked_accuracy(model, tokenizer, sentences):
    """Held-out masked-token accuracy (the pre-training script's seeded masking)."""
    return pretrain.masked_accuracy(model, tokenizer, pretrain.tokenized(tokenizer, sentences))


def figure(record, path):
    """Loss every 100 steps and held-out accuracy at each evaluation, against steps."""
    fig, (a, b) = plt.subplots(1, 2, figsize=(9, 3.2))
    a.plot(record["step"], record["loss"])
    a.set(xlabel="step", ylabel="masked-token loss (nats)", title="training loss")
    b.plot(record["eval_step"], record["held_out_accuracy"], marker=".")
    b.set(xlabel="step", ylabel="accuracy", title="held-out masked-token accuracy")
    for ax in (a, b):
        ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    torch.manual_seed(0)
    record = json.loads((FOLDER / "pretraining.json").read_text())
    held = held_out_sentences()
    rows = {}
    mini, tok = models.load(config.MINI_BERT, mlm_head=True)
    rows["mini-BERT"] = dict(model=mini, accuracy=masked_accuracy(mini, tok, held))
    init = pretrain.new_model(tok).eval()
    rows["its random initialisation"] = dict(model=init, accuracy=masked_accuracy(init, tok, held))
    minilm, minilm_tok = models.load("offline")
    rows["all-MiniLM-L6-v2"] = dict(model=minilm, tokenizer=minilm_tok)
    card = dict(held_out_accuracy=rows["mini-BERT"]["accuracy"], models={})
    for name, row in rows.items():
        t = row.get("tokenizer", tok)
        card["models"][name] = dict(
            masked_accuracy=row.get("accuracy"),
            anisotropy=anisotropy(row["model"], t, held),
            sts=raw_sts(row["model"], t),
        )
        print(name, json.dumps(card["models"][name]))
    card["safetensors_mb"] = (FOLDER / "model.safetensors").stat().st_size / 1e6
    card["parameters"] = record["parameters"]
    (FOLDER / "card.json").write_text(json.dumps(card, indent=1))
    figure(record, ROOT / "docs" / "mini_bert_pretraining.png")
    print(json.dumps({k: v for k, v in card.items() if k != "models"}))


if __name__ == "__main__":
    main()
