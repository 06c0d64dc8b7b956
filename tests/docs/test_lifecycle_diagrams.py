"""docs/lifecycle-diagrams.md is generated from a recording that matches the current Trainer."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("_lifecycle_gen", ROOT / "docs" / "_gen" / "lifecycle.py")
gen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gen)


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def test_page_is_generated_from_the_committed_data():
    assert gen.main(["--check"]) == 0, "run `python docs/_gen/lifecycle.py` and commit docs/lifecycle-diagrams.md"


def test_each_diagram_draws_every_recorded_call_in_order():
    recording = _load(gen.RECORDING)
    page = gen.PAGE.read_text(encoding="utf-8")
    blocks = re.findall(r"```mermaid\n(.*?)```", page, re.S)
    ddp0 = recording["runs"]["ddp"]["0"]
    drawn = re.findall(r"->>(\w+): (\w+)", blocks[0])
    assert [f"{owner}.{hook}" for owner, hook in drawn] == ddp0
    assert len(blocks) == 6, "rank 0 and rank 1 of ddp and ddp_spawn, then 1.2 next to the new order"


def test_old_order_puts_the_process_group_after_the_setup_hooks():
    old = _load(gen.OLD)["ranks"]["0"]
    assert old.index("module.setup") < old.index("process_group.init")
    new = _load(gen.RECORDING)["runs"]["ddp"]["0"]
    assert new.index("process_group.init") < new.index("module.setup") < new.index("strategy.model_to_device")


@pytest.mark.slow  # re-records every strategy's lifecycle (about 25 s quiet): CI's second step
@pytest.mark.timeout(600)  # two 2-process runs: minutes on a machine busy with other work
def test_recording_matches_the_current_trainer():
    """Two real 2-process runs (gloo): the committed recording is what the Trainer does today."""
    fresh = gen.record()["runs"]
    committed = _load(gen.RECORDING)["runs"]
    assert fresh == committed, f"the Trainer's hook order changed: run `{gen.REGENERATE}` and commit the result"
