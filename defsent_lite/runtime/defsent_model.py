"""DefSent's model: an MLM model and its frozen word-prediction head, the pre-trained one or, where
the checkpoint has none (the offline MiniLM), the tied-embedding fallback, named in every result."""

from typing import NamedTuple

from defsent_lite import defsent
from defsent_lite.runtime import models


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
    check = models.mlm_head_check(model)
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
