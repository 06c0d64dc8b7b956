"""Shared helpers for the strategy tests: the probe script and the documented contract."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
PROBE = SCRIPTS / "probe.py"

if str(SCRIPTS) not in sys.path:
    sys.path.insert(0, str(SCRIPTS))


def script_env() -> dict[str, str]:
    """The environment for a script run: the repo importable, no inherited rank variables."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT", "MASTER_ADDR", "NODE_RANK", "TORCHELASTIC_RUN_ID")
    }
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def free_port() -> int:
    """A TCP port on the loopback that nothing listens on now (for MASTER_PORT)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_script(
    args: list[str], timeout: float = 150, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """Run a command in its own session; on timeout kill the whole group (never leave orphans).

    The default timeout is generous (imports of torch take 20 s on a busy machine) and below
    pytest-timeout's 180 s, so that a hang is reported here, with the output, and the group killed.
    """
    proc = subprocess.Popen(
        args,
        env={**script_env(), **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=cwd or ROOT,
    )
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        raise AssertionError(f"{args} timed out after {timeout} s\n{out}\n{err}") from None
    return subprocess.CompletedProcess(args, proc.returncode, out, err)


def contract_rows() -> list[tuple[list[str], str]]:
    """(recorded names, stages) for each row of docs/lifecycle.md's table that is recorded."""
    text = (ROOT / "docs" / "lifecycle.md").read_text()
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 5 or not re.fullmatch(r"\d+[a-z]?", cells[0]):
            continue
        recorded, stages = cells[2], cells[3]
        if recorded.startswith("("):
            continue
        names = re.findall(r"`([a-z_]+\.[a-z_]+)`", recorded)
        if "process_group.init" in names:
            names = ["process_group.*"]
        rows.append((names, stages))
    return rows


def expected_order(stage: str, *, parallel: bool, local_rank: int) -> list[str]:
    """The contract's recorded names for one stage, as the docs' table lists them."""
    names = []
    for row_names, stages in contract_rows():
        if not (stages.startswith("all") or stages.startswith(stage)):
            continue
        if "(parallel)" in stages and not parallel:
            continue
        if "(local rank 0)" in stages and local_rank != 0:
            continue
        names.extend(row_names)
    return names


def observed_order(record: list, stage: str) -> list[str]:
    """The record of one stage, reduced to the names the contract table lists."""
    known = {n for names, _ in contract_rows() for n in names}
    out = []
    for _rank, rec_stage, name in record:
        if rec_stage != stage:
            continue
        if name.startswith("process_group."):
            name = "process_group.*"
        if name in known:
            out.append(name)
    return out


def quiet_trainer(trainer_cls: Any = None, **kwargs: Any) -> Any:
    """A Trainer that writes nothing (no logger, checkpoint, bar or summary) unless ``kwargs`` say so.

    ``trainer_cls`` is ``strategies.Trainer`` by default, or Lightning's, which then also gets
    ``accelerator="cpu"``, for the tests that run one program on both.
    """
    import strategies

    trainer_cls = trainer_cls or strategies.Trainer
    options: dict[str, Any] = dict(
        logger=False, enable_checkpointing=False, enable_progress_bar=False, enable_model_summary=False
    )
    options.update(kwargs)
    if trainer_cls is not strategies.Trainer:
        options.setdefault("accelerator", "cpu")
    return trainer_cls(**options)


def spawn_trainer(**kwargs: Any) -> Any:
    """A quiet 2-process ``ddp_spawn`` Trainer on CPU (gloo), its collectives timing out after 120 s."""
    import datetime

    trainer = quiet_trainer(strategy="ddp_spawn", accelerator="cpu", devices=2, **kwargs)
    trainer.strategy.timeout = datetime.timedelta(seconds=120)
    return trainer
