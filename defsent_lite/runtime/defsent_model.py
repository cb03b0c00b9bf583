"""DefSent's model: an MLM model and its frozen word-prediction head, the pre-trained one or, where
the checkpoint has none (the offline MiniLM), the tied-embedding fallback, named in every result;
which parts of a checkpoint's MLM head are pre-trained (DefSent+'s RoBERTa pooler reads it too)."""

from typing import NamedTuple

from defsent_lite import defsent
from defsent_lite.runtime import models


# The MLM head's weights a checkpoint must hold, per architecture: part -> alternatives, each a
# list of keys that must all be loaded (the bias lives under either name: transformers ties them).
MLM_HEAD_KEYS = {
    "bert": {
        "transform": [
            ["cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias"]
        ],
        "LayerNorm": [
            [
                "cls.predictions.transform.LayerNorm.weight",
                "cls.predictions.transform.LayerNorm.bias",
            ]
        ],
        "bias": [["cls.predictions.bias"], ["cls.predictions.decoder.bias"]],
    },
    "roberta": {
        "transform": [["lm_head.dense.weight", "lm_head.dense.bias"]],
        "LayerNorm": [["lm_head.layer_norm.weight", "lm_head.layer_norm.bias"]],
        "bias": [["lm_head.bias"], ["lm_head.decoder.bias"]],
    },
}


class HeadCheck(NamedTuple):
    loaded: bool  # every part came from the checkpoint and the decoder is the input embeddings
    missing_parts: tuple  # parts freshly initialised (not in the checkpoint)
    tied: bool  # decoder weight is the input-embedding matrix


def mlm_head_check(model):
    """Which parts of an MLM head came from the checkpoint (transform, LayerNorm, bias) and whether
    its decoder is tied to the input embeddings; `model` loaded by `load(..., mlm_head=True)`."""
    missing = set(getattr(model, "missing_keys", []))
    parts = MLM_HEAD_KEYS.get(model.config.model_type)
    if parts is None:  # another architecture: any missing head key counts
        gone = tuple(sorted(k for k in missing if k.startswith(("cls.", "lm_head."))))
    else:
        gone = tuple(
            p
            for p, alternatives in parts.items()
            if all(missing & set(keys) for keys in alternatives)
        )
    out, inp = model.get_output_embeddings(), model.get_input_embeddings()
    tied = out is not None and out.weight.data_ptr() == inp.weight.data_ptr()
    return HeadCheck(not gone and tied, gone, tied)


class LoadedModel(NamedTuple):
    """DefSent's model as load returns it."""

    model: object  # the MLM model (encoder and head)
    tokenizer: object
    head: object  # frozen word-prediction head: head(u) gives the word logits
    head_kind: str  # PRETRAINED or FALLBACK


def load(name_or_path, device=None, prefix_space=False, allow_fallback=True):
    """LoadedModel(model, tokenizer, head, head_kind): an MLM model and its frozen word-prediction
    head (transform, LayerNorm and bias from the checkpoint, decoder tied to the input embeddings:
    mlm_head_check), else the tied-embedding fallback, or an error when not allow_fallback
    (paper scale: a fallback would silently change the method). prefix_space: a byte-level BPE
    tokenizer (RoBERTa) adds a space before the first word, as the official code's does."""
    model, tokenizer = models.load(
        name_or_path, mlm_head=True, device=device, eval_mode=False, add_prefix_space=prefix_space
    )
    defsent.freeze(model.get_input_embeddings())
    check = mlm_head_check(model)
    if check.loaded:
        return LoadedModel(
            model, tokenizer, defsent.word_prediction_head(model), defsent.PRETRAINED
        )
    if not allow_fallback:
        raise ValueError(
            f"{name_or_path!r}: the MLM head is not the pre-trained one (not in the checkpoint: "
            f"{', '.join(check.missing_parts) or 'none'}; decoder tied to the embeddings: "
            f"{check.tied}); "
            "DefSent needs the real head at this scale"
        )
    return LoadedModel(
        model, tokenizer, defsent.TiedEmbeddingHead(model.get_input_embeddings()), defsent.FALLBACK
    )
