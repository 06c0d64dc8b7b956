"""Under DDP each rank seeds again from ``seed_everything``'s seed when the process group is set up,
as Lightning's strategies do: the loops' random stream does not depend on what the program drew before."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from _helpers import SCRIPTS, run_script

SCRIPT = SCRIPTS / "seeded_ddp.py"


def _draws(tmp_path: Path, before: int, which: str = "strategies") -> list[list[float]]:
    out = tmp_path / f"{which}-{before}"
    out.mkdir()
    done = run_script([sys.executable, str(SCRIPT), str(out), str(before), which], timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    return [json.loads((out / f"rank{rank}.json").read_text()) for rank in (0, 1)]


@pytest.mark.slow  # two 2-process runs (~20 s on 2 busy cores): run by CI's second step
def test_the_draws_in_the_loop_do_not_depend_on_what_came_before_fit(tmp_path: Path) -> None:
    none_before, many_before = _draws(tmp_path, 0), _draws(tmp_path, 1000)
    assert none_before == many_before
    assert len(none_before[0]) == 3


@pytest.mark.extras
def test_the_draws_are_lightnings(tmp_path: Path) -> None:
    pytest.importorskip("lightning", reason="the comparison runs the program on Lightning 2.6 itself")
    assert _draws(tmp_path, 5) == _draws(tmp_path, 5, "lightning")
