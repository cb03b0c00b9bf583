"""DefSent+'s dictionary datasets as entries: a (Oxford + WordNet, merged), b (Oxford) and c
(Oxford words that are one BERT token); an entry dataset (entry names, each definition's entry,
the definitions, a report of what was dropped), its Table 1 rows, and the PST miniature's
held-out split (notebook 21).
"""

import statistics

import numpy as np
import torch

from defsent_lite.runtime import cache, models
from defsent_lite.data import dictionary_readers


def token_length_stats(definitions, tokenizer, known=None):
    """Max and median tokenised length of the definitions, [CLS]/[SEP] included. known: a dict
    {definition: length} shared between calls, so that a definition is tokenised once (datasets
    b and c are subsets of a)."""
    known = {} if known is None else known
    new = list(dict.fromkeys(d for d in definitions if d not in known))
    if new:
        known.update(zip(new, (len(ids) for ids in tokenizer(new)["input_ids"])))
    lengths = [known[d] for d in definitions]
    return max(lengths), statistics.median(lengths)


def defsentplus_dataset(name, data_dir=None):
    """DefSent+ dataset a (Oxford + WordNet, merged, deduplicated), b (Oxford) or c (Oxford
    single words in BERT's vocabulary, for every model: footnote 8), as (entry, definition)
    pairs, and the Oxford splits used."""
    ox, used = dictionary_readers.oxford_pairs(data_dir)
    if name == "a":
        return dictionary_readers.merge_entries(
            ox + dictionary_readers.wordnet_definitions(data_dir)
        ), used
    if name == "b":
        return ox, used
    if name == "c":
        keep = models.single_token_ids([w for w, _ in ox], models.bert_vocabulary())
        return [(w, d) for w, d in ox if w in keep], used
    raise ValueError(f"unknown DefSent+ dataset {name!r}: choose a, b or c")


def defsentplus_table1(bert_tokenizer, roberta_tokenizer=None, data_dir=None):
    """DefSent+ Table 1 rows {label: [definitions, entries, max/median length BERT, RoBERTa]}."""
    labels = {
        "a": "a (Oxford + WordNet)",
        "b": "b (Oxford)",
        "c": "c (Oxford single words in BERT vocab.)",
    }
    rows, bert_lengths, roberta_lengths = {}, {}, {}
    for name, label in labels.items():
        pairs, _ = defsentplus_dataset(name, data_dir)
        defs = [d for _, d in pairs]
        bert = token_length_stats(defs, bert_tokenizer, bert_lengths)
        rob = (
            token_length_stats(defs, roberta_tokenizer, roberta_lengths)
            if roberta_tokenizer
            else (float("nan"),) * 2
        )
        rows[label] = [len(pairs), len({e for e, _ in pairs}), *bert, *rob]
    return rows


def entry_dataset(pairs, max_entries=None, seed=0):
    """Entries (sorted names), entry id of each definition, definitions, and a report.

    Empty definitions are dropped and counted; an entry left with none is dropped and counted.
    max_entries keeps a seeded random sample of entries with all their definitions (smoke).
    """
    kept = [(e, d) for e, d in pairs if d.strip()]
    names = sorted({e for e, _ in kept})
    report = dict(
        definitions_in=len(pairs),
        dropped_empty_definitions=len(pairs) - len(kept),
        dropped_entries_without_definition=len({e for e, _ in pairs}) - len(names),
    )
    if max_entries and len(names) > max_entries:
        g = torch.Generator().manual_seed(seed)
        names = sorted(
            names[i] for i in torch.randperm(len(names), generator=g)[:max_entries].tolist()
        )
    index = {e: i for i, e in enumerate(names)}
    kept = [(index[e], d) for e, d in kept if e in index]
    report.update(entries=len(names), definitions=len(kept))
    return names, [e for e, _ in kept], [d for _, d in kept], report


def load_entry_dataset(name, max_entries=None, data_dir=None, seed=0, paper_data=False):
    """Dataset a/b/c (defsentplus_dataset) as an entry dataset, cached (WordNet takes ~25 s);
    paper_data=True: the Oxford train split or an error."""
    if paper_data:
        dictionary_readers.require_oxford_train(data_dir)
    cfg = dict(
        dataset=name,
        max_entries=max_entries,
        seed=seed,
        data=cache.data_identity(data_dir, "dictionary"),
    )
    if name == "a":  # WordNet, by the files actually read (NLTK_DATA's too)
        cfg["wordnet"] = dictionary_readers.wordnet_identity(data_dir)

    def compute():
        pairs, used = defsentplus_dataset(name, data_dir)
        names, ids, defs, report = entry_dataset(pairs, max_entries, seed)
        report["source"] = f"dataset {name}: Oxford {'+'.join(used)}" + (
            " + WordNet 3.0" if name == "a" else ""
        )
        return dict(names=names, ids=ids, definitions=defs, report=report)

    return cache.cached_json("dsp_data", cfg, compute)


def held_out_split(ds):
    """The PST miniature's split (notebook 21): every entry with two or more definitions lends its
    first one to a held-out set; entries are built and trained on the rest. Returns (training,
    held-out) lists of (entry id, definition); each entry keeps at least one training definition."""
    first, seen = set(), set()
    counts = np.bincount(ds["ids"], minlength=len(ds["names"]))
    for i, e in enumerate(ds["ids"]):
        if e not in seen and counts[e] >= 2:
            first.add(i)
        seen.add(e)
    examples = list(zip(ds["ids"], ds["definitions"]))
    return (
        [x for i, x in enumerate(examples) if i not in first],
        [x for i, x in enumerate(examples) if i in first],
    )
