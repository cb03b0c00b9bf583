"""Benchmarks of the package (a script of the repository; the package never imports it): wall-clock
timing and the sentence-transformers baseline. `python tools/bench.py entries | sts | transfer`."""
import json
import multiprocessing
import resource
import sys
import time
import traceback

import numpy as np
import torch

from defsent_lite import defsent, encode, gausscse, train
from defsent_lite.defsentplus import build_entry_embeddings
from defsent_lite.pooling import pool
from defsent_lite.runtime import defsent_model, models
from defsent_lite.data import dictionary, entries, nli_readers
from defsent_lite.evaluation import senteval, sts


def best_time(fn, repeats=3):
    """Best wall-clock seconds of `repeats` calls (the least disturbed run), and the last result."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def encode_vs_sentence_transformers(model_path, sentences, batch_size=64, repeats=3, device="cpu"):
    """Time our `encode` (mean pooling) against SentenceTransformer.encode on the same model,
    sentences, batch size, threads and device, interleaving the runs; returns timings and min
    cosine. On a GPU our batches are sized by tokens (encode.length_batches), at least batch_size."""
    from sentence_transformers import SentenceTransformer

    ours_model, tok = models.load(model_path, device=device)
    st = SentenceTransformer(str(model_path), device=device)
    run_ours = lambda: encode.encode(ours_model, tok, sentences, pooling="mean", batch_size=batch_size,  # noqa: E731
                                     max_length=st.max_seq_length, progress=False).numpy()
    run_st = lambda: st.encode(sentences, batch_size=batch_size, convert_to_numpy=True,  # noqa: E731
                               show_progress_bar=False)
    t_ours, t_st = float("inf"), float("inf")
    if device != "cpu":   # warm-up on a GPU (kernels, allocator) before any timing
        run_ours(), run_st()
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
    model, tok, head, kind = defsent_model.load(model_name)
    splits, _ = dictionary.defsent_dataset(tok)
    batches = train.batched(splits["train"][: steps * batch_size], batch_size, seed=0)
    t0 = time.perf_counter()
    train.train(model, lambda m, b: defsent.loss(m, head, defsent.collate(tok, b, pooling=pooling), pooling, tok.mask_token_id),
                batches, train.Settings(lr=1e-5, optimizer="adam"), params=defsent.trainable_parameters(model), progress=False)
    seconds = time.perf_counter() - t0
    return dict(head=kind, batch_size=batch_size, steps=len(batches), seconds=seconds,
                definitions_per_s=sum(len(b) for b in batches) / seconds,
                logits_mib=batch_size * model.config.vocab_size * 4 / 2 ** 20)


def measured(name, kwargs, send):
    """Run a benchmark function, send its result and the peak RSS (MiB) of the process that ran it
    (or the traceback of its error) through `send`."""
    try:
        r = globals()[name](**kwargs)
        r["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        send.send(r)
    except BaseException:
        send.send(traceback.format_exc())
    finally:
        send.close()


def run_isolated(name, **kwargs):
    """Run a benchmark function of this module in a fresh process, its peak RSS its own (added, in
    MiB): forked from a server that imported this module and BERT's modules once (multiprocessing's
    forkserver: it runs nothing else), so the benchmarks after the first pay no imports."""
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["bench", "transformers.models.bert.modeling_bert"])
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=measured, args=(name, kwargs, send))
    process.start()
    send.close()
    try:
        result = receive.recv()
    except EOFError:   # the process died before it could answer
        result = None
    process.join()
    if not isinstance(result, dict):
        raise RuntimeError(f"benchmark {name} failed in its own process (exit code {process.exitcode})"
                           + (f":\n{result}" if result else ""))
    return result


def entry_embeddings_throughput(dataset="a", max_definitions=None, pooling="mean", batch_size=128):
    """Definitions per second of build_entry_embeddings (streaming, length-sorted, dynamic padding)
    on DefSent+ dataset `dataset` (its first max_definitions definitions when given)."""
    model_name = "offline"
    model, tok = models.load(model_name)
    ds = entries.load_entry_dataset(dataset)
    ids, defs = ds["ids"], ds["definitions"]
    if max_definitions:  # the first definitions, their entries renumbered 0..n-1
        ids, defs = torch.unique(torch.tensor(ids[:max_definitions]), return_inverse=True)[1].tolist(), defs[:max_definitions]
    t0 = time.perf_counter()
    space = build_entry_embeddings(model, tok, ids, defs, pooling, batch_size=batch_size, progress=False)
    seconds = time.perf_counter() - t0
    return dict(model=model_name, dataset=dataset, definitions=len(defs), entries=int(space.shape[0]),
                seconds=seconds, definitions_per_s=len(defs) / seconds, space_mib=space.numel() * 4 / 2 ** 20)


def entry_embeddings_fixed_padding(dataset="a", max_definitions=2000, pooling="mean", batch_size=128, max_length=128):
    """Baseline: every definition padded to max_length, in file order, all vectors kept, then
    averaged per entry with a Python loop (what the streaming builder avoids)."""
    model, tok = models.load("offline")
    ds = entries.load_entry_dataset(dataset)
    ids, defs = ds["ids"][:max_definitions], ds["definitions"][:max_definitions]
    t0 = time.perf_counter()
    vecs = []
    with torch.inference_mode():
        for s in range(0, len(defs), batch_size):
            b = tok(defs[s:s + batch_size], padding="max_length", truncation=True, max_length=max_length, return_tensors="pt")
            b = encode.on_model_device(model, b)
            vecs.append(pool(pooling, model(**b).last_hidden_state, b["attention_mask"]).cpu())
    vecs = torch.cat(vecs)
    space = torch.stack([vecs[[i for i, e in enumerate(ids) if e == entry]].mean(0) for entry in sorted(set(ids))])
    seconds = time.perf_counter() - t0
    return dict(definitions=len(defs), entries=int(space.shape[0]), seconds=seconds, definitions_per_s=len(defs) / seconds)


def gausscse_training_throughput(batch_size=16, steps=20, setting="ent+con+rev"):
    """GaussCSE training steps per second (3 x batch sentences forward + backward + AdamW step)."""
    encoder, tok = models.load("offline", eval_mode=False)
    model = gausscse.GaussModel(encoder).to(next(encoder.parameters()).device)   # the head beside the encoder
    batches = train.batched(nli_readers.training_triplets(source=nli_readers.train_source("smoke"))[: steps * batch_size], batch_size, seed=0)
    t0 = time.perf_counter()
    train.train(model, lambda m, b: gausscse.triplet_loss(m, tok, b, setting, "sum"), batches, train.Settings(lr=1e-5), progress=False)
    seconds = time.perf_counter() - t0
    return dict(batch_size=batch_size, steps=len(batches), seconds=seconds, steps_per_s=len(batches) / seconds,
                triplets_per_s=len(batches) * batch_size / seconds)


def similarity_matrix_cost(sizes=(16, 64, 256), dims=(384, 768, 1024), repeats=5):
    """Seconds for the [B, B] sim(a||b) matrix: broadcasting [B,1,d] against [1,B,d] (baseline)
    vs the matrix-product form (kl_matrix), and their max difference."""
    rows = []
    g = torch.Generator().manual_seed(0)
    for B in sizes:
        for d in dims:
            mu, var = torch.randn(B, d, generator=g), torch.rand(B, d, generator=g) + 0.1
            t_b, ref = best_time(lambda: gausscse.kl_similarity(mu[:, None], var[:, None], mu[None], var[None]), repeats)
            t_m, out = best_time(lambda: gausscse.similarity_matrix(mu, var, mu, var), repeats)
            rows.append(dict(B=B, d=d, broadcast_ms=1e3 * t_b, matmul_ms=1e3 * t_m, speedup=t_b / t_m,
                             max_abs_diff=float((ref - out).abs().max())))
    return rows


def memoised(embed):
    """An embed function that encodes each distinct sentence once and then serves it from memory,
    so that timed classifier runs leave encoding out."""
    vectors = {}

    def cached(sentences):
        todo = [s for s in dict.fromkeys(sentences) if s not in vectors]
        if todo:
            vectors.update(zip(todo, np.asarray(embed(todo), dtype=np.float32)))
        return np.stack([vectors[s] for s in sentences]) if sentences else np.zeros((0, 0), np.float32)
    return cached


def transfer_classifiers(model_name="offline", pooling="mean", tasks=None, data_dir=None, classifiers=("senteval_torch", "batched"),
                         kfold=10, inner_search=True, max_examples=None, max_eval=None, batch_size=64):
    """Accuracy and classifier time of each SentEval classifier per task, on the same embeddings
    (encoded once, before any timing); ratios against the first classifier named."""
    model, tokenizer = models.load(model_name)
    embed = memoised(encode.embedder(model, tokenizer, pooling, batch_size=batch_size, allow_empty=True))
    tasks = tasks or senteval.TASKS
    settings = dict(data_dir=data_dir, kfold=kfold, inner_search=inner_search, max_examples=max_examples,
                    max_eval=max_eval)
    t0 = time.perf_counter()
    for task in tasks:  # encode everything first: a fit with C=1 on 2 folds reads every sentence
        senteval.evaluate_task(task, embed, **dict(settings, kfold=2, inner_search=False), classifier="batched")
    rows = dict(encode_s=time.perf_counter() - t0)
    for name in classifiers:
        for task in tasks:
            t = time.perf_counter()
            rows[f"{task} {name}"] = senteval.evaluate_task(task, embed, **settings, classifier=name)
            rows[f"{task} {name} s"] = time.perf_counter() - t
    for name in classifiers:
        rows[f"{name} total s"] = sum(rows[f"{task} {name} s"] for task in tasks)
    base = classifiers[0]   # the named baseline: ratios and accuracy differences against it
    for name in classifiers[1:]:
        rows[f"speedup {name} vs {base}"] = rows[f"{base} total s"] / rows[f"{name} total s"]
        rows[f"largest accuracy difference {name} vs {base}"] = max(abs(rows[f"{t} {name}"] - rows[f"{t} {base}"])
                                                                    for t in tasks)
    return dict(rows, threads=torch.get_num_threads(), device=str(torch.device("cuda" if torch.cuda.is_available()
                                                                                  else "cpu")))


STS_REFERENCE = {"STS12": 72.37, "STS13": 80.60, "STS14": 75.60, "STS15": 85.39, "STS16": 78.99, "STSB": 82.03,
                 "SICKR": 77.15}   # all-MiniLM-L6-v2, mean pooling: ../shared/data/README.md


def full_sts(data_dir=None, batch_size=64):
    """The full 7-task STS evaluation of the offline model (every pair): seconds (target < 120 s on
    2 cores) and each score beside the data README's reference figure."""
    model, tokenizer = models.load("offline")
    t0 = time.perf_counter()
    scores = sts.evaluate(encode.embedder(model, tokenizer, "mean", batch_size=batch_size), data_dir)
    seconds = time.perf_counter() - t0
    return dict(seconds=round(seconds, 1), threads=torch.get_num_threads(), target_met=seconds < 120,
                scores={k: round(v, 2) for k, v in scores.items()},
                matches_reference=all(abs(scores[k] - v) < 0.005 for k, v in STS_REFERENCE.items()))


if __name__ == "__main__":  # python tools/bench.py entries | sts | transfer
    if sys.argv[1:] == ["entries"]:
        print(json.dumps(run_isolated("entry_embeddings_throughput", dataset="a"), indent=1))
    elif sys.argv[1:] == ["sts"]:
        print(json.dumps(full_sts(), indent=1))
    elif sys.argv[1:2] == ["transfer"]:   # transfer [baseline classifier] [other classifiers ...]
        print(json.dumps(transfer_classifiers(classifiers=tuple(sys.argv[2:]) or ("senteval_torch", "batched")), indent=1))
    else:
        sys.exit("usage: python tools/bench.py entries | sts | transfer [classifier ...] "
                 "(the first named is the baseline; default: senteval_torch batched)")
