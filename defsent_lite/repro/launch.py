"""A notebook's protocol on many GPUs: its independent trainings listed with their cache keys, and
run through submitit (SLURM job arrays, or its local executor with one GPU per job or K: --per-gpu)
into the shared run cache, where the notebook then finds them and trains nothing.

    python -m defsent_lite.repro.launch --help     (the scales, the cluster options, examples)

Each job runs its share of the trainings one after another through the very functions the notebook
calls (defsent_scores.seed_run, gausscse_protocol.run), so every result lands under the key the
notebook looks up. The cache makes many writers safe: an entry is written whole by a rename, a
writer's files live in a folder of its own, a killed writer leaves no result.json (so nothing reads
as done) and its folder is removed by the next writer; relaunching runs only what is missing. A
training saves its state beside the run's folders every --save-every-min (10) and, on SIGTERM or
the time-out signal, after the step under way (Work); a preempted task is requeued by SLURM, one out
of time by submitit (--requeues), and goes on from there. --status asks SLURM (squeue; sacct or
scontrol for a task gone) how each training stands.
"""

import argparse
import contextlib
import getpass
import json
import os
import pkgutil
import re
import subprocess
import sys
import time
import traceback
from typing import NamedTuple

from defsent_lite.runtime import cache, config

DEFSENT_NOTEBOOKS, GAUSSCSE_NOTEBOOKS, PST_NOTEBOOKS = (
    ("10", "11", "12", "13"),
    ("30", "31", "32", "33"),
    ("21", "22", "23", "24", "25"),
)
COMPARISON_NOTEBOOKS = ("40",)
NOTEBOOKS = DEFSENT_NOTEBOOKS + PST_NOTEBOOKS + GAUSSCSE_NOTEBOOKS + COMPARISON_NOTEBOOKS
# GPU time of a run: its steps at the host-bound step measured on an H100 with BERT-base
# (plans.STEP_FLOOR_S); a large model about three times that (one H200, issue 49's measurements).
LARGE_FACTOR = 3.0


class Training(NamedTuple):
    """One independent training of a notebook's protocol."""

    notebook: str
    method: str  # DefSent, DefSent+ (PST), GaussCSE
    settings: dict  # what tells it apart: model, pooling or setting, seed, lr, batch size
    steps: int  # optimizer steps
    key: str = None  # its cache key (cache.config_key); None without the data to compute it
    todo: bool = None  # still to train (None: unknown without the data)
    call: tuple = None  # (module:function, kwargs) a worker runs; None: not launchable
    waits_for: str = ""  # why it cannot be launched now

    @property
    def gpu_hours(self):
        factor = LARGE_FACTOR if "large" in str(self.settings.get("model", "")) else 1.0
        from defsent_lite.repro import plans

        floor = plans.STEP_FLOOR_S["gausscse" if self.method == "GaussCSE" else "defsent"]
        return self.steps * floor * factor / 3600


# ---------------------------------------------------------------- what a notebook trains


def distinct(listed):
    """Each training once: one that several notebooks read (10 and 11, 30 and 31) is planned,
    counted, submitted and reported once, under the first notebook that lists it."""
    seen, out = set(), []
    for t in listed:
        name = t.key or (t.method, json.dumps(t.settings, sort_keys=True, default=str), t.steps)
        if name not in seen:
            seen.add(name)
            out.append(t)
    return out


def listing(notebooks, scale=None, data_dir=None, model=None, variant="official", log=print):
    """The distinct trainings of `notebooks` (trainings of each, each training once)."""
    return distinct(
        [t for nb in notebooks for t in trainings(nb, scale, data_dir, model, variant, log)]
    )


def trainings(notebook, scale=None, data_dir=None, model=None, variant="official", log=print):
    """The independent trainings notebook `notebook` needs at `scale`, with the notebook's defaults
    (its scale's model, every pooling or loss setting and seed). Without the data here, the runs
    are counted from the papers' published sizes and their keys are unknown."""
    from defsent_lite.repro import preflight

    notebook = str(notebook)
    if notebook not in NOTEBOOKS:
        raise ValueError(
            f"notebook {notebook!r}: the launcher knows the trainings of {', '.join(NOTEBOOKS)}"
        )
    settings, given = config.scale(scale), model
    model = model or settings["model"]
    try:
        preflight.check(notebook, settings["name"], data_dir, [model], log=lambda *a: None)
        missing = None
    except preflight.PreflightFailed as e:
        missing = "; ".join(
            line.strip(" -") for line in str(e).splitlines()[1:] if line.startswith("  - ")
        )
        log(
            f"notebook {notebook} at {settings['name']} scale, not here: {missing}: its runs are "
            "counted from "
            "the papers' published sizes and their cache keys are unknown"
        )
    if notebook in PST_NOTEBOOKS:
        return pst_trainings(notebook, settings, given, variant)
    if notebook in DEFSENT_NOTEBOOKS:
        out = defsent_trainings(notebook, settings, model, variant, data_dir, missing)
    elif notebook in COMPARISON_NOTEBOOKS:
        out = comparison_trainings(notebook, dict(settings, model=model), data_dir, missing)
    else:
        out = gausscse_trainings(notebook, settings, model, variant, data_dir, missing)
    broken = [p for p in (missing or "").split("; ") if p.startswith("model ")]  # --status: failed
    return [t._replace(waits_for="; ".join(broken)) for t in out] if broken else out


def defsent_trainings(notebook, scale, model, variant, data_dir, missing):
    """defsent_scores.final_runs over the three poolings: the rate search's runs (first seed), then
    every seed at the chosen rate (one pinned rate: no search, every seed at once), a later seed
    scored and its checkpoint dropped."""
    from defsent_lite.repro import defsent_protocol as dp, defsent_scores

    base = defsent_scores.base_config(scale, model, data_dir, variant)
    dataset = None if missing else dp.dataset_of(base, data_dir)
    steps, out = dp.run_steps(base, dataset), []
    for pooling in ("cls", "mean", "max"):
        rates, seeds = dp.learning_rates(scale["defsent_lr_xs"], model, pooling), scale["seeds"]
        searched = len(rates) > 1
        for lr in rates if searched else []:
            cfg = dict(base, pooling=pooling, seed=seeds[0], lr=lr)
            call = dict(cfg=cfg, data_dir=data_dir, need_checkpoint=False)
            out.append(defsent_training(notebook, cfg, steps, dataset, "run", call))
        best = dp.searched_rate(base, pooling, seeds[0], rates, dataset) if searched else rates[0]
        # pinned: every seed at once; searched: the best rate's run is the first seed's, the later
        # seeds wait until every rate's run is cached
        indexed = list(enumerate(seeds))[1 if searched else 0 :] if best is not None else []
        for index, seed in indexed:
            cfg = defsent_scores.seed_config(base, pooling, seed, best, index)
            call = dict(
                base=base, pooling=pooling, seed=seed, lr=best, index=index, data_dir=data_dir
            )
            out.append(defsent_training(notebook, cfg, steps, dataset, "seed_run", call))
        if searched and best is None:
            out += [
                Training(
                    notebook,
                    "DefSent",
                    dict(model=model, pooling=pooling, seed=s),
                    steps,
                    waits_for=f"the {pooling} rate search",
                )
                for s in seeds[1:]
            ]
    return out


def defsent_training(notebook, cfg, steps, dataset, function, kwargs):
    from defsent_lite.repro import defsent_protocol, defsent_scores

    shown = dict(
        model=cfg["model"],
        pooling=cfg["pooling"],
        seed=cfg["seed"],
        lr=cfg["lr"],
        batch=cfg["batch_size"],
    )
    if dataset is None:
        return Training(notebook, "DefSent", shown, steps)
    key = cache.config_key(defsent_protocol.run_key(cfg, dataset[0]))
    if function == "seed_run":
        todo = defsent_scores.seed_run_needs_training(
            kwargs["base"], cfg["pooling"], cfg["seed"], cfg["lr"], kwargs["index"], dataset
        )
    else:
        todo = defsent_protocol.needs_training(cfg, dataset[0], need_checkpoint=False)
    module = "defsent_scores" if function == "seed_run" else "defsent_protocol"
    call = (f"defsent_lite.repro.{module}:{function}", kwargs)
    return Training(notebook, "DefSent", shown, steps, key, todo, call)


def gausscse_trainings(notebook, scale, model, variant, data_dir, missing):
    """Notebooks 30-33's trainings (gausscse_protocol.notebook_runs), each one run."""
    from defsent_lite.repro import gausscse_protocol as gp

    runs = gp.notebook_runs(notebook, gp.base_config(scale, model, data_dir, variant), scale)
    n, out = gp.triplet_count(runs[0][0], data_dir, published=bool(missing)), []  # shared by all
    for cfg, keep in runs:
        shown = dict(
            model=model,
            setting=cfg["setting"],
            seed=cfg["seed"],
            lr=cfg["lr"],
            batch=cfg["batch_size"],
        )
        steps = cfg["epochs"] * int(n // cfg["batch_size"])
        call = (
            "defsent_lite.repro.gausscse_protocol:run",
            dict(cfg=cfg, data_dir=data_dir, keep_model=keep),
        )
        out.append(
            Training(notebook, "GaussCSE", shown, steps)
            if missing
            else Training(
                notebook,
                "GaussCSE",
                shown,
                steps,
                cache.config_key(gp.run_key(cfg, data_dir)),
                gp.needs_training(cfg, data_dir, keep),
                call,
            )
        )
    return out


def comparison_trainings(notebook, scale, data_dir, missing):
    """Notebook 40's: every method on every seed (comparison.run_one; PST's three trainings one
    job), after the raw encoder's scoring (no steps)."""
    from defsent_lite.repro import comparison

    setup, out = comparison.settings(scale), []
    for training, seed in comparison.jobs(setup):
        trains = {"raw": 0, "DefSent+": len(setup["rates"]["DefSent+"])}.get(training, 1)
        rate = setup["rates"].get(training, "-")
        shown = dict(model=setup["model"], training=training, seed=seed, lr=rate, batch=16)
        if missing:
            out.append(Training(notebook, "comparison", shown, trains * setup["steps"]))
            continue
        key = cache.config_key(comparison.run_key(setup, training, seed, data_dir))
        call = dict(scale=scale, training=training, seed=seed, data_dir=data_dir)
        todo = cache.lookup("compare", key) is None
        out.append(
            Training(
                notebook,
                "comparison",
                shown,
                trains * setup["steps"],
                key,
                todo,
                ("defsent_lite.repro.comparison:run_one", call),
            )
        )
    return out


def pst_configs(notebook, scale, model=None, variant="official"):
    """The PST configs DefSent+ notebook 21-25 trains (defsentplus_protocol.notebook_configs)."""
    from defsent_lite.repro import defsentplus_protocol as dsp

    return dsp.notebook_configs(notebook, scale, model, variant)


def pst_trainings(notebook, scale, model, variant):
    """A DefSent+ notebook's PST runs: steps x seeds (+ the ICA candidate's seeds at the last step)
    of each config, counted from Table 1's sizes; launched by pst_stages, a step at a time (each
    step trains against the space its previous step's best encoder builds)."""
    from defsent_lite.repro import defsentplus_protocol

    out = []
    for cfg in pst_configs(notebook, scale["name"], model, variant):
        steps = defsentplus_protocol.published_steps(cfg)
        for k, lr in enumerate(cfg["lrs"], 1):
            spaces = ["plain"] + (["ICA"] if cfg["ica"] and k == len(cfg["lrs"]) else [])
            shown = dict(
                model=cfg["model"], data=cfg["dataset"], step=k, lr=lr, batch=cfg["batch_size"]
            )
            out += [
                Training(
                    notebook,
                    "DefSent+",
                    dict(shown, space=space, seed=s),
                    steps,
                    waits_for="launched step by step (pst_stages): each needs the last's best",
                )
                for space in spaces
                for s in cfg["seeds"]
            ]
    return out


def pst_stages(notebook, cfg, data_dir):
    """A PST config as stages, one per step: a job that builds the step's space and its candidates
    (from the previous step's best encoder, cached), then a job per seed that trains it against
    every candidate (defsentplus_protocol.run_share), each marked done by its done.txt. A stage
    starts when the one before has finished. With the local executor the launching process builds
    the space itself and the seeds' jobs of every config's same step share the workers (launch)."""
    tag = pst_tag(cfg, data_dir)

    def job(step, seeds, name):
        key, call = f"{tag}-{step}-{name}", dict(cfg=cfg, data_dir=data_dir, step=step, seeds=seeds)
        shown = dict(model=cfg["model"], data=cfg["dataset"], step=step, seeds=seeds)
        todo = not marked(config.cache_dir() / "defsentplus" / key / DONE)  # done.txt: done
        return Training(
            notebook,
            "DefSent+",
            shown,
            len(seeds),
            key,
            todo,
            ("defsent_lite.repro.defsentplus_protocol:run_share", call),
        )

    steps = range(1, len(cfg["lrs"]) + 1)
    return [([job(k, [], "space")], [job(k, [s], f"seed{s}") for s in cfg["seeds"]]) for k in steps]


def pst_jobs(notebook, scale, model, variant, data_dir):
    """Every PST job of a DefSent+ notebook's configs, as --status reads them."""
    return [
        t
        for cfg in pst_configs(notebook, scale, model, variant)
        for stage in pst_stages(notebook, cfg, data_dir)
        for jobs in stage
        for t in jobs
    ]


def pst_tag(cfg, data_dir):
    """The name a PST config's jobs go by in the cache: its config, the code and the data it reads
    (a job's done.txt stands for this code on this data only)."""
    return (
        "pst-"
        + cache.config_key(
            dict(
                cfg,
                data=cache.data_identity(
                    data_dir, "dictionary", f"sts/{cfg.get('sts_files', 'senteval')}"
                ),
            )
        )[:12]
    )


# ---------------------------------------------------------------- what a worker runs


def busy_elsewhere(kind, key):
    """Whether another live writer is computing the entry `key` (its files folder, no result
    yet)."""
    parent = config.cache_dir() / kind / key
    if (parent / "result.json").exists():
        return False
    return any(f.suffix != ".lease" and not cache.writer_gone(f) for f in parent.glob("files-*"))


FAILED = "failed.txt"  # beside a run's entry: the traceback of its last failed training
SUBMITTED = "submitted.txt"  # beside it too: the SLURM task last submitted to train it
DONE = "done.txt"  # ... and when its last training ended well (a PST job: what marks it done)
KINDS = {  # cache kinds
    "DefSent": "defsent",
    "DefSent+": "defsentplus",
    "GaussCSE": "gausscse",
    "comparison": "compare",
}


def work(jobs, threads=None, standins=False, strict=False):
    """One job: run each (label, kind, key, call) in turn; a failure is recorded with its traceback
    (also in the job's log) and the others go on. Returns one record per training. standins: the
    launching process ran with stand-in models (a rehearsal scale), so this one does too. strict (a
    SLURM task): a failed training fails the job, so that no afterok chain goes on past it."""
    if standins:
        config.use_standins()
    if threads:
        import torch

        torch.set_num_threads(threads)
    records = []
    for label, kind, key, (target, kwargs) in jobs:
        start = time.time()
        try:  # the cache itself may fail (unwritable): the record says so
            if busy_elsewhere(kind, key):
                records.append(
                    dict(label, status="skipped: another writer is training it", seconds=0.0)
                )
                continue
            pkgutil.resolve_name(target)(**kwargs)  # module:function
            (config.cache_dir() / kind / key / FAILED).unlink(missing_ok=True)  # --status reads it
            note(kind, key, DONE, time.strftime(STAMP))
            records.append(dict(label, status="trained", seconds=time.time() - start))
        except Exception:
            print(f"FAILED {label}", file=sys.stderr)
            traceback.print_exc()
            with contextlib.suppress(OSError):  # an unwritable cache: the record still says why
                note(kind, key, FAILED, traceback.format_exc())
            records.append(
                dict(
                    label,
                    status="failed",
                    seconds=time.time() - start,
                    error=traceback.format_exc(),
                )
            )
    failed = [r for r in records if r["status"] == "failed"]
    if strict and failed:
        raise RuntimeError(
            f"{len(failed)} training(s) failed: {failed[0]['error'].splitlines()[-1]}"
        )
    return records


class Work:
    """work() as submitit runs it: a preempted or timed-out job is requeued (submitit calls
    checkpoint and submits the same trainings again), and each goes on from its saved state
    (train.train's resume, written every `save_every_s` and when a signal comes) or is found in the
    cache."""

    def __init__(self, save_every_s=600):
        self.save_every_s = save_every_s

    def __call__(self, *args):
        from defsent_lite import train

        train.RESUME_EVERY_S = self.save_every_s
        with saving_on_signals():
            return work(*args)

    def checkpoint(self, *args):
        import submitit

        return submitit.helpers.DelayedSubmission(self, *args)


def in_training(frame):
    """Whether a resumable train.train is under way in the interrupted frame's stack."""
    from defsent_lite import train

    while frame is not None:
        if frame.f_code is train.train.__code__ and frame.f_locals.get("resume"):
            return True
        frame = frame.f_back
    return False


@contextlib.contextmanager
def saving_on_signals():
    """While a job works, SIGTERM (a preemption, `scontrol requeue`, scancel) and submitit's
    time-out signal make a resumable training save its state after the step under way and stop
    (train.STOP); then the signal's own handler runs (submitit's requeues on the time-out signal).
    Outside a training it runs at once."""
    import signal

    import submitit

    from defsent_lite import train

    signals = (signal.SIGTERM, submitit.JobEnvironment._usr_sig())
    before, caught = {s: signal.getsignal(s) for s in signals}, []

    def pass_on(signum, frame):  # to the handler there was before, or the default action
        if callable(before[signum]):
            before[signum](signum, frame)
        elif before[signum] == signal.SIG_DFL:
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)

    def on_signal(signum, frame):
        if not in_training(frame):
            return pass_on(signum, frame)
        caught.append(signum)
        train.STOP.set()

    for s in signals:
        signal.signal(s, on_signal)
    try:
        yield
    except train.Stopped:
        print(f"{signal.Signals(caught[0]).name}: {sys.exc_info()[1]}", file=sys.stderr, flush=True)
        if callable(before[caught[0]]):  # submitit's time-out handler requeues the job and exits
            before[caught[0]](caught[0], None)
        raise SystemExit(128 + caught[0]) from None
    finally:
        for s in signals:
            signal.signal(s, before[s])
        train.STOP.clear()


# ---------------------------------------------------------------- launching


class Outcome(NamedTuple):
    """What a launch did: one record per training a job ran, the jobs' log files, and how many
    listed trainings are still not in the cache."""

    records: list
    logs: list
    missing: int = 0

    @property
    def failed(self):
        return [r for r in self.records if r["status"] == "failed"]


def shares(todo, workers):
    """Split the trainings into `workers` shares of about equal steps (longest first, each to the
    least loaded share); empty shares dropped."""
    loads, parts = [0] * workers, [[] for _ in range(workers)]
    for t in sorted(todo, key=lambda t: -t.steps):
        i = loads.index(min(loads))
        parts[i].append(t)
        loads[i] += max(t.steps, 1)
    return [p for p in parts if p]


def job_inputs(share):
    return [
        (
            dict(t.settings, notebook=t.notebook, method=t.method),
            KINDS[t.method],
            t.key,
            t.call,
        )
        for t in share
    ]


SAVE_EVERY_MIN = 10  # a training's state is saved this often (--save-every-min), and on a signal
REQUEUES = 3  # times a task out of time is requeued (--requeues; submitit's cap; preemptions free)
SHORTEST_MIN = 5  # --timeout-min: SLURM signals 90-150 s before the limit; a start takes up to 60 s


class Refused(RuntimeError):
    """SLURM or the partition cannot take the launch as asked: said in a line, nothing submitted."""


def executors(kind, workers, folder, slurm=None, timeout_min=4 * 60, gpus=None):
    """One submitit executor per job: local (job i sees GPU i % gpus: K x gpus workers run K a GPU;
    none on a CPU machine)
    or SLURM (one GPU per array task, `workers` at a time; slurm: submitit's slurm_* parameters and
    cpus_per_task, from slurm_options)."""
    import submitit

    if kind == "local":
        gpus = torch_gpus() if gpus is None else gpus
        out = []
        for i in range(workers):
            ex = submitit.LocalExecutor(folder=folder, max_num_timeout=REQUEUES)
            ex.update_parameters(
                timeout_min=timeout_min,
                gpus_per_node=1 if gpus else 0,
                visible_gpus=(i % gpus,) if gpus else (),
            )
            out.append(ex)
        return out
    if kind == "slurm":
        slurm = slurm or {}
        ex = submitit.AutoExecutor(folder=folder, cluster="slurm", slurm_max_num_timeout=REQUEUES)
        ex.update_parameters(
            timeout_min=timeout_min,
            tasks_per_node=1,
            slurm_array_parallelism=workers,
            name="defsent_lite",
            **{
                "cpus_per_task": 8,
                **({} if "slurm_gres" in slurm else {"gpus_per_node": 1}),
                **slurm,
            },
        )
        return [ex]
    raise ValueError(f"executor {kind!r}: choose local or slurm")


def slurm_options(args):
    """submitit's parameters of the cluster options given on the command line (none: its own)."""
    named = dict(
        partition=args.partition,
        account=args.account,
        qos=args.qos,
        gres=args.gres,
        mem=args.mem,
        setup=args.setup,
        additional_parameters=dict(args.sbatch),
    )
    return dict({f"slurm_{k}": v for k, v in named.items() if v}, cpus_per_task=args.cpus_per_task)


def torch_gpus():
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def start(todo, kind="local", workers=2, folder="launch_logs", slurm=None, timeout_min=4 * 60):
    """Submit the trainings as up to `workers` jobs; returns [(job, its trainings)] without
    waiting."""
    parts = [[t] for t in todo] if kind == "slurm" else shares(todo, workers)  # a task each
    exs = executors(kind, workers, folder, slurm, timeout_min)
    work = Work(SAVE_EVERY_MIN * 60)
    if kind == "local":
        threads = max(1, (os.cpu_count() or 1) // len(parts))  # the machine's cores shared
        return [
            (ex.submit(work, job_inputs(p), threads, config.standins_enabled()), p)
            for ex, p in zip(exs, parts)
        ]
    try:
        jobs = exs[0].map_array(
            work,
            [job_inputs(p) for p in parts],
            [None] * len(parts),
            [config.standins_enabled()] * len(parts),
            [True] * len(parts),  # strict: a failed training fails its task
        )
    except submitit_error() as e:  # sbatch's own words, not a traceback
        raise Refused(f"sbatch refused the tasks: {' '.join(str(e).split())[:500]}") from None
    return list(zip(jobs, parts))


def submitit_error():
    from submitit.core.utils import FailedJobError

    return FailedJobError


def offered(partition):
    """(CPUs, MB of memory) of the partition's largest node (sinfo; its default one when None), or
    None where sinfo cannot be run."""
    try:
        out = subprocess.run(
            ["sinfo", "-h", "-N", "-o", "%P %c %m"],
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    names = set((partition or "").split(","))
    nodes = [
        (int(c), int(m))
        for p, c, m in (line.split() for line in out.splitlines())
        if (p.rstrip("*") in names or (not partition and p.endswith("*")))
        and c.isdigit()
        and m.isdigit()
    ]
    if not nodes:
        raise Refused(f"partition {partition or '(the default)'}: sinfo lists no node in it")
    return max(c for c, _ in nodes), max(m for _, m in nodes)


def check_partition(slurm, log):
    """Refuse --cpus-per-task or --mem above what the partition's largest node offers, before
    anything is submitted (a task asking more waits for ever, "PartitionConfig")."""
    slurm = slurm or {}
    partition, node = slurm.get("slurm_partition"), offered(slurm.get("slurm_partition"))
    if node is None:
        return log("sinfo cannot be run here: --cpus-per-task and --mem not checked")
    where = f"partition {partition or '(the default)'}"
    if slurm.get("cpus_per_task", 8) > node[0]:
        raise Refused(
            f"--cpus-per-task {slurm.get('cpus_per_task', 8)}: the nodes of {where} "
            f"have at most {node[0]} CPUs (sinfo); ask for at most {node[0]}"
        )
    if slurm.get("slurm_mem") and megabytes(slurm["slurm_mem"]) > node[1]:
        raise Refused(
            f"--mem {slurm['slurm_mem']}: the nodes of {where} have at most "
            f"{node[1]} MB (sinfo); ask for at most {node[1]}M"
        )


def megabytes(mem):
    """SLURM's --mem as MB: a number with K, M (the default), G or T."""
    found = re.fullmatch(r"(\d+)([KMGT]?)B?", str(mem).strip().upper())
    if not found:
        raise Refused(f"--mem {mem!r}: a whole number with K, M, G or T (SLURM's form, e.g. 64G)")
    return int(found[1]) * {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024**2}[found[2]]


def reason(error):
    """A dead job's own words: the last exception line of submitit's message ("...failed during
    processing with trace:" then the traceback), else its first line (never the log's last line,
    another run's progress bar)."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    raised = [line for line in lines if re.match(r"[\w.]*(Error|Exception|Interrupt)\b.*:", line)]
    return (raised[-1] if raised else lines[0] if lines else type(error).__name__)[:300]


def collect(started):
    """Wait for the jobs; a job that died (killed, preempted, out of time) is reported with its log,
    and its trainings stay missing."""
    import submitit

    records, logs = [], []
    for job, part in started:
        logs.append(str(job.paths.stderr))
        while isinstance(job, submitit.LocalJob) and not job.done():
            time.sleep(0.05)  # a local process polled often (submitit's own wait: every second)
        try:
            records += job.result()
            print(f"job {job.job_id}: {len(part)} training(s) done", flush=True)
        except Exception as e:  # killed, out of memory, out of time: its own words, not its log's
            why = f"job {job.job_id} died: {reason(e)}"
            records += [
                dict(label, status="trained", seconds=None)  # done before the job died
                if (cache.run_dir(kind, key) / "result.json").exists()
                else dict(label, status="failed", error=why, log=logs[-1])
                for label, kind, key, _ in job_inputs(part)
            ]
    return Outcome(records, logs)


def launch(
    notebooks,
    scale=None,
    data_dir=None,
    model=None,
    variant="official",
    kind="local",
    workers=2,
    folder="launch_logs",
    slurm=None,
    timeout_min=4 * 60,
    log=print,
):
    """List the notebooks' trainings, run the missing ones, and repeat while a round unlocks more
    (DefSent's seeds wait for its rate search when rates are searched); then PST a step at a time,
    step k of every config in one round (21 and 24 train the same config: once).
    On SLURM, submit and return (`submit`). Returns the Outcome."""
    pst = {
        json.dumps(cfg, sort_keys=True): (nb, cfg)
        for nb in map(str, notebooks)
        if nb in PST_NOTEBOOKS
        for cfg in pst_configs(nb, scale, model, variant)
    }
    if kind == "slurm":
        args = (scale, data_dir, model, variant, workers, folder, slurm, timeout_min, log)
        return submit(notebooks, pst.values(), *args)
    records, logs, tried = [], [], set()
    while True:
        listed = listing(notebooks, scale, data_dir, model, variant, log)
        todo = [t for t in listed if t.todo and t.call and t.key not in tried]
        if not todo:
            break
        log(f"launching {len(todo)} trainings as {kind} job(s) ({folder})")
        out = collect(start(todo, kind, workers, folder, slurm, timeout_min))
        tried |= {t.key for t in todo}
        records, logs = records + out.records, logs + out.logs
        for r in out.failed:
            where = f" (log {r['log']})" if "log" in r else ""
            log(f"FAILED {describe(r)}: {r['error'].strip().splitlines()[-1]}{where}")
    # spaces built here (its imports paid), then the seeds in `workers` jobs (fewer imports)
    chains = [(nb, cfg, pst_stages(nb, cfg, data_dir)) for nb, cfg in pst.values()]
    for k in range(max((len(stages) for *_, stages in chains), default=0)):
        live = [c for c in chains if len(c[2]) > k]
        spaces, seeds = ([t for *_, st in live for t in st[k][i] if t.todo] for i in (0, 1))
        log(f"PST step {k + 1} of {len(live)} config(s): {len(spaces) + len(seeds)} job(s)")
        outs = [
            Outcome(work(job_inputs(jobs), standins=config.standins_enabled()), [])
            if jobs is spaces
            else collect(start(jobs, kind, workers, folder, slurm, timeout_min))
            for jobs in (spaces, seeds)
            if jobs
        ]
        records, logs = (
            records + [r for o in outs for r in o.records],
            logs + [f for o in outs for f in o.logs],
        )
        stopped = [
            c
            for c in live
            if not all(
                marked(config.cache_dir() / "defsentplus" / t.key / DONE)
                for t in c[2][k][0] + c[2][k][1]
            )
        ]
        for nb, cfg, _ in stopped:
            log(
                f"notebook {nb}: PST on {cfg['dataset']} stopped at step {k + 1} (a later step "
                "needs this one's best run)"
            )
        chains = [c for c in live if c not in stopped]
    others = [nb for nb in notebooks if str(nb) not in PST_NOTEBOOKS]
    listed = listing(others, scale, data_dir, model, variant, log=lambda *a: None)
    left = [t for t in listed if t.todo is not False]
    outcome = Outcome(records, logs, len(left))
    log(
        f"{sum(r['status'] == 'trained' for r in records)} job(s) or training(s) done, "
        f"{len(outcome.failed)} failed; {len(listed) - len(left)} of {len(listed)} listed "
        "trainings in the cache" + (f"; {len(left)} missing (relaunch to retry)" if left else "")
    )
    return outcome


def submit(notebooks, pst, scale, data_dir, model, variant, workers, folder, slurm, timeout, log):
    """SLURM, submit and leave: each missing training not still in the queue as an array task of
    its own, and each PST config's steps from its first unfinished one as array jobs that start
    once the one before has ended well (afterok). --status says how they go; the same command
    again submits what is missing and not queued. Returns an empty Outcome."""
    check_partition(slurm, log)
    waiting = queued_jobs() or {}
    listed = listing(notebooks, scale, data_dir, model, variant, log)
    todo = [t for t in listed if t.todo and t.call and submitted_id(t) not in waiting]
    if waiting.keys() & {submitted_id(t) for t in listed}:
        log(
            f"{len(waiting.keys() & {submitted_id(t) for t in listed})} training(s) still queued "
            "or running on SLURM: left as they are"
        )
    for job, (t,) in start(todo, "slurm", workers, folder, slurm, timeout) if todo else []:
        note(KINDS[t.method], t.key, SUBMITTED, job.job_id)  # what --status says until it runs
    tasks = len(todo)
    for notebook, cfg in pst:
        stages = [st for st in pst_stages(notebook, cfg, data_dir) if any(t.todo for t in st[1])]
        chain = sorted(
            waiting.keys() & {submitted_id(t) for st in stages for jobs in st for t in jobs}
        )
        if any(waiting[i][1] == "DependencyNeverSatisfied" for i in chain):  # a link died: the
            cancel(chain)  # tasks after it can never run
            log(
                f"notebook {notebook}: PST on {cfg['dataset']}: {len(chain)} task(s) waiting on "
                "a step that ended without success cancelled; submitted again from that step"
            )
        elif chain:
            continue  # its chain still queued or running
        if not stages:
            continue  # PST done
        ids, after = [], None
        for jobs in [
            [t for t in js if t.todo] for st in stages for js in st if any(t.todo for t in js)
        ]:
            extra = dict((slurm or {}).get("slurm_additional_parameters") or {})
            extra.update({"dependency": f"afterok:{after}"} if after else {})
            options = dict(slurm or {}, slurm_additional_parameters=extra)
            for job, (t,) in start(jobs, "slurm", workers, folder, options, timeout):
                note("defsentplus", t.key, SUBMITTED, job.job_id)
                after, ids = job.job_id.split("_")[0], ids + [job.job_id]
        log(
            f"notebook {notebook}: PST on {cfg['dataset']}, steps {len(cfg['lrs']) - len(stages) + 1}"
            f"-{len(cfg['lrs'])}: {len(ids)} task(s), each step after the one before"
        )
        tasks += len(ids)
    log(
        f"{tasks} task(s) submitted ({len(todo)} training(s), {tasks - len(todo)} PST task(s)); "
        f"a task out of time is requeued at most {REQUEUES} times (--requeues); the same command "
        "with --status shows them, without it submits what is still missing"
    )
    return Outcome([], [], 0)


def status(notebooks, scale=None, data_dir=None, model=None, variant="official", log=print):
    """Each notebook's trainings as the cache and SLURM say (`state`); the failed and lost ones
    named with their reason, the pending ones counted by squeue's reason. Returns {state: count}."""
    queue, counts, waits = queued_jobs(), dict.fromkeys(STATES, 0), {}
    for t in distinct(
        [
            t
            for nb in map(str, notebooks)
            for t in (  # a PST notebook: its jobs
                pst_jobs(nb, scale, model, variant, data_dir)
                if nb in PST_NOTEBOOKS
                else trainings(nb, scale, data_dir, model, variant, log)
            )
        ]
    ):
        state, why = training_state(t, queue)
        counts[state] += 1
        if state in ("failed", "lost", "submitted"):
            log(f"{state}: notebook {t.notebook} {describe(t.settings)}: {why}")
        if state == "pending":
            waits[why] = waits.get(why, 0) + 1
    if waits:
        log("pending (squeue's reason): " + ", ".join(f"{n} {why}" for why, n in waits.items()))
    log(", ".join(f"{n} {state}" for state, n in counts.items() if n or state != "submitted"))
    return counts


STATES = ("done", "running", "pending", "failed", "lost", "submitted", "missing")
RUNNING = ("RUNNING", "COMPLETING", "CONFIGURING", "STAGE_OUT")  # squeue's states of a started task


def training_state(t, queue):
    """(state, why) of a listed training: done (cached), running (its SLURM task, or a live writer),
    pending (queued: squeue's reason), failed (its own last error line), lost (submitted, neither
    queued nor cached: SLURM's last word, relaunch), submitted (SLURM cannot be asked here) or
    missing (never submitted)."""
    kind, task = KINDS[t.method], submitted_id(t)
    failed, sent = (config.cache_dir() / kind / str(t.key) / f for f in (FAILED, SUBMITTED))
    if t.todo is False:
        return "done", ""
    if not t.key and t.waits_for.startswith("model "):  # its model cannot be loaded here
        return "failed", t.waits_for
    if (t.key and busy_elsewhere(kind, t.key)) or (queue or {}).get(task, ("",))[0] in RUNNING:
        return "running", ""
    if queue and task in queue:
        return "pending", queue[task][1]
    if t.key and failed.exists() and (not task or failed.stat().st_mtime >= sent.stat().st_mtime):
        return "failed", f"{last_line(failed)} ({failed})"
    if task and queue is None:
        return "submitted", f"task {task}; squeue cannot be run here, so SLURM was not asked"
    if task:
        return "lost", f"task {task} left the queue without a result ({slurm_word(task)}): relaunch"
    return "missing", ""


STAMP = "%Y-%m-%d %H:%M:%S"  # what a done.txt holds: when its training ended well


def marked(path):
    """Whether `path` is a done.txt the launcher wrote (its time stamp): an empty, cut or foreign
    file marks nothing done."""
    try:
        time.strptime(path.read_text().strip(), STAMP)
        return True
    except (OSError, ValueError):  # missing, unreadable, not UTF-8, not a stamp
        return False


def last_line(path):
    """The last non-empty line of a failed.txt (its error), whatever the file holds."""
    lines = path.read_text(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"(no reason written: {path.name} is empty)"


def note(kind, key, name, text):
    """Write `name` beside the cache entry `key` of `kind` (what --status and a relaunch read)."""
    path = config.cache_dir() / kind / key / name
    path.parent.mkdir(parents=True, exist_ok=True)
    cache.atomic_write_text(path, text)


def submitted_id(t):
    """The SLURM task last submitted to train `t` (its submitted.txt), else None."""
    sent = config.cache_dir() / KINDS[t.method] / str(t.key) / SUBMITTED
    return sent.read_text().strip() if t.key and sent.exists() else None


def queued_jobs():
    """This user's SLURM tasks still queued or running: {"<array>_<task>": (state, reason)}
    (squeue); None where SLURM cannot be asked."""
    command = [
        "squeue",
        "--noheader",
        "--array",
        "--user",
        getpass.getuser(),
        "--format",
        "%i %T %r",
    ]
    try:
        out = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    rows = [line.split(maxsplit=2) for line in out.stdout.splitlines() if line.strip()]
    return {r[0]: (r[1], r[2] if len(r) > 2 else "") for r in rows}


def slurm_word(task):
    """SLURM's last word on a task no longer queued: its accounting (sacct) where there is one,
    else what slurmctld still remembers (MinJobAge, 5 minutes by default), said as such."""
    asked = [
        ["sacct", "-n", "-P", "-X", "-j", task, "-o", "State,ExitCode"],
        ["scontrol", "-o", "show", "job", task],
    ]
    for command in asked:
        try:
            out = subprocess.run(command, capture_output=True, text=True, timeout=60, check=True)
        except (OSError, subprocess.SubprocessError):
            continue
        if command[0] == "sacct" and out.stdout.strip():
            state, code = (out.stdout.strip().splitlines()[0].split("|") + [""])[:2]
            return f"SLURM accounting: {state}, exit code {code}"
        found = dict(re.findall(r"(JobState|ExitCode|Reason)=(\S+)", out.stdout))
        if command[0] == "scontrol" and found:
            return (
                f"SLURM: {found['JobState']}, exit code {found.get('ExitCode')}, reason "
                f"{found.get('Reason')}; no accounting here"
            )
    return "no SLURM accounting here, and slurmctld no longer remembers it"


def cancel(tasks):
    """scancel these SLURM tasks."""
    subprocess.run(["scancel", *tasks], capture_output=True, text=True, timeout=120, check=True)


def describe(label):
    return ", ".join(
        f"{k} {v}" for k, v in label.items() if k not in ("status", "error", "seconds", "log")
    )


# ---------------------------------------------------------------- the command


def summary(listed):
    """Per notebook and method: trainings, how many are cached, steps and estimated GPU-hours."""
    import pandas as pd

    columns = "notebook method trainings cached unknown waiting steps gpu_hours".split()
    table = pd.DataFrame(
        [
            (
                t.notebook,
                t.method,
                1,
                t.todo is False,
                t.todo is None and not t.waits_for,
                bool(t.waits_for),
                t.steps,
                t.gpu_hours,
            )
            for t in listed
        ],
        columns=columns,
    )
    table = table.groupby(["notebook", "method"], sort=False).sum()
    table.loc[("all", ""), :] = table.sum()
    return table.astype({c: int for c in table.columns if c != "gpu_hours"}).round({"gpu_hours": 1})


def wall_clock(todo, workers, per_gpu=1):
    """The hours `workers` jobs at once train `todo` in (its longest share; PST's steps, which run in
    turn, and evaluation not counted), K = per_gpu of them sharing a GPU: as fast as alone at best,
    no faster together than one at worst (gpu_check's packing rows measure where it lies)."""
    hours = max([sum(t.gpu_hours for t in share) for share in shares(todo, workers)] or [0.0])
    if per_gpu == 1:
        return f"wall-clock, {workers} job(s) at once: at least {hours:.1f} h"
    return (
        f"wall-clock, {workers} job(s) at once, {per_gpu} a GPU: at least {hours:.1f} h if they "
        f"run as fast together as alone, {hours * per_gpu:.1f} h if together no faster than one"
    )


def positive(text):
    """argparse's type for a count of jobs or minutes: a whole number > 0."""
    if not text.isdigit() or int(text) == 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number > 0")
    if int(text) > MOST:
        raise argparse.ArgumentTypeError(f"{text} is more than {MOST:,}")
    return int(text)


MOST = 100_000  # jobs at once, or minutes (69 days); 10**20 ended in an OverflowError


EXAMPLES = f"""scales: {", ".join(config.SCALES)} (README's Scales; default DEFSENT_SCALE, else smoke)

examples:
  python -m defsent_lite.repro.launch 10 21 30 33 --scale paper --dry-run --list
  python -m defsent_lite.repro.launch 10 30 --scale paper --executor local --workers 4
  python -m defsent_lite.repro.launch 10 30 33 --scale paper --executor slurm --workers 16 \\
      --partition gpu --account proj --qos normal --gres gpu:a100:1 --mem 64G --cpus-per-task 8 \\
      --setup "module load cuda" --setup "source ~/venv/bin/activate" --sbatch constraint=h100
"""


def parser():
    """The launcher's command line."""
    p = argparse.ArgumentParser(
        prog="python -m defsent_lite.repro.launch",
        description=__doc__.split("\n\n")[0],
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("notebooks", nargs="+", help=f"notebook numbers ({', '.join(NOTEBOOKS)})")
    p.add_argument("--scale", default=None, help="a scale (below)")
    p.add_argument("--data", default=None, help="data root (default DEFSENT_DATA, else found)")
    p.add_argument("--model", default=None, help="default: the scale's model")
    p.add_argument("--variant", default="official", choices=("official", "paper"))
    p.add_argument("--dry-run", action="store_true", help="list the trainings; run nothing")
    p.add_argument("--list", action="store_true", help="with --dry-run: one line per training")
    p.add_argument("--status", action="store_true", help="done, running, failed, missing; exit")
    p.add_argument("--executor", default="local", choices=("local", "slurm"))
    p.add_argument(
        "--workers", type=positive, help="jobs at once (default: local GPUs x --per-gpu, else 2)"
    )
    p.add_argument(
        "--per-gpu",
        type=positive,
        default=1,
        help="local jobs a GPU runs at once (default "
        "1; tools/gpu_check.py measures what K together gain)",
    )
    p.add_argument(
        "--timeout-min",
        type=positive,
        default=4 * 60,
        help="a job's time limit "
        f"(default 240, at least {SHORTEST_MIN}; a job out of time is requeued and goes "
        "on)",
    )
    p.add_argument(
        "--requeues",
        type=positive,
        default=REQUEUES,
        help="times a task out of time "
        f"is requeued (default {REQUEUES}; a preemption does not count)",
    )
    p.add_argument(
        "--save-every-min",
        type=positive,
        default=SAVE_EVERY_MIN,
        help="a training "
        f"saves its state this often (default {SAVE_EVERY_MIN}) and on SIGTERM or the "
        "time-out signal, to go on from there",
    )
    p.add_argument("--logs", default="launch_logs", help="submitit's folder (logs, pickles)")
    for flag in ("--partition", "--account", "--qos", "--mem"):
        p.add_argument(flag, help=f"SLURM {flag[2:]}")
    p.add_argument("--gres", help="SLURM gres, e.g. gpu:a100:1 (default: --gpus-per-node=1)")
    p.add_argument("--cpus-per-task", type=positive, default=8, help="SLURM (default 8)")
    p.add_argument("--setup", action="append", default=[], help="a line a job runs first")
    p.add_argument(
        "--sbatch",
        action="append",
        default=[],
        type=key_value,
        metavar="KEY=VALUE",
        help="another #SBATCH option, e.g. constraint=h100, or a flag: hold",
    )
    return p


def key_value(text):
    """argparse's type for KEY=VALUE, or KEY (or KEY=) for an sbatch flag without a value."""
    key, _, value = text.partition("=")
    if not key.strip() or " " in key:
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE or KEY")
    return key, value or True


def main(argv=None):
    command = parser()
    args = command.parse_args(argv)
    args.notebooks = list(dict.fromkeys(args.notebooks))  # a notebook named twice runs once
    if args.timeout_min < SHORTEST_MIN:
        command.error(
            f"--timeout-min {args.timeout_min}: at least {SHORTEST_MIN} (the time-out "
            "signal comes 90-150 s before the limit; a job needs up to a minute to "
            "start, then its step and a save)"
        )
    if args.status:
        status(args.notebooks, args.scale, args.data, args.model, args.variant)
        return 0
    listed = listing(args.notebooks, args.scale, args.data, args.model, args.variant)
    print(
        f"scale {config.scale(args.scale)['name']}; GPU-hours: steps x the host-bound step "
        "measured on an H100 "
        f"(BERT-base; large models x{LARGE_FACTOR:g}); evaluation not included"
    )
    print(summary(listed).to_string())
    if args.list:
        for t in listed:
            state = t.waits_for or {True: "to train", False: "cached", None: "unknown"}[t.todo]
            print(
                t.notebook,
                t.method,
                describe(t.settings),
                f"steps {t.steps}",
                t.key or "-",
                state,
                sep=" | ",
            )
    per_gpu = (
        args.per_gpu if args.executor == "local" and torch_gpus() else 1
    )  # SLURM: a GPU a task
    workers = args.workers or max(torch_gpus() * per_gpu, 2)
    if args.per_gpu != per_gpu:
        print(
            f"--per-gpu {args.per_gpu} ignored: "
            + (
                "SLURM gives each task a GPU of its own"
                if args.executor == "slurm"
                else "no GPU here"
            )
        )
    print(wall_clock([t for t in listed if t.todo is not False], workers, per_gpu))
    if args.dry_run:
        return 0
    # jobs pickle this module's functions by name, not __main__'s
    from defsent_lite.repro import launch as this

    this.SAVE_EVERY_MIN, this.REQUEUES = args.save_every_min, args.requeues
    try:
        outcome = this.launch(
            args.notebooks,
            args.scale,
            args.data,
            args.model,
            args.variant,
            args.executor,
            workers,
            args.logs,
            slurm_options(args),
            args.timeout_min,
        )
    except this.Refused as e:
        print(f"launch: {e}", file=sys.stderr)
        return 2
    return 1 if outcome.failed or outcome.missing else 0  # missing data or model: not done


if __name__ == "__main__":
    sys.exit(main())
