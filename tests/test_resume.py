"""Issue 70, Deliver 1: a training saves its state as it goes (train.train(resume=...)) and a run
stopped at any step and started again ends with the weights, losses and evaluations of a run never
stopped, bit for bit on the CPU (dropout on: torch's generators are restored too)."""
import os
import time
from pathlib import Path

import pytest
import torch
from transformers import BertConfig, BertForMaskedLM

from defsent_lite import defsent, train


class Preempted(Exception):
    pass


def tiny_bert():
    torch.manual_seed(0)
    return BertForMaskedLM(BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
                                      intermediate_size=32, max_position_embeddings=32))   # dropout 0.1


def reseeded(seed):
    """tiny_bert's architecture, other starting weights."""
    config = tiny_bert().config
    torch.manual_seed(seed)
    return BertForMaskedLM(config)


def batches(n=7):
    g = torch.Generator().manual_seed(1)
    return [dict(input_ids=torch.randint(5, 50, (3, 6), generator=g), attention_mask=torch.ones(3, 6, dtype=torch.long),
                 targets=torch.randint(5, 50, (3,), generator=g)) for _ in range(n)]


def run(model, resume=None, stop_at=None):
    head, steps = defsent.word_prediction_head(model), []

    def loss(m, b):
        steps.append(1)
        if len(steps) == stop_at:
            raise Preempted
        return defsent.loss(m, head, b, "mean")
    def score(m):   # a function of the weights, as a dev score is
        return float(m.bert.embeddings.word_embeddings.weight[7, :3].sum())
    return train.train(model, loss, batches(), train.Settings(lr=1e-2, optimizer="adamw", decay=True),
                       params=defsent.trainable_parameters(model), eval_fn=score, eval_every=2, progress=False,
                       resume=resume)


@pytest.mark.parametrize("stop", range(2, 8))
def test_a_run_stopped_at_any_step_and_resumed_equals_one_never_stopped(tmp_path, monkeypatch, stop):
    monkeypatch.setattr(train, "RESUME_EVERY_S", 0)   # save after every step
    whole = tiny_bert()
    expected = run(whole)
    resumed, path = tiny_bert(), tmp_path / "resume.pt"
    with pytest.raises(Preempted):
        run(resumed, path, stop_at=stop)
    assert torch.load(path, weights_only=True)["step"] == stop - 1
    again = tiny_bert()   # a new process: the model as loaded, the state from the file
    history = run(again, path)
    assert history == expected and history["best_step"] not in (None, 7)   # a best state kept
    for (name, a), b in zip(whole.state_dict().items(), again.state_dict().values()):
        assert torch.equal(a, b), name


def test_an_unreadable_state_or_another_runs_is_refused_naming_the_file(tmp_path, monkeypatch):
    path = tmp_path / "resume.pt"
    path.write_bytes(b"not a state")
    with pytest.raises(ValueError, match="cannot resume from .*resume.pt .*UnpicklingError.*; delete it"):
        run(tiny_bert(), path)
    path.unlink()
    monkeypatch.setattr(train, "RESUME_EVERY_S", 0)
    with pytest.raises(Preempted):
        run(tiny_bert(), path, stop_at=3)
    other = BertForMaskedLM(BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                                       intermediate_size=16, max_position_embeddings=32))
    with pytest.raises(ValueError, match="cannot resume from .*resume.pt .*another run's state"):
        run(other, path)


def test_a_resume_file_continues_only_the_run_it_belongs_to(tmp_path, monkeypatch):
    """Issue 85, case 1: a state with the same step count and shapes was taken by any run (one path
    reused after changing the rate went on at the old rate, bit for bit; another run's file gave a
    mix of both). The file names its run (settings, batches, starting weights)."""
    monkeypatch.setattr(train, "RESUME_EVERY_S", 0)
    path = tmp_path / "resume.pt"
    with pytest.raises(Preempted):
        run(tiny_bert(), path, stop_at=4)
    head = defsent.word_prediction_head(tiny_bert())
    for settings, data, model in [
        (train.Settings(lr=2e-2, optimizer="adamw", decay=True), batches(), tiny_bert()),   # another rate
        (train.Settings(lr=1e-2, optimizer="adamw", decay=True), batches()[::-1], tiny_bert()),   # other batches
        (train.Settings(lr=1e-2, optimizer="adamw", decay=True), batches(), reseeded(5)),   # other weights
    ]:
        with pytest.raises(ValueError, match="cannot resume from .*resume.pt .*another run's state"):
            train.train(model, lambda m, b: defsent.loss(m, head, b, "mean"), data, settings, progress=False,
                        resume=path)
    history = run(tiny_bert(), path)   # its own run still resumes from it
    assert history == run(tiny_bert())


def test_a_preempted_gausscse_run_goes_on_from_its_saved_step_to_the_same_scores(tmp_path, monkeypatch):
    """Through the run cache: the state is kept beside the writers' folders (cache.resume_file), the
    next writer of the run goes on from it, and it is removed once the run's entry is stored."""
    from defsent_lite import gausscse
    from defsent_lite.repro import gausscse_protocol
    from defsent_lite.runtime import cache, config
    from tiny_root import gausscse_root

    root = gausscse_root(tmp_path / "data", triplets=40, pairs=30)
    cfg = dict(gausscse_protocol.base_config(config.scale("smoke"), "offline", root), train_max=None,
               batch_size=8, dev_max=None, test_max=None, eval_every=2, setting="ent+con", seed=0, lr=1e-4)
    monkeypatch.setattr(train, "RESUME_EVERY_S", 0)
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "whole"))
    whole = gausscse_protocol.run(cfg, root)
    losses, real_loss = [], gausscse.triplet_loss

    def preempted_at_step_4(*args):
        losses.append(1)
        if len(losses) == 4:
            raise Preempted
        return real_loss(*args)
    monkeypatch.setattr(gausscse, "triplet_loss", preempted_at_step_4)
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "resumed"))
    with pytest.raises(Preempted):
        gausscse_protocol.run(cfg, root)
    resume = cache.resume_file(cache.run_dir("gausscse", gausscse_protocol.run_key(cfg, root)) / "files-x")
    assert torch.load(resume, weights_only=True)["step"] == 3
    resumed = gausscse_protocol.run(cfg, root)
    assert len(losses) == 4 + 2 and not resume.exists()   # steps 4 and 5 only; the state removed
    assert resumed == whole


def slow_training(path, log, signum=None, out=None, started=None, steps=8, pause=0.0):
    """A launcher job's training of `steps` steps, `pause` s each (run in the job's process, whose
    Work saves every 10 minutes): appends the step each process starts from to `log`; in its 4th
    step the first process touches `started`, else gets `signum` (default: the time-out signal
    SLURM and submitit's local controller send); the final weights go to `out`."""
    import submitit

    path = Path(path)
    first = torch.load(path, weights_only=True)["step"] if path.exists() else 0
    with open(log, "a") as f:
        f.write(f"{first}\n")
    model, done = tiny_bert(), []
    head = defsent.word_prediction_head(model)

    def loss(m, b):
        done.append(1)
        if first == 0 and len(done) == 4 and started:
            Path(started).touch()
        elif first == 0 and len(done) == 4:
            os.kill(os.getpid(), signum or submitit.JobEnvironment._usr_sig())
        time.sleep(pause)
        return defsent.loss(m, head, b, "mean")
    train.train(model, loss, batches(steps), train.Settings(lr=1e-2), progress=False, resume=path)
    if out:
        torch.save(model.state_dict(), out)


def test_a_local_job_preempted_mid_run_is_requeued_and_goes_on_from_its_saved_step(tmp_path, monkeypatch):
    """Issue 70: the launcher's jobs are submitit checkpointables: a preemption or time-out signal
    requeues the job, whose training goes on from its saved state (it restarted from step 0 and a
    timed-out job was never requeued)."""
    submitit = pytest.importorskip("submitit")
    from defsent_lite.repro import launch

    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).parent))   # the job imports this module
    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    path, log = tmp_path / "resume.pt", tmp_path / "starts.txt"
    executor = submitit.LocalExecutor(folder=tmp_path / "logs")
    executor.update_parameters(timeout_min=10)   # 10 minutes: submitit takes any signal as a time-out
    label = dict(notebook="test", method="DefSent")
    job = executor.submit(launch.Work(), [(label, "test", "k", ("test_resume:slow_training", dict(path=path, log=log)))])
    assert [r["status"] for r in job.result()] == ["trained"]
    assert [int(line) for line in log.read_text().split()] == [0, 4]   # saved at the signal's step, requeued


def test_sigterm_saves_the_step_under_way_and_the_job_run_again_ends_as_one_never_stopped(tmp_path, monkeypatch):
    """Issue 84, case 5: SIGTERM (a preemption, `scontrol requeue`, scancel) was not turned into a
    checkpoint: up to the save interval (10 minutes) was lost. Now the training saves after the
    step under way and the job exits; run again (SLURM requeues it), it ends with the weights of a
    run never stopped."""
    import signal

    from defsent_lite.repro import launch

    monkeypatch.setenv("DEFSENT_CACHE", str(tmp_path / "cache"))
    path, log, out = tmp_path / "resume.pt", tmp_path / "starts.txt", tmp_path / "weights.pt"
    job = [(dict(notebook="test", method="DefSent"), "test", "k",
            ("test_resume:slow_training", dict(path=path, log=log, signum=signal.SIGTERM, out=out)))]
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stopped:
        launch.Work()(job)
    assert stopped.value.code == 128 + signal.SIGTERM and not train.STOP.is_set()
    assert signal.getsignal(signal.SIGTERM) == before   # the handler there was before, back
    assert torch.load(path, weights_only=True)["step"] == 4 and not out.exists()
    assert [r["status"] for r in launch.Work()(job)] == ["trained"]
    slow_training(tmp_path / "none.pt", tmp_path / "log2.txt", signum=signal.SIGCONT, out=tmp_path / "whole.pt")
    whole, resumed = (torch.load(p, weights_only=True) for p in (tmp_path / "whole.pt", out))
    assert [int(line) for line in log.read_text().split()] == [0, 4]
    assert all(torch.equal(whole[k], resumed[k]) for k in whole)
