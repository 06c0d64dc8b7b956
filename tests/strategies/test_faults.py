"""Faults in `strategies` (issue 15), each with real processes, real signals and real gloo."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from _helpers import ROOT, SCRIPTS, run_script, script_env

FAULT_RUN = SCRIPTS / "fault_run.py"


def test_fit_in_a_thread_keeps_the_children_alive_after_the_thread_ends(tmp_path):
    result = run_script([sys.executable, str(FAULT_RUN), "thread-fit", str(tmp_path)], timeout=120)
    assert result.returncode == 0, result.stderr
    assert "failed" not in result.stderr
    assert (tmp_path / "after0").read_text() == "done"
    assert (tmp_path / "after1").read_text() == "done", "rank 1 died when the thread that called fit ended"


def _wait_for(path, proc, timeout=90.0):
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


@pytest.mark.extras  # a second ddp run (~15 s on 2 busy cores)
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
