"""DDP-spawn with real workers: results come back to the caller, which never has a process group."""

from __future__ import annotations

import datetime

import pytest
import torch
import torch.distributed as dist
from _helpers import expected_order, observed_order
from probe import ProbeData, ProbeModule
from torch import nn

from strategies import Callback, RankFailedError, Trainer


class SpawnModule(ProbeModule):
    """The probe, with its layer made in __init__ so the caller can receive its trained weights."""

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        torch.manual_seed(0)
        self.layer = nn.Linear(4, 1)

    def setup(self, stage: str) -> None:
        super().setup(stage)
        if dist.is_initialized():
            self.log("setup_world_size", float(dist.get_world_size()))
            self.log("rank_seen_in_setup", float(dist.get_rank() == self.trainer.global_rank))


def _trainer(**kwargs) -> Trainer:
    trainer = Trainer(strategy="ddp_spawn", accelerator="cpu", devices=2, max_steps=1, enable_progress_bar=False,
                      **kwargs)
    trainer.strategy.timeout = datetime.timedelta(seconds=30)
    return trainer


def test_spawn_fit_updates_the_callers_module_and_metrics():
    trainer = _trainer(record_hooks=True, callbacks=[Callback()])
    module = SpawnModule()
    before = module.layer.weight.detach().clone()
    trainer.fit(module, datamodule=ProbeData(batch_size=4))
    assert not dist.is_initialized(), "the caller must never have a process group"
    # Same reference as the DDP test: one SGD step over samples 0-7.
    from test_ddp_integration import _reference_weights

    reference = _reference_weights()
    assert not torch.equal(module.layer.weight, before)
    assert torch.allclose(module.layer.weight.flatten(), torch.tensor(reference[0]), atol=1e-6)
    metrics = trainer.callback_metrics
    assert metrics["setup_world_size"].item() == 2.0
    assert metrics["rank_seen_in_setup"].item() == 1.0
    assert "train_loss" in metrics
    assert observed_order(trainer.hook_record, "fit") == expected_order("fit", parallel=True, local_rank=0)


def test_spawn_test_returns_rank_zero_results():
    results = _trainer().test(SpawnModule(), datamodule=ProbeData(batch_size=4))
    assert set(results[0]) == {"test_loss"}


def test_a_failing_worker_raises_naming_the_rank():
    with pytest.raises(RankFailedError, match="Rank 1 failed") as info:
        _trainer().fit(SpawnModule(fail="training_step", fail_rank=1), datamodule=ProbeData(batch_size=4))
    assert "boom in training_step on rank 1" in info.value.remote_traceback
    assert not dist.is_initialized()
