"""DefSent: pool a definition, feed it to the frozen word-prediction (MLM) head, predict the word.

The head (transform + LayerNorm + decoder tied to the input embeddings) and the word
embeddings stay frozen; the rest of the encoder is fine-tuned with cross-entropy on the
id of the defined word (DefSent, Sec. 2). A checkpoint without an MLM head (the offline
all-MiniLM-L6-v2) falls back to the frozen input-embedding matrix as decoder: logits = u E^T.
"""

from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from defsent_lite.checks import require_finite, require_nonempty
from defsent_lite.forward import (
    check_sentences,
    eval_mode,
    full_precision,
    hidden_states,
    on_model_device,
    pad_batch,
    prompt_sentences,
    token_features,
    tokenize_batch,
)
from defsent_lite.pooling import pool

HEAD_ATTRS = ("cls", "lm_head")  # BertForMaskedLM.cls, RobertaForMaskedLM.lm_head
FALLBACK = "tied input embeddings (checkpoint has no MLM head)"
PRETRAINED = "pre-trained MLM head"


class TiedEmbeddingHead(nn.Module):
    """Decoder-only head: logits = u E^T with the (frozen) input-embedding matrix E."""

    def __init__(self, embedding):
        super().__init__()
        self.embedding = embedding

    def forward(self, u):
        return u @ self.embedding.weight.T


def freeze(module):
    for p in module.parameters():
        p.requires_grad_(False)
    return module


def word_prediction_head(model):
    """The model's own MLM head, every parameter frozen: head(u) gives exactly the MLM logits."""
    for attr in HEAD_ATTRS:
        if hasattr(model, attr):
            return freeze(getattr(model, attr))
    raise ValueError(
        f"{type(model).__name__} has no MLM head ({' or '.join(HEAD_ATTRS)}); "
        "load it with models.load(..., mlm_head=True)"
    )


def trainable_parameters(model, freeze_embedding_layer=False):
    """Encoder parameters to fine-tune. freeze_embedding_layer=True also keeps position/type
    embeddings and their LayerNorm fixed, as the official code does (the paper names only the
    head)."""
    if freeze_embedding_layer:
        freeze(model.base_model.embeddings)
    return [p for p in model.base_model.parameters() if p.requires_grad]


def collate(tokenizer, examples, max_length=128, pooling="cls"):
    """Tokenised definitions (in the prompt template for prompt pooling) plus target ids;
    examples: (word, definition, target id) triples, or TokenizedDefinitions (tokenised before
    the loop: only padding is left)."""
    tokenized = isinstance(examples, TokenizedDefinitions)
    rows = examples.examples if tokenized else examples
    if not rows:
        raise ValueError("DefSent collate: no definitions to batch (an empty split or batch)")
    if tokenized:
        batch = pad_batch(tokenizer, examples.features, range(len(rows)))
    else:
        batch = tokenize_batch(tokenizer, [d for _, d, _ in rows], pooling, max_length)
    batch["targets"] = torch.tensor([t for _, _, t in rows])
    return batch


class TokenizedDefinitions(NamedTuple):
    """A batch of (word, definition, target id) examples and its definitions' token features."""

    examples: list
    features: list


def tokenize_definition_batches(tokenizer, batches, max_length=128, pooling="cls"):
    """Every batch's definitions tokenised before training in one call (forward.token_features; in
    the prompt template for prompt pooling): a step then only pads. -> [TokenizedDefinitions]"""
    definitions = [d for b in batches for _, d, _ in b]
    if pooling == "prompt":
        definitions = prompt_sentences(tokenizer, definitions, max_length)
    features = token_features(tokenizer, definitions, max_length)
    out, start = [], 0
    for batch in batches:
        out.append(TokenizedDefinitions(batch, features[start : start + len(batch)]))
        start += len(batch)
    return out


# ---------------------------------------------------------------- loss and metrics


def word_logits(model, head, batch, pooling, mask_token_id=None):
    """Vocabulary logits of the pooled definitions of a batch (only [B, V] is materialised);
    prompt pooling needs the tokenizer's mask_token_id."""
    inputs = on_model_device(model, {k: v for k, v in batch.items() if k != "targets"})
    h = hidden_states(model, inputs)
    pooled = pool(pooling, h, inputs["attention_mask"], inputs["input_ids"], mask_token_id)
    with full_precision(pooled.device):  # [B, V] logits in fp32 under autocast too
        return head(pooled.float())


def loss(model, head, batch, pooling, mask_token_id=None):
    """Cross-entropy of the defined word's id (DefSent's objective)."""
    targets = batch["targets"]
    if len(targets) == 0:
        raise ValueError("DefSent loss: an empty batch (no definitions)")
    batch = on_model_device(model, batch)
    logits = word_logits(model, head, batch, pooling, mask_token_id).float()
    # checked on the host
    if (
        targets.device.type == "cpu"
        and not 0 <= int(targets.min()) <= int(targets.max()) < logits.shape[1]
    ):
        raise ValueError(
            f"DefSent loss: target ids {int(targets.min())}..{int(targets.max())} fall outside "
            f"the head's {logits.shape[1]} words (ids from another tokenizer?)"
        )
    return F.cross_entropy(logits, batch["targets"])


def gold_ranks(logits, targets, what="word prediction"):
    """1-based rank of each gold id among all logits; ties count in the gold's favour.
    NaN logits are refused: a NaN gold would otherwise rank first (nothing compares greater)."""
    require_finite(logits, f"{what}: vocabulary logits")
    gold = logits.gather(1, targets[:, None])
    return (logits > gold).sum(1) + 1


def rank_metrics(logits, targets, what="word prediction", mrr_cutoff=None):
    """MRR and top-1/3/10 accuracy of the gold ids."""
    return metrics_from_ranks(gold_ranks(logits, targets, what), what, mrr_cutoff)


def metrics_from_ranks(ranks, what="word prediction", mrr_cutoff=None):
    """MRR over the whole vocabulary (with mrr_cutoff=k a gold ranked below k counts 0), top-k
    accuracies, and mrr_top10, the official code's MRR (from the top 10), whatever mrr_cutoff."""
    require_nonempty(ranks, f"{what}: ranks")
    ranks = ranks.double()

    def mrr(cutoff):
        return float(
            ((1 / ranks) if cutoff is None else torch.where(ranks <= cutoff, 1 / ranks, 0.0)).mean()
        )

    return dict(
        mrr=mrr(mrr_cutoff),
        top1=float((ranks <= 1).double().mean()),
        top3=float((ranks <= 3).double().mean()),
        top10=float((ranks <= 10).double().mean()),
        mrr_top10=mrr(10),
    )


@torch.no_grad()
def evaluate(
    model,
    tokenizer,
    head,
    examples,
    pooling,
    batch_size=64,
    max_length=128,
    what="DefSent",
    mrr_cutoff=None,
):
    """Word-prediction metrics over examples, computed batch by batch (`what` names the run in
    errors)."""
    require_nonempty(examples, f"{what}: evaluation definitions")
    ranks = []
    with eval_mode(model):
        for start in range(0, len(examples), batch_size):
            batch = collate(tokenizer, examples[start : start + batch_size], max_length, pooling)
            batch = on_model_device(model, batch)
            logits = word_logits(model, head, batch, pooling, tokenizer.mask_token_id).float()
            ranks.append(gold_ranks(logits, batch["targets"], what).cpu())
    return metrics_from_ranks(torch.cat(ranks), what, mrr_cutoff)


@torch.no_grad()
def top_k_words(model, tokenizer, head, sentences, pooling, k=5, max_length=128):
    """The k most probable words for each sentence (DefSent Tables 6 and 7)."""
    check_sentences(sentences)
    with eval_mode(model):  # word_logits moves the batch to the model's device
        batch = tokenize_batch(tokenizer, sentences, pooling, max_length)
        top = (
            word_logits(model, head, dict(batch), pooling, tokenizer.mask_token_id)
            .topk(k, dim=1)
            .indices.cpu()
        )
    return [[tokenizer.convert_ids_to_tokens(int(i)).lstrip("Ġ") for i in row] for row in top]
