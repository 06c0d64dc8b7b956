"""docs/upgrade.md is true: its files, commands, exit codes and outputs, run in the order written.

The guide is read as a script: a ```python block titled ``before/<file>`` or ``after/<file>`` is
written into the project folder when reached, a ```bash block is run there line by line (a
trailing ``# exit status N`` is the expected status, else 0), a ```text block titled ``output``
must appear in what the last command printed, and an excerpt titled ``<file> (before)`` must be in
the project file at that point (what the codemods left), ``<file> (after)`` in the final file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "upgrade.md"

# Commands the test does not run, and why (each must still be in the guide).
NOT_RUN = {
    "PIP_EXTRA_INDEX_URL=https://download.pytorch.org/whl/cpu pre-commit install-hooks": (
        "needs the network and a user's repository; tests/docs/test_conventions.py runs the hook with try-repo"
    ),
}
# Commands whose documented behaviour another branch is building now: skipped until it lands.
# Commands the guide shows for a feature not built yet (none now: `--check` fails on open TODOs).
PENDING: dict[str, str] = {}


@dataclass
class Block:
    lang: str
    title: str
    text: str


def blocks(text: str) -> list[Block]:
    """Every fenced block of the page, in order, dedented (blocks inside admonitions too)."""
    found, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        match = re.match(r"^(\s*)```(\w+)(.*)$", lines[i])
        if not match:
            i += 1
            continue
        indent, lang, rest = match.groups()
        title = re.search(r'title="([^"]*)"', rest)
        body = []
        i += 1
        while lines[i].strip() != "```":
            body.append(lines[i][len(indent) :] if lines[i].startswith(indent) else lines[i].lstrip())
            i += 1
        found.append(Block(lang, title.group(1) if title else "", "\n".join(body) + "\n"))
        i += 1
    return found


def _env(bin_dir: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "RANK",
            "LOCAL_RANK",
            "WORLD_SIZE",
            "MASTER_PORT",
            "MASTER_ADDR",
            "PYTHONWARNINGS",
            "STRATEGY_COMPAT_DEPRECATION",
        )
    }
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["PATH"] = f"{bin_dir}{os.pathsep}{env['PATH']}"
    return env


def _python_on_path(tmp_path: Path) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "python"  # a symlink would lose the virtualenv: exec the real interpreter
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n', encoding="utf-8")
    shim.chmod(0o755)
    return bin_dir


def _run(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


def test_guide_has_every_step_and_both_targets():
    page = GUIDE.read_text(encoding="utf-8")
    titles = [b.title for b in blocks(page)]
    for name in ("custom.py", "train.py"):
        assert f"before/{name}" in titles and f"after/{name}" in titles and f"lightning/{name}" in titles
    for command in (*NOT_RUN, *PENDING):
        assert command in page, f"{command!r} is no longer in the guide: update NOT_RUN/PENDING"
    for heading in ("Run it on `compat`", "See the rewrite", "Apply it", "Resolve the TODOs", "Gate CI"):
        assert heading in page


@pytest.mark.slow  # runs every step of the guide (about 15 s quiet): CI's second step
@pytest.mark.timeout(900)
def test_guide_runs_as_written(tmp_path):
    env = _env(_python_on_path(tmp_path))
    project = tmp_path / "project"
    project.mkdir()
    last: subprocess.CompletedProcess | None = None
    after_excerpts: list[Block] = []
    ran = 0
    for block in blocks(GUIDE.read_text(encoding="utf-8")):
        if block.title.startswith(("before/", "after/")):
            (project / block.title.split("/", 1)[1]).write_text(block.text, encoding="utf-8")
        elif block.lang == "bash":
            for line in block.text.splitlines():
                if not line.strip() or line.lstrip().startswith("#") or line in NOT_RUN or line in PENDING:
                    continue
                expected = re.search(r"# exit status (\d+)", line)
                last = _run(line, project, env)
                ran += 1
                status = int(expected.group(1)) if expected else 0
                assert last.returncode == status, f"`{line}` exited {last.returncode}\n{last.stdout}\n{last.stderr}"
        elif block.title == "output":
            assert last is not None
            printed = last.stdout + last.stderr
            for expected_line in block.text.splitlines():
                assert expected_line.strip() in printed, f"not printed: {expected_line!r}\n{printed}"
        elif block.title.endswith(" (before)"):
            name = block.title.split(" ", 1)[0]
            current = (project / name).read_text(encoding="utf-8")
            assert block.text in current, f"{name} after the codemods does not contain:\n{block.text}"
        elif block.title.endswith(" (after)"):
            after_excerpts.append(block)
    assert ran >= 7
    for block in after_excerpts:
        name = block.title.split(" ", 1)[0]
        assert block.text in (project / name).read_text(encoding="utf-8"), f"after/{name} lacks:\n{block.text}"


@pytest.mark.extras
@pytest.mark.timeout(600)
def test_lightning_target_files_run_on_lightning(tmp_path):
    pytest.importorskip("lightning", reason="Lightning 2.x is not installed (pip install lightning)")
    project = tmp_path / "lightning"
    project.mkdir()
    for block in blocks(GUIDE.read_text(encoding="utf-8")):
        if block.title.startswith("lightning/"):
            (project / block.title.split("/", 1)[1]).write_text(block.text, encoding="utf-8")
    result = _run("python train.py", project, _env(_python_on_path(tmp_path)))
    assert result.returncode == 0, result.stdout + result.stderr
    for rank in (0, 1):
        assert f"rank {rank}: model wrapped in DistributedDataParallel" in result.stdout
        # Lightning passes the stage as its TrainerFn enum, printed `TrainerFn.FITTING`.
        assert re.search(rf"rank {rank}: setup\([^)]*\), process group live: True", result.stdout)


def test_block_parser_reads_indented_blocks():
    page = textwrap.dedent("""\
        ??? example "x"

            ```python title="before/a.py"
            x = 1
            ```
        """)
    assert blocks(page) == [Block("python", "before/a.py", "x = 1\n")]
