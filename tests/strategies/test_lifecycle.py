"""The recorded order equals docs/lifecycle.md's table, in-process (single device, 1-rank DDP)."""

from __future__ import annotations

import pytest
import torch.distributed as dist
from _helpers import contract_rows, expected_order, observed_order
from probe import ProbeData, ProbeModule

from strategies import Callback, Trainer

STAGES = ("fit", "validate", "test", "predict")


def test_contract_table_is_parsed():
    names = [n for row, _ in contract_rows() for n in row]
    assert names[:3] == ["strategy.connect", "module.configure_callbacks", "strategy.setup_environment"]
    assert names.index("datamodule.setup") < names.index("callback.setup") < names.index("module.setup")
    assert names.index("strategy.teardown") < names.index("module.on_fit_end") < names.index("datamodule.teardown")
    assert names.index("module.setup") < names.index("module.configure_model") < names.index("strategy.model_to_device")
    assert names.index("strategy.wrap") < names.index("module.configure_optimizers")


@pytest.mark.parametrize("strategy", ["single_device", "ddp"])
def test_recorded_order_matches_the_contract(strategy):
    trainer = Trainer(
        strategy=strategy,
        accelerator="cpu",
        devices=1,
        max_steps=2,
        limit_val_batches=1,
        enable_progress_bar=False,
        record_hooks=True,
        callbacks=[Callback()],
        enable_checkpointing=False,
        logger=False,
    )
    module, data = ProbeModule(), ProbeData(batch_size=4)
    try:
        for stage in STAGES:
            getattr(trainer, stage)(module, datamodule=data)
    finally:
        trainer.strategy.close()
    for stage in STAGES:
        expected = expected_order(stage, parallel=strategy == "ddp", local_rank=0)
        assert observed_order(trainer.hook_record, stage) == expected, stage


def test_setup_runs_before_the_move_and_optimizers_see_the_setup_layer():
    trainer = Trainer(strategy="ddp", accelerator="cpu", devices=1, max_steps=1, enable_progress_bar=False)
    module = ProbeModule()
    try:
        trainer.fit(module, datamodule=ProbeData(batch_size=4))
        assert module.seen["module_setup"]["initialized"] is True
        assert module.seen["wrapped"] == "DistributedDataParallel"
    finally:
        trainer.strategy.close()
    assert not dist.is_initialized()


def test_fit_test_fit_initialises_the_process_group_once():
    trainer = Trainer(
        strategy="ddp", accelerator="cpu", devices=1, max_steps=1, enable_progress_bar=False, record_hooks=True
    )
    module, data = ProbeModule(), ProbeData(batch_size=4)
    try:
        trainer.fit(module, datamodule=data)
        trainer.test(module, datamodule=data)
        trainer.fit(module, datamodule=data)
        assert dist.is_initialized()
    finally:
        trainer.strategy.close()
    events = [c.name for c in trainer.hook_record if c.name.startswith("process_group.")]
    assert events == ["process_group.init", "process_group.reuse", "process_group.reuse"]
    assert not dist.is_initialized(), "strategy.close() must destroy the group it created"


def test_single_device_setup_layer_is_moved_and_trained():
    trainer = Trainer(strategy="single_device", accelerator="cpu", max_steps=1, enable_progress_bar=False)
    module = ProbeModule()
    trainer.fit(module, datamodule=ProbeData(batch_size=8))
    # no process group, and no parallel strategy to set rank_zero_only.rank (it reads the environment)
    assert module.seen["module_setup"] == {"initialized": False, "trainer_rank": 0, "rank_zero_only_rank": None}
    assert module.seen["wrapped"] == "ProbeModule" and module.seen["layer_device"] == "cpu"
    from test_ddp_integration import _reference_weights

    assert module.layer.weight.flatten().tolist() == pytest.approx(_reference_weights()[0], abs=1e-6)
