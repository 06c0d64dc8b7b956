"""The README: its quickstart and the shipped DDP example run as written (2 real processes), and
its set-up commands are exactly what CI runs first (.ci/run)."""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "strategies"))
from _helpers import ROOT, run_script  # noqa: E402


def test_readme_quickstart_runs_as_written(tmp_path):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert 'strategy="ddp"' in code and "devices=2" in code
    script = tmp_path / "train.py"
    script.write_text(code)
    result = run_script([sys.executable, str(script)], timeout=240)
    assert result.returncode == 0, result.stderr
    # What the README says it prints: one line (rank 0 only) showing that the model learned.
    printed = re.findall(r"^trained (\d+) epochs on (\d+) processes: train_loss ([\d.]+)$", result.stdout, re.M)
    assert len(printed) == 1, result.stdout
    epochs, processes, loss = printed[0]
    assert (int(epochs), int(processes)) == (5, 2) and float(loss) < 1.0, result.stdout
    shown = re.search(r"such as\s+`(trained .*?)`", readme.split("## Quickstart", 1)[1])
    assert shown and re.fullmatch(r"trained 5 epochs on 2 processes: train_loss [\d.]+", shown.group(1))


def test_example_train_ddp_trains_on_two_processes():
    result = run_script([sys.executable, str(ROOT / "examples" / "train_ddp.py")])
    assert result.returncode == 0, result.stderr
    loss = float(re.search(r"final train_loss ([\d.]+)", result.stdout).group(1))
    assert loss < 1.0, "the example should learn the sum of its inputs"


# -- the README's set-up commands are what CI runs first ----------------------------------------------


def _readme_setup_commands() -> list[str]:
    """The README's "Set up" bash lines, read here independently of .ci/readme_commands.py."""
    section = re.search(r"^## Set up\n(.*?)^## ", (ROOT / "README.md").read_text(), re.M | re.S).group(1)
    blocks = re.findall(r"^```bash\n(.*?)^```", section, re.M | re.S)
    return [line.strip() for block in blocks for line in block.splitlines() if line.strip()]


def _ci_commands() -> tuple[list[str], list[str]]:
    """The commands of .ci/run's two steps, from its dry run (same code path as a real run)."""
    proc = subprocess.run(
        ["bash", str(ROOT / ".ci" / "run")],
        # both steps, whatever the caller chose (`CI_STEPS=1 bash .ci/run` runs this very test)
        env={**{k: v for k, v in os.environ.items() if k != "CI_STEPS"}, "CI_DRY_RUN": "1"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    steps: list[list[str]] = []
    for line in proc.stdout.splitlines():
        if line.startswith("== step"):
            steps.append([])
        elif line.startswith("+ "):
            steps[-1].append(line[2:])
    assert len(steps) == 2, proc.stdout
    return steps[0], steps[1]


def test_ci_runs_the_readme_setup_commands_exactly():
    readme = _readme_setup_commands()
    assert any("pip install" in c for c in readme) and any("pytest" in c for c in readme)
    first, _ = _ci_commands()
    assert first == readme


def test_ci_second_step_installs_every_extra_and_runs_the_marked_tests():
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
    _, second = _ci_commands()
    install, docs_tools, tests = second
    assert "docs/_gen/mermaid.py" in docs_tools and "apt-get install -y chromium" in docs_tools
    named = set(re.search(r'-e "\.\[([\w,]+)\]"', install).group(1).split(","))
    assert named == extras
    assert "torch==2.13.0" in install.split()  # pinned in the same resolve: no extra pulls another torch
    # The extras' tests and the slow tests: exactly what the default run (pyproject's addopts)
    # leaves out, so that every test runs in one of the two steps.
    assert shlex.split(tests)[-2:] == ["-m", "extras or slow"]
    pytest_config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    addopts = shlex.split(pytest_config["addopts"])
    assert addopts[addopts.index("-m") + 1] == "not slow and not extras", addopts


def test_readme_commands_script(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(
        "# x\n\n## Set up\n\nText.\n\n```bash\n# a comment\npip install a \\\n  b\n\n```\n\n"
        "```python\nnot = 'a command'\n```\n\n```bash\npython -m pytest -q\n```\n\n## Next\n\n```bash\nnot me\n```\n"
    )
    script = [sys.executable, str(ROOT / ".ci" / "readme_commands.py"), str(readme)]
    proc = subprocess.run(script, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["pip install a   b", "python -m pytest -q"]
    readme.write_text("# x\n\n## Install\n\n```bash\npip install x\n```\n")
    proc = subprocess.run(script, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "no `## Set up` section" in proc.stderr


@pytest.mark.parametrize(
    ("diff_command", "expected"),
    [
        ("python -c \"print('+++ b/x.py'); raise SystemExit(1)\" --diff", 0),  # a diff came out: fine
        ('python -c "raise SystemExit(1)" --diff', 1),  # exit 1 with no diff: the install failed
    ],
    ids=["diff_found_changes", "no_diff"],
)
def test_ci_accepts_exit_1_of_a_diff_command_only_with_a_diff(tmp_path, diff_command, expected):
    shutil.copytree(ROOT / ".ci", tmp_path / ".ci")
    (tmp_path / "README.md").write_text(f"# x\n\n## Set up\n\n```bash\n{diff_command}\n```\n\n```bash\ntrue\n```\n")
    proc = subprocess.run(
        ["bash", str(tmp_path / ".ci" / "run")],
        env={**os.environ, "CI_STEPS": "1", "CI_VENV_ARGS": "--without-pip"},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == expected, proc.stdout + proc.stderr
    if expected:
        assert "README command failed with exit status 1" in proc.stderr
    else:
        assert "+ true" in proc.stdout
