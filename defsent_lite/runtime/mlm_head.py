"""Which parts of a checkpoint's MLM head are pre-trained: DefSent's frozen word-prediction head
needs all of them (runtime/defsent_model), DefSent+'s RoBERTa pooler reads the transform
(runtime/defsentplus_model)."""

from typing import NamedTuple


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
