"""DefSent+'s model: an encoder with the pooler it trains through (Sec. 3.2): BERT's pre-trained
pooler, or for RoBERTa a pooler whose dense layer is the original RoBERTa's MLM head's, with
GELU."""

from defsent_lite import defsentplus
from defsent_lite.runtime import models

# The original RoBERTa of each data-augmented RoBERTa checkpoint whose rows DefSent+'s tables carry
# (paper/defsentplus.DATA_AUGMENTED; they ship no MLM head): the model it was trained from.
ROBERTA_BACKBONES = {
    "princeton-nlp/unsup-simcse-roberta-base": "roberta-base",
    "princeton-nlp/unsup-simcse-roberta-large": "roberta-large",
    "sjtu-lit/SynCSE-partial-RoBERTa-base": "roberta-base",
    "sjtu-lit/SynCSE-partial-RoBERTa-large": "roberta-large",
}


def roberta_backbone(name_or_path):
    """The original RoBERTa whose MLM head gives the pooler its dense layer: roberta-base or
    -large for the papers' checkpoints (the data-augmented ones ship no MLM head), else None."""
    if name_or_path in ("roberta-base", "roberta-large"):
        return name_or_path
    return ROBERTA_BACKBONES.get(name_or_path)


def load(name_or_path, device=None, allow_new_pooler=False, mlm_head_from=None):
    """(model, tokenizer): the encoder with its pooler, ready to train (train mode).

    RoBERTa: the pooler's dense layer is copied from the dense layer of the original model's
    MLM head (mlm_head_from, by default roberta_backbone: what the official code does) and its
    activation becomes GELU (Sec. 3.2); BERT keeps its pre-trained pooler (dense + tanh).
    A checkpoint without pooler weights, or a RoBERTa whose head source has no MLM head, is
    refused unless allow_new_pooler (a random pooler would silently change the method).
    """
    model, tokenizer = models.load(name_or_path, device=device, eval_mode=False)
    if model.config.model_type in ("roberta", "xlm-roberta"):
        source = mlm_head_from or roberta_backbone(name_or_path) or name_or_path
        mlm, _ = models.load(source, mlm_head=True, device=device)
        if "transform" in models.mlm_head_check(mlm).missing_parts and not allow_new_pooler:
            raise ValueError(
                f"{source!r} has no MLM head (lm_head.dense), whose dense layer DefSent+ copies "
                "into "
                f"{name_or_path!r}'s pooler; pass mlm_head_from='roberta-base' or 'roberta-large' "
                "(the original model, as the official code does)"
            )
        if mlm.lm_head.dense.weight.shape != model.pooler.dense.weight.shape:
            raise ValueError(
                f"mlm_head_from={source!r} has hidden size {mlm.config.hidden_size}, "
                f"{name_or_path!r} has {model.config.hidden_size}"
            )
        defsentplus.roberta_pooler_from_mlm_head(model, mlm)
    elif any(k.startswith("pooler.") for k in model.missing_keys) and not allow_new_pooler:
        raise ValueError(
            f"{name_or_path!r} has no pooler weights (missing {model.missing_keys}); "
            "DefSent+ trains through the pre-trained pooler. Pass allow_new_pooler=True to train "
            "a new one."
        )
    if getattr(model, "pooler", None) is None:
        raise ValueError(f"{type(model).__name__} has no pooler layer")
    return model, tokenizer
