"""Migrated programs run and do what the old ones did (issue 11: no silent behaviour change).

Each ``fixtures/run/<case>.py`` is an old-API program that prints what it observes. It runs
twice, in fresh processes: as written with ``pytorch_lightning`` replaced by ``compat`` (the old
API on top of ``strategies``), and migrated by every rule for ``--target strategies``. Both must
print the same, unless the case documents what Lightning 1.x itself printed (``EXPECTED``):
there ``compat`` follows the new hierarchy, and 1.x is the reference the migration keeps.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys

import pytest

import codemods

RUN = pathlib.Path(__file__).parent / "fixtures" / "run"
ROOT = pathlib.Path(__file__).resolve().parents[2]

#: What Lightning 1.2-1.5 printed where ``compat`` cannot be the reference: in 1.x
#: ``DDPSpawnPlugin`` derived from ``ParallelPlugin``, not from ``DDPPlugin``; 1.2-1.4 used the
#: ``ModelCheckpoint`` given as ``checkpoint_callback=`` (``compat`` renames it to
#: ``enable_checkpointing=`` and drops it).
EXPECTED = {
    "spawn_branch": "ddp spawn other\n",
    "checkpoint_callback_instance": "1 [('user_checkpoints', 'val_loss')]\n1 [('inline_dir', 'loss')]\n",
}


def _run(code: str, tmp_path: pathlib.Path, name: str) -> str:
    script = tmp_path / f"{name}.py"
    script.write_text(code)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-W", "ignore", str(script)],
        capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("case", sorted(p.stem for p in RUN.glob("*.py")))
def test_migrated_program_keeps_behaviour(case: str, tmp_path: pathlib.Path) -> None:
    source = (RUN / f"{case}.py").read_text()
    migrated = codemods.migrate_source(source, target="strategies").code
    assert "pytorch_lightning" not in migrated, "the case must be migrated completely"
    new = _run(migrated, tmp_path, "new")
    if case in EXPECTED:
        assert new == EXPECTED[case]
    else:
        assert new == _run(source.replace("pytorch_lightning", "compat"), tmp_path, "old")


#: Cases that also run migrated for ``--target lightning`` on Lightning 2.6, and the pattern of
#: what they print that is compared (Lightning's progress bar writes to stdout too, mid-line).
LIGHTNING_CASES = {"epoch_end_outputs": r"(?:train|val) \d+ [^\r\n]*"}


@pytest.mark.extras
@pytest.mark.parametrize("case", sorted(LIGHTNING_CASES))
def test_migrated_program_keeps_behaviour_on_lightning(case: str, tmp_path: pathlib.Path) -> None:
    pytest.importorskip("lightning", reason="needs the lightning extra: pip install 'lightning==2.6.*'")
    source = (RUN / f"{case}.py").read_text()
    migrated = codemods.migrate_source(source, target="lightning").code
    assert "pytorch_lightning" not in migrated, "the case must be migrated completely"

    new = re.findall(LIGHTNING_CASES[case], _run(migrated, tmp_path, "new"))
    assert new, "the migrated program printed nothing to compare"
    assert new == re.findall(
        LIGHTNING_CASES[case], _run(source.replace("pytorch_lightning", "compat"), tmp_path, "old")
    )
