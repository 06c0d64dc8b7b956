"""Ecosystem conventions: typed packages that ship their marker, and the pre-commit hook as users run it."""

from __future__ import annotations

import json
import os
import re
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


def _fixture_repo(path: Path, source: str, others: dict[str, str] | None = None) -> Path:
    path.mkdir()
    (path / "train.py").write_text(source, encoding="utf-8")
    for name, text in (others or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text, encoding="utf-8")
    _git(path, "init", "-q")
    _git(path, "add", ".")
    _git(path, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "fixture")
    return path


_NOTEBOOK = {
    "cells": [
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": ["import pytorch_lightning as pl\n", "trainer = pl.Trainer(gpus=2)"],
        }
    ],
    "metadata": {},
    "nbformat": 4,
    "nbformat_minor": 5,
}


@pytest.mark.extras
@pytest.mark.timeout(900)
def test_pre_commit_hook_runs_from_the_repository_without_torch(tmp_path):
    """`pre-commit try-repo` installs this project in an env of its own and runs the hook users name.

    On a fixture repository that still uses old names in a module, a notebook and a Hydra config,
    the hook must fail and name each file, which a hook that fails for any other reason would not.
    The hook's environment must hold no torch: the CLI never imports it, and installing it costs
    minutes and gigabytes. A constraint that no torch release satisfies makes any attempt to
    install torch fail the install, so nothing in the hook's dependencies can pull it unnoticed;
    pip's log shows what was installed. (`import strategies` without torch: test_cli_entry.py.)
    """
    bin_dir = str(Path(sys.executable).parent)
    pre_commit = shutil.which("pre-commit", path=bin_dir) or shutil.which("pre-commit")
    if pre_commit is None:
        pytest.skip("pre-commit is not installed (pip install pre-commit)")
    constraints = tmp_path / "constraints.txt"
    constraints.write_text("torch==0.0.0\nnumpy==0.0.0\n", encoding="utf-8")
    pip_log = tmp_path / "pip.log"
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "cache"),
        "PIP_CONSTRAINT": str(constraints),
        "PIP_LOG": str(pip_log),
    }
    env.pop("PYTHONPATH", None)  # the hook must run the package installed in its own environment
    repo = _fixture_repo(
        tmp_path / "fixture",
        "from compat.plugins import DDPPlugin\n\n\nclass P(DDPPlugin):\n    pass\n",
        {
            "explore.ipynb": json.dumps(_NOTEBOOK, indent=1) + "\n",
            "conf/trainer/ddp.yaml": "gpus: 4\naccelerator: ddp\n",
        },
    )
    command = [pre_commit, "try-repo", str(ROOT), "compat-migrate", "--all-files", "--verbose"]
    result = subprocess.run(command, cwd=repo, env=env, capture_output=True, text=True, timeout=850)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    assert "Failed" in output and "- hook id: compat-migrate" in output, output
    assert "would change: 3" in output, output
    for name in ("train.py", "explore.ipynb", "ddp.yaml"):
        assert name in output, output
    # try-repo builds the hook's environment in a temporary store and removes it afterwards:
    # pip's own log says what went into it.
    installed = [line for line in pip_log.read_text(encoding="utf-8").splitlines() if "Successfully installed" in line]
    assert installed, pip_log.read_text(encoding="utf-8")[-3000:]
    names = {re.sub(r"-[0-9][^-]*$", "", item).lower().replace("_", "-") for item in installed[-1].split()[3:]}
    assert {"strategy-compat", "libcst", "ruamel.yaml", "pathspec"} <= names, installed
    assert not names & {"torch", "numpy", "nvidia-cublas-cu12", "triton"}, installed


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
