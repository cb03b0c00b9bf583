"""SimCSE (Gao et al., 2021), the field's reference point beside the three papers: a sentence and
its positive are pulled together against every other sentence of the batch, by cosine over a
temperature.

Unsupervised: the positive is the sentence itself under another dropout mask (SimCSE's Eq. 1).
Supervised: an NLI premise's entailed hypothesis, its contradiction a hard negative (Eq. 5). Both
train through an MLP on the CLS vector (dense + tanh); the unsupervised model is scored without it
("cls_before_pooler"), the supervised one with it, as the released models are.
"""

import torch
import torch.nn.functional as F
from torch import nn

from defsent_lite.forward import hidden_states, on_model_device, tokenize_batch

TEMPERATURE = 0.05
MAX_LENGTH = 32  # SimCSE's max_seq_len


class SimCSEModel(nn.Module):
    """Encoder + MLP over the CLS state; forward(batch) -> [B, d] (through the MLP)."""

    def __init__(self, encoder):
        super().__init__()
        self.encoder = encoder
        hidden = encoder.config.hidden_size
        self.mlp = nn.Sequential(nn.Linear(hidden, hidden), nn.Tanh())

    @property
    def config(self):
        return self.encoder.config

    def forward(self, batch):
        return self.mlp(hidden_states(self.encoder, batch)[:, 0])


def contrastive_loss(anchor, positive, negative=None, temperature=TEMPERATURE):
    """Eq. 1 (no negative) or Eq. 5: row i's positive is positive[i]; every other row's positive
    (and with Eq. 5 every hard negative) is a negative of row i."""
    sim = F.cosine_similarity(anchor[:, None].float(), positive[None].float(), dim=-1)
    if negative is not None:
        hard = F.cosine_similarity(anchor[:, None].float(), negative[None].float(), dim=-1)
        sim = torch.cat([sim, hard], dim=1)
    return F.cross_entropy(sim / temperature, torch.arange(len(sim), device=sim.device))


def loss(model, tokenizer, batch, max_length=MAX_LENGTH):
    """A batch of sentences (unsupervised: each sentence twice in one forward pass, so two dropout
    masks) or of (premise, entailment, contradiction) triplets (supervised)."""
    if len(batch) < 2:
        raise ValueError(f"SimCSE: a batch of {len(batch)}; in-batch negatives need at least 2")
    columns = list(zip(*batch)) if isinstance(batch[0], (tuple, list)) else [batch, batch]
    sentences = [s for column in columns for s in column]
    z = model(on_model_device(model, tokenize_batch(tokenizer, sentences, "cls", max_length)))
    return contrastive_loss(*z.chunk(len(columns)))
