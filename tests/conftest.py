"""Suite-wide guards: no test may leave a process group, a child process or rank variables behind."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

# tests/ itself, for the helpers shared by several test folders (run_outputs)
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))

_RANK_VARS = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "NODE_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "GROUP_RANK",
    "TORCHELASTIC_RUN_ID",
    "LOCAL_WORLD_SIZE",
)


def _children(pid: int) -> list[int]:
    """Live (non-zombie) child processes of ``pid``, read from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid and fields[0] != "Z" and not _is_mp_helper(entry):
            found.append(int(entry))
    return found


def _is_mp_helper(pid: str) -> bool:
    """multiprocessing's resource tracker lives for the whole session by design."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return b"resource_tracker" in f.read()
    except OSError:
        return False


@pytest.fixture(autouse=True)
def no_leftovers():
    """Fail a test that leaves a process group, a child process, a rank variable or
    ``rank_zero_only.rank`` behind."""
    env_before = {k: os.environ.get(k) for k in _RANK_VARS}
    children_before = set(_children(os.getpid()))
    yield
    problems = []
    import sys

    if "torch.distributed" in sys.modules:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()
            problems.append("a process group was left initialised")
    deadline = time.monotonic() + 5
    leftover = set(_children(os.getpid())) - children_before
    while leftover and time.monotonic() < deadline:
        time.sleep(0.1)
        leftover = set(_children(os.getpid())) - children_before
    for pid in leftover:
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    if leftover:
        problems.append(f"child processes were left running: {sorted(leftover)}")
    rank_zero = sys.modules.get("strategies.utilities.rank_zero")
    if rank_zero is not None and rank_zero.rank_zero_only._rank is not None:
        rank_zero.rank_zero_only._rank = None  # a strategy that set it was not closed
        problems.append("`rank_zero_only.rank` was left set (a strategy was set up and not closed)")
    for key, value in env_before.items():
        if os.environ.get(key) != value:
            problems.append(f"the environment variable {key} changed")
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    if problems:
        pytest.fail("; ".join(problems))
