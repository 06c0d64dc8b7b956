"""Make the probe script importable by the strategy tests (spawned workers inherit sys.path)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

_SCRIPTS = str(Path(__file__).resolve().parent / "scripts")
if _SCRIPTS not in sys.path:
    sys.path.insert(0, _SCRIPTS)


@pytest.fixture(autouse=True)
def _run_in_tmp_path(tmp_path, monkeypatch):
    """A Trainer logs and checkpoints under the working directory by default (as Lightning): keep it in tmp."""
    monkeypatch.chdir(tmp_path)
