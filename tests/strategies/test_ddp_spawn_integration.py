"""DDP-spawn with real workers: results come back to the caller, which never has a process group."""

from __future__ import annotations

import datetime
import os

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

    def on_train_start(self) -> None:
        # What setup and on_fit_start saw, logged here: Lightning refuses self.log in those hooks.
        seen = self.seen["module_setup"]
        if seen["initialized"]:
            self.log("setup_world_size", float(dist.get_world_size()))
            self.log("rank_seen_in_setup", float(seen["dist_rank"] == seen["trainer_rank"]))
            self.log("broadcast_and_barrier_in_setup", float(seen["broadcast"] == 100 and seen["barrier"]))
        self.log("wrapped_in_ddp", float(self.seen["wrapped"] == "DistributedDataParallel"))
        self.log("layer_on_root_device", float(self.seen["layer_device"] == self.seen["root_device"]))
        data_seen = getattr(self.trainer.datamodule, "seen", {}).get("datamodule_setup")
        if data_seen is not None:
            ok = (
                data_seen["initialized"]
                and data_seen["dist_rank"] == data_seen["trainer_rank"]
                and data_seen["broadcast"] == 100
            )
            self.log("datamodule_setup_ok", float(ok))


class SpawnData(ProbeData):
    pass


def _trainer(**kwargs) -> Trainer:
    trainer = Trainer(
        strategy="ddp_spawn",
        accelerator="cpu",
        devices=2,
        max_steps=1,
        enable_progress_bar=False,
        enable_checkpointing=False,
        logger=False,
        **kwargs,
    )
    trainer.strategy.timeout = datetime.timedelta(seconds=30)
    return trainer


def test_spawn_fit_updates_the_callers_module_and_metrics():
    trainer = _trainer(record_hooks=True, callbacks=[Callback()])
    module = SpawnModule()
    before = module.layer.weight.detach().clone()
    assert not dist.is_initialized()
    trainer.fit(module, datamodule=SpawnData(batch_size=4))
    assert not dist.is_initialized(), "the caller must never have a process group"
    # Same reference as the DDP test: one SGD step over the first shuffled global batch.
    from test_ddp_integration import _first_global_batch, _reference_weights

    reference = _reference_weights(_first_global_batch())
    assert not torch.equal(module.layer.weight, before)
    assert torch.allclose(module.layer.weight.flatten(), torch.tensor(reference[0]), atol=1e-6)
    metrics = trainer.callback_metrics
    assert metrics["setup_world_size"].item() == 2.0
    for name in (
        "rank_seen_in_setup",
        "broadcast_and_barrier_in_setup",
        "wrapped_in_ddp",
        "layer_on_root_device",
        "datamodule_setup_ok",
    ):
        assert metrics[name].item() == 1.0, name
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


class _ListenerProbe(SpawnModule):
    """Logs whether the rendezvous port listens on loopback only, seen from inside a worker."""

    def setup(self, stage: str) -> None:
        super().setup(stage)
        from probe import listeners

        found = listeners(int(os.environ["MASTER_PORT"]))
        self.loopback_only = float(found == ["0100007F"])

    def on_train_start(self) -> None:
        super().on_train_start()
        self.log("loopback_only", self.loopback_only)

    def on_test_start(self) -> None:
        self.log("loopback_only", self.loopback_only)


@pytest.mark.parametrize("master_port", [False, True], ids=["free-port", "MASTER_PORT"])
def test_every_spawn_launch_listens_on_loopback_only(monkeypatch, master_port):
    if master_port:
        from test_rendezvous import _free_port

        monkeypatch.setenv("MASTER_PORT", str(_free_port()))
    trainer = _trainer()
    module = _ListenerProbe()
    # With MASTER_PORT, the second launch binds the same port again.
    for run in (trainer.fit, trainer.test) if master_port else (trainer.fit, trainer.test, trainer.fit):
        run(module, datamodule=ProbeData(batch_size=4))
        assert trainer.callback_metrics["loopback_only"].item() == 1.0, run.__name__
