"""Our hooks are Lightning 2.6's, called in its order, on every strategy (data: data/lightning_hooks.json)."""

from __future__ import annotations

import importlib.util
import json
import sys

import pytest
from _helpers import SCRIPTS, run_script
from hooked import record
from lightning_hooks import (
    STAGES,
    doc_tables,
    lightning_hook_names,
    load,
    render_tables,
)

from strategies import Callback, DataModule, TrainModule

EXPECTED = load()
needs_lightning = pytest.mark.skipif(
    importlib.util.find_spec("lightning") is None,
    reason="lightning is not installed (optional extra, to re-record the order)",
)


def _on_rank(events: list[str], local_rank: int) -> list[str]:
    """What another local rank calls: everything but ``prepare_data`` (local rank 0 only, as in Lightning)."""
    return events if local_rank == 0 else [e for e in events if not e.endswith(".prepare_data")]


@pytest.mark.parametrize(
    ("owner", "cls"), [("module", TrainModule), ("callback", Callback), ("datamodule", DataModule)]
)
def test_every_lightning_hook_exists_on_ours(owner, cls):
    missing = [name for name in EXPECTED["hooks"][owner] if not callable(getattr(cls, name, None))]
    assert not missing, f"Lightning 2.6's {owner} hooks missing on `{cls.__name__}`: {missing}"


def test_every_hook_lightning_calls_is_listed():
    # The event lists use only the listed names, so a hook Lightning calls cannot hide from the test above.
    for stage in STAGES:
        for event in EXPECTED[stage]:
            owner, name = event.split(".", 1)
            assert name in EXPECTED["hooks"][owner], event


def test_single_device_calls_lightnings_hooks_in_its_order():
    _, events = record("single_device", 1)
    for stage in STAGES:
        assert events[stage] == EXPECTED[stage], stage


@pytest.mark.parametrize(
    "strategy",
    [
        "ddp",
        "ddp_spawn",
        pytest.param("fsdp", marks=pytest.mark.slow),  # ~18 s; tests/strategies/test_fsdp.py runs 2 ranks by default
        pytest.param(
            "deepspeed",
            marks=[
                pytest.mark.extras,
                pytest.mark.skipif(
                    importlib.util.find_spec("deepspeed") is None, reason="deepspeed is not installed (optional extra)"
                ),
            ],
        ),
    ],
)
def test_two_ranks_call_lightnings_hooks_in_its_order(strategy, tmp_path):
    stages = STAGES
    result = run_script(
        [sys.executable, str(SCRIPTS / "hooked.py"), strategy, "2", str(tmp_path), ",".join(stages)], timeout=170
    )
    assert result.returncode == 0, result.stderr[-3000:]
    ranks = [0] if strategy == "ddp_spawn" else [0, 1]  # spawn: the caller holds rank 0's record
    for rank in ranks:
        events = json.loads((tmp_path / f"rank{rank}.json").read_text())
        for stage in stages:
            assert events[stage] == _on_rank(EXPECTED[stage], rank), (rank, stage)


def test_docs_show_the_recorded_order():
    assert doc_tables() == render_tables(EXPECTED), (
        "docs/lifecycle.md is out of date: run `PYTHONPATH=. python tests/strategies/lightning_hooks.py --docs`"
    )


@pytest.mark.extras
@needs_lightning
def test_the_json_is_what_lightning_records():
    from lightning_hooks import record as record_lightning

    assert lightning_hook_names() == EXPECTED["hooks"]
    for stage in STAGES:
        assert record_lightning(stage) == EXPECTED[stage], (
            f"Lightning's {stage} order changed: re-run `python tests/strategies/lightning_hooks.py --write` and "
            "make the Trainer match"
        )
