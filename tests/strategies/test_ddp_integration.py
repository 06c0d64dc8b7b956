"""DDP with real processes and gloo: the subprocess launcher, torchrun, failures and signals."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest
import torch
from _helpers import PROBE, ROOT, expected_order, free_port, observed_order, run_script, script_env
from probe import dataset
from torch.utils.data import DistributedSampler

# Tests of "the job ends at once instead of hanging" give the process group a timeout far beyond
# any busy machine's delay (HANG_TIMEOUT) and accept any end well before it (PROMPT): a hang lasts
# until that timeout, so the bound still catches it, while a machine loaded by other jobs (imports
# of torch taking 20 s) does not fail them.
HANG_TIMEOUT = 600
PROMPT = 120
RUN_LIMIT = 150  # run_script kills the job's whole group past this (below pytest-timeout's 180 s)
GONE_WITHIN = 60


def _first_global_batch(world: int = 2, batch_size: int = 4) -> list[int]:
    """The samples of the first step of ``world`` ranks: their training sampler shuffles (seed 0, epoch 0)."""
    indices = []
    for rank in range(world):
        sampler = DistributedSampler(dataset(), num_replicas=world, rank=rank, shuffle=True, seed=0)
        indices += list(sampler)[:batch_size]
    return indices


def _reference_weights(samples: list[int] | None = None) -> list:
    """One SGD step of a single process over the same global batch (by default samples 0-7, unshuffled)."""
    torch.manual_seed(0)
    layer = torch.nn.Linear(4, 1)
    x, y = dataset().tensors
    samples = list(range(8)) if samples is None else samples
    loss = torch.nn.functional.mse_loss(layer(x[samples]), y[samples])
    loss.backward()
    with torch.no_grad():
        for p in layer.parameters():
            p -= 0.1 * p.grad
    return [p.detach().flatten().tolist() for p in layer.parameters()]


def _load(out, world=2) -> list[dict]:
    return [json.loads((out / f"rank{r}.json").read_text()) for r in range(world)]


def _check_run(reports: list[dict]) -> None:
    reference = _reference_weights(_first_global_batch())
    for rank, report in enumerate(reports):
        for key in ("module_setup", "datamodule_setup"):
            seen = report[key]
            assert seen["initialized"] is True
            assert seen["dist_rank"] == seen["trainer_rank"] == rank
            assert seen["rank_zero_only_rank"] == rank  # strategies.utilities.rank_zero_only, as Lightning sets it
            assert seen["broadcast"] == 100 and seen["barrier"] is True
        assert report["wrapped"] == "DistributedDataParallel"
        assert report["layer_device"] == report["root_device"] == "cpu"
        assert torch.allclose(torch.tensor(report["weights"][0][0]), torch.tensor(reference[0]), atol=1e-6)
        assert torch.allclose(torch.tensor(report["weights"][0][1]), torch.tensor(reference[1]), atol=1e-6)
    assert reports[0]["weights"] == reports[1]["weights"]


def _check_order(reports: list[dict]) -> None:
    for rank, report in enumerate(reports):
        for stage in ("fit", "validate", "test", "predict"):
            expected = expected_order(stage, parallel=True, local_rank=rank)
            calls = observed_order(report["record"], stage)
            # fit runs twice in the probe (fit, validate, test, predict, fit).
            runs = 2 if stage == "fit" else 1
            assert calls == expected * runs, (rank, stage)
        pg = [name for _, _, name in report["record"] if name.startswith("process_group.")]
        assert pg == ["process_group.init"] + ["process_group.reuse"] * 4


@pytest.fixture(scope="module")
def ddp_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("ddp")
    result = run_script([sys.executable, str(PROBE), "--out", str(out)])
    assert result.returncode == 0, result.stderr
    return _load(out)


def test_ddp_subprocess_launcher_setup_sees_live_group_and_weights_match_reference(ddp_run):
    _check_run(ddp_run)


def test_ddp_recorded_order_per_rank_matches_contract(ddp_run):
    _check_order(ddp_run)


def test_ddp_group_stays_until_close_and_is_reused(ddp_run):
    assert all(r["pg_initialized_at_end"] for r in ddp_run)


def test_ddp_rendezvous_listens_on_loopback_only(ddp_run):
    assert ddp_run[0]["listeners"] == ["0100007F"], ddp_run[0]["listeners"]


@pytest.mark.slow  # a second 2-rank launch (~15 s on 2 busy cores); the default run checks loopback on the
# launcher's own port (above) and the spawn launches: CI's second step runs this one
def test_ddp_with_master_port_still_listens_on_loopback_only(tmp_path):
    port = free_port()
    result = run_script(
        [sys.executable, str(PROBE), "--out", str(tmp_path), "--stages", "fit"], env={"MASTER_PORT": str(port)}
    )
    assert result.returncode == 0, result.stderr
    reports = _load(tmp_path)
    assert reports[0]["listeners"] == ["0100007F"], f"MASTER_PORT={port}: {reports[0]['listeners']}"
    assert reports[0]["weights"] == reports[1]["weights"]


def test_ddp_under_torchrun(tmp_path):
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc-per-node",
        "2",
        "--master-addr",
        "127.0.0.1",
        "--master-port",
        str(free_port()),
        str(PROBE),
        "--out",
        str(tmp_path),
    ]
    result = run_script(cmd)
    assert result.returncode == 0, result.stderr
    reports = _load(tmp_path)
    _check_run(reports)
    _check_order(reports)


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _port_free(port: int) -> bool:
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def _assert_gone(out, world=2, wait: float = GONE_WITHIN) -> None:
    """Every rank's process has ended and its rendezvous port is free again.

    A rank that is not killed lives forever (or until the 600 s process-group timeout), so
    waiting up to ``wait`` seconds for a busy machine to reap it still fails on that defect.
    """
    deadline = time.monotonic() + wait
    for rank in range(world):
        pid_file = out / f"pid{rank}"
        if not pid_file.exists():
            continue
        pid, port = map(int, pid_file.read_text().split())
        while _running(pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(pid), f"rank {rank} (pid {pid}) is still running {wait:.0f} s after the job ended"
        while not _port_free(port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _port_free(port), f"rank {rank}'s rendezvous port {port} is still taken {wait:.0f} s after the job ended"


@pytest.mark.parametrize(
    "where",
    [pytest.param("setup", marks=pytest.mark.slow), "training_step"],  # setup: CI's second step (a launch each)
)
def test_a_failing_rank_ends_the_job_naming_the_rank(tmp_path, where):
    result = run_script(
        [
            *_probe_args(tmp_path, "--fail", where, "--fail-rank", "1", "--stages", "fit"),
            *("--timeout", str(HANG_TIMEOUT)),
        ],
        timeout=RUN_LIMIT,
    )
    ended = time.time()
    assert result.returncode != 0
    assert "Rank 1 failed" in result.stderr
    assert f"ValueError: boom in {where} on rank 1" in result.stderr
    assert "Traceback" in result.stderr
    failed_at = float(re.search(r"FAILING AT ([\d.]+)", result.stderr).group(1))
    # Rank 0 waits in a collective for rank 1: only the launcher noticing the failure ends it before the timeout.
    assert ended - failed_at < PROMPT, f"the job took {ended - failed_at:.1f} s to end after the failure"
    _assert_gone(tmp_path)


def _probe_args(out, *args: str) -> list[str]:
    return [sys.executable, str(PROBE), "--out", str(out), *args]


def test_a_failing_rank_zero_is_named(tmp_path):
    result = run_script(
        [sys.executable, str(PROBE), "--out", str(tmp_path), "--fail", "setup", "--fail-rank", "0", "--stages", "fit"]
    )
    assert result.returncode != 0
    assert "boom in setup on rank 0" in result.stderr and "Raised on global rank 0" in result.stderr
    _assert_gone(tmp_path)


def test_sigint_to_the_launching_process_ends_the_children(tmp_path):
    proc = subprocess.Popen(
        [
            sys.executable,
            str(PROBE),
            "--out",
            str(tmp_path),
            "--sleep",
            "0.5",
            "--max-steps",
            "1000",
            "--stages",
            "fit",
        ],
        env=script_env(),
        cwd=ROOT,
        start_new_session=True,
        # As from a terminal: a shell that runs pytest in the background (`&`, nohup) hands SIGINT
        # down ignored, and Python then never turns it into KeyboardInterrupt.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        in_the_loop = [tmp_path / f"training{rank}" for rank in (0, 1)]
        deadline = time.monotonic() + RUN_LIMIT
        while not all(f.exists() for f in in_the_loop) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(f.exists() for f in in_the_loop), f"the ranks never reached training_step: {proc.returncode}"
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=PROMPT)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    # As Lightning 2.6: the hooks and the teardown run, the other rank is ended, and the program exits with 1.
    assert proc.returncode == 1, (proc.returncode, err)
    assert "Detected KeyboardInterrupt, attempting graceful shutdown" in err
    assert "RankFailedError" not in err and "Rank 1 failed" not in err, "rank 1 was blamed for rank 0's SIGTERM"
    _assert_gone(tmp_path)


@pytest.mark.slow  # two fits of 2 ranks (~15 s on 2 busy cores): run by CI's second step
def test_fit_after_close_meets_the_same_children_again(tmp_path):
    result = run_script([sys.executable, str(PROBE), "--out", str(tmp_path), "--stages", "fit,close,fit"])
    assert result.returncode == 0, result.stderr
    for report in _load(tmp_path):
        pg = [name for _, _, name in report["record"] if name.startswith("process_group.")]
        assert pg == ["process_group.init", "process_group.init"], "close() destroyed the group; fit made a new one"
        assert report["weights"][0] == report["weights"][1] or len(report["weights"]) == 2


@pytest.mark.parametrize(
    "stages",
    ["tryfit,fit", pytest.param("tryfit-close,fit", marks=pytest.mark.slow)],  # the second: CI's second step
    ids=["no-close", "close-in-except"],
)
def test_a_second_fit_after_a_caught_failure_fails_fast_saying_what_to_do(tmp_path, stages):
    result = run_script(
        _probe_args(tmp_path, "--fail", "training_step", "--stages", stages, "--timeout", str(HANG_TIMEOUT)),
        timeout=RUN_LIMIT,
    )
    ended = time.time()
    assert result.returncode != 0
    caught = re.search(r"CAUGHT RankFailedError AT ([\d.]+)", result.stderr)
    assert caught, result.stderr
    assert "cannot be started again in the middle of the script" in result.stderr
    assert "Run the script again" in result.stderr and "ddp_spawn" in result.stderr
    # A hang would last until the process group's timeout (HANG_TIMEOUT), or forever.
    assert ended - float(caught.group(1)) < PROMPT, "the second fit did not fail fast"
    _assert_gone(tmp_path)


@pytest.mark.slow  # it waits for the process-group timeout to fire (45 s): run by CI's second step
def test_a_hung_rank_is_named_on_the_stall_line_and_when_the_timeout_fires(tmp_path):
    result = run_script(
        _probe_args(tmp_path, "--hang-rank", "1", "--max-steps", "3", "--timeout", "45", "--stages", "fit"),
        env={"STRATEGIES_STALL_WARNING_S": "3"},
        timeout=RUN_LIMIT,
    )
    assert result.returncode != 0
    assert "HANGING AT" in result.stderr
    # A busy machine may print a stall line while rank 1 is still starting (true, and not this test's
    # concern): the first one after rank 1 hangs must name it.
    hung = result.stderr.split("HANGING AT", 1)[1]
    stall = [line for line in hung.splitlines() if line.startswith("strategies: no rank has made progress")]
    assert stall, result.stderr
    assert "Rank 1 did not arrive where the others wait" in stall[0] and "in training_step" in stall[0], stall[0]
    assert "The run goes on." in stall[0]
    # The timeout error (raised on rank 0) names rank 1, not rank 0.
    after = hung.split(stall[0], 1)[1]
    assert "Rank 1 did not arrive where the others wait" in after and "Raised on global rank 0" in after, after[-3000:]
    _assert_gone(tmp_path)
