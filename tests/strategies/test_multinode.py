"""Two nodes, simulated on this machine: two torchrun agents, and a SLURM-shaped pair of tasks.

Each "node" is one process; the ranks meet on 127.0.0.1, train one DDP step and must agree on
ranks, world size and weights (which also match one process over the same global batch).
"""

from __future__ import annotations

import json
import os
import random
import signal
import socket
import subprocess
import sys

import pytest
from _helpers import PROBE, ROOT, free_port, script_env
from test_ddp_integration import _check_run

NODES = 2
# Two agents and two ranks (four interpreters importing torch) per test: CI's second step runs them
# (`-m "extras or slow"`); the README's command leaves them out (single-node torchrun stays in it).
pytestmark = pytest.mark.slow


def _run_nodes(commands: list[list[str]], envs: list[dict[str, str]], timeout: float = 150) -> list[str]:
    """Start every node in its own session; on timeout kill them all. Return each node's stderr."""
    procs = [
        subprocess.Popen(
            cmd,
            env={**script_env(), **env},
            cwd=ROOT,
            start_new_session=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for cmd, env in zip(commands, envs, strict=False)
    ]
    errors = []
    try:
        for proc in procs:
            errors.append(proc.communicate(timeout=timeout)[1])
    finally:
        for proc in procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    for node, proc in enumerate(procs):
        error = errors[node] if node < len(errors) else ""
        assert proc.returncode == 0, f"node {node} exited with {proc.returncode}:\n{error}"
    return errors


def _reports(out) -> list[dict]:
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in range(NODES)]


def _check_two_nodes(reports: list[dict]) -> None:
    for rank, report in enumerate(reports):
        assert report["world_size"] == NODES
        assert report["node_rank"] == rank and report["local_rank"] == 0
    _check_run(reports)  # live group in setup, ranks, DDP wrapper, identical weights equal to the reference


def _probe(out) -> list[str]:
    return [str(PROBE), "--out", str(out), "--num-nodes", str(NODES), "--devices", "1", "--stages", "fit"]


def test_two_torchrun_agents_on_loopback(tmp_path):
    port = free_port()
    commands = [
        [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--nnodes",
            str(NODES),
            "--nproc-per-node",
            "1",
            "--node-rank",
            str(node),
            "--master-addr",
            "127.0.0.1",
            "--master-port",
            str(port),
            *_probe(tmp_path),
        ]
        for node in range(NODES)
    ]
    _run_nodes(commands, [{}] * NODES)
    _check_two_nodes(_reports(tmp_path))


def _slurm_job_id() -> str:
    """A job id whose derived rendezvous port (10000 + its last four digits) is free here."""
    for _ in range(100):
        job = str(random.randrange(100000, 999999))
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", 10000 + int(job[-4:])))
            except OSError:
                continue
        return job
    raise AssertionError("no free port in 10000-19999")


def test_a_slurm_shaped_run_two_tasks_on_two_nodes(tmp_path):
    job = _slurm_job_id()
    envs = [
        {  # what `srun` sets for `#SBATCH --nodes=2 --ntasks-per-node=1` (the node list is this machine)
            "SLURM_JOB_ID": job,
            "SLURM_JOB_NAME": "train",
            "SLURM_NTASKS": str(NODES),
            "SLURM_NNODES": str(NODES),
            "SLURM_NTASKS_PER_NODE": "1",
            "SLURM_TASKS_PER_NODE": f"1(x{NODES})",
            "SLURM_JOB_NODELIST": "127.0.0.1",
            "SLURM_NODELIST": "127.0.0.1",
            "SLURM_PROCID": str(node),
            "SLURM_LOCALID": "0",
            "SLURM_NODEID": str(node),
        }
        for node in range(NODES)
    ]
    _run_nodes([[sys.executable, *_probe(tmp_path)]] * NODES, envs)
    _check_two_nodes(_reports(tmp_path))
