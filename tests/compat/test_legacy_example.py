"""examples/legacy/ (old names only) trains with 2 processes under compat, like examples/new/.

The DDP launcher re-runs the script for rank 1, so the examples run as subprocesses.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
import torch

REPO = Path(__file__).resolve().parents[2]
LEGACY = REPO / "examples" / "legacy" / "train.py"
NEW = REPO / "examples" / "new" / "train.py"
_WARNING_LINE = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<category>\w+): (?P<message>.*)$")
_CLEAN_VARS = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "NODE_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "TORCHELASTIC_RUN_ID",
    "STRATEGY_COMPAT_DEPRECATION",
    "PYTHONWARNINGS",
)


def _run(script: Path, out: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in _CLEAN_VARS}
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, *extra, str(script), "--out", str(out)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=out,  # a default `lightning_logs/` lands there, not in the checkout
        timeout=300,
    )


@pytest.fixture(scope="module")
def legacy_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("legacy")
    proc = _run(LEGACY, out)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return out, proc


def _calls(out: Path, rank: int) -> list[dict]:
    return json.loads((out / f"calls_rank{rank}.json").read_text())


def _names(calls: list[dict]) -> list[str]:
    return [c["name"] for c in calls]


def test_every_override_is_called_at_its_step_on_both_ranks(legacy_run):
    out, _ = legacy_run
    for rank in (0, 1):
        calls = _calls(out, rank)
        names = _names(calls)
        # fit 1: Trainer(accelerator="ddp", num_processes=2, plugins=[MyDDPPlugin(), MyEnv()])
        first = names.index("plugin.init_ddp_connection")
        assert calls[first]["process_group"] is False, "the override must initialise the group"
        assert calls[first]["global_rank"] == rank and calls[first]["world_size"] == 2
        after = names.index("plugin.init_ddp_connection.after_super")
        assert calls[after]["process_group"] is True
        setup = names.index("module.setup")
        assert first < after < setup, "init_ddp_connection runs before the setup hooks"
        assert calls[setup]["process_group"] and calls[setup]["world_size"] == 2 and calls[setup]["rank"] == rank
        assert setup < names.index("module.configure_sharded_model") < names.index("plugin.pre_dispatch")
        pre = calls[names.index("plugin.pre_dispatch")]
        assert pre["wrapped"] == "DistributedDataParallel"
        assert names.index("plugin.pre_dispatch") < names.index("plugin.post_dispatch")
        assert calls[names.index("trainer.training_type_plugin")]["type"] == "RecordingDDPPlugin"
        # the environment's old methods served the new properties
        assert "env.creates_children" in names and "env.master_address" in names and "env.master_port" in names
        # fit 2: Trainer(accelerator=RecordingAccelerator(...), num_processes=2)
        second = names[names.index("trainer.training_type_plugin") :]
        assert second.count("plugin.init_ddp_connection") == 1  # still called; the group is reused
        acc = calls[names.index("accelerator.setup")]
        assert acc["has_layer"] is True, "the layer built in setup exists when Accelerator.setup runs"
        acc_after = calls[names.index("accelerator.setup.after_super")]
        assert acc_after["wrapped"] == "DistributedDataParallel"
        assert second.index("callback.on_before_accelerator_backend_setup") < second.index("module.setup")
        assert (
            second.index("module.setup")
            < second.index("accelerator.setup")
            < second.index("plugin.pre_dispatch")
            < second.index("accelerator.setup.after_super")
            < second.index("plugin.post_dispatch")
        )
        assert calls[names.index("trainer.accelerator_backend")]["type"] == "RecordingAccelerator"


def test_warnings_once_each_on_rank_zero_only(legacy_run):
    _, proc = legacy_run
    found = [m.groupdict() for m in map(_WARNING_LINE.match, proc.stderr.splitlines()) if m]
    ours = [w for w in found if w["category"] == "CompatDeprecationWarning"]
    assert ours, proc.stderr
    counts = Counter((w["file"], w["line"], w["message"]) for w in ours)
    duplicated = {k: n for k, n in counts.items() if n > 1}
    assert not duplicated, f"warnings repeated (per rank?): {duplicated}"
    files = {Path(w["file"]).resolve() for w in ours}
    assert files == {LEGACY.resolve(), (LEGACY.parent / "manual_parts.py").resolve()}, "each points at the user's line"
    messages = " ".join(w["message"] for w in ours)
    for old in (
        "`DDPPlugin`",
        "`RecordingDDPPlugin.init_ddp_connection`",
        "`DispatchRecordingDDPPlugin.pre_dispatch`",
        "`DispatchRecordingDDPPlugin.post_dispatch`",
        "`RecordingEnvironment.master_address`",
        "`RecordingEnvironment.master_port`",
        "`RecordingEnvironment.creates_children`",
        "`CPUAccelerator`",
        "`RecordingAccelerator.setup`",
        "`Regressor.configure_sharded_model`",
        "`RecordingCallback.on_before_accelerator_backend_setup`",
        "`Trainer(accelerator='ddp')`",
        "`Trainer(num_processes=...)`",
        "`Trainer.training_type_plugin`",
        "`Trainer.accelerator_backend`",
        "`PrecisionPlugin`",
    ):
        assert old in messages, old
    assert all("python -m compat.migrate <path>" in w["message"] for w in ours)
    assert not [w for w in found if w["category"] not in ("CompatDeprecationWarning",)], "other warnings appeared"


def test_final_weights_equal_the_new_api_program(legacy_run, tmp_path):
    legacy_out, _ = legacy_run
    proc = _run(NEW, tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "CompatDeprecationWarning" not in proc.stderr
    legacy = torch.load(legacy_out / "weights.pt", weights_only=True)
    new = torch.load(tmp_path / "weights.pt", weights_only=True)
    assert legacy.keys() == new.keys()
    for key in legacy:
        assert torch.equal(legacy[key], new[key]), key


def test_dash_w_error_stops_the_legacy_program_on_every_rank(tmp_path):
    proc = _run(LEGACY, tmp_path, "-W", "error::DeprecationWarning")
    assert proc.returncode != 0
    assert "CompatDeprecationWarning" in proc.stderr
    assert not list(tmp_path.glob("calls_rank*.json")), "no rank may get past its first deprecated name"
