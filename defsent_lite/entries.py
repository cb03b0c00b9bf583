"""DefSent+ entry embeddings (Eq. 2): the mean over an entry's definitions of the pooled last
hidden states of `[CLS] definition [SEP]`. AC = CLS pooling, AMP = mean pooling.

Streaming: definitions are encoded in length-sorted batches and summed into their entry's
row with `index_add_`, so memory is [entries, hidden] plus one batch, never [definitions, hidden].
"""
import torch
from tqdm.auto import tqdm

from . import config
from .encode import autocast_for, check_sentences, eval_mode, hidden_states, on_model_device, tokenize_sorted
from .pooling import pool

ENTRY_POOLINGS = {"cls": "AC", "mean": "AMP"}


def usable_definitions(entry_ids, definitions):
    """Drop empty definitions; returns (entry_ids, definitions, dropped count)."""
    keep = [i for i, d in enumerate(definitions) if d.strip()]
    return [entry_ids[i] for i in keep], [definitions[i] for i in keep], len(definitions) - len(keep)


@torch.no_grad()
def build_entry_embeddings(model, tokenizer, entry_ids, definitions, pooling="cls", batch_size=128,
                           max_length=512, n_entries=None, progress=None, mixed_precision=False):
    """[number of entries, hidden] float32 CPU tensor; entry_ids[i] is the entry of definitions[i].
    As the official code: no cut below the models' 512 positions, fp32 (mixed_precision=True:
    bf16/fp16 autocast on GPU)."""
    if pooling not in ENTRY_POOLINGS:
        raise ValueError(f"entry embeddings use cls (AC) or mean (AMP) pooling, not {pooling!r}")
    if len(entry_ids) != len(definitions):
        raise ValueError(f"{len(entry_ids)} entry ids for {len(definitions)} definitions")
    check_sentences(definitions)
    ids = torch.as_tensor(entry_ids, dtype=torch.long)
    n_entries = int(ids.max()) + 1 if n_entries is None else n_entries
    counts = torch.bincount(ids, minlength=n_entries)
    if (counts == 0).any():
        raise ValueError(f"{int((counts == 0).sum())} entries have no definition; drop them first")
    sums = torch.zeros(n_entries, model.config.hidden_size, dtype=torch.float64)
    device = next(model.parameters()).device
    features, order = tokenize_sorted(tokenizer, definitions, max_length)
    show = config.show_progress() if progress is None else progress
    with eval_mode(model), autocast_for(device, enabled=mixed_precision):
        for start in tqdm(range(0, len(order), batch_size), desc=f"entries ({ENTRY_POOLINGS[pooling]})",
                          disable=not show, leave=False):
            idx = order[start:start + batch_size]
            batch = on_model_device(model, tokenizer.pad([features[i] for i in idx], return_tensors="pt"))
            vec = pool(pooling, hidden_states(model, batch), batch["attention_mask"])
            sums.index_add_(0, ids[idx], vec.double().cpu())
    return (sums / counts[:, None]).float()  # Eq. 2
