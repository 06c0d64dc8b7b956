"""Ecosystem conventions: typed packages that ship their marker, and the pre-commit hook as users run it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("strategies", "compat", "codemods")


def test_packages_are_typed_and_ship_the_marker():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    package_data = config["tool"]["setuptools"]["package-data"]
    for package in PACKAGES:
        assert (ROOT / package / "py.typed").is_file(), f"{package}/py.typed is missing (PEP 561)"
        assert "py.typed" in package_data.get(package, []), f"{package}'s py.typed is not in package-data"


def test_lint_config_is_strict_where_design_says():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    strict = [o for o in config["tool"]["mypy"]["overrides"] if o.get("disallow_untyped_defs")]
    assert {"strategies.*", "codemods.*"} <= {m for o in strict for m in o["module"]}
    assert (ROOT / ".ci" / "lint").stat().st_mode & 0o111, ".ci/lint must be executable"


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _fixture_repo(path: Path, source: str) -> Path:
    path.mkdir()
    (path / "train.py").write_text(source, encoding="utf-8")
    _git(path, "init", "-q")
    _git(path, "add", ".")
    _git(path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "fixture")
    return path


@pytest.mark.extras
@pytest.mark.timeout(900)
def test_pre_commit_hook_runs_from_the_repository(tmp_path):
    """`pre-commit try-repo` installs this project in an env of its own and runs the hook users name.

    One run (each try-repo installs a fresh environment, torch included): on a fixture repository
    that still uses an old name, the hook must fail and its output must name the file it flagged,
    which a hook that fails for any other reason would not.
    """
    bin_dir = str(Path(sys.executable).parent)
    pre_commit = shutil.which("pre-commit", path=bin_dir) or shutil.which("pre-commit")
    if pre_commit is None:
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    # pre-commit pip-installs strategy-compat with its dependencies: pin torch so pip takes the CPU
    # wheel already on the machine instead of resolving `torch>=2.4` to a multi-GB CUDA build.
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("torch==2.13.0\n", encoding="utf-8")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "cache"), "PIP_CONSTRAINT": str(constraints)}
    repo = _fixture_repo(
        tmp_path / "fixture", "from compat.plugins import DDPPlugin\n\n\nclass P(DDPPlugin):\n    pass\n"
    )
    command = [pre_commit, "try-repo", str(ROOT), "compat-migrate", "--all-files", "--verbose"]
    result = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=850)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Failed" in output and "- hook id: compat-migrate" in output, output
    assert "train.py" in output and "would change: 1" in output, output


@pytest.mark.extras
@pytest.mark.timeout(600)
@pytest.mark.parametrize(
    "command",
    [("ruff", "check", "."), ("ruff", "format", "--check", "."), ("mypy",)],
    ids=["ruff-check", "ruff-format", "mypy"],
)
def test_lint_passes(command):
    """What `.ci/lint` runs, run by CI's extras step: lint, format check, type check (pyproject config)."""
    tool = shutil.which(command[0], path=str(Path(sys.executable).parent)) or shutil.which(command[0])
    if tool is None:
        pytest.skip(f"{command[0]} is not installed (pip install -e '.[lint]')")
    env = {k: v for k, v in os.environ.items() if k != "MYPYPATH"}
    done = subprocess.run([tool, *command[1:]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=540)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
