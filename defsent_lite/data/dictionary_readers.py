"""Readers of the dictionaries under <data root>/dictionary: the Oxford splits (Ishiwatari's files),
and WordNet 3.0's definitions, read from its data files or through nltk (readers' checks); the
Oxford pairs DefSent's and DefSent+'s datasets start from, and same-named entries merged."""

import functools
import os
import re
from pathlib import Path

from defsent_lite.runtime import cache, config
from defsent_lite.data.readers import (
    DataMissing,
    HOW_TO_GET,
    check_nonempty,
    nonempty_rows,
    read_lines,
    require,
    split_fields,
)


def read_oxford_tsv(path):
    """Oxford TSV of ../shared/data (header word, definition, example): (word, definition) pairs."""
    pairs = []
    for i, line in enumerate(read_lines(path), 1):
        if i == 1:
            if not line.startswith("word\tdefinition"):
                raise ValueError(f"{path}:1: expected header 'word<TAB>definition<TAB>example'")
            width = len(line.split("\t"))  # every row has the header's columns
            continue
        f = split_fields(path, i, line, width, exact=True)
        _word(path, i, f[0])
        check_nonempty(path, i, f[1], what="definition")
        pairs.append((f[0], f[1]))
    return nonempty_rows(path, pairs)


def read_ishiwatari(path):
    """Ishiwatari et al. (2019) `<split>.txt`: field 1 `word%oxford.N`, field 4 the definition."""
    pairs = []
    for i, line in enumerate(read_lines(path), 1):
        f = split_fields(path, i, line, 4)
        check_nonempty(path, i, f[3], what="definition")
        pairs.append((_word(path, i, f[0].rsplit("%", 1)[0]), f[3]))
    return nonempty_rows(path, pairs)


def _word(path, lineno, word):
    if not word.strip():
        raise ValueError(f"{path}:{lineno}: empty word")
    return word


def load_oxford(data_dir=None):
    """Oxford definitions by split: the original archive layout if present, else the valid/test
    TSVs.

    Returns {split: [(word, definition), ...]}; a split that is not at hand is absent
    (offline: no 'train').
    """
    root = require(config.data_root(data_dir)) / "dictionary" / "oxford"
    out = {}
    for split in ("train", "valid", "test"):
        original, tsv = root / "ishiwatari" / f"{split}.txt", root / f"{split}.tsv"
        if original.exists():
            out[split] = read_ishiwatari(original)
        elif tsv.exists():
            out[split] = read_oxford_tsv(tsv)
    if not out:
        raise DataMissing(f"no Oxford split under {root}: {HOW_TO_GET}")
    return out


def wordnet_definitions(data_dir=None):
    """(lemma, gloss) for every (lemma, synset) pair of WordNet 3.0, lemmas with spaces, lowercased.
    Read once per process (about 0.5 s from the data files), then served from memory as a fresh
    list."""
    folder = wordnet_folder(data_dir)
    return list(
        _wordnet_definitions(
            str(config.data_root(data_dir)),
            str(folder) if folder else None,
            os.environ.get("NLTK_DATA", ""),
        )
    )


def wordnet_identity(data_dir=None):
    """What WordNet's glosses are read from, by content: the folder of data files found under the
    data root or NLTK_DATA, else (nltk's own reader) the data root's copy and NLTK_DATA."""
    folder = wordnet_folder(data_dir)
    if folder is not None:
        return dict(wordnet_files=cache.data_identity(str(folder.parent), folder.name))
    return dict(
        nltk_reader=cache.data_identity(data_dir, "dictionary/wordnet"),
        nltk_data=os.environ.get("NLTK_DATA", ""),
    )


@functools.lru_cache(maxsize=2)
def _wordnet_definitions(data_dir, folder, nltk_data):
    # keyed by the files actually read, and cached on disk too: later kernels load the parsed
    # glosses in about 1 s
    pairs = cache.cached_json(
        "wordnet", wordnet_identity(data_dir), lambda: _read_wordnet(data_dir)
    )
    return [tuple(p) for p in pairs]


def _read_wordnet(data_dir):
    folder = wordnet_folder(data_dir)
    return read_wordnet_data_files(folder) if folder else _read_wordnet_with_nltk(data_dir)


def wordnet_folder(data_dir=None):
    """The WordNet corpus folder (data.noun, ...) under the data root's nltk_data or NLTK_DATA, or
    None (a zipped or elsewhere-installed corpus, left to nltk's reader)."""
    roots = [config.data_root(data_dir) / "dictionary" / "wordnet" / "nltk_data"]
    roots += [Path(p) for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p]
    return next(
        (
            r / "corpora" / "wordnet"
            for r in roots
            if (r / "corpora" / "wordnet" / "data.noun").is_file()
        ),
        None,
    )


WORDNET_POS_FILES = ("adj", "adv", "noun", "verb")  # nltk's all_synsets order
_SYNTACTIC_MARKER = re.compile(r"(.*?)(\([^()]*\))?$")  # "galore(ip)" -> "galore"
_QUOTED_EXAMPLE = re.compile(r"[\"].*?[\"]")


def read_wordnet_data_files(folder):
    """(lemma, definition) pairs straight from WordNet's data.* files, exactly as nltk gives them
    (synset.definition(): the gloss without its quoted examples; lemma names without syntactic
    markers) in nltk's order, in about 0.5 s instead of nltk's 15 s."""
    pairs = []
    for pos in WORDNET_POS_FILES:
        path = Path(folder) / f"data.{pos}"
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                if line[0].isspace():  # the license header
                    continue
                try:
                    pairs += synset_line_pairs(line)
                except (ValueError, IndexError):
                    raise ValueError(
                        f"{path}:{lineno}: not a WordNet synset line: {line[:80]!r}"
                    ) from None
    return pairs


def synset_line_pairs(line):
    """(lemma, definition) of each lemma of one synset line of a WordNet data file."""
    columns, gloss = line.strip().split("|")
    tokens = columns.split()
    names = tokens[4 : 4 + 2 * int(tokens[3], 16) : 2]
    definition = _QUOTED_EXAMPLE.sub("", gloss).strip().strip("; ")
    return [
        (_SYNTACTIC_MARKER.match(n).group(1).replace("_", " ").lower(), definition) for n in names
    ]


def _read_wordnet_with_nltk(data_dir):
    nltk_dir = config.data_root(data_dir) / "dictionary" / "wordnet" / "nltk_data"
    import nltk  # here, not at the top: importing nltk takes 1.5 s and only this fallback needs it
    from nltk.corpus import wordnet as wn

    if nltk_dir.exists() and str(nltk_dir.resolve()) not in os.environ.get("NLTK_DATA", ""):
        if str(nltk_dir) not in nltk.data.path:
            nltk.data.path.insert(0, str(nltk_dir))
    try:
        synsets = list(wn.all_synsets())
    except LookupError:
        raise DataMissing(
            f"WordNet not found (looked in {nltk_dir} and NLTK_DATA): {HOW_TO_GET}"
        ) from None
    return [
        (lemma.replace("_", " ").lower(), s.definition())
        for s in synsets
        for lemma in s.lemma_names()
    ]


def oxford_pairs(data_dir=None, splits=("train", "valid", "test")):
    """All Oxford (word, definition) pairs of the splits at hand, and the splits used."""
    ox = load_oxford(data_dir)
    used = [s for s in splits if s in ox]
    return [p for s in used for p in ox[s]], used


def require_oxford_train(data_dir=None):
    """The paper's Oxford dataset or an error: at paper scale the offline stand-in (valid+test
    with WordNet) is never used in its place."""
    path = config.data_root(data_dir) / "dictionary" / "oxford" / "ishiwatari" / "train.txt"
    if not path.is_file():
        raise DataMissing(
            f"{path} not found: the paper's Oxford dataset needs Ishiwatari et al.'s train split "
            "(`python -m defsent_lite.data.download fetch --only oxford --root "
            f"{config.data_root(data_dir)}`); "
            "only the smoke and cpu scales fall back to valid+test with WordNet"
        )
    return path


def merge_entries(pairs, dedupe=True):
    """Combine same-named entries; drop repeated definitions of an entry when dedupe."""
    seen, out = set(), []
    for entry, definition in pairs:
        key = (entry, definition)
        if dedupe and key in seen:
            continue
        seen.add(key)
        out.append(key)
    return out
