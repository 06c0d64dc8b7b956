"""Under ddp_spawn each deprecation warning appears once: the workers re-import the main module
before they know their rank and must not repeat the parent's warnings (2 real workers)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).resolve().parent / "scripts" / "spawn_warnings.py"


@pytest.mark.slow  # two spawn launches (about 12 s quiet): CI's second step
def test_spawn_workers_do_not_repeat_warnings():
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run([sys.executable, str(SCRIPT)], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert "done" in proc.stdout
    warnings = re.findall(r"^(.*?:\d+): CompatDeprecationWarning: (.*)$", proc.stderr, re.M)
    named = {m for _, msg in warnings for m in re.findall(r"`[^`]+`", msg)}
    assert {"`DDPSpawnPlugin`", "`MyPlugin.pre_dispatch`"} <= named
    repeated = {k: n for k, n in Counter(warnings).items() if n > 1}
    assert not repeated, f"warnings repeated by the spawned workers: {repeated}"
