"""DefSent's dictionary dataset: the official clean-up, the word-level split, the vocabulary
filter, Table 1. A dictionary is a list of (entry, definition) pairs; they are read, and the Oxford
pairs DefSent's and DefSent+'s datasets start from gathered, in dictionary_readers."""

import random
import re
import statistics


from defsent_lite.runtime import cache, models
from defsent_lite.data import dictionary_readers

SPLIT_SEED = 0  # DefSent's own split used an unseeded shuffle; ours is fixed and recorded
# How the released DefSent code prepares Oxford (its default variant's "data"): detokenised,
# repeated definitions kept, split in file order
OFFICIAL_PREP = dict(detokenise=True, dedupe=False, grouped=True)


def split_by_word(pairs, seed=SPLIT_SEED, ratios=(8, 1, 1), grouped=False):
    """DefSent's 8:1:1 split by word: every definition of a word lands in the same split.
    Boundaries floor(0.8 n), floor(0.9 n), as the official extraction (Table 1's All row:
    29,413 / 3,677 / 3,677 of 36,767 words). grouped=True lists each split as the official files
    do: words in shuffled order, each word's definitions together in input order (else the pairs
    keep their input order)."""
    words = sorted({w for w, _ in pairs})
    random.Random(seed).shuffle(words)
    n_train = len(words) * ratios[0] // sum(ratios)
    n_dev = len(words) * (ratios[0] + ratios[1]) // sum(ratios) - n_train
    split_of = {w: "train" for w in words[:n_train]}
    split_of.update({w: "dev" for w in words[n_train : n_train + n_dev]})
    split_of.update({w: "test" for w in words[n_train + n_dev :]})
    out = {"train": [], "dev": [], "test": []}
    if grouped:
        rank = {w: i for i, w in enumerate(words)}
        # stable: a word's definitions keep their order
        pairs = sorted(pairs, key=lambda p: rank[p[0]])
    for w, d in pairs:
        out[split_of[w]].append((w, d))
    return out


# The official DefSent extraction's clean-up of Ishiwatari et al.'s tokenised definitions, in its
# order: spaces before . , ; ) ' and after ( removed; ``quoted text'' -> its text, capitalised
# (str.capitalize: the rest lower-cased); a ‘quoted’ span -> ’span’ (sic).
DETOKENISE_REPLACEMENTS = (
    (" .", "."),
    (" ,", ","),
    (" ;", ";"),
    ("( ", "("),
    (" )", ")"),
    (" '", "'"),
)


def detokenised(pairs):
    """(word, definition) pairs as the official DefSent extraction writes them: word stripped, text
    detokenised."""
    return [(w.strip(), detokenise(d)) for w, d in pairs]


def detokenise(definition):
    """A definition as the official DefSent code prepares it from Ishiwatari's tokenised text."""
    for old, new in DETOKENISE_REPLACEMENTS:
        definition = definition.replace(old, new)
    definition = re.sub(r"`` (.*?)''", lambda m: m.group(1).capitalize(), definition)
    definition = re.sub(r"‘\s*(.*?)\s*’", r"’\1’", definition)
    return definition.strip()


def definition_stats(pairs):
    """Words, definitions and mean definition length in whitespace-separated words."""
    return dict(
        words=len({w for w, _ in pairs}),
        definitions=len(pairs),
        avg_length=statistics.fmean(len(d.split()) for _, d in pairs) if pairs else float("nan"),
    )


def defsent_table1(pairs, tokenizers, seed=SPLIT_SEED):
    """DefSent Table 1 rows {(group, split): [words, definitions, avg_length]}.

    All words are split 8:1:1 first; a vocabulary's rows are the words of each split that are
    one token of it, as the official code filters its split files (Table 1: BERT's 7,732 / 936 /
    979 words are not 8:1:1). `tokenizers` maps a group label ("In BERT vocab.", ...) to a
    tokenizer, or to None when that tokenizer is not at hand (its rows are then NaN).
    """
    splits = split_by_word(pairs, seed)
    groups = {"All": splits}
    for label, tok in tokenizers.items():
        keep = models.single_token_ids([w for w, _ in pairs], tok) if tok is not None else None
        groups[label] = (
            {k: [p for p in v if p[0] in keep] for k, v in splits.items()}
            if keep is not None
            else None
        )
    rows = {}
    for label, group in groups.items():
        for name in ("train", "dev", "test"):
            s = definition_stats(group[name]) if group is not None else {}
            rows[(label, name.capitalize())] = [
                s.get("words", float("nan")),
                s.get("definitions", float("nan")),
                s.get("avg_length", float("nan")),
            ]
    return rows


def defsent_dataset(
    tokenizer, data_dir=None, prep=None, use_wordnet=None, seed=SPLIT_SEED, paper_data=False
):
    """Word/definition/target-id triples split 8:1:1 by word, and a report of what was dropped.

    Oxford (all splits at hand), prepared as `prep` says (a DefSent variant's "data"; default
    OFFICIAL_PREP: detokenised, repeated definitions kept, file order); offline, when the train
    split is missing, WordNet definitions of single-token words are added (use_wordnet=None
    decides so). Cached by
    (tokenizer, data root, options): reading WordNet takes about 25 s, the cache under 1 s.
    paper_data=True (paper scale): the Oxford train split or an error, never the stand-in.
    """
    if paper_data:
        dictionary_readers.require_oxford_train(data_dir)
    prep = dict(OFFICIAL_PREP if prep is None else prep)
    cfg = dict(
        tokenizer=tokenizer.name_or_path,
        vocab=len(tokenizer),
        data=cache.data_identity(data_dir, "dictionary"),
        wordnet=dictionary_readers.wordnet_identity(data_dir),
        use_wordnet=use_wordnet,
        seed=seed,
        prep=prep,
    )
    splits, report = cache.cached_json(
        "defsent_data", cfg, lambda: _defsent_splits(tokenizer, data_dir, use_wordnet, seed, prep)
    )
    return {k: [tuple(x) for x in v] for k, v in splits.items()}, report


def _defsent_splits(tokenizer, data_dir, use_wordnet, seed, prep):
    pairs, used = dictionary_readers.oxford_pairs(data_dir)
    if use_wordnet is None:
        use_wordnet = "train" not in used
    source = f"Oxford {'+'.join(used)}" + (" + WordNet 3.0" if use_wordnet else "")
    if prep["detokenise"]:
        pairs = detokenised(pairs)
    if use_wordnet:
        pairs = pairs + dictionary_readers.wordnet_definitions(data_dir)
    pairs = dictionary_readers.merge_entries(pairs, dedupe=prep["dedupe"])
    ids = models.single_token_ids([w for w, _ in pairs], tokenizer)
    report = dict(
        source=source,
        definitions=len(pairs),
        dropped_not_single_token=sum(w not in ids for w, _ in pairs),
        dropped_empty_definition=sum(w in ids and not d.strip() for w, d in pairs),
    )
    # all words split first, then each split filtered, as the official code (Table 1's counts)
    splits = {
        k: [(w, d) for w, d in v if w in ids and d.strip()]
        for k, v in split_by_word(pairs, seed, grouped=prep["grouped"]).items()
    }
    report["prep"] = prep
    report.update({f"{k}_definitions": len(v) for k, v in splits.items()})
    report.update({f"{k}_words": len({w for w, _ in v}) for k, v in splits.items()})
    return {k: [(w, d, ids[w]) for w, d in v] for k, v in splits.items()}, report
