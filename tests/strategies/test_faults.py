"""Faults in `strategies` (issue 15), each with real processes, real signals and real gloo."""

from __future__ import annotations

import datetime
import errno
import json
import os
import signal
import subprocess
import sys
import time

import pytest
import torch
from _helpers import ROOT, SCRIPTS, free_port, run_script, script_env
from fault_run import Tiny, loader

from strategies import Callback, FSDPStrategy, SingleDeviceStrategy, Trainer

FAULT_RUN = SCRIPTS / "fault_run.py"


def test_fit_in_a_thread_keeps_the_children_alive_after_the_thread_ends(tmp_path):
    result = run_script([sys.executable, str(FAULT_RUN), "thread-fit", str(tmp_path)], timeout=300)
    assert result.returncode == 0, result.stderr
    assert "failed" not in result.stderr
    assert (tmp_path / "after0").read_text() == "done"
    assert (tmp_path / "after1").read_text() == "done", "rank 1 died when the thread that called fit ended"


def _wait_for(path, proc, timeout=240.0):
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert proc.poll() is None, f"the job ended before {path.name} appeared: {proc.returncode}"
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.1)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow  # a second ddp run (~15 s on 2 busy cores)
def test_children_started_from_a_thread_still_die_when_rank_zero_is_sigkilled(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, str(FAULT_RUN), "thread-fit-wait", str(tmp_path)],
        env=script_env(),
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    child = None
    try:
        _wait_for(tmp_path / "pid1", proc)
        _wait_for(tmp_path / "pid0", proc)
        child = int((tmp_path / "pid1").read_text())
        assert _alive(child)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        deadline = time.monotonic() + 30
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "rank 1 outlived rank 0's SIGKILL"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        if child is not None and _alive(child):
            os.kill(child, signal.SIGKILL)


# -- 2: checkpoint writes: a full disk, a kill mid-write -----------------------------------------------


def _leftovers(directory):
    return sorted(p.name for p in directory.iterdir() if p.name != "model.ckpt")


def test_disk_full_during_save_removes_the_partial_file_and_names_the_cause(tmp_path):
    result = run_script([sys.executable, str(FAULT_RUN), "disk-full", str(tmp_path)], timeout=300)
    assert result.returncode == 0, result.stderr
    raised = json.loads(result.stdout.strip().splitlines()[-1])
    assert raised["type"] == "OSError" and raised["errno"] == errno.EFBIG, raised
    assert f"no space left on {tmp_path}" in raised["message"] and "model.ckpt" in raised["message"]
    assert raised["chain"][1:] == ["RuntimeError", "OSError"], "torch's error and the OSError are chained"
    assert _leftovers(tmp_path) == [], "the partial temporary file was left behind"
    previous = torch.load(tmp_path / "model.ckpt", weights_only=True)
    assert previous["state_dict"]["w"].tolist() == [1.0] * 4, "the earlier checkpoint was damaged"


def test_a_save_killed_mid_write_leaves_a_temporary_that_the_next_save_removes(tmp_path):
    proc = subprocess.Popen(
        [sys.executable, str(FAULT_RUN), "save-blocked", str(tmp_path)],
        env=script_env(),
        cwd=ROOT,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        _wait_for(tmp_path / "blocked", proc, timeout=300)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    stale = [p.name for p in tmp_path.iterdir() if p.name.startswith(".model.ckpt.")]
    assert len(stale) == 1, sorted(p.name for p in tmp_path.iterdir())
    mine = tmp_path / ".mine.tmp"  # a user's file, and a write in progress in a live process: not ours to remove
    mine.write_text("keep")
    live = tmp_path / f".other.ckpt.{os.getppid()}.strategies-tmp"
    live.write_text("in progress")
    SingleDeviceStrategy("cpu").save_checkpoint({"state_dict": {"w": torch.ones(2)}}, tmp_path / "epoch=1.ckpt")
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == sorted(["blocked", "epoch=1.ckpt", ".mine.tmp", live.name]), names


# -- 3: FSDP's sharded save swaps the new checkpoint in: a kill leaves a complete one ------------------


class _StepAtStart(Callback):
    def on_train_start(self, trainer, module):
        self.step = trainer.global_step


@pytest.mark.slow  # an FSDP run in a subprocess, then a resume in this process (~20 s on 2 cores)
def test_a_kill_during_the_sharded_checkpoint_swap_leaves_a_checkpoint_that_loads(tmp_path):
    result = run_script([sys.executable, str(FAULT_RUN), "fsdp-kill-swap", str(tmp_path)], timeout=300)
    assert result.returncode == -signal.SIGKILL, (result.returncode, result.stderr[-3000:])
    assert (tmp_path / "saved-step").read_text() == "2"
    seen = _StepAtStart()
    strategy = FSDPStrategy(state_dict_type="sharded", timeout=datetime.timedelta(seconds=30))
    try:
        trainer = Trainer(
            strategy=strategy,
            accelerator="cpu",
            devices=1,
            max_steps=3,
            logger=False,
            enable_checkpointing=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            callbacks=[seen],
        )
        trainer.fit(Tiny(), loader(), ckpt_path=tmp_path / "ckpt")
        assert seen.step == 2, "the run did not resume from the complete step-2 checkpoint"
        assert trainer.global_step == 3
        trainer.save_checkpoint(tmp_path / "ckpt")  # the next save clears what the kill left
    finally:
        strategy.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ckpt", "saved-step"]


# -- 4: a partial torchrun environment is an error at once, not a 30-minute wait -----------------------


def test_a_leftover_local_rank_fails_at_once_naming_the_variables(tmp_path):
    result = run_script(
        [sys.executable, str(FAULT_RUN), "ddp-fit", str(tmp_path)], env={"LOCAL_RANK": "1"}, timeout=300
    )
    assert result.returncode == 1, result.stderr
    assert "LOCAL_RANK=1" in result.stderr
    assert "missing: RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID" in result.stderr
    assert "`unset LOCAL_RANK`" in result.stderr and "torchrun --nproc-per-node" in result.stderr
    assert not (tmp_path / "fitted").exists()


@pytest.mark.parametrize(
    ("variables", "missing"),
    [
        ({"LOCAL_RANK": "0", "WORLD_SIZE": "2"}, "RANK, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID"),
        ({"TORCHELASTIC_RUN_ID": "abc", "RANK": "0", "LOCAL_RANK": "0"}, "WORLD_SIZE, MASTER_ADDR, MASTER_PORT"),
        ({"GROUP_RANK": "0", "LOCAL_WORLD_SIZE": "2"}, "RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT"),
    ],
)
def test_any_partial_torchrun_environment_is_an_error_at_construction(monkeypatch, variables, missing):
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(RuntimeError, match="variables torchrun sets") as raised:
        Trainer(strategy="ddp", accelerator="cpu", devices=2)
    assert f"missing: {missing}" in str(raised.value)
    for name, value in variables.items():
        assert f"{name}={value}" in str(raised.value)


def test_a_complete_rank_environment_without_torchrun_is_still_accepted(monkeypatch):
    # What our launchers (and a hand-started rank) set: LOCAL_RANK, WORLD_SIZE, MASTER_PORT.
    for name, value in {"LOCAL_RANK": "1", "WORLD_SIZE": "2", "MASTER_PORT": "29999", "NODE_RANK": "0"}.items():
        monkeypatch.setenv(name, value)
    trainer = Trainer(strategy="ddp", accelerator="cpu", devices=2)
    assert trainer.global_rank == 1 and trainer.world_size == 2


# -- 5: every numeric Trainer argument is checked at construction, with Lightning 2.6's ranges --------

_LIMIT = ([None, 0, 0.0, 0.5, 1, 1.0, 10, 2.0], [-1, -0.5, 1.5, "all"])
# name: (values Lightning 2.6 accepts, values it refuses or cannot run with)
NUMERIC_ARGUMENTS = {
    "max_epochs": ([None, 0, -1, 3], [-2, 1.5, "3"]),
    "max_steps": ([-1, 0, 5], [-5, -2, 2.5, "5", None]),
    "min_steps": ([None, 0, 5, -1], ["5", 1.5]),
    "min_epochs": ([None, 0, 2, -1], ["2", 1.5]),
    "val_check_interval": ([None, 0.0, 0.25, 1.0, 1, 3, 2.0], [-0.5, 1.5, 0, -3, "x"]),
    "check_val_every_n_epoch": ([None, 1, 3], [0, -1, 1.5]),
    "log_every_n_steps": ([None, 0, 1, 50], [-1, 1.5]),
    "accumulate_grad_batches": ([1, 4], [0, -1, 1.5]),
    "num_sanity_val_steps": ([None, -1, 0, 2], [-2, 1.5]),
    "limit_train_batches": _LIMIT,
    "limit_val_batches": _LIMIT,
    "limit_test_batches": _LIMIT,
    "limit_predict_batches": _LIMIT,
    "gradient_clip_val": ([None, 0, 0.5, 1], ["x", [1.0]]),
    "devices": (["auto", 1, "1", -1], [0, -2, 1.5, "x"]),
    "num_nodes": ([1], [0, -1, 1.5]),
    "fast_dev_run": ([False, True, 0, 1, 5], [-1, 1.5]),
    "max_time": ([None, "00:00:01:00", {"minutes": 1}, datetime.timedelta(hours=1)], ["1h", 5]),
}
_CASES = [
    pytest.param(name, value, good, id=f"{name}={value!r}-{'ok' if good else 'refused'}")
    for name, (accepted, refused) in NUMERIC_ARGUMENTS.items()
    for good, values in ((True, accepted), (False, refused))
    for value in values
]


@pytest.mark.parametrize(("name", "value", "good"), _CASES)
def test_every_numeric_trainer_argument_is_checked_at_construction(name, value, good):
    def build():
        return Trainer(accelerator="cpu", logger=False, enable_checkpointing=False, **{name: value})

    if good:
        build()
        return
    with pytest.raises((ValueError, TypeError)) as raised:
        build()
    assert f"`{name}=" in str(raised.value), str(raised.value)


def test_a_fraction_of_an_epoch_needs_epochs_to_count_in():
    with pytest.raises(ValueError, match="`val_check_interval=0.5` is a fraction of an epoch"):
        Trainer(accelerator="cpu", val_check_interval=0.5, check_val_every_n_epoch=None)
    Trainer(accelerator="cpu", val_check_interval=3, check_val_every_n_epoch=None)


def test_a_whole_float_limit_is_that_many_batches_as_in_lightning():
    trainer = Trainer(accelerator="cpu", limit_train_batches=3.0, val_check_interval=2.0, logger=False)
    assert trainer.limits["train"] == 3 and isinstance(trainer.limits["train"], int)
    assert trainer.val_check_interval == 2 and isinstance(trainer.val_check_interval, int)


# -- 7: a torchrun elastic restart resumes from the last checkpoint -----------------------------------


@pytest.mark.slow  # torchrun, 2 ranks, 2 attempts: about a minute on 2 busy cores
def test_a_torchrun_restart_resumes_from_the_last_checkpoint(tmp_path):
    torchrun = [sys.executable, "-m", "torch.distributed.run", "--max-restarts", "1", "--nproc-per-node", "2"]
    address = ["--master-addr", "127.0.0.1", "--master-port", str(free_port())]
    result = run_script([*torchrun, *address, str(FAULT_RUN), "elastic", str(tmp_path)], timeout=480)
    assert result.returncode == 0, result.stderr[-5000:]
    assert "rank 1 fails once" in result.stderr, "the first attempt did not fail"
    assert not list(tmp_path.glob("attempt0-*.json")), "the first attempt finished"
    for rank in (0, 1):
        report = json.loads((tmp_path / f"attempt1-rank{rank}.json").read_text())
        # The last checkpoint before the failure at step 3 is step 2's; the run goes on to max_steps=6.
        assert report == {"start": 2, "end": 6}, (rank, report)


def test_ckpt_path_last_without_a_checkpoint_starts_from_scratch_with_a_warning(tmp_path):
    from strategies import ModelCheckpoint

    def trainer():
        return Trainer(
            accelerator="cpu",
            max_steps=2,
            logger=False,
            enable_progress_bar=False,
            enable_model_summary=False,
            callbacks=[ModelCheckpoint(dirpath=tmp_path, save_last=True)],
        )

    first = trainer()
    with pytest.warns(UserWarning, match=r'ckpt_path="last"\)` is set, but there is no last checkpoint'):
        first.fit(Tiny(), loader(), ckpt_path="last")
    assert first.global_step == 2 and (tmp_path / "last.ckpt").exists()
    second = trainer()
    second.max_steps = 3  # a new run of the script: it finds last.ckpt and goes on from step 2
    second.fit(Tiny(), loader(), ckpt_path="last")
    assert second.global_step == 3
