"""Every codemods test gets its own results cache, so no run sees another test's entries."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def own_results_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``COMPAT_MIGRATE_CACHE_DIR`` in a fresh folder (also for the CLI processes a test starts)."""
    folder = tmp_path_factory.mktemp("compat_migrate_cache")
    monkeypatch.setenv("COMPAT_MIGRATE_CACHE_DIR", str(folder))
    monkeypatch.delenv("COMPAT_MIGRATE_NO_CACHE", raising=False)
    return folder
