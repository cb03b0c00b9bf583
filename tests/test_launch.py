"""Issue 49: the launcher's listing, shares, executors and workers, without training (the local
executor's runs, a killed worker and the notebooks that then train nothing: test_rehearsal.py)."""
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from defsent_lite.repro import plans, launch
from defsent_lite.runtime import cache, config

pytest.importorskip("submitit")


@pytest.fixture(autouse=True)
def a_partition_that_takes_anything(monkeypatch):
    """The launcher asks sinfo before it submits: here a partition of large nodes, whatever SLURM
    runs on this machine (tests/test_slurm.py meets a real one)."""
    monkeypatch.setattr(launch, "offered", lambda partition: (64, 1_000_000))


def test_cpus_and_memory_above_the_partition_s_nodes_are_refused_before_anything_is_submitted(monkeypatch):
    """Issue 84, case 5: the default --cpus-per-task 8 on a 2-CPU node gave a task pending for good
    ("PartitionConfig") with no hint."""
    monkeypatch.setattr(launch, "offered", lambda partition: (2, 2000))
    with pytest.raises(launch.Refused, match=r"--cpus-per-task 8: the nodes of partition \(the default\) have "
                                             r"at most 2 CPUs \(sinfo\); ask for at most 2"):
        launch.check_partition(dict(cpus_per_task=8), print)
    with pytest.raises(launch.Refused, match="--mem 3G: the nodes of partition gpu have at most 2000 MB"):
        launch.check_partition(dict(cpus_per_task=2, slurm_mem="3G", slurm_partition="gpu"), print)
    launch.check_partition(dict(cpus_per_task=2, slurm_mem="1900M"), print)   # fits: no word
    with pytest.raises(launch.Refused, match="--mem '64 GB': a whole number with K, M, G or T"):
        launch.megabytes("64 GB")
    assert [launch.megabytes(m) for m in ("64G", "2000", "1T", "512K")] == [65536, 2000, 1024 ** 2, 0.5]


def test_a_dry_run_counts_the_paper_protocol_of_10_21_30_and_33(capsys):
    """Paper scale: DefSent 3 poolings x 10 seeds at the pinned rate; PST 3 steps x 10 seeds plus the
    ICA candidate's 10 at the last; GaussCSE 4 loss settings x 5 seeds; its grid 4 batch sizes x
    3 rates. GPU-hours are steps at the measured host-bound step."""
    assert launch.main(["10", "21", "30", "33", "--scale", "paper", "--dry-run"]) == 0
    out = capsys.readouterr().out
    rows = {m.group(1): [int(m.group(2)), float(m.group(3))]
            for m in re.finditer(r"^(\d\d|all)\s+\S*\s+(\d+)\s+\d+\s+\d+\s+\d+\s+\d+\s+([\d.]+)$", out, re.M)}
    # 33: its grid cell at batch 16 and 5e-5 is 30's ent+con+rev seed 0 (the same run): listed once
    assert {k: v[0] for k, v in rows.items()} == {"10": 30, "21": 40, "30": 20, "33": 11, "all": 101}, out
    assert all(v[1] > 0 for v in rows.values())
    listed = launch.trainings("30", "paper", log=lambda *a: None)
    steps = 275_601 // 16   # all SimCSE triplets at Table 5's batch 16, one epoch (the official code)
    assert {t.steps for t in listed} == {steps}
    assert listed[0].gpu_hours == pytest.approx(steps * plans.STEP_FLOOR_S["gausscse"] / 3600)
    assert launch.main(["22", "23", "24", "25", "--scale", "paper", "--dry-run"]) == 0
    out = capsys.readouterr().out   # 22: the 1st Training on c and b, PST with ICA on a; 23: four
    rows = {m.group(1): int(m.group(2))   # combinations' 1st; 24: 21's; 25: the release's one step
            for m in re.finditer(r"^(\d\d|all)\s+\S*\s+(\d+)\s+\d+\s+\d+\s+\d+\s+\d+\s+[\d.]+$", out, re.M)}
    assert rows == {"22": 60, "25": 10, "all": 70}, out   # 23's and 24's are among 22's: each once
    assert launch.Training("10", "DefSent", dict(model="bert-large-uncased"), 100).gpu_hours == pytest.approx(
        3 * launch.Training("10", "DefSent", dict(model="bert-base-uncased"), 100).gpu_hours)


@pytest.mark.parametrize("option, value", [("--workers", "0"), ("--workers", "-1"), ("--workers", "two"),
                                           ("--timeout-min", "0")])
def test_a_count_that_is_not_a_positive_whole_number_is_refused_by_name(option, value, capsys):
    """Issue 72: --workers 0 was taken as the default, -1 crashed in min() of nothing, and
    --timeout-min 0 was accepted."""
    with pytest.raises(SystemExit):
        launch.main(["10", option, value, "--dry-run"])
    assert f"argument {option}: '{value}' is not a whole number > 0" in capsys.readouterr().err


def test_a_notebook_named_twice_is_listed_and_launched_once(capsys):
    assert launch.main(["10", "10", "--scale", "paper", "--dry-run"]) == 0
    assert re.search(r"^all\s+\S*\s+30\s", capsys.readouterr().out, re.M)   # not 60


def test_a_training_several_notebooks_read_is_listed_and_submitted_once(capsys, tmp_path, monkeypatch):
    """Issue 84, case 1: `launch 10 11 30 31 --executor slurm` made an array of 14 tasks for 7
    trainings (11 reads 10's runs, 31 reads 30's); a paper dry run counted each shared training
    once per notebook."""
    assert launch.main(["10", "11", "30", "31", "--scale", "paper", "--dry-run"]) == 0
    out = capsys.readouterr().out
    rows = {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\d\d|all)\s+(?:[A-Za-z+]+\s+)?(\d+)\s", out, re.M)}
    assert rows == {"10": 30, "30": 20, "all": 50}, out
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    started = []
    monkeypatch.setattr(launch, "start", lambda todo, *a, **k: started.append(todo) or [])
    monkeypatch.setattr(launch, "queued_jobs", dict)
    launch.launch(["10", "11", "30", "31"], "smoke", kind="slurm", log=lambda *a: None)
    (todo,) = started
    assert len(todo) == len({t.key for t in todo}) == 1 + 1 + 1 + 4, [t.settings for t in todo]


def test_an_unknown_notebook_is_named():
    with pytest.raises(ValueError, match="'14'.*10, 11"):
        launch.trainings("14")


def test_shares_are_balanced_by_steps():
    todo = [launch.Training("30", "GaussCSE", dict(seed=i), steps) for i, steps in enumerate([10, 9, 5, 4, 1])]
    parts = launch.shares(todo, 2)
    assert sorted(sum(t.steps for t in p) for p in parts) == [14, 15]
    assert sorted(t.settings["seed"] for p in parts for t in p) == [0, 1, 2, 3, 4]
    assert len(launch.shares(todo[:1], 4)) == 1   # no empty job


def sbatch_script(tmp_path, monkeypatch, argv):
    fake = tmp_path / "bin"
    fake.mkdir(exist_ok=True)
    (fake / "srun").write_text("#!/bin/sh\nexit 0\n")
    (fake / "srun").chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake}{os.pathsep}{os.environ['PATH']}")
    args = launch.parser().parse_args(["10", "--executor", "slurm", *argv])
    (ex,) = launch.executors("slurm", 16, tmp_path / "logs", launch.slurm_options(args), args.timeout_min)
    assert ex._executor.parameters["array_parallelism"] == 16
    return ex._executor._make_submission_file_text("cmd", "uid")


def test_slurm_jobs_ask_one_gpu_each_on_the_partition(tmp_path, monkeypatch):
    script = sbatch_script(tmp_path, monkeypatch, ["--partition", "gpu", "--timeout-min", "600"])
    for line in ("--partition=gpu", "--gpus-per-node=1", "--ntasks-per-node=1", "--time=600", "--cpus-per-task=8"):
        assert f"#SBATCH {line}\n" in script
    with pytest.raises(ValueError, match="executor 'ray'"):
        launch.executors("ray", 2, tmp_path)


def test_every_cluster_option_reaches_the_sbatch_script(tmp_path, monkeypatch, capsys):
    """Issue 70, Deliver 3: account, qos, the GPU type (gres), memory, CPUs per task, time, setup
    lines and any other #SBATCH option pass through submitit into the job script."""
    script = sbatch_script(tmp_path, monkeypatch, [
        "--account", "proj", "--qos", "high", "--gres", "gpu:a100:1", "--mem", "64G", "--cpus-per-task", "16",
        "--timeout-min", "90", "--setup", "module load cuda", "--setup", "source env/bin/activate",
        "--sbatch", "constraint=h100", "--sbatch", "exclude=node7"])
    for line in ("--account=proj", "--qos=high", "--gres=gpu:a100:1", "--mem=64G", "--cpus-per-task=16",
                 "--time=90", "--constraint=h100", "--exclude=node7"):
        assert f"#SBATCH {line}\n" in script, line
    assert "--gpus-per-node" not in script   # the gres says how many GPUs of which type
    assert script.index("module load cuda\nsource env/bin/activate\n") < script.index("srun")
    with pytest.raises(SystemExit):
        launch.parser().parse_args(["10", "--sbatch", "=h100"])
    assert "'=h100' is not KEY=VALUE or KEY" in capsys.readouterr().err
    # issue 84, case 6: a flag without a value ("hold=" or "hold") was refused
    for flag in ("hold", "hold="):
        assert "#SBATCH --hold\n" in sbatch_script(tmp_path, monkeypatch, ["--sbatch", flag])
    help_text = launch.parser().format_help()
    assert "rehearsal" in help_text and "--executor slurm --workers 16" in help_text


def test_per_gpu_k_runs_k_local_jobs_a_gpu_and_the_dry_run_gives_their_wall_clock(monkeypatch, capsys):
    """Issue 70: --per-gpu 4 on 2 GPUs: 8 jobs at once (job i on GPU i % 2); the wall-clock is the
    longest share's GPU-hours, between as fast together as alone and no faster than one."""
    monkeypatch.setattr(launch, "torch_gpus", lambda: 2)
    assert launch.main(["30", "--scale", "paper", "--dry-run", "--per-gpu", "4"]) == 0
    todo = launch.trainings("30", "paper", log=lambda *a: None)   # 20 runs of equal steps: 3 in a share of 8
    hours = 3 * todo[0].gpu_hours
    assert f"8 job(s) at once, 4 a GPU: at least {hours:.1f} h if they run as fast together as alone, " \
           f"{4 * hours:.1f} h if together no faster than one" in capsys.readouterr().out
    assert launch.wall_clock(todo, 20) == f"wall-clock, 20 job(s) at once: at least {todo[0].gpu_hours:.1f} h"
    monkeypatch.setattr(launch, "torch_gpus", lambda: 0)   # no GPU here: no packing
    assert launch.main(["30", "--scale", "paper", "--dry-run", "--per-gpu", "4"]) == 0
    assert "wall-clock, 2 job(s) at once: at least" in capsys.readouterr().out


def test_local_jobs_see_one_gpu_each():
    exs = launch.executors("local", 3, "/tmp/unused", gpus=2)
    assert [ex.parameters["visible_gpus"] for ex in exs] == [(0,), (1,), (0,)]
    assert [ex.parameters["visible_gpus"] for ex in launch.executors("local", 2, "/tmp/unused", gpus=0)] == [(), ()]


def test_a_failed_training_is_reported_with_its_settings_and_the_others_go_on(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    jobs = [(dict(setting="ent", seed=0), "gausscse", "k1", ("defsent_lite.checks:count", dict(value=-1, name="steps"))),
            (dict(setting="ent", seed=1), "gausscse", "k2", ("defsent_lite.checks:count", dict(value=3, name="steps")))]
    records = launch.work(jobs)
    assert [r["status"] for r in records] == ["failed", "trained"]
    assert records[0]["seed"] == 0 and "steps" in records[0]["error"] and "Traceback" in records[0]["error"]
    assert "FAILED {'setting': 'ent', 'seed': 0}" in capsys.readouterr().err


def test_an_unwritable_cache_fails_the_training_with_its_own_reason(tmp_path, monkeypatch):
    """Issue 85: with an unwritable cache the marker's write escaped the worker, and the FAILED line
    said only submitit's "failed during processing with trace:"."""
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "file" / "cache"))
    call = ("defsent_lite.repro.launch:note", dict(kind="gausscse", key="k1", name="x", text="y"))
    records = launch.work([(dict(seed=0), "gausscse", "k1", call)])
    assert records[0]["status"] == "failed" and "NotADirectoryError" in records[0]["error"]
    trace = ("Job (task=0) failed during processing with trace:\n----\nTraceback (most recent call last):\n"
             "  File \"x.py\", line 1, in f\nNotADirectoryError: [Errno 20] Not a directory: '/c/k1'\n")
    assert launch.reason(Exception(trace)) == "NotADirectoryError: [Errno 20] Not a directory: '/c/k1'"
    assert launch.reason(Exception("Job 7 has not produced any output\n 37%|###  ")) == "Job 7 has not produced any output"


def test_a_training_another_live_writer_holds_is_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    parent = tmp_path / "cache" / "gausscse" / "k1"
    (parent / f"files-{cache.HOST}-{os.getppid()}-abc").mkdir(parents=True)   # a live process of this host
    assert launch.busy_elsewhere("gausscse", "k1")
    records = launch.work([(dict(seed=0), "gausscse", "k1", ("defsent_lite.checks:count", dict(value=1, name="x")))])
    assert records[0]["status"].startswith("skipped")
    (parent / "result.json").write_text("{}")   # done: nobody holds it any more
    assert not launch.busy_elsewhere("gausscse", "k1")
    dead = tmp_path / "cache" / "gausscse" / "k2" / f"files-{cache.HOST}-{2 ** 22 + 12345}-abc"
    dead.mkdir(parents=True)   # a killed writer's folder
    assert not launch.busy_elsewhere("gausscse", "k2")


def test_with_a_rate_search_the_later_seeds_wait_for_it_then_take_its_best_rate(tmp_path, monkeypatch):
    """Rates searched (not pinned): the first seed's run per rate is launchable at once; the later
    seeds wait until every rate's run is cached, then run at the rate lr_search picks (best dev MRR)."""
    from defsent_lite.data import dictionary
    from defsent_lite.repro import defsent_protocol
    from defsent_lite.runtime import config
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path))
    scale = dict(config.scale("smoke"), seeds=[0, 1, 2], defsent_lr_xs=[6.0, 7.0])
    # a small dataset instead of WordNet's (its keys are what matters here), in this test only
    rows = [(w, f"a definition of {w}", i) for i, w in enumerate(["cat", "dog", "tree", "stone"] * 8)]
    small = (dict(train=rows, dev=rows[:8], test=rows[8:16]), dict(source="test"))
    monkeypatch.setattr(dictionary, "defsent_dataset", lambda *a, **k: small)

    def cls_runs():
        return [t for t in launch.defsent_trainings("10", scale, scale["model"], "official", None, None)
                if t.settings["pooling"] == "cls"]
    listed = cls_runs()
    assert [(t.settings["seed"], t.todo, bool(t.waits_for)) for t in listed] == [
        (0, True, False), (0, True, False), (1, None, True), (2, None, True)]
    dataset = defsent_protocol.dataset_of(dict(model=scale["model"], variant="official"))
    for t, mrr in zip(listed[:2], (0.2, 0.1)):   # the search's runs cached: 2^6 wins
        cache.store("defsent", defsent_protocol.run_key(t.call[1]["cfg"], dataset[0]), dict(dev=dict(mrr=mrr)))
    listed = cls_runs()
    assert [t.todo for t in listed[:2]] == [False, False]
    assert [(t.settings["seed"], t.settings["lr"], t.todo) for t in listed[2:]] == [(1, 64e-6, True), (2, 64e-6, True)]
    assert {t.call[0] for t in listed[2:]} == {"defsent_lite.repro.defsent_scores:seed_run"}


def test_a_worker_runs_with_stand_ins_when_its_launcher_did(monkeypatch):
    """A rehearsal launch turns stand-ins on in the launching process (preflight), never in the
    environment; each worker process is told so and turns them on for itself."""
    monkeypatch.delenv("DEFSENT_STANDINS", raising=False)
    assert not config.standins_enabled()
    launch.work([], standins=True)
    assert config.standins_enabled() and "DEFSENT_STANDINS" not in os.environ


def test_a_launch_that_leaves_trainings_missing_exits_with_an_error(tmp_path, monkeypatch, capsys):
    """Issue 72: a real launch with the data or model missing trained nothing and exited 0."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    assert launch.main(["10", "--scale", "paper", "--logs", str(tmp_path / "logs")]) == 1
    assert "0 of 30 listed trainings in the cache; 30 missing" in capsys.readouterr().out


def trains_then_dies(key):
    """A job's second training: the first is in the cache, then the process is killed."""
    (config.cache_dir() / "gausscse" / key).mkdir(parents=True)
    (config.cache_dir() / "gausscse" / key / "result.json").write_text("{}")
    print("progress 37%|####      | 3/8", file=sys.stderr, flush=True)   # a bar's fragment in the log
    os.kill(os.getpid(), signal.SIGKILL)


def test_a_job_killed_midway_reports_its_cached_runs_as_done_and_the_rest_with_its_own_reason(tmp_path, monkeypatch):
    """Issue 70: a worker killed after its first run was cached printed "3 FAILED" with 1 of the 3
    cached, each FAILED line giving the log's last line (another run's progress bar) as the reason."""
    submitit = pytest.importorskip("submitit")
    monkeypatch.setenv("PYTHONPATH", os.path.dirname(__file__))
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    labels = [dict(seed=s) for s in range(3)]
    calls = [("defsent_lite.checks:count", dict(value=1, name="x")), ("test_launch:trains_then_dies", dict(key="k1")),
             ("defsent_lite.checks:count", dict(value=1, name="x"))]
    part = [launch.Training("30", "GaussCSE", label, 1, key=f"k{i}", call=call)
            for i, (label, call) in enumerate(zip(labels, calls))]
    (tmp_path / "cache" / "gausscse" / "k0").mkdir(parents=True)
    (tmp_path / "cache" / "gausscse" / "k0" / "result.json").write_text("{}")
    executor = submitit.LocalExecutor(folder=tmp_path / "logs")
    job = executor.submit(launch.Work(), launch.job_inputs(part))
    records = launch.collect([(job, part)]).records
    assert [r["status"] for r in records] == ["trained", "trained", "failed"]
    assert "died" in records[2]["error"] and "37%" not in records[2]["error"] and records[2]["seed"] == 2


def test_status_says_each_state_from_the_cache_and_slurm_s_own_word(tmp_path, monkeypatch, capsys):
    """Issue 70, Deliver 2: a status command reads the cache: done, running (a live writer),
    failed (the training's own last line, kept beside its entry by the job) and missing. Issue 84,
    case 2: and SLURM's queue: pending with squeue's reason, running, lost (submitted, gone from the
    queue without a result: SLURM's last word, relaunch); "submitted" only where squeue cannot run."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    listed = [launch.Training("30", "GaussCSE", dict(seed=s), 10, key=f"k{s}", todo=s != 0, call=("m:f", {}))
              for s in range(7)]
    for s in (4, 5, 6):
        launch.note("gausscse", f"k{s}", launch.SUBMITTED, f"4242_{s}")
    monkeypatch.setattr(launch, "trainings", lambda nb, *a, **k: listed)
    monkeypatch.setattr(launch, "queued_jobs", lambda: {"4242_4": ("PENDING", "Resources"),
                                                        "4242_5": ("RUNNING", "None")})
    monkeypatch.setattr(launch, "slurm_word", lambda task: f"SLURM: CANCELLED for {task}")
    (tmp_path / "cache" / "gausscse" / "k1" / f"files-{cache.HOST}-{os.getppid()}-abc").mkdir(parents=True)
    failing = [(dict(seed=2), "gausscse", "k2", ("defsent_lite.checks:count", dict(value=-1, name="steps")))]
    assert [r["status"] for r in launch.work(failing)] == ["failed"]
    capsys.readouterr()
    assert launch.main(["30", "--status"]) == 0
    out = capsys.readouterr().out
    assert "1 done, 2 running, 1 pending, 1 failed, 1 lost, 1 missing" in out
    assert "failed: notebook 30 seed 2: ValueError: steps=-1: a whole number >= 1 or None (all) is needed" in out
    assert "pending (squeue's reason): 1 Resources" in out
    assert "lost: notebook 30 seed 6: task 4242_6 left the queue without a result (SLURM: CANCELLED for " \
           "4242_6): relaunch" in out
    monkeypatch.setattr(launch, "queued_jobs", lambda: None)   # squeue cannot be run here
    assert launch.status(["30"], log=lambda *a: None)["submitted"] == 3
    ok = [(dict(seed=2), "gausscse", "k2", ("defsent_lite.checks:count", dict(value=1, name="steps")))]
    assert [r["status"] for r in launch.work(ok)] == ["trained"]   # a later success clears the failure
    assert launch.status(["30"], log=lambda *a: None)["failed"] == 0
    with pytest.raises(RuntimeError, match="1 training.s. failed: ValueError: steps=-1"):   # case 4: a task fails
        launch.work(failing, strict=True)


def test_a_marker_the_launcher_did_not_write_is_not_trusted_and_a_bad_failure_file_is_read(tmp_path, monkeypatch,
                                                                                           capsys):
    """Issue 85: an empty done.txt made a PST job done (a launch skipped it, nothing cached);
    `--status` crashed on an empty or binary failed.txt; --workers 10**20 raised OverflowError."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    job = launch.pst_jobs("21", "smoke", None, "official", None)[0]
    done = tmp_path / "cache" / "defsentplus" / job.key / launch.DONE
    done.parent.mkdir(parents=True)
    for text in (b"", b"done", b"\xff\xfe"):
        done.write_bytes(text)
        assert launch.pst_jobs("21", "smoke", None, "official", None)[0].todo, text
    launch.note("defsentplus", job.key, launch.DONE, "2026-12-02 10:00:00")
    assert launch.pst_jobs("21", "smoke", None, "official", None)[0].todo is False
    listed = [launch.Training("30", "GaussCSE", dict(seed=s), 10, key=f"k{s}", todo=True, call=("m:f", {}))
              for s in range(2)]
    monkeypatch.setattr(launch, "trainings", lambda nb, *a, **k: listed)
    for s, text in enumerate((b"", b"\xff\xfe\nValueError: \xe9\n")):
        (tmp_path / "cache" / "gausscse" / f"k{s}").mkdir(parents=True)
        (tmp_path / "cache" / "gausscse" / f"k{s}" / launch.FAILED).write_bytes(text)
    assert launch.status(["30"])["failed"] == 2
    out = capsys.readouterr().out
    assert "seed 0: (no reason written: failed.txt is empty)" in out and "seed 1: ValueError: \ufffd" in out
    with pytest.raises(SystemExit):
        launch.main(["30", "--workers", str(10 ** 20), "--dry-run"])
    assert f"argument --workers: {10 ** 20} is more than 100,000" in capsys.readouterr().err


def test_a_slurm_launch_submits_one_array_task_per_training_and_leaves(tmp_path, monkeypatch, capsys):
    """Issue 70, Deliver 2: no slow task holds the rest (one training per array task, at most
    --workers at once), and the launcher exits once they are submitted, noting each task."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    listed = [launch.Training("30", "GaussCSE", dict(seed=s), 10 * (s + 1), key=f"k{s}", todo=True,
                              call=("m:f", {})) for s in range(3)]
    monkeypatch.setattr(launch, "trainings", lambda nb, *a, **k: listed)
    arrays = []

    class Job:
        job_id = "4242_0"

    class Executor:
        def map_array(self, fn, jobs, *rest):
            arrays.append([[key for _, _, key, _ in job] for job in jobs])
            return [Job() for _ in jobs]
    monkeypatch.setattr(launch, "executors", lambda kind, workers, *a: [Executor()])
    monkeypatch.setattr(launch, "collect", lambda started: pytest.fail("a SLURM launch waited"))
    assert launch.main(["30", "--executor", "slurm", "--workers", "2"]) == 0
    assert arrays == [[["k0"], ["k1"], ["k2"]]]
    assert (config.cache_dir() / "gausscse" / "k2" / "submitted.txt").read_text() == "4242_0"
    assert "3 task(s) submitted (3 training(s), 0 PST task(s)); a task out of time is requeued at most 3 times" \
        in capsys.readouterr().out


def test_a_slurm_relaunch_leaves_tasks_still_in_the_queue_and_submits_the_rest(tmp_path, monkeypatch, capsys):
    """Issue 70: the same command run again while tasks wait in SLURM's queue submits only the
    trainings whose task is gone (failed, died, never submitted), never a second copy."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    listed = [launch.Training("30", "GaussCSE", dict(seed=s), 10, key=f"k{s}", todo=True, call=("m:f", {}))
              for s in range(3)]
    for s in (0, 1):
        (tmp_path / "cache" / "gausscse" / f"k{s}").mkdir(parents=True)
        (tmp_path / "cache" / "gausscse" / f"k{s}" / "submitted.txt").write_text(f"4242_{s}")
    monkeypatch.setattr(launch, "trainings", lambda nb, *a, **k: listed)
    queued_jobs = launch.queued_jobs
    monkeypatch.setattr(launch, "queued_jobs", lambda: {"4242_0": ("RUNNING", "None"),
                                                        "999_1": ("PENDING", "Priority")})   # 4242_1 left
    arrays = []

    class Executor:
        def map_array(self, fn, jobs, *rest):
            arrays.append([[key for _, _, key, _ in job] for job in jobs])
            return [type("Job", (), {"job_id": f"5000_{i}"})() for i in range(len(jobs))]
    monkeypatch.setattr(launch, "executors", lambda kind, workers, *a: [Executor()])
    assert launch.main(["30", "--executor", "slurm"]) == 0
    assert arrays == [[["k1"], ["k2"]]]
    assert "1 training(s) still queued or running on SLURM" in capsys.readouterr().out
    monkeypatch.setattr(launch.subprocess, "run", lambda *a, **k: (_ for _ in ()).throw(FileNotFoundError("squeue")))
    assert queued_jobs() is None   # squeue cannot be run: SLURM not asked


def test_pst_on_slurm_submits_its_steps_chained_and_leaves_then_resumes_from_the_first_unfinished(
        tmp_path, monkeypatch, capsys):
    """Issue 70: a PST config's steps go to SLURM at once, each step's space job after the last
    step's shares and its shares after the space (afterok), every cluster option kept; a relaunch
    leaves a chain still queued, and once step 1's shares have ended well submits from step 2."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("DEFSENT_DATA", str(tmp_path / "data"))
    cfg = dict(model="m", dataset="a", seeds=[0, 1, 2], lrs=[1e-5, 2e-5])
    monkeypatch.setattr(launch, "pst_configs", lambda *a: [cfg])
    monkeypatch.setattr(launch, "trainings", lambda *a, **k: [])
    monkeypatch.setattr(launch, "queued_jobs", dict)
    sent = []

    class Executor:
        def __init__(self, slurm):
            self.slurm = slurm

        def map_array(self, fn, jobs, *rest):
            array = 100 + len(sent)
            sent.append(([[key for _, _, key, _ in job] for job in jobs], self.slurm["slurm_additional_parameters"]))
            return [type("Job", (), {"job_id": f"{array}_{i}"})() for i in range(len(jobs))]
    script = sbatch_script(tmp_path, monkeypatch, ["--sbatch", "dependency=afterok:100"])
    assert "#SBATCH --dependency=afterok:100\n" in script   # what SLURM is told
    monkeypatch.setattr(launch, "executors", lambda kind, workers, folder, slurm=None, *a: [Executor(slurm)])
    argv = ["21", "--executor", "slurm", "--workers", "2", "--sbatch", "constraint=h100"]
    assert launch.main(argv) == 0
    tag = launch.pst_tag(cfg, None)
    assert [keys for keys, _ in sent] == [stage for k in (1, 2) for stage in (
        [[f"{tag}-{k}-space"]], [[f"{tag}-{k}-seed{s}"] for s in (0, 1, 2)])]   # a space job, then a task a seed
    assert [extra for _, extra in sent] == [{"constraint": "h100"}] + [
        {"constraint": "h100", "dependency": f"afterok:{a}"} for a in (100, 101, 102)]
    out = capsys.readouterr().out
    assert "steps 1-2: 8 task(s), each step after the one before" in out
    assert "8 task(s) submitted (0 training(s), 8 PST task(s))" in out   # case 6: not "0 training(s) submitted"
    monkeypatch.setattr(launch, "queued_jobs", lambda: None)   # squeue cannot be run here
    assert launch.status(["21"], log=lambda *a: None) == dict(
        done=0, running=0, pending=0, failed=0, lost=0, submitted=8, missing=0)
    monkeypatch.setattr(launch, "queued_jobs", lambda: {"102_0": ("PENDING", "Dependency")})   # the chain waits
    assert launch.main(argv) == 0 and len(sent) == 4
    for seed in (0, 1, 2):   # step 1's seeds ended well, one of step 2's failed
        launch.note("defsentplus", f"{tag}-1-seed{seed}", launch.DONE, "2026-12-02 10:00:00")
    launch.work([(dict(step=2), "defsentplus", f"{tag}-2-seed1", ("defsent_lite.checks:count", dict(value=-1, name="steps")))])
    monkeypatch.setattr(launch, "slurm_word", lambda task: "gone")
    assert launch.status(["21"], log=lambda *a: None) == dict(
        done=3, running=0, pending=1, failed=1, lost=3, submitted=0, missing=0)
    monkeypatch.setattr(launch, "queued_jobs", dict)
    launch.note("defsentplus", f"{tag}-2-seed0", launch.DONE, "2026-12-02 10:00:00")   # a seed done is not sent again
    del sent[:]
    assert launch.main(argv) == 0
    assert [keys for keys, _ in sent] == [[[f"{tag}-2-space"]], [[f"{tag}-2-seed{s}"] for s in (1, 2)]]
    assert [extra for _, extra in sent] == [{"constraint": "h100"}, {"constraint": "h100", "dependency": "afterok:100"}]
    assert "steps 2-2" in capsys.readouterr().out
    # Issue 84, case 3: the space job died; its dependents wait for ever. A relaunch cancels them and
    # submits again from the first step not done, not "0 submitted" until the user cancels by hand.
    monkeypatch.setattr(launch, "queued_jobs", lambda: {"101_0": ("PENDING", "DependencyNeverSatisfied"),
                                                        "101_1": ("PENDING", "DependencyNeverSatisfied")})
    cancelled = []
    monkeypatch.setattr(launch, "cancel", cancelled.extend)
    del sent[:]
    assert launch.main(argv) == 0
    assert cancelled == ["101_0", "101_1"]
    assert [keys for keys, _ in sent] == [[[f"{tag}-2-space"]], [[f"{tag}-2-seed{s}"] for s in (1, 2)]]
    assert "2 task(s) waiting on a step that ended without success cancelled" in capsys.readouterr().out


def test_a_broken_local_model_folder_reads_failed_with_its_reason(tmp_path, monkeypatch):
    """Issue 84, case 6: while a local model folder stayed broken its trainings read "missing"."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "config.json").write_text("{}")   # no weights, no tokenizer
    lines = []
    counts = launch.status(["32"], "smoke", model=str(broken), log=lines.append)
    assert counts["failed"] == 1 and counts["missing"] == 0
    assert any(line.startswith(f"failed: notebook 32 model {broken}") and "weights" in line for line in lines), lines


def test_readme_says_no_training_only_of_notebooks_the_launcher_lists_nothing_for():
    """Issue 84, case 6: README said notebook 32 trains nothing; it trains 30's ent+rev run when
    alone (the launcher lists it)."""
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    said = {m[1]: m[2].strip() for m in re.finditer(r"^\| `(\d\d)_\w+` \|.*\| ([^|]+) \| [^|]+ \|$", readme, re.M)}
    assert len(said) == 18
    for notebook in [n for n in launch.NOTEBOOKS if said[n] == "no training"]:
        assert not launch.trainings(notebook, "smoke", log=lambda *a: None), notebook


def test_per_gpu_said_ignored_where_it_cannot_apply_and_the_launch_logs_are_not_committed(monkeypatch, capsys):
    """Issue 84, case 6: --per-gpu was ignored without a word on SLURM and on a machine without a
    GPU; launch_logs/ (submitit's logs and pickles) was not ignored by git."""
    monkeypatch.setattr(launch, "torch_gpus", lambda: 0)
    assert launch.main(["32", "--per-gpu", "4", "--dry-run"]) == 0
    assert "--per-gpu 4 ignored: no GPU here" in capsys.readouterr().out
    monkeypatch.setattr(launch, "torch_gpus", lambda: 2)
    assert launch.main(["32", "--executor", "slurm", "--per-gpu", "4", "--dry-run"]) == 0
    assert "--per-gpu 4 ignored: SLURM gives each task a GPU of its own" in capsys.readouterr().out
    repo = Path(__file__).resolve().parents[1]
    if (repo / ".git").exists():
        ignored = subprocess.run(["git", "check-ignore", "launch_logs/1_0_log.out"], cwd=repo, capture_output=True)
        assert ignored.returncode == 0


def test_a_lost_task_is_named_with_slurm_accounting_where_there_is_one(monkeypatch):
    """Issue 84, case 2: sacct's word where SLURM keeps accounts; else scontrol's while slurmctld
    remembers the task, said as such; else that nothing is known."""
    import types

    answers = {}

    def run(command, **kwargs):
        out = answers.get(command[0])
        if out is None:
            raise subprocess.CalledProcessError(1, command, stderr="accounting storage is disabled")
        return types.SimpleNamespace(stdout=out, returncode=0)
    monkeypatch.setattr(launch.subprocess, "run", run)
    answers["sacct"] = "CANCELLED by 0|0:15\n"
    assert launch.slurm_word("12_3") == "SLURM accounting: CANCELLED by 0, exit code 0:15"
    del answers["sacct"]
    answers["scontrol"] = "JobId=12 ArrayTaskId=3 JobState=TIMEOUT Reason=TimeLimit ExitCode=0:0 Other=x\n"
    assert launch.slurm_word("12_3") == "SLURM: TIMEOUT, exit code 0:0, reason TimeLimit; no accounting here"
    del answers["scontrol"]
    assert launch.slurm_word("12_3") == "no SLURM accounting here, and slurmctld no longer remembers it"


def test_a_time_limit_too_short_to_save_is_refused_with_the_shortest_that_works(capsys):
    """Issue 84, case 5: --timeout-min 1 was accepted; the task died before its handler was in
    place, ended FAILED, and --status said "submitted"."""
    with pytest.raises(SystemExit):
        launch.main(["30", "--timeout-min", "4", "--dry-run"])
    assert "--timeout-min 4: at least 5 (the time-out signal comes 90-150 s before the limit" in capsys.readouterr().err
    assert launch.main(["32", "--timeout-min", "5", "--dry-run"]) == 0


def test_local_pst_runs_step_k_of_every_config_in_one_round_and_stops_only_a_failed_chain(monkeypatch, tmp_path):
    """A local launch's PST: step k of every config together (the spaces by the launching process,
    then all their seeds in one share of the workers: a process imports once for many), a config's
    step only after its step before; a failed step stops its own config, not the others."""
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path))
    cfgs = [dict(model="m", dataset=d, seeds=[0, 1], lrs=[1e-5] * n) for d, n in (("a", 3), ("b", 1), ("c", 2))]

    def stages(notebook, cfg, data_dir):
        def job(step, name):
            key = f"{cfg['dataset']}-{step}-{name}"
            return launch.Training(notebook, "DefSent+", dict(data=cfg["dataset"], step=step, job=name), 1,
                                   key, True, ("unused:call", {}))
        return [([job(k, "space")], [job(k, f"seed{s}") for s in cfg["seeds"]]) for k in range(1, len(cfg["lrs"]) + 1)]
    calls = []

    def work(jobs, threads=None, standins=False, strict=False):   # c's step 1, seed 1 fails
        calls.append([key for _, _, key, _ in jobs])
        for _, kind, key, _ in jobs:
            if key != "c-1-seed1":
                launch.note(kind, key, launch.DONE, launch.time.strftime(launch.STAMP))
        return [dict(label, status="failed" if key == "c-1-seed1" else "trained", error="boom")
                for label, _, key, _ in jobs]
    monkeypatch.setattr(launch, "pst_configs", lambda *a: cfgs)
    monkeypatch.setattr(launch, "pst_stages", stages)
    monkeypatch.setattr(launch, "trainings", lambda *a, **k: [])
    monkeypatch.setattr(launch, "work", work)
    monkeypatch.setattr(launch, "start", lambda todo, *a: todo)
    monkeypatch.setattr(launch, "collect", lambda todo: launch.Outcome(work(launch.job_inputs(todo)), []))
    said = []
    outcome = launch.launch(["21"], kind="local", log=said.append)
    assert calls == [["a-1-space", "b-1-space", "c-1-space"],
                     ["a-1-seed0", "a-1-seed1", "b-1-seed0", "b-1-seed1", "c-1-seed0", "c-1-seed1"],
                     ["a-2-space"], ["a-2-seed0", "a-2-seed1"], ["a-3-space"], ["a-3-seed0", "a-3-seed1"]]
    assert "notebook 21: PST on c stopped at step 1 (a later step needs this one's best run)" in said
    assert not any("PST on a stopped" in s or "PST on b stopped" in s for s in said)
    assert [r["job"] for r in outcome.failed] == ["seed1"]
