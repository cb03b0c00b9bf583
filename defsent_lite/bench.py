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
