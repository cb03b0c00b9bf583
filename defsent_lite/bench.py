"""Benchmark helpers: wall-clock timing and the sentence-transformers baseline."""
import time

import numpy as np
import torch

from . import encode


def best_time(fn, repeats=3):
    """Best wall-clock seconds of `repeats` calls (the least disturbed run), and the last result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def encode_vs_sentence_transformers(model_path, sentences, batch_size=64, repeats=3):
    """Time our `encode` (mean pooling) against SentenceTransformer.encode on the same model,
    sentences, batch size and threads, interleaving the runs; returns timings and min cosine."""
    from sentence_transformers import SentenceTransformer

    from . import models
    ours_model, tok = models.load(model_path, device="cpu")
    st = SentenceTransformer(str(model_path), device="cpu")
    run_ours = lambda: encode.encode(ours_model, tok, sentences, pooling="mean", batch_size=batch_size,  # noqa: E731
                                     max_length=st.max_seq_length, progress=False).numpy()
    run_st = lambda: st.encode(sentences, batch_size=batch_size, convert_to_numpy=True,  # noqa: E731
                               show_progress_bar=False)
    t_ours, t_st = float("inf"), float("inf")
    for _ in range(repeats):  # interleave so both see the same machine state
        t, ours = best_time(run_ours, 1)
        t_ours = min(t_ours, t)
        t, ref = best_time(run_st, 1)
        t_st = min(t_st, t)
    cos = (ours * ref).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(ref, axis=1)
    return dict(sentences=len(sentences), threads=torch.get_num_threads(), batch_size=batch_size,
                ours_s=t_ours, st_s=t_st, speedup=t_st / t_ours, min_cosine=float(cos.min()))


def defsent_training_throughput(model_name="offline", batch_size=16, steps=40, pooling="cls"):
    """Definitions per second of DefSent training (forward, backward, Adam step) and the
    size of the only vocabulary-wide tensor, the [batch, vocab] logits."""
    from . import defsent, train
    model, tok, head, kind = defsent.load_model(model_name)
    splits, _ = defsent.build_dataset(tok)
    batches = train.batched(splits["train"][: steps * batch_size], batch_size, seed=0)
    t0 = time.perf_counter()
    train.train(model, lambda m, b: defsent.loss(m, head, defsent.collate(tok, b), pooling), batches, lr=1e-5,
                params=defsent.trainable_parameters(model), optimizer="adam", progress=False)
    seconds = time.perf_counter() - t0
    return dict(head=kind, batch_size=batch_size, steps=len(batches), seconds=seconds,
                definitions_per_s=sum(len(b) for b in batches) / seconds,
                logits_mib=batch_size * model.config.vocab_size * 4 / 2 ** 20)


def run_isolated(name, **kwargs):
    """Run a benchmark function of this module in a fresh Python process; adds its peak RSS (MiB)."""
    import json
    import subprocess
    import sys
    code = ("import json, resource; from defsent_lite import bench; "
            f"r = bench.{name}(**{kwargs!r}); "
            "r['peak_rss_mib'] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024; print(json.dumps(r))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])
