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

    BERT keeps its pre-trained pooler (dense + tanh). A model pre-trained without next-sentence
    prediction has none worth keeping (Sec. 3.2): RoBERTa's pooler gets the dense layer of the
    original model's MLM head (mlm_head_from, by default roberta_backbone: what the official code
    does), a checkpoint without pooler weights (the repository's mini-BERT) its own MLM head's, and
    the activation becomes GELU. One whose head source has no MLM head is refused unless
    allow_new_pooler (a random pooler would silently change the method).
    """
    model, tokenizer = models.load(name_or_path, device=device, eval_mode=False)
    source = None
    if model.config.model_type in ("roberta", "xlm-roberta"):
        source = mlm_head_from or roberta_backbone(name_or_path) or name_or_path
    elif any(k.startswith("pooler.") for k in model.missing_keys) and not allow_new_pooler:
        source = mlm_head_from or name_or_path
    if source is not None:
        mlm, _ = models.load(source, mlm_head=True, device=device)
        if "transform" in models.mlm_head_check(mlm).missing_parts and not allow_new_pooler:
            raise ValueError(
                f"{name_or_path!r} has no pre-trained pooler and {source!r} no MLM head, whose "
                "dense layer DefSent+ copies into the pooler; pass mlm_head_from='roberta-base' or "
                "'roberta-large' (a RoBERTa's original model, as the official code does) or another "
                "model with an MLM head, or allow_new_pooler=True to train a new pooler"
            )
        if mlm.config.hidden_size != model.config.hidden_size:
            raise ValueError(
                f"mlm_head_from={source!r} has hidden size {mlm.config.hidden_size}, "
                f"{name_or_path!r} has {model.config.hidden_size}"
            )
        defsentplus.pooler_from_mlm_head(model, mlm)
    if getattr(model, "pooler", None) is None:
        raise ValueError(f"{type(model).__name__} has no pooler layer")
    return model, tokenizer
