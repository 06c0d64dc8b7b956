"""Trainer features on one process: optimizers, samplers, limits, logging, checkpoints."""

from __future__ import annotations

import pytest
import torch
from probe import ProbeData, ProbeModule, dataset
from torch.utils.data import DataLoader, DistributedSampler

from strategies import Callback, Trainer
from strategies._data import inject_distributed_sampler
from strategies._optimizers import parse_optimizers


def _params():
    return [torch.nn.Parameter(torch.zeros(1))]


def test_configure_optimizers_forms():
    opt = torch.optim.SGD(_params(), lr=0.1)
    sched = torch.optim.lr_scheduler.StepLR(opt, 1)
    assert parse_optimizers(opt) == ([opt], [])
    assert parse_optimizers([opt])[0] == [opt]
    opts, scheds = parse_optimizers({"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}})
    assert opts == [opt] and scheds[0]["interval"] == "step"
    opts, scheds = parse_optimizers(([opt], [sched]))
    assert scheds[0]["scheduler"] is sched and scheds[0]["interval"] == "epoch"
    with pytest.raises(ValueError, match="returned None"):
        parse_optimizers(None)
    with pytest.raises(TypeError, match="`int`"):
        parse_optimizers(3)
    with pytest.warns(RuntimeWarning, match="unsupported keys in the optimizer configuration: {'frequency'}"):
        assert parse_optimizers([{"optimizer": opt, "frequency": 2}])[0] == [opt]  # as Lightning 2.6


def test_distributed_sampler_is_injected_unless_custom(monkeypatch):
    # As Lightning: training always shuffles (seeded by PL_GLOBAL_SEED); evaluation only if the loader did.
    monkeypatch.setenv("PL_GLOBAL_SEED", "7")
    loader = DataLoader(dataset(), batch_size=4)
    injected = inject_distributed_sampler(loader, {"num_replicas": 2, "rank": 1}, train=True)
    assert isinstance(injected.sampler, DistributedSampler) and injected.sampler.shuffle
    assert injected.sampler.rank == 1 and injected.sampler.seed == 7 and len(injected) == 2
    assert not inject_distributed_sampler(loader, {"num_replicas": 2, "rank": 1}, train=False).sampler.shuffle
    shuffled = DataLoader(dataset(), batch_size=4, shuffle=True)
    assert inject_distributed_sampler(shuffled, {"num_replicas": 2, "rank": 1}, train=False).sampler.shuffle
    assert inject_distributed_sampler(loader, None, True) is loader
    custom = DataLoader(dataset(), batch_size=4, sampler=DistributedSampler(dataset(), 2, 0))
    assert inject_distributed_sampler(custom, {"num_replicas": 2, "rank": 1}, True) is custom


def test_limits_epochs_and_logging():
    trainer = Trainer(
        accelerator="cpu", max_epochs=2, limit_train_batches=1, limit_val_batches=2, enable_progress_bar=False
    )
    module = ProbeModule()
    trainer.fit(module, datamodule=ProbeData(batch_size=4))
    assert trainer.state.global_step == 2 and trainer.state.epoch == 2
    assert {"train_loss", "val_loss"} <= set(trainer.callback_metrics)
    results = trainer.test(module, datamodule=ProbeData(batch_size=4))
    assert results[0]["test_loss"] == pytest.approx(float(trainer.callback_metrics["test_loss"]))
    predictions = trainer.predict(module, datamodule=ProbeData(batch_size=4))
    assert len(predictions) == 4 and predictions[0].shape == (4, 1)


class _SaveAt(Callback):
    def __init__(self, step: int, path) -> None:
        self.step, self.path = step, path

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        if trainer.state.global_step == self.step:
            trainer.save_checkpoint(self.path)


def test_checkpoint_resume_equals_an_uninterrupted_run(tmp_path):
    def trainer(steps, callbacks=()):
        return Trainer(accelerator="cpu", max_steps=steps, enable_progress_bar=False, callbacks=list(callbacks))

    straight = ProbeModule()
    trainer(6).fit(straight, datamodule=ProbeData(batch_size=4))

    path = tmp_path / "step3.ckpt"
    trainer(6, [_SaveAt(3, path)]).fit(ProbeModule(), datamodule=ProbeData(batch_size=4))
    loaded = torch.load(path, weights_only=True)
    assert (loaded["global_step"], loaded["epoch"], loaded["step_in_epoch"]) == (3, 0, 3)
    assert set(loaded["state_dict"]) == {"layer.weight", "layer.bias"}

    resumed = ProbeModule()
    trainer(6).fit(resumed, datamodule=ProbeData(batch_size=4), ckpt_path=path)
    for a, b in zip(straight.parameters(), resumed.parameters(), strict=False):
        assert torch.allclose(a, b, atol=1e-6)


def test_resuming_a_finished_run_trains_no_more(tmp_path):
    path = tmp_path / "done.ckpt"
    module = ProbeModule()
    trainer = Trainer(accelerator="cpu", max_steps=2, enable_progress_bar=False, callbacks=[_SaveAt(2, path)])
    trainer.fit(module, datamodule=ProbeData(batch_size=4))
    again = ProbeModule()
    t2 = Trainer(accelerator="cpu", max_steps=2, enable_progress_bar=False)
    t2.fit(again, datamodule=ProbeData(batch_size=4), ckpt_path=path)
    assert t2.state.global_step == 2
    for a, b in zip(module.parameters(), again.parameters(), strict=False):
        assert torch.equal(a, b)


class _Scheduled(ProbeModule):
    def configure_optimizers(self):
        optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
        scheduler = torch.optim.lr_scheduler.StepLR(optimizer, 1, gamma=0.5)
        return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "epoch"}}


class _SaveAtEpochEnd(Callback):
    def __init__(self, path) -> None:
        self.path, self.ends = path, 0

    def on_train_epoch_end(self, trainer, module):
        self.ends += 1
        if trainer.state.epoch == 0:
            trainer.save_checkpoint(self.path)


def test_checkpoint_saved_at_epoch_end_resumes_at_the_next_epoch(tmp_path):
    path = tmp_path / "epoch0.ckpt"
    straight = _Scheduled()
    Trainer(accelerator="cpu", max_epochs=3, enable_progress_bar=False, callbacks=[_SaveAtEpochEnd(path)]).fit(
        straight, datamodule=ProbeData(batch_size=4)
    )
    saved = torch.load(path, weights_only=True)
    assert (saved["epoch"], saved["step_in_epoch"]) == (1, 0)

    counter = _SaveAtEpochEnd(tmp_path / "unused.ckpt")
    resumed = _Scheduled()
    Trainer(accelerator="cpu", max_epochs=3, enable_progress_bar=False, callbacks=[counter]).fit(
        resumed, datamodule=ProbeData(batch_size=4), ckpt_path=path
    )
    assert counter.ends == 2, "epochs 1 and 2 only: epoch 0 must not end twice"
    for a, b in zip(straight.parameters(), resumed.parameters(), strict=False):
        assert torch.allclose(a, b, atol=1e-6)
