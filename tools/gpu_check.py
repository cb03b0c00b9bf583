"""GPU self-check: how fast this machine trains and encodes, and whether each plan's estimate holds.

    python tools/gpu_check.py                       # on a CUDA machine: about 8 min + the notebooks
    python tools/gpu_check.py --budget-s 300        # the notebooks stop when 300 s are spent
    python tools/gpu_check.py --parts none          # the notebooks alone (--parts encode,defsent,...)
    python tools/gpu_check.py --reduced             # CPU, tiny model, a few steps (the tests run it)

One table, printed and written as JSON with --out DIR:
- DefSent and GaussCSE training at the papers' batch 16 with a full-size BERT-base architecture
  (the hub's bert-base-uncased when it is in the local cache, else random weights, and the table
  says so), a fixed number of steps: steps/s of train.train on batches tokenised before the loop
  (as the runs train), warm and cold; the plan's estimate (plans.measure, what every plan prints)
  beside the measured time of the same steps; on a GPU (or with --compile) the step with the
  encoder under torch.compile (reduce-overhead, what a long run uses; --compile-modes for others),
  after a pass that compiles (about 130 s a model on an H100), and the run length past which it
  pays.
- K = 1, 2, 4, 8 trainings at once on one device, each a process (as `launch --per-gpu K` runs
  them): their steps/s all together against one alone.
- Encoding all distinct STS sentences with the offline model, mean pooling, fp32: ours against
  sentence-transformers at batch 64 on the same device (and the smallest cosine between them),
  and the seconds of ours spent tokenising on the host.
- Every notebook run as a script at the smoke scale, in order, sharing one cache, until the
  budget is spent: seconds each (the rest are listed as not run).

The benchmarks notebook 90 shows (each against a named baseline, a process of its own where memory
counts: run_isolated) and three longer ones outside it:

    python tools/gpu_check.py --bench entries       # entry embeddings of DefSent+ dataset a
    python tools/gpu_check.py --bench sts           # the full 7-task STS of the offline model
    python tools/gpu_check.py --bench transfer [baseline classifier] [other classifiers ...]
"""

import argparse
import json
import math
import multiprocessing
import os
import resource
import subprocess
import sys
import tempfile
import time
import traceback
from pathlib import Path
from unittest import mock

import numpy as np
import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from defsent_lite import defsent, encode, forward, gausscse, train  # noqa: E402
from defsent_lite.data import dictionary, entries, nli_readers  # noqa: E402
from defsent_lite.defsentplus import build_entry_embeddings  # noqa: E402
from defsent_lite.evaluation import senteval, sts  # noqa: E402
from defsent_lite.pooling import pool  # noqa: E402
from defsent_lite.repro import plans  # noqa: E402
from defsent_lite.runtime import config, defsent_model, models, speed  # noqa: E402

TINY = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)


def bert_base_folder(folder, reduced):
    """A folder holding bert-base-uncased from the local hub cache, else BERT-base's architecture
    with random weights and the offline model's tokenizer (the same uncased WordPiece vocabulary);
    reduced: a tiny BERT. Returns (folder, what it holds)."""
    from transformers import BertConfig, BertForMaskedLM

    _, tokenizer = models.load("offline", device="cpu")
    if not reduced:
        try:
            model = BertForMaskedLM.from_pretrained("bert-base-uncased", local_files_only=True)
            what = "bert-base-uncased (hub cache)"
        except OSError:
            model, what = None, "BERT-base architecture, random weights (no hub checkpoint here)"
    if reduced or model is None:
        config = BertConfig(vocab_size=tokenizer.vocab_size, **(TINY if reduced else {}))
        torch.manual_seed(0)
        model = BertForMaskedLM(config)
        what = "tiny BERT, random weights (reduced mode)" if reduced else what
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder), what


def on_gpu():
    """Whether the package runs on a GPU here (DEFSENT_DEVICE decides, as everywhere)."""
    return config.device().type == "cuda"


def sync():
    if on_gpu():
        torch.cuda.synchronize()


def timed_training(model, loss_fn, batches, params=None, optimizer="adamw"):
    """Seconds of train.train over `batches` (lr tiny: the timing, not the weights, matters)."""
    sync()
    t0 = time.perf_counter()
    train.train(
        model,
        loss_fn,
        batches,
        train.Settings(lr=1e-12, optimizer=optimizer),
        params=params,
        progress=False,
    )
    sync()
    return time.perf_counter() - t0


def training_rows(
    method,
    model,
    loss_fn,
    prepare,
    batches,
    params,
    optimizer,
    tokenizer,
    texts,
    compiled=False,
    modes=("reduce-overhead",),
    head=None,
):
    """steps/s of the loop on batches tokenised before it (prepare(batches), as the package's runs
    train; tokenising in the loop instead gained 0.99-1.04x on a GPU: docs/speed.md), timed after
    one untimed pass over the same batches (every padded shape seen once: allocator and kernels
    warm) and on that first pass; the plan's estimate beside the warm time, its warm-up steps
    through a spread of the batches (plans.spread_batches: tokenizer, texts(batch) -> its
    sentences), as every plan's. compiled: also the loop with the encoder compiled (compiled_row)
    in each torch.compile mode of `modes`, last. head: DefSent's kind of head (not timed)."""
    steps, prepared = len(batches), prepare(batches)
    cold = timed_training(model, loss_fn, prepared, params, optimizer)
    warm = timed_training(model, loss_fn, prepared, params, optimizer)
    step_s, _ = plans.measure(
        model, loss_fn, plans.spread_batches(tokenizer, batches, texts), lambda m: None, 0
    )
    runs = (prepared, warm, "tokenised before the loop")
    compiled = (
        [compiled_row(method, model, loss_fn, runs, params, optimizer, mode) for mode in modes]
        if compiled
        else []
    )
    return [
        dict(what=f"{method} training, batch 16", measure="steps/s", value=steps / warm),
        dict(
            what=f"{method} training, first pass (cold)",
            measure="steps/s",
            value=steps / cold,
            baseline=steps / warm,
            ratio=warm / cold,
            baseline_is="the same loop, warm (every shape seen once)",
        ),
        dict(
            what=f"{method} plan for {steps} steps",
            measure="s",
            value=warm,
            baseline=steps * step_s,
            ratio=steps * step_s / warm,
            baseline_is="the plan's estimate (plans.measure warm-up x steps) vs the warm loop",
        ),
    ] + compiled


def compiled_row(method, model, loss_fn, runs, params, optimizer, mode="default"):
    """The compiled step (runtime/speed.training: a run past the break-even on a GPU): the model's
    encoder (the module every loss calls through forward.hidden_states) under torch.compile with
    dynamic shapes,
    steps/s after one untimed pass that compiles, against the eager loop; the compiling pass's
    seconds beside. A torch that cannot compile here gives a row saying why. mode: torch.compile's
    ("reduce-overhead": CUDA graphs, one recorded per padded shape)."""
    batches, eager_s, how = runs
    steps = len(batches)
    what = f"{method} training, batch 16, {how}, encoder compiled (torch.compile, dynamic, mode {mode})"
    try:
        with speed.compiled_encoders(model, mode):  # what speed.training(model, mode) gives a run
            first = timed_training(model, loss_fn, batches, params, optimizer)
            warm = timed_training(model, loss_fn, batches, params, optimizer)
    except Exception as e:  # no compiler, an unsupported op: the rest of the check goes on
        return dict(
            what=what,
            measure="steps/s",
            value=None,
            note=f"not measured: {type(e).__name__}: {str(e)[:150]}",
        )
    finally:
        torch._dynamo.reset()
    pays = (first - warm) * steps / (eager_s - warm) if eager_s > warm else math.inf  # steps
    return dict(
        what=what,
        measure="steps/s",
        value=steps / warm,
        baseline=steps / eager_s,
        ratio=eager_s / warm,
        break_even_steps=pays,
        baseline_is=f"train.train eager, {how}; the compiling pass took {first:.1f} s: "
        f"compiling pays past {pays:,.0f} steps (speed.BREAK_EVEN_STEPS: {speed.BREAK_EVEN_STEPS})",
    )


def defsent_setup(steps, batch_size=16, reduced=False, model="bert-base-uncased"):
    """DefSent's training as the package's runs do it: training_rows' arguments. reduced: Oxford's
    offline definitions alone, split by the offline model's tokenizer (the tiny BERT's vocabulary):
    no WordNet to read (about 20 s) in each process the packing rows start."""
    loaded = defsent_model.load(model)
    tok, pooling = loaded.tokenizer, "cls"
    splits, _ = (
        dictionary.defsent_dataset(models.load_tokenizer("offline"), use_wordnet=False)
        if reduced
        else dictionary.defsent_dataset(tok)
    )

    def loss_fn(m, b):  # raw triples or TokenizedDefinitions (what defsent_protocol trains on)
        return defsent.loss(
            m, loaded.head, defsent.collate(tok, b, pooling=pooling), pooling, tok.mask_token_id
        )

    return dict(
        method="DefSent",
        model=loaded.model,
        loss_fn=loss_fn,
        optimizer="adam",
        tokenizer=tok,
        prepare=lambda bs: defsent.tokenize_definition_batches(tok, bs, pooling=pooling),
        batches=train.batched(splits["train"][: steps * batch_size], batch_size, seed=0),
        params=defsent.trainable_parameters(loaded.model),
        texts=lambda b: [d for _, d, _ in b],
        head=loaded.head_kind,
    )


def gausscse_setup(
    steps,
    batch_size=16,
    reduced=False,
    setting="ent+con+rev",
    max_length=64,
    model="bert-base-uncased",
):
    encoder, tok = models.load(model, eval_mode=False)
    triplets = nli_readers.training_triplets(source=nli_readers.train_source("smoke"))

    def loss_fn(m, b):  # raw triplets or TokenizedTriplets (what gausscse_protocol trains on)
        return gausscse.triplet_loss(m, tok, b, setting, "sum", max_length)

    return dict(
        method="GaussCSE",
        model=gausscse.GaussModel(encoder).to(next(encoder.parameters()).device),
        loss_fn=loss_fn,
        prepare=lambda bs: gausscse.tokenize_triplet_batches(tok, bs, max_length),
        batches=train.batched(triplets[: steps * batch_size], batch_size, seed=0),
        params=None,
        optimizer="adamw",
        tokenizer=tok,
        texts=lambda b: [s for t in b for s in t],
    )


SETUPS = dict(defsent=defsent_setup, gausscse=gausscse_setup)


def packing_rows(steps, reduced=False):
    """K trainings at once on one device (1, 2, 4, 8; reduced: DefSent's 1 and 2), each a process
    of its own, as the launcher's --per-gpu K runs them: their steps/s all together against one
    alone, timed the same way (all start together after an untimed pass)."""
    rows, counts = [], (1, 2) if reduced else (1, 2, 4, 8)
    for method in ["defsent"] if reduced else SETUPS:
        rates = {k: packed_rate(method, steps, k, reduced) for k in counts}  # rates[1]: one alone
        rows += [
            dict(
                what=f"{dict(defsent='DefSent', gausscse='GaussCSE')[method]} training, batch 16, {k} at once "
                "on one device",
                value=rate,
                measure="steps/s, all together",
                baseline=rates[1],
                ratio=rate / rates[1],
                baseline_is="one alone, timed the same way (launch --per-gpu K runs K a GPU)",
            )
            for k, rate in rates.items()
        ]
    return rows


def packed_rate(method, steps, k, reduced):
    """Steps/s of k one_training processes started together: k * steps over the first start to the
    last end."""
    with tempfile.TemporaryDirectory(prefix="gpu_check_barrier_") as barrier:
        command = [
            sys.executable,
            __file__,
            "--one-training",
            method,
            "--steps",
            str(steps),
            "--out",
            barrier,
            "--together",
            str(k),
        ] + (["--reduced"] if reduced else [])
        procs = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(k)]
        outs = [p.communicate(timeout=1800)[0] for p in procs]
    if any(p.returncode for p in procs):
        raise RuntimeError(
            f"{method}, {k} at once: a training process failed (exit codes {[p.returncode for p in procs]})"
        )
    spans = [json.loads(out.strip().splitlines()[-1]) for out in outs]
    return k * steps / (max(end for _, end in spans) - min(start for start, _ in spans))


def one_training(method, steps, barrier, together, reduced):
    """packed_rate's process: its training built, one untimed pass, then (once `together` are
    ready) the timed pass; prints [start, end]."""
    torch.set_num_threads(max(1, (os.cpu_count() or 1) // together))  # as the launcher's jobs
    setup = SETUPS[method](steps, reduced=reduced)
    args = (
        setup["model"],
        setup["loss_fn"],
        setup["prepare"](setup["batches"]),
        setup["params"],
        setup["optimizer"],
    )
    timed_training(*args)
    Path(barrier, str(os.getpid())).touch()
    deadline = time.time() + 600
    while len(list(Path(barrier).iterdir())) < together:
        if time.time() > deadline:  # a sibling died before its pass: no simultaneous timing to give
            sys.exit(f"{method}: {together} trainings never stood ready together within 600 s")
        time.sleep(0.01)
    start = time.time()
    timed_training(*args)
    print(json.dumps([start, time.time()]), flush=True)


def encoding_rows(max_sentences=None, batch_size=64):
    sentences = sorted({s for s1, s2, _ in sts.load_tasks().values() for s in s1 + s2})
    if max_sentences:
        sentences = sentences[:max_sentences]
    device = config.device()
    r = encode_vs_sentence_transformers(
        models.offline_model_path(), sentences, batch_size, repeats=2, device=device
    )
    _, tok = models.load(models.offline_model_path(), device="cpu")
    t0 = time.perf_counter()
    forward.tokenize_sorted(tok, sentences, 256)
    tokenise_s = time.perf_counter() - t0
    return [
        dict(
            what=f"encode {r['sentences']:,} STS sentences, MiniLM, mean, fp32",
            measure="sentences/s",
            value=r["sentences"] / r["ours_s"],
            baseline=r["sentences"] / r["st_s"],
            ratio=r["speedup"],
            min_cosine=r["min_cosine"],
            baseline_is=f"sentence-transformers, batch {batch_size}; min cosine {r['min_cosine']:.6f}",
        ),
        dict(
            what=f"tokenise the {r['sentences']:,} sentences (host, part of the encode)",
            measure="s",
            value=tokenise_s,
            baseline=r["ours_s"],
            ratio=tokenise_s / r["ours_s"],
            baseline_is="our whole encode (ratio: its share)",
        ),
    ]


# ---------------------------------------------------------------- benchmarks (notebook 90, --bench)


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
    cosine. On a GPU our batches are sized by tokens (forward.length_batches), at least batch_size."""
    from sentence_transformers import SentenceTransformer

    ours_model, tok = models.load(model_path, device=device)
    st = SentenceTransformer(str(model_path), device=device)
    run_ours = lambda: encode.encode(
        ours_model,
        tok,
        sentences,
        pooling="mean",
        batch_size=batch_size,  # noqa: E731
        max_length=st.max_seq_length,
        progress=False,
    ).numpy()
    run_st = lambda: st.encode(
        sentences,
        batch_size=batch_size,
        convert_to_numpy=True,  # noqa: E731
        show_progress_bar=False,
    )
    t_ours, t_st = float("inf"), float("inf")
    if device != "cpu":  # warm-up on a GPU (kernels, allocator) before any timing
        run_ours(), run_st()
    for _ in range(repeats):  # interleave so both see the same machine state
        t, ours = best_time(run_ours, 1)
        t_ours = min(t_ours, t)
        t, ref = best_time(run_st, 1)
        t_st = min(t_st, t)
    cos = (ours * ref).sum(1) / np.linalg.norm(ours, axis=1) / np.linalg.norm(ref, axis=1)
    return dict(
        sentences=len(sentences),
        threads=torch.get_num_threads(),
        batch_size=batch_size,
        ours_s=t_ours,
        st_s=t_st,
        speedup=t_st / t_ours,
        min_cosine=float(cos.min()),
    )


def defsent_training_throughput(model_name="offline", batch_size=16, steps=40):
    """Definitions per second of DefSent training (forward, backward, Adam step, batches tokenised
    before the loop as the runs train) and the size of the only vocabulary-wide tensor, the
    [batch, vocab] logits."""
    s = defsent_setup(steps, batch_size, model=model_name)
    seconds = timed_training(
        s["model"], s["loss_fn"], s["prepare"](s["batches"]), s["params"], "adam"
    )
    return dict(
        head=s["head"],
        batch_size=batch_size,
        steps=len(s["batches"]),
        seconds=seconds,
        definitions_per_s=sum(map(len, s["batches"])) / seconds,
        logits_mib=batch_size * s["model"].config.vocab_size * 4 / 2**20,
    )


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
    ctx.set_forkserver_preload(["gpu_check", "transformers.models.bert.modeling_bert"])
    receive, send = ctx.Pipe(duplex=False)
    process = ctx.Process(target=measured, args=(name, kwargs, send))
    process.start()
    send.close()
    try:
        result = receive.recv()
    except EOFError:  # the process died before it could answer
        result = None
    process.join()
    if not isinstance(result, dict):
        raise RuntimeError(
            f"benchmark {name} failed in its own process (exit code {process.exitcode})"
            + (f":\n{result}" if result else "")
        )
    return result


def entry_embeddings_throughput(dataset="a", max_definitions=None, pooling="mean", batch_size=128):
    """Definitions per second of build_entry_embeddings (streaming, length-sorted, dynamic padding)
    on DefSent+ dataset `dataset` (its first max_definitions definitions when given)."""
    model_name = "offline"
    model, tok = models.load(model_name)
    ds = entries.load_entry_dataset(dataset)
    ids, defs = ds["ids"], ds["definitions"]
    if max_definitions:  # the first definitions, their entries renumbered 0..n-1
        ids, defs = (
            torch.unique(torch.tensor(ids[:max_definitions]), return_inverse=True)[1].tolist(),
            defs[:max_definitions],
        )
    t0 = time.perf_counter()
    space = build_entry_embeddings(
        model, tok, ids, defs, pooling, batch_size=batch_size, progress=False
    )
    seconds = time.perf_counter() - t0
    return dict(
        model=model_name,
        dataset=dataset,
        definitions=len(defs),
        entries=int(space.shape[0]),
        seconds=seconds,
        definitions_per_s=len(defs) / seconds,
        space_mib=space.numel() * 4 / 2**20,
    )


def entry_embeddings_fixed_padding(
    dataset="a", max_definitions=2000, pooling="mean", batch_size=128, max_length=128
):
    """Baseline: every definition padded to max_length, in file order, all vectors kept, then
    averaged per entry with a Python loop (what the streaming builder avoids)."""
    model, tok = models.load("offline")
    ds = entries.load_entry_dataset(dataset)
    ids, defs = ds["ids"][:max_definitions], ds["definitions"][:max_definitions]
    t0 = time.perf_counter()
    vecs = []
    with torch.inference_mode():
        for s in range(0, len(defs), batch_size):
            b = tok(
                defs[s : s + batch_size],
                padding="max_length",
                truncation=True,
                max_length=max_length,
                return_tensors="pt",
            )
            b = forward.on_model_device(model, b)
            vecs.append(pool(pooling, model(**b).last_hidden_state, b["attention_mask"]).cpu())
    vecs = torch.cat(vecs)
    space = torch.stack(
        [vecs[[i for i, e in enumerate(ids) if e == entry]].mean(0) for entry in sorted(set(ids))]
    )
    seconds = time.perf_counter() - t0
    return dict(
        definitions=len(defs),
        entries=int(space.shape[0]),
        seconds=seconds,
        definitions_per_s=len(defs) / seconds,
    )


def gausscse_training_throughput(batch_size=16, steps=20, setting="ent+con+rev"):
    """GaussCSE training steps per second (3 x batch sentences forward + backward + AdamW step)."""
    s = gausscse_setup(steps, batch_size, setting=setting, model="offline")
    seconds = timed_training(s["model"], s["loss_fn"], s["prepare"](s["batches"]), None, "adamw")
    n = len(s["batches"])
    return dict(
        batch_size=batch_size,
        steps=n,
        seconds=seconds,
        steps_per_s=n / seconds,
        triplets_per_s=n * batch_size / seconds,
    )


def similarity_matrix_cost(sizes=(16, 64, 256), dims=(384, 768, 1024), repeats=5):
    """Seconds for the [B, B] sim(a||b) matrix: broadcasting [B,1,d] against [1,B,d] (baseline)
    vs the matrix-product form (kl_matrix), and their max difference."""
    rows = []
    g = torch.Generator().manual_seed(0)
    for B in sizes:
        for d in dims:
            mu, var = torch.randn(B, d, generator=g), torch.rand(B, d, generator=g) + 0.1
            t_b, ref = best_time(
                lambda: gausscse.kl_similarity(mu[:, None], var[:, None], mu[None], var[None]),
                repeats,
            )
            t_m, out = best_time(lambda: gausscse.similarity_matrix(mu, var, mu, var), repeats)
            rows.append(
                dict(
                    B=B,
                    d=d,
                    broadcast_ms=1e3 * t_b,
                    matmul_ms=1e3 * t_m,
                    speedup=t_b / t_m,
                    max_abs_diff=float((ref - out).abs().max()),
                )
            )
    return rows


def memoised(embed):
    """An embed function that encodes each distinct sentence once and then serves it from memory,
    so that timed classifier runs leave encoding out."""
    vectors = {}

    def cached(sentences):
        todo = [s for s in dict.fromkeys(sentences) if s not in vectors]
        if todo:
            vectors.update(zip(todo, np.asarray(embed(todo), dtype=np.float32)))
        return (
            np.stack([vectors[s] for s in sentences]) if sentences else np.zeros((0, 0), np.float32)
        )

    return cached


def transfer_classifiers(
    model_name="offline",
    pooling="mean",
    tasks=None,
    data_dir=None,
    classifiers=("senteval_torch", "batched"),
    kfold=10,
    inner_search=True,
    max_examples=None,
    max_eval=None,
    batch_size=64,
):
    """Accuracy and classifier time of each SentEval classifier per task, on the same embeddings
    (encoded once, before any timing); ratios against the first classifier named."""
    model, tokenizer = models.load(model_name)
    embed = memoised(
        encode.embedder(model, tokenizer, pooling, batch_size=batch_size, allow_empty=True)
    )
    tasks = tasks or senteval.TASKS
    settings = dict(
        data_dir=data_dir,
        kfold=kfold,
        inner_search=inner_search,
        max_examples=max_examples,
        max_eval=max_eval,
    )
    t0 = time.perf_counter()
    for task in tasks:  # encode everything first: a fit with C=1 on 2 folds reads every sentence
        senteval.evaluate_task(
            task, embed, **dict(settings, kfold=2, inner_search=False), classifier="batched"
        )
    rows = dict(encode_s=time.perf_counter() - t0)
    for name in classifiers:
        for task in tasks:
            t = time.perf_counter()
            rows[f"{task} {name}"] = senteval.evaluate_task(
                task, embed, **settings, classifier=name
            )
            rows[f"{task} {name} s"] = time.perf_counter() - t
    for name in classifiers:
        rows[f"{name} total s"] = sum(rows[f"{task} {name} s"] for task in tasks)
    base = classifiers[0]  # the named baseline: ratios and accuracy differences against it
    for name in classifiers[1:]:
        rows[f"speedup {name} vs {base}"] = rows[f"{base} total s"] / rows[f"{name} total s"]
        rows[f"largest accuracy difference {name} vs {base}"] = max(
            abs(rows[f"{t} {name}"] - rows[f"{t} {base}"]) for t in tasks
        )
    return dict(
        rows,
        threads=torch.get_num_threads(),
        device=str(torch.device("cuda" if torch.cuda.is_available() else "cpu")),
    )


STS_REFERENCE = {
    "STS12": 72.37,
    "STS13": 80.60,
    "STS14": 75.60,
    "STS15": 85.39,
    "STS16": 78.99,
    "STSB": 82.03,
    "SICKR": 77.15,
}  # all-MiniLM-L6-v2, mean pooling: ../shared/data/README.md


def full_sts(data_dir=None, batch_size=64):
    """The full 7-task STS evaluation of the offline model (every pair): seconds (target < 120 s on
    2 cores) and each score beside the data README's reference figure."""
    model, tokenizer = models.load("offline")
    t0 = time.perf_counter()
    scores = sts.evaluate(
        encode.embedder(model, tokenizer, "mean", batch_size=batch_size), data_dir
    )
    seconds = time.perf_counter() - t0
    return dict(
        seconds=round(seconds, 1),
        threads=torch.get_num_threads(),
        target_met=seconds < 120,
        scores={k: round(v, 2) for k, v in scores.items()},
        matches_reference=all(abs(scores[k] - v) < 0.005 for k, v in STS_REFERENCE.items()),
    )


def profile_defsent(steps=30, batch_size=16, out=None):
    """Where a DefSent step's time goes: torch.profiler over `steps` warm steps of train.train;
    prints the top operators by host time, the host waits for the GPU, and the GPU's busy time
    against the wall time (a host-bound step: GPU busy a small part of the wall)."""
    from torch.profiler import ProfilerActivity, profile

    s = defsent_setup(2 * steps, batch_size)
    timed_training(
        s["model"], s["loss_fn"], s["batches"], s["params"], "adam"
    )  # warm: every shape once
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if on_gpu() else [])
    with profile(activities=activities) as prof:
        wall = timed_training(s["model"], s["loss_fn"], s["batches"][:steps], s["params"], "adam")
    events = prof.key_averages()
    text = events.table(sort_by="self_cpu_time_total", row_limit=25)
    waits = {
        e.key: e.count
        for e in events
        if "Synchronize" in e.key
        or "Memcpy" in e.key
        or e.key == "aten::item"
        or e.key == "aten::_local_scalar_dense"
    }
    gpu_us = sum(getattr(e, "self_device_time_total", 0) for e in events)
    summary = dict(
        steps=steps,
        wall_ms_per_step=1e3 * wall / steps,
        gpu_busy_ms_per_step=gpu_us / 1e3 / steps,
        host_waits=waits,
    )
    print(text, "\n", json.dumps(summary, indent=1), flush=True)
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "profile_defsent.txt").write_text(text + "\n" + json.dumps(summary, indent=1))
    return summary


def notebook_rows(budget_s, scale="smoke", only=None):
    """Each notebook as a script (no Jupyter needed), in order, one shared cache, until budget_s."""
    paths = sorted(
        p for p in (ROOT / "notebooks").glob("[0-9][0-9]_*.py") if not p.name.startswith("90")
    )
    if only is not None:
        paths = [p for p in paths if p.name[:2] in only]
    rows, start = [], time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="gpu_check_") as scratch:
        env = dict(
            os.environ,
            DEFSENT_SCALE=scale,
            DEFSENT_CACHE=f"{scratch}/cache",
            MPLBACKEND="Agg",
            DEFSENT_RESULTS=f"{scratch}/results",
            DEFSENT_PROGRESS="0",
            PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        )
        for p in paths:
            left = budget_s - (time.perf_counter() - start)
            if left <= 0:
                rows.append(
                    dict(
                        what=f"notebook {p.stem} ({scale})",
                        measure="s",
                        value=None,
                        note="not run: budget spent",
                    )
                )
                continue
            t0 = time.perf_counter()
            try:
                done = subprocess.run(
                    [sys.executable, p.name],
                    cwd=p.parent,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=left,
                )
                note = (
                    "ok"
                    if done.returncode == 0
                    else "FAILED: " + (done.stderr.strip().splitlines() or ["?"])[-1][:150]
                )
            except subprocess.TimeoutExpired:
                note = "stopped: budget spent"
            rows.append(
                dict(
                    what=f"notebook {p.stem} ({scale})",
                    measure="s",
                    value=time.perf_counter() - t0,
                    note=note,
                )
            )
    return rows


def table(rows):
    """The rows as a markdown table."""

    def fmt(x):
        return "" if x is None else f"{x:,.2f}" if isinstance(x, float) else str(x)

    lines = [
        "| what | measure | value | baseline | ratio | baseline is / note |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['what']} | {r['measure']} | {fmt(r.get('value'))} | {fmt(r.get('baseline'))} | "
            f"{fmt(r.get('ratio'))} | {r.get('baseline_is') or r.get('note', '')} |"
        )
    return "\n".join(lines)


PARTS = ("encode", "defsent", "gausscse", "packing")


def save(out, header, rows):
    """gpu_check.json and gpu_check.md in `out` (after each part: a run cut short keeps its rows)."""
    if out:
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "gpu_check.json").write_text(
            json.dumps(dict(header=header, rows=rows), indent=1)
        )
        (Path(out) / "gpu_check.md").write_text(json.dumps(header) + "\n\n" + table(rows) + "\n")


def run(
    reduced=False,
    steps=None,
    budget_s=300.0,
    notebooks=None,
    out=None,
    compiled=None,
    modes=("reduce-overhead",),
    parts=PARTS,
):
    """The parts of the check (PARTS), then the notebooks; returns (header dict, rows). notebooks:
    NN to run (None: all but 90; reduced mode runs none unless named). compiled: time the
    compiled training step too (None: on a GPU only; compiling on a CPU takes minutes)."""
    unknown = set(parts) - set(PARTS)
    if unknown:
        raise ValueError(f"parts {sorted(unknown)}: choose from {PARTS}")
    compiled = on_gpu() if compiled is None else compiled
    steps = steps or (4 if reduced else 200)
    with tempfile.TemporaryDirectory(prefix="gpu_check_model_") as folder:
        folder, what = bert_base_folder(folder, reduced)
        header = dict(
            date=time.strftime("%Y-%m-%d"),
            device=plans.device_name(config.device()),
            torch=torch.__version__,
            model=what,
            steps=steps,
        )
        print(json.dumps(header), flush=True)
        rows, runs = (
            [],
            dict(
                encode=lambda: encoding_rows(256 if reduced else None),
                packing=lambda: packing_rows(steps, reduced),
            ),
        )
        with mock.patch.dict(
            os.environ, DEFSENT_MODEL_FOLDERS=json.dumps({"bert-base-uncased": folder})
        ):
            for part in [p for p in PARTS if p in parts]:
                new = (
                    runs[part]()
                    if part in runs
                    else training_rows(
                        **SETUPS[part](steps, reduced=reduced), compiled=compiled, modes=modes
                    )
                )
                rows += new
                print(table(new), flush=True)
                save(out, header, rows)
    if notebooks is None and reduced:
        notebooks = []
    if notebooks != []:  # None: all
        rows += notebook_rows(budget_s, only=notebooks)
    print(f"\n{json.dumps(header)}\n{table(rows)}", flush=True)
    save(out, header, rows)
    return header, rows


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--reduced",
        action="store_true",
        help="tiny model, a few steps, no notebooks (CPU; the tests)",
    )
    ap.add_argument(
        "--steps", type=int, help="training steps timed per loop (default 200; reduced 4)"
    )
    ap.add_argument(
        "--budget-s", type=float, default=300.0, help="seconds for the notebooks (default 300)"
    )
    ap.add_argument(
        "--notebooks", help="comma-separated NN to run (default all but 90; 'none': none)"
    )
    ap.add_argument("--out", help="folder for gpu_check.json and gpu_check.md")
    ap.add_argument(
        "--parts",
        default=",".join(PARTS),
        help=f"comma-separated parts before the notebooks (default {','.join(PARTS)}; 'none': none)",
    )
    ap.add_argument(
        "--profile", action="store_true", help="only profile DefSent steps (torch.profiler)"
    )
    ap.add_argument(
        "--compile",
        dest="compiled",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="time the training step with the encoder compiled too (default: on a GPU only)",
    )
    ap.add_argument(
        "--compile-modes",
        default="reduce-overhead",
        help="comma-separated torch.compile modes timed (default: reduce-overhead, what DEFSENT_COMPILE=1 "
        "runs; e.g. default,reduce-overhead)",
    )
    ap.add_argument(
        "--bench",
        nargs="+",
        metavar="NAME",
        help="only a benchmark: entries | sts | transfer [baseline classifier] [other classifiers ...]",
    )
    ap.add_argument(
        "--one-training", choices=tuple(SETUPS), help=argparse.SUPPRESS
    )  # packed_rate's processes
    ap.add_argument("--together", type=int, default=1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.bench:
        name, *classifiers = a.bench
        benchmarks = dict(
            entries=lambda: run_isolated("entry_embeddings_throughput", dataset="a"),
            sts=full_sts,
            transfer=lambda: transfer_classifiers(
                classifiers=tuple(classifiers) or ("senteval_torch", "batched")
            ),
        )
        if name not in benchmarks:
            ap.error(f"--bench {name}: choose from {', '.join(benchmarks)}")
        print(json.dumps(benchmarks[name](), indent=1))
        sys.exit(0)
    if a.one_training:
        one_training(a.one_training, a.steps, a.out, a.together, a.reduced)
        sys.exit(0)
    if a.profile:
        with tempfile.TemporaryDirectory(prefix="gpu_check_model_") as folder:
            os.environ["DEFSENT_MODEL_FOLDERS"] = json.dumps(
                {"bert-base-uncased": bert_base_folder(folder, a.reduced)[0]}
            )
            profile_defsent(a.steps or 30, out=a.out)
        sys.exit(0)
    nbs = None if a.notebooks is None else [] if a.notebooks == "none" else a.notebooks.split(",")
    parts = () if a.parts == "none" else tuple(a.parts.split(","))
    run(
        a.reduced,
        a.steps,
        a.budget_s,
        nbs,
        a.out,
        a.compiled,
        tuple(a.compile_modes.split(",")),
        parts,
    )
