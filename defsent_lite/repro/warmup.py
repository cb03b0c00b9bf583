"""The warm-up a plan rests on (repro/budget.py): seconds per training step (the whole update) and
per encoded batch, measured here with the run's own model and loss, and the token counts its FLOPs
are computed from. Loaded only when a plan is made (the scales that follow the papers' protocol)."""

import time

import torch

from defsent_lite import encode, train


def row_tokens(tokenizer, texts, batch=None, sample=4096):
    """Mean tokens per text (special tokens included), over an evenly spaced sample; with `batch`,
    the mean padded length of a training batch in the sample's order (each row padded to its
    batch's longest)."""
    texts = list(texts)
    texts = [
        texts[i]
        for i in sorted({int(k * len(texts) / sample) for k in range(min(sample, len(texts)))})
    ]
    if not texts:
        return 0.0
    lengths = [len(ids) for ids in tokenizer(texts, truncation=True, max_length=512)["input_ids"]]
    if batch is None:
        return sum(lengths) / len(lengths)
    chunks = [lengths[i : i + batch] for i in range(0, len(lengths), batch)]
    return sum(max(c) * len(c) for c in chunks) / len(lengths)


def parameters(model):
    return sum(p.numel() for p in model.parameters())


def device_name(device):
    device = torch.device(device)
    if device.type == "cuda":
        return f"{torch.cuda.get_device_name(device)} ({encode.precision_name(device)})"
    return f"cpu ({torch.get_num_threads()} threads, fp32)"


def _sync(device):
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize(device)


def seconds_per_call(fn, device, warmup=1, repeats=3):
    """Mean wall time of fn() after `warmup` untimed calls."""
    for _ in range(warmup):
        fn()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(repeats):
        fn()
    _sync(device)
    return (time.perf_counter() - t0) / repeats


def measure(model, loss_fn, encode_fn, repeats=5, mixed_precision=True):
    """(seconds per training step, seconds per encoded batch) of a model: loss_fn(model) -> loss,
    encode_fn(model) -> anything (inference, which sets its own precision). A step is the whole
    update: forward, backward and an AdamW step on the trainable weights (train.make_optimizer,
    fused on CUDA), which are restored after. mixed_precision: the training's (bf16/fp16 autocast
    on GPU, as train.train; False: fp32)."""
    device = next(model.parameters()).device
    was_training = model.training
    saved = {k: v.detach().clone() for k, v in model.state_dict().items()}
    opt = train.make_optimizer(model.parameters(), "adamw", 1e-12, 0.0)

    def step():
        model.train()
        with encode.autocast_for(device, enabled=mixed_precision):
            loss = loss_fn(model)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    def infer():
        model.eval()
        with torch.inference_mode():
            encode_fn(model)

    try:
        return (
            seconds_per_call(step, device, warmup=2, repeats=repeats),
            seconds_per_call(infer, device, warmup=2, repeats=repeats),
        )
    finally:
        model.train(was_training)
        model.zero_grad(set_to_none=True)
        model.load_state_dict(saved)
