"""The CLI on real old-API code nobody here wrote (benchmarks/corpus.py), for both targets.

Fetched from PyPI at test time (skipped with the reason when offline), never committed. Checks:
no file fails, every output parses, a second run changes nothing, and it prints the residual:
old-only names (the API catalog's) left in code with no ``# TODO(compat.migrate)`` within
:data:`TODO_DISTANCE` lines.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import codemods

REPO = Path(__file__).resolve().parents[2]

#: How far (in lines) a TODO may be from an old-API site it covers.
TODO_DISTANCE = 3
#: The most old-API sites allowed to remain with no TODO nearby, per target (``None``: report
#: the figure without failing). Issue 11 asks for none.
MAX_RESIDUAL: int | None = 0

_spec = importlib.util.spec_from_file_location("corpus", REPO / "benchmarks" / "corpus.py")
corpus = importlib.util.module_from_spec(_spec)
assert _spec.loader is not None
_spec.loader.exec_module(corpus)


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("corpus") / "src"
    files, missing = corpus.extract(root)
    if not files:
        pytest.skip(f"no corpus package could be fetched (offline?): {'; '.join(missing)}")
    if missing:
        print("corpus packages not fetched:", *missing, sep="\n  ")
    return root


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compat.migrate", "-q", "--jobs", "1", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=600,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def _residual(text: str) -> list[tuple[int, str]]:
    lines = text.splitlines()
    todo_lines = [i + 1 for i, line in enumerate(lines) if codemods.TODO_PREFIX.strip() in line]
    return [
        (line, name)
        for line, name in corpus.old_api_sites(text)
        if not any(abs(line - t) <= TODO_DISTANCE for t in todo_lines)
    ]


@pytest.mark.extras
@pytest.mark.timeout(900)
@pytest.mark.parametrize("target", codemods.TARGETS)
def test_real_old_api_code(tree, tmp_path, target):
    out = tmp_path / "out"
    report = tmp_path / "report.json"
    run = _cli("--target", target, "--out", str(out), "--report", str(report), str(tree))
    data = json.loads(report.read_text())
    assert run.returncode in (0, 1), run.stdout + run.stderr
    assert data["failed"] == [], "the CLI failed on real files (a crash or a refused output)"
    sources = sorted(p for p in tree.rglob("*.py"))
    assert data["summary"]["scanned"] == len(sources)

    residual: dict[str, list[tuple[int, str]]] = {}
    sites = 0
    for source in sources:
        migrated = (out / source.relative_to(tree)).read_text(encoding="utf-8")
        ast.parse(migrated, filename=str(source))  # every output parses
        sites += len(corpus.old_api_sites(source.read_text(encoding="utf-8")))
        left = _residual(migrated)
        if left:
            residual[str(source.relative_to(tree))] = left

    again = tmp_path / "again.json"
    rerun = _cli("--target", target, "--diff", "--report", str(again), str(out))
    second = json.loads(again.read_text())
    assert second["failed"] == [] and second["summary"]["changed"] == 0, (
        f"not idempotent: {[f for f, s in second['files'].items() if s == 'changed']}\n{rerun.stdout[-3000:]}"
    )

    count = sum(len(v) for v in residual.values())
    print(
        f"\n[{target}] {len(sources)} real files, {sites} old-API sites before, "
        f"{data['summary']['todos']} TODOs, {len(data['changes'])} edits; "
        f"residual: {count} old-API sites with no TODO within {TODO_DISTANCE} lines"
    )
    for name, left in sorted(residual.items()):
        print(f"  {name}: " + ", ".join(f"{line}:{old}" for line, old in left[:8]) + (" ..." if len(left) > 8 else ""))
    if MAX_RESIDUAL is not None:
        assert count <= MAX_RESIDUAL, f"{count} old-API sites left with no TODO nearby"


_hspec = importlib.util.spec_from_file_location("holdout", REPO / "benchmarks" / "holdout.py")
holdout = importlib.util.module_from_spec(_hspec)
assert _hspec.loader is not None
_hspec.loader.exec_module(holdout)

#: The least recall (old-API sites counted from the catalogs, see ``benchmarks/holdout.py``)
#: allowed on the development half of the second corpus (issue 17 asks 97% on the held-out half).
MIN_RECALL = 0.97


@pytest.fixture(scope="module")
def dev_tree(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("dev") / "src"
    files, missing = holdout.extract(holdout.DEV, root)
    if not files:
        pytest.skip(f"no release of the development half could be fetched (offline?): {'; '.join(missing)}")
    return root


@pytest.mark.extras
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("target", codemods.TARGETS)
def test_development_half_of_the_second_corpus(dev_tree, tmp_path, target):
    """benchmarks/holdout.py's DEV releases: no failure, idempotent, recall from the catalogs."""
    result = holdout.measure(dev_tree, tmp_path, target)
    print(
        f"\n[{target}] {result['files']} files, {result['sites']} old-API sites, residual "
        f"{result['residual']}, recall {result['recall']:.1%}, {result['todos']} TODOs, {result['edits']} edits"
    )
    for name, left in sorted(result["missed"].items()):
        print(f"  {name}: " + ", ".join(f"{line}:{old}" for line, old in left))
    assert result["failed"] == [], "the CLI failed on real files (a crash or a refused output)"
    assert result["unparsable"] == 0
    assert result["not_idempotent"] == []
    assert result["recall"] >= MIN_RECALL
