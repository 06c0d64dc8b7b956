"""The `compat-migrate` console script: declared in pyproject, and resolving where installed."""

from __future__ import annotations

import importlib.metadata
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from compat import migrate

REPO = Path(__file__).resolve().parents[2]


def test_pyproject_declares_the_script_on_main() -> None:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    module, _, attr = scripts["compat-migrate"].partition(":")
    assert (module, attr) == ("compat.migrate", "main")
    assert getattr(__import__(module, fromlist=[attr]), attr) is migrate.main


def test_installed_entry_point_resolves_and_runs(tmp_path: Path) -> None:
    exe = shutil.which("compat-migrate", path=os.path.dirname(sys.executable))
    if exe is None:
        pytest.skip(f"strategy-compat is not installed next to {sys.executable} (pip install -e .)")
    [entry] = importlib.metadata.entry_points(group="console_scripts", name="compat-migrate")
    assert entry.load() is migrate.main
    (tmp_path / "p.py").write_text("from pytorch_lightning.plugins import DDPPlugin\n")
    proc = subprocess.run([exe, "--check", "-q", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr  # the same exit codes as `python -m compat.migrate`
    assert "would change: 1" in proc.stderr


# `sys.modules["torch"] = None` makes `import torch` fail as it does where torch is not installed.
_NO_TORCH = "import sys; sys.modules['torch'] = None; sys.modules['numpy'] = None; "


def test_cli_runs_without_torch(tmp_path: Path) -> None:
    """The core install (the pre-commit hook's) has no torch: the CLI, workers included, needs none."""
    (tmp_path / "p.py").write_text("from pytorch_lightning.plugins import DDPPlugin\n")
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "trainer.yaml").write_text("trainer:\n  gpus: 2\n")
    code = _NO_TORCH + "from compat.migrate import main; sys.exit(main(['--jobs', '2', '-q', sys.argv[1]]))"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert "changed:      2" in proc.stderr
    assert (tmp_path / "conf" / "trainer.yaml").read_text() == "trainer:\n  accelerator: cuda\n  devices: 2\n"


def test_import_strategies_without_torch_names_the_extra() -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run(
        [sys.executable, "-c", _NO_TORCH + "import strategies"], capture_output=True, text=True, timeout=300, env=env
    )
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("ModuleNotFoundError: `import strategies` needs PyTorch"), proc.stderr
    assert "pip install 'strategy-compat[torch]'" in last
