"""Pool token states `hidden [B, T, d]` with attention `mask [B, T]` into sentence vectors [B, d].

Padding never leaks in: mean divides by the real token count, max ignores padded
positions. All tokens the model attends to count, special tokens included (as
Sentence-BERT and DefSent pool).
"""

import torch

# DefSent+ (after Jiang et al., 2022), as the official code writes it: the trailing space is a token
# of its own for RoBERTa's byte-level BPE (nothing for BERT's WordPiece)
PROMPT_TEMPLATE = 'This sentence : "{sentence}" means {mask} . '
POOLINGS = ("cls", "mean", "max", "prompt")


def cls(hidden, mask):
    """State of the first token ([CLS] for BERT, <s> for RoBERTa)."""
    return hidden[:, 0]


def mean(hidden, mask):
    """Average over real tokens."""
    m = mask.unsqueeze(-1).to(hidden.dtype)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1)


def max(hidden, mask):
    """Element-wise maximum over real tokens."""
    return hidden.masked_fill(~mask.bool().unsqueeze(-1), torch.finfo(hidden.dtype).min).amax(1)


def prompt(hidden, mask, input_ids, mask_token_id):
    """State at the mask token of the prompt template (exactly one per sentence)."""
    if input_ids is None or mask_token_id is None:
        raise ValueError(
            "prompt pooling needs the input ids and the tokenizer's mask_token_id "
            f"(got input_ids={'None' if input_ids is None else 'given'}, "
            f"mask_token_id={mask_token_id!r})"
        )
    at = input_ids == mask_token_id
    counts = at.sum(1)
    if not torch.all(counts == 1):
        bad = int((counts != 1).nonzero()[0])
        raise ValueError(
            f"prompt pooling: row {bad} has {int(counts[bad])} mask tokens, expected 1 "
            "(was the prompt truncated by max_length?)"
        )
    return hidden[at]


def prompt_text(sentence, mask_token):
    """Wrap a sentence in the DefSent+ prompt (`[MASK]` for BERT, `<mask>` for RoBERTa)."""
    return PROMPT_TEMPLATE.format(sentence=sentence, mask=mask_token)


def pool(name, hidden, mask, input_ids=None, mask_token_id=None):
    """Dispatch by pooling name."""
    if name == "prompt":
        return prompt(hidden, mask, input_ids, mask_token_id)
    if name not in POOLINGS:
        raise ValueError(f"unknown pooling {name!r}; choose from {POOLINGS}")
    return {"cls": cls, "mean": mean, "max": max}[name](hidden, mask)
