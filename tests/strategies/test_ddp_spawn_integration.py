"""DDP-spawn with real workers: results come back to the caller, which never has a process group.

Each launch starts two interpreters that import torch (seconds each on 2 busy cores), so the
successful launches share one module-scoped trainer: fit and test on a port the launcher chooses,
then fit and test again on ``MASTER_PORT`` (the last two in CI's second step only: the
README's run stays within 6 minutes). Each test below checks
one guarantee on what those launches left, and names the launch that broke it.
"""

from __future__ import annotations

import datetime
import json
import os
import pathlib

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
    trainer.strategy.timeout = datetime.timedelta(seconds=120)  # generous: workers import torch slowly when busy
    return trainer


class _ListenerProbe(SpawnModule):
    """Writes, from inside rank 0, which addresses listen on the rendezvous port of this launch.

    A file rather than ``self.log``: the launches' own results and metrics stay what they are.
    """

    report: str | None = None  # set by the caller before each launch (the module is pickled per launch)

    def setup(self, stage: str) -> None:
        super().setup(stage)
        from probe import listeners

        if self.trainer.global_rank == 0 and self.report is not None:
            port = int(os.environ["MASTER_PORT"])
            with open(self.report, "w") as f:
                json.dump({"port": port, "listeners": listeners(port)}, f)


LAUNCHES = ("fit", "test", "fit on MASTER_PORT", "test on MASTER_PORT")
# A test pays for the launches it is the first to need (at most two in file order, all four when
# run alone); one launch took 150 s on 2 cores at load 17, hence more than pyproject's 180 s.
pytestmark = pytest.mark.timeout(900)


class _Launches:
    """The four launches of one trainer, made in order when a test first asks for one.

    ``launches[name]`` is what that launch left: its results, the caller's process-group state,
    what rank 0 saw listening, the weights, metrics and hook record right after it.
    """

    def __init__(self, out: pathlib.Path) -> None:
        from _helpers import free_port

        self.out = out
        self.trainer = _trainer(record_hooks=True, callbacks=[Callback()])
        self.module = _ListenerProbe()
        self.weight_before = self.module.layer.weight.detach().clone()
        self.master_port = str(free_port())
        self.runs: dict[str, dict] = {}

    def __getitem__(self, name: str) -> dict:
        assert name in LAUNCHES, name
        while name not in self.runs:
            self._launch(LAUNCHES[len(self.runs)])
        return self.runs[name]

    def _launch(self, name: str) -> None:
        trainer, module = self.trainer, self.module
        module.report = str(self.out / f"{len(self.runs)}.json")
        call = trainer.fit if name.startswith("fit") else trainer.test
        assert not dist.is_initialized()
        with pytest.MonkeyPatch.context() as patch:  # MASTER_PORT only for the launches named so
            if name.endswith("MASTER_PORT"):
                patch.setenv("MASTER_PORT", self.master_port)
            else:
                patch.delenv("MASTER_PORT", raising=False)
            results = call(module, datamodule=SpawnData(batch_size=4))
            master_port = os.environ.get("MASTER_PORT")
        self.runs[name] = {
            "results": results,
            "master_port": master_port,
            "pg_in_caller": dist.is_initialized(),
            "listened": json.loads(pathlib.Path(module.report).read_text()),
            "weight": module.layer.weight.detach().clone(),
            "weight_before": self.weight_before if not self.runs else None,
            "metrics": dict(trainer.callback_metrics),
            "hook_record": list(trainer.hook_record),
        }


@pytest.fixture(scope="module")
def spawn_runs(tmp_path_factory) -> _Launches:
    return _Launches(tmp_path_factory.mktemp("spawn"))


def test_spawn_fit_updates_the_callers_module_and_metrics(spawn_runs):
    fit = spawn_runs["fit"]
    assert not fit["pg_in_caller"], "the caller must never have a process group"
    # Same reference as the DDP test: one SGD step over the first shuffled global batch.
    from test_ddp_integration import _first_global_batch, _reference_weights

    reference = _reference_weights(_first_global_batch())
    assert not torch.equal(fit["weight"], fit["weight_before"])
    assert torch.allclose(fit["weight"].flatten(), torch.tensor(reference[0]), atol=1e-6)
    metrics = fit["metrics"]
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
    assert observed_order(fit["hook_record"], "fit") == expected_order("fit", parallel=True, local_rank=0)


def test_spawn_test_returns_rank_zero_results(spawn_runs):
    test = spawn_runs["test"]
    assert set(test["results"][0]) == {"test_loss"}
    assert not test["pg_in_caller"]


@pytest.mark.slow  # two more launches (~28 s on 2 busy cores): CI's second step runs it
def test_a_launch_on_master_port_binds_that_port_each_time(spawn_runs):
    # The second launch on MASTER_PORT binds the same port again (the first one's store is closed).
    for name in ("fit on MASTER_PORT", "test on MASTER_PORT"):
        run = spawn_runs[name]
        assert run["master_port"] is not None and run["listened"]["port"] == int(run["master_port"]), (name, run)
        assert not run["pg_in_caller"], name
        assert run["listened"]["listeners"] == ["0100007F"], (name, run["listened"])
    assert set(spawn_runs["test on MASTER_PORT"]["results"][0]) == {"test_loss"}
    assert spawn_runs["fit"]["master_port"] is None and spawn_runs["test"]["master_port"] is None


def test_every_spawn_launch_listens_on_loopback_only(spawn_runs):
    # The two MASTER_PORT launches are checked by the (slow) test above.
    for name in LAUNCHES[:2]:
        assert spawn_runs[name]["listened"]["listeners"] == ["0100007F"], (name, spawn_runs[name]["listened"])


def test_a_failing_worker_raises_naming_the_rank():
    with pytest.raises(RankFailedError, match="Rank 1 failed") as info:
        _trainer().fit(SpawnModule(fail="training_step", fail_rank=1), datamodule=ProbeData(batch_size=4))
    assert "boom in training_step on rank 1" in info.value.remote_traceback
    assert not dist.is_initialized()
