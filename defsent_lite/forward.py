"""One batch through an encoder: tokenised (the sentences sorted and cut into batches by length),
padded, on the model's device, in its precision and mode, to its token states. Training and
encoding share these steps (encode.py encodes many sentences with them)."""

import contextlib
import copy
import threading

import numpy as np
import torch

from defsent_lite import checks
from defsent_lite.pooling import prompt_text


def bars_shown(progress=None):
    """Whether the long loops (encoding, entry building, training) draw tqdm bars: `progress` when
    given, else DEFSENT_PROGRESS (default on; 0 turns the bars off, as in tests)."""
    if progress is not None:
        return bool(progress)
    return checks.switch("DEFSENT_PROGRESS", "1")


def token_features(tokenizer, sentences, max_length):
    """Per sentence, its token ids (and type ids where the model takes them), special tokens added,
    cut at max_length: what tokenizer(sentences, truncation=True) returns (the mask, all ones,
    left to pad_batch), from a fast tokenizer's Rust backend in one call."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None:  # a Python tokenizer
        enc = tokenizer(list(sentences), truncation=True, max_length=max_length, padding=False)
        keys = [k for k in enc.keys() if k != "attention_mask"]
        return [{k: enc[k][i] for k in keys} for i in range(len(sentences))]
    encodings = private_backend(tokenizer, max_length).encode_batch(list(sentences))
    if "token_type_ids" in tokenizer.model_input_names:
        return [{"input_ids": e.ids, "token_type_ids": e.type_ids} for e in encodings]
    return [{"input_ids": e.ids} for e in encodings]


def private_backend(tokenizer, max_length):
    """A copy of a fast tokenizer's backend that cuts at max_length and never pads, kept on the
    tokenizer (per max_length, side and vocabulary size): tokenising never changes the shared
    tokenizer's settings (two threads encoding with one tokenizer would read each other's)."""
    copies = tokenizer.__dict__.setdefault("_defsent_backends", {})
    key = (max_length, tokenizer.truncation_side, len(tokenizer))
    if key not in copies:
        backend = copy.deepcopy(tokenizer.backend_tokenizer)
        backend.enable_truncation(max_length, direction=tokenizer.truncation_side)
        backend.no_padding()
        copies[key] = backend
    return copies[key]


def tokenize_sorted(tokenizer, sentences, max_length):
    """Token ids of every sentence (no padding) and the order that sorts them longest first."""
    features = token_features(tokenizer, sentences, max_length)
    order = sorted(range(len(features)), key=lambda i: -len(features[i]["input_ids"]))
    return features, order


def pad_batch(tokenizer, features, idx):
    """The features of sentences `idx` padded to the longest, with their attention mask, as int64
    tensors: what tokenizer.pad(..., return_tensors="pt") returns, filled in numpy."""
    rows = [features[i] for i in idx]
    width = max(len(r["input_ids"]) for r in rows)
    fill = {"input_ids": tokenizer.pad_token_id, "token_type_ids": tokenizer.pad_token_type_id}
    left = tokenizer.padding_side == "left"
    out = {}
    if "attention_mask" in tokenizer.model_input_names:
        lengths = np.array([len(r["input_ids"]) for r in rows])
        columns = np.arange(width)
        mask = columns >= width - lengths[:, None] if left else columns < lengths[:, None]
        out["attention_mask"] = torch.from_numpy(mask.astype(np.int64))
    for key in rows[0]:
        array = np.full((len(rows), width), fill.get(key, 0), dtype=np.int64)
        for j, r in enumerate(rows):
            n = len(r[key])
            array[j, slice(width - n, None) if left else slice(n)] = r[key]
        out[key] = torch.from_numpy(array)
    return out


def prompt_sentences(tokenizer, sentences, max_length):
    """Each sentence wrapped in the prompt template; a sentence too long for max_length keeps the
    most words from its start that fit (never losing the mask token, which truncation would cut);
    a first word longer than max_length alone keeps its first characters, as truncation keeps the
    first tokens."""

    def fits(text):
        return len(tokenizer(prompt_text(text, tokenizer.mask_token))["input_ids"]) <= max_length

    wrapped = [prompt_text(s, tokenizer.mask_token) for s in sentences]
    for i, ids in enumerate(tokenizer(wrapped)["input_ids"]):
        if len(ids) > max_length:
            words = sentences[i].split() or [""]
            n = longest_prefix(len(words), lambda k: fits(" ".join(words[:k])))
            text = (
                " ".join(words[:n])
                or words[0][: longest_prefix(len(words[0]), lambda c: fits(words[0][:c]))]
            )
            if not text:
                raise ValueError(
                    f"prompt pooling: max_length={max_length} tokens leave no room for a sentence "
                    "in the prompt template"
                )
            wrapped[i] = prompt_text(text, tokenizer.mask_token)
    return wrapped


def longest_prefix(n, fits):
    """The largest k in 0..n with fits(k), fits true up to some k and false after (bisection)."""
    low, high = 0, n
    while low < high:
        mid = (low + high + 1) // 2
        low, high = (mid, high) if fits(mid) else (low, mid - 1)
    return low


def tokenize_batch(tokenizer, sentences, pooling, max_length=128):
    """Padded tensors of one batch as `pooling` needs them (prompt: the template around each)."""
    if pooling == "prompt":
        sentences = prompt_sentences(tokenizer, list(sentences), max_length)
    return tokenizer(
        list(sentences), padding=True, truncation=True, max_length=max_length, return_tensors="pt"
    )


def check_sentences(sentences, allow_empty=False):
    """Sentences must be strings and at least one; empty ones are refused unless allow_empty
    (SentEval keeps a few)."""
    if isinstance(sentences, str):
        raise TypeError("encode() takes a list of sentences, not a single string")
    if len(sentences) == 0:
        raise ValueError("no sentences to encode (empty list)")
    for i, s in enumerate(sentences):
        if not isinstance(s, str):
            raise TypeError(f"sentence {i} is {type(s).__name__}, not str")
        if not allow_empty and not s.strip():
            raise ValueError(
                f"sentence {i} is empty (pass allow_empty=True to encode it as [CLS] [SEP])"
            )


_in_eval = {}  # id(model) -> (blocks open on it, its mode before the first)


_in_eval_lock = threading.Lock()


@contextlib.contextmanager
def eval_mode(model):
    """Switch to eval for the block and restore the previous mode (training loops call encode);
    blocks open on one model in several threads keep it in eval until the last one ends."""
    with _in_eval_lock:
        depth, was_training = _in_eval.get(id(model), (0, model.training))
        _in_eval[id(model)] = (depth + 1, was_training)
        model.eval()
    try:
        yield
    finally:
        with _in_eval_lock:
            depth, was_training = _in_eval.pop(id(model))
            if depth > 1:
                _in_eval[id(model)] = (depth - 1, was_training)
            else:
                model.train(was_training)


def amp_dtype(device):
    """The autocast dtype of a device: bf16 on GPUs that have it natively (compute capability
    >= 8: A100, H100, L4, RTX 30xx+), fp16 on older GPUs (T4, V100: `is_bf16_supported()` is
    true there by emulation, which is slow), None (fp32) on CPU."""
    device = torch.device(device)
    if device.type != "cuda":
        return None
    major, _ = torch.cuda.get_device_capability(device)
    return torch.bfloat16 if major >= 8 else torch.float16


def precision_name(device):
    """'bf16', 'fp16 with loss scaling' or 'fp32': what training and encoding use on `device`."""
    dtype = amp_dtype(device)
    return {torch.bfloat16: "bf16", torch.float16: "fp16 with loss scaling", None: "fp32"}[dtype]


def autocast_for(device, enabled=True):
    """bf16/fp16 autocast on GPU (see amp_dtype); a no-op on CPU (fp32 there) or when not
    enabled."""
    dtype = amp_dtype(device) if enabled else None
    return torch.autocast("cuda", dtype=dtype) if dtype is not None else contextlib.nullcontext()


def full_precision(device):
    """A block computed in fp32 even under autocast (logits over the vocabulary or all entries)."""
    return torch.autocast(torch.device(device).type, enabled=False)


def on_model_device(model, batch):
    """The batch's tensors on the model's device: where every path that feeds a model moves its
    inputs (on a GPU a batch left on the CPU would fail in the first layer). To a GPU through
    pinned memory, without waiting: the host goes on to prepare the next batch."""
    device = next(model.parameters()).device
    if device.type == "cuda":
        return {
            k: (
                v.pin_memory().to(device, non_blocking=True)
                if v.device.type == "cpu"
                else v.to(device)
            )
            if torch.is_tensor(v)
            else v
            for k, v in batch.items()
        }
    return {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}


# Padded tokens in one encoded batch on an accelerator: short sentences go in batches larger than
# batch_size (one kernel launch covers more of them); on the CPU a batch is batch_size sentences.
ACCELERATOR_BATCH_TOKENS = 32768


def length_batches(features, order, batch_size, device):
    """The length-sorted order (longest first) cut into batches of index lists: batch_size
    sentences each, or on an accelerator as many as fit ACCELERATOR_BATCH_TOKENS padded tokens
    (never fewer than batch_size)."""
    batch_size = max(1, int(batch_size))
    accelerator = torch.device(device).type != "cpu"
    batches, start = [], 0
    while start < len(order):
        size = batch_size
        if accelerator:  # the batch's first sentence is its longest
            size = max(
                batch_size,
                ACCELERATOR_BATCH_TOKENS // max(1, len(features[order[start]]["input_ids"])),
            )
        batches.append(order[start : start + size])
        start += size
    return batches


def hidden_states(model, batch):
    """Last hidden states of the encoder (works for AutoModel and AutoModelForMaskedLM)."""
    return model.base_model(**batch).last_hidden_state


BATCHES_PER_COPY = 256  # pooled batches kept on the device before one copy to the host


ROWS_PER_COPY = 65536  # ... or pooled sentences (large token-sized batches), whichever comes first
