"""Every compat test starts as global rank 0 with no warning shown yet, and leaves it so; each
runs in its own temporary directory, so a Trainer's default ``lightning_logs/`` lands there,
not in the checkout."""

from __future__ import annotations

import pytest

import compat

RANK_VARS = ("RANK", "LOCAL_RANK", "SLURM_PROCID", "STRATEGY_COMPAT_DEPRECATION")


@pytest.fixture(autouse=True)
def _clean(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    for name in RANK_VARS:
        monkeypatch.delenv(name, raising=False)
    compat._reset_warned()
    yield
    compat._reset_warned()
