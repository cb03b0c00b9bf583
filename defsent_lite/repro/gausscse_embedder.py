"""A trained GaussCSE model saved and loaded back: the encoder with save_pretrained, its Gaussian
head as safetensors, and the similarity it was trained with."""

import json
from pathlib import Path
from typing import NamedTuple

from safetensors.torch import load_file, save_file

from defsent_lite import gausscse
from defsent_lite.runtime import models


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
