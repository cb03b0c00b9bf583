"""Issue 84: the launcher against a real one-node SLURM (tests/slurm_cluster.py), with stand-in
trainings that wait for a go file, fail on request, or train a tiny BERT (test_resume's): submit
and leave, --status in every state from SLURM's own word, a failed training failing its task and
stopping its chain, a relaunch healing a chain whose link was cancelled, a requeue mid-run ending
as a run never stopped. Skipped, saying why, only where SLURM's packages cannot be installed."""
import os
import re
import subprocess
import time
from pathlib import Path

import pytest
import torch

import slurm_cluster
from test_resume import slow_training
from defsent_lite.repro import launch
from defsent_lite.runtime import config

pytest.importorskip("submitit")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    why = slurm_cluster.install()
    if why:
        pytest.skip(why)
    folder = tmp_path_factory.mktemp("slurm")
    conf = slurm_cluster.start(folder)
    yield conf
    slurm_cluster.stop(folder)


@pytest.fixture
def here(cluster, tmp_path, monkeypatch):
    """This test's cache, go files and logs; the jobs see the environment (sbatch exports it)."""
    monkeypatch.setenv("SLURM_CONF", str(cluster))
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))   # the tasks import this module
    (tmp_path / "go").mkdir()
    return tmp_path


# ---------------------------------------------------------------- what the tasks run


def waits_for(go, key, kind="gausscse"):
    """A stand-in training: waits for the file go/key, fails when go/key.fail exists, else stores a
    result (GaussCSE's) or nothing (a PST job: the launcher's done.txt marks it)."""
    go = Path(go)
    for _ in range(3000):
        if (go / key).exists():
            break
        time.sleep(0.1)
    if (go / f"{key}.fail").exists():
        raise ValueError(f"{key}: a stand-in failure")
    if kind == "gausscse":
        (config.cache_dir() / kind / key).mkdir(parents=True, exist_ok=True)
        (config.cache_dir() / kind / key / "result.json").write_text("{}")


# ---------------------------------------------------------------- helpers


def queue():
    return launch.queued_jobs() or {}


def wait_until(condition, what, seconds=180):
    for _ in range(int(seconds / 0.3)):
        if condition():
            return
        time.sleep(0.3)
    pytest.fail(f"{what}: not within {seconds} s; squeue: {queue()}")


def job_state(task):
    out = subprocess.run(["scontrol", "-o", "show", "job", task], capture_output=True, text=True).stdout
    return dict(re.findall(r"(JobState|ExitCode|Reason)=(\S+)", out))


def submitted(kind, key):
    return (config.cache_dir() / kind / key / launch.SUBMITTED).read_text().strip()


def gausscse_trainings(here, keys):
    """Notebook 30's trainings as the launcher lists them, each a stand-in waiting for its go file."""
    def listed(notebook, *a, **k):
        return [launch.Training("30", "GaussCSE", dict(seed=i), 1, key=key,
                                todo=not (config.cache_dir() / "gausscse" / key / "result.json").exists(),
                                call=("test_slurm:waits_for", dict(go=str(here / "go"), key=key)))
                for i, key in enumerate(keys)]
    return listed


def run(here, *argv, notebook="30"):
    return launch.main([notebook, "--executor", "slurm", "--cpus-per-task", "1", "--timeout-min", "10",
                        "--logs", str(here / "logs"), *argv])


# ---------------------------------------------------------------- the tests


def test_submit_and_leave_then_status_in_every_state_and_a_relaunch(here, monkeypatch, capsys):
    """Cases 2 and 4: pending with squeue's reason, running, done, failed with the training's own
    reason (its task FAILED, exit code 1), lost after scancel with SLURM's word; the relaunch
    submits only the failed and the lost; a request the partition cannot meet is refused first."""
    keys = ["k0", "k1", "k2", "k3", "k4"]
    monkeypatch.setattr(launch, "trainings", gausscse_trainings(here, keys))
    (here / "go" / "k4").touch()
    waits_for(here / "go", "k4")   # k4: trained already
    assert run(here, "--cpus-per-task", "64") == 2
    assert f"at most {os.cpu_count()} CPUs (sinfo)" in capsys.readouterr().err
    assert run(here, "--sbatch", "foo=bar") == 2
    assert "sbatch refused the tasks: sbatch: unrecognized option '--foo=bar'" in capsys.readouterr().err
    assert queue() == {}   # nothing submitted
    (here / "go" / "k1.fail").touch()
    assert run(here, "--workers", "1") == 0
    task = {k: submitted("gausscse", k) for k in keys[:4]}
    wait_until(lambda: queue().get(task["k0"], ("",))[0] == "RUNNING"
               and all(queue().get(task[k], ("", ""))[1] == "JobArrayTaskLimit" for k in keys[1:4]),
               "task 0 running, the others held by --workers 1")
    lines = []
    assert launch.status(["30"], log=lines.append) == dict(
        done=1, running=1, pending=3, failed=0, lost=0, submitted=0, missing=0)
    assert "pending (squeue's reason): 3 JobArrayTaskLimit" in lines
    for key in ("k0", "k1"):
        (here / "go" / key).touch()
    wait_until(lambda: task["k1"] not in queue() and task["k2"] in queue(), "k0 done, k1 failed")
    assert job_state(task["k1"])["JobState"] == "FAILED" and job_state(task["k1"])["ExitCode"] == "1:0"
    wait_until(lambda: queue().get(task["k2"], ("",))[0] == "RUNNING", "k2 running")
    subprocess.run(["scancel", task["k2"]], check=True)
    (here / "go" / "k3").touch()
    wait_until(lambda: not queue().keys() & set(task.values()), "the array ended")
    lines = []
    assert launch.status(["30"], log=lines.append) == dict(
        done=3, running=0, pending=0, failed=1, lost=1, submitted=0, missing=0)
    assert any(line.startswith("failed: notebook 30 seed 1: ValueError: k1: a stand-in failure") for line in lines)
    assert any(f"lost: notebook 30 seed 2: task {task['k2']} left the queue without a result (SLURM: CANCELLED"
               in line and line.endswith("relaunch") for line in lines), lines
    (here / "go" / "k1.fail").unlink()
    (here / "go" / "k2").touch()
    capsys.readouterr()
    assert run(here) == 0
    assert "2 task(s) submitted (2 training(s), 0 PST task(s))" in capsys.readouterr().out
    wait_until(lambda: all((config.cache_dir() / "gausscse" / k / "result.json").exists() for k in keys), "relaunch")
    wait_until(lambda: not queue(), "the queue empty")
    assert launch.status(["30"], log=lambda *a: None)["done"] == 5


def test_a_failed_step_stops_its_chain_and_a_relaunch_heals_a_cancelled_link(here, monkeypatch, capsys):
    """Cases 3 and 4: PST's steps chained with afterok; a failed step's task fails, so its
    dependents never run (DependencyNeverSatisfied); a running link cancelled leaves them waiting
    for ever; a relaunch cancels them and submits again from the first step not done."""
    cfg = dict(model="m", dataset="a", seeds=[0, 1], lrs=[1e-5, 2e-5])
    go = here / "go"

    def stages(notebook, cfg, data_dir):
        def job(step, name):
            key = f"chain-{step}-{name}"
            return launch.Training(notebook, "DefSent+", dict(step=step, job=name), 1, key,
                                   not launch.marked(config.cache_dir() / "defsentplus" / key / launch.DONE),
                                   ("test_slurm:waits_for", dict(go=str(go), key=key, kind="defsentplus")))
        return [([job(k, "space")], [job(k, f"seed{s}") for s in (0, 1)]) for k in (1, 2)]
    monkeypatch.setattr(launch, "pst_configs", lambda *a: [cfg])
    monkeypatch.setattr(launch, "pst_stages", stages)
    monkeypatch.setattr(launch, "trainings", lambda *a, **k: [])
    keys = [t.key for stage in stages("21", cfg, None) for jobs in stage for t in jobs]
    for key in keys:
        (go / key).touch()
    (go / "chain-1-space.fail").touch()

    def dependents_stuck():   # the next step's tasks; the later ones wait behind them ("Dependency")
        q = queue()
        return all(q.get(submitted("defsentplus", k), ("", ""))[1] == "DependencyNeverSatisfied" for k in keys[1:3])
    assert run(here, notebook="21") == 0
    wait_until(dependents_stuck, "the chain stopped at its failed first step")
    assert job_state(submitted("defsentplus", keys[0]))["JobState"] == "FAILED"
    assert launch.status(["21"], log=lambda *a: None) == dict(
        done=0, running=0, pending=5, failed=1, lost=0, submitted=0, missing=0)
    (go / "chain-1-space.fail").unlink()
    (go / "chain-1-space").unlink()   # the next space job waits: it is cancelled while running
    capsys.readouterr()
    assert run(here, notebook="21") == 0
    assert "5 task(s) waiting on a step that ended without success cancelled" in capsys.readouterr().out
    wait_until(lambda: queue().get(submitted("defsentplus", keys[0]), ("",))[0] == "RUNNING", "the space job")
    subprocess.run(["scancel", submitted("defsentplus", keys[0])], check=True)
    wait_until(dependents_stuck, "the chain waits for ever behind its cancelled link")
    counts = launch.status(["21"], log=lambda *a: None)
    assert (counts["lost"], counts["pending"]) == (1, 5)
    (go / "chain-1-space").touch()
    assert run(here, notebook="21") == 0
    wait_until(lambda: not queue(), "the healed chain ran")
    assert launch.status(["21"], log=lambda *a: None)["done"] == 6


def test_a_training_requeued_mid_run_ends_as_one_never_stopped(here, monkeypatch):
    """Case 5: `scontrol requeue` sends SIGTERM; the training saves after the step under way (not
    10 minutes back) and the requeued task goes on from there to the weights of a run never
    stopped, bit for bit."""
    path, log, out, started = (here / n for n in ("resume.pt", "starts.txt", "weights.pt", "started"))
    call = ("test_resume:slow_training", dict(path=str(path), log=str(log), out=str(out), started=str(started),
                                              steps=24, pause=0.15))
    monkeypatch.setattr(launch, "trainings", lambda *a, **k: [launch.Training(
        "30", "GaussCSE", dict(seed=0), 24, key="tiny", todo=not out.exists(), call=call)])
    assert run(here) == 0
    task = submitted("gausscse", "tiny")
    wait_until(started.exists, "the training at its 4th step")
    subprocess.run(["scontrol", "requeue", task], check=True)
    wait_until(lambda: path.exists() and job_state(task).get("Reason") == "BeginTime", "the state saved on SIGTERM")
    subprocess.run(["scontrol", "update", f"jobid={task}", "StartTime=now"], check=True)   # SLURM holds
    # a requeued task 2 minutes: brought forward
    wait_until(lambda: out.exists() and task not in queue(), "the requeued training ended")
    starts = [int(line) for line in log.read_text().split()]
    assert len(starts) == 2 and starts[0] == 0 and starts[1] >= 4, starts   # saved at the signal, not at 0
    slow_training(here / "whole.pt", here / "whole.txt", out=here / "whole_weights.pt", started=here / "s2", steps=24)
    whole, resumed = (torch.load(p, weights_only=True) for p in (here / "whole_weights.pt", out))
    assert all(torch.equal(whole[k], resumed[k]) for k in whole)
