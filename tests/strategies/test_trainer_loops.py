"""The loop arguments behave as in Lightning 2.6 (one process; DDP cases on a 1-rank group)."""

from __future__ import annotations

import datetime

import pytest
import torch
from probe import ProbeData, ProbeModule, dataset
from torch.utils.data import DistributedSampler

from strategies import Callback, Trainer

QUIET = dict(accelerator="cpu", enable_progress_bar=False, logger=False, enable_checkpointing=False)


class Count(Callback):
    """Counts hook calls by name."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __getattribute__(self, name):
        if name.startswith("on_") or name in ("setup", "teardown"):
            calls = object.__getattribute__(self, "calls")

            def hook(*args, **kwargs):
                calls[name] = calls.get(name, 0) + 1

            return hook
        return object.__getattribute__(self, name)


def _fit(module=None, data=None, **kwargs):
    count = Count()
    trainer = Trainer(callbacks=[count], **QUIET, **kwargs)
    trainer.fit(module or ProbeModule(), datamodule=data or ProbeData(batch_size=4))
    return trainer, count.calls


def test_accumulating_two_batches_of_4_equals_one_batch_of_8():
    accumulated, plain = ProbeModule(), ProbeModule()
    trainer, calls = _fit(accumulated, accumulate_grad_batches=2, max_epochs=1, num_sanity_val_steps=0)
    _fit(plain, ProbeData(batch_size=8), max_epochs=1, num_sanity_val_steps=0)
    assert trainer.global_step == 2 and calls["on_before_zero_grad"] == 2 and calls["on_train_batch_end"] == 4
    for a, b in zip(accumulated.parameters(), plain.parameters(), strict=False):
        assert torch.allclose(a, b, atol=1e-6)


class _SyncSeen(Callback):
    def __init__(self) -> None:
        self.sync: list[bool] = []

    def on_after_backward(self, trainer, module):
        self.sync.append(trainer.model.require_backward_grad_sync)


def test_ddp_skips_the_gradient_sync_while_accumulating():
    seen = _SyncSeen()
    trainer = Trainer(
        strategy="ddp",
        devices=1,
        callbacks=[seen],
        accumulate_grad_batches=2,
        max_epochs=1,
        limit_train_batches=4,
        **QUIET,
    )
    try:
        trainer.fit(ProbeModule(), datamodule=ProbeData(batch_size=4))
    finally:
        trainer.strategy.close()
    assert seen.sync == [False, True, False, True]


@pytest.mark.parametrize(
    ("interval", "every", "epochs", "expected"),
    [
        (0.5, 1, 1, 2),
        (1.0, 1, 2, 2),
        (2, 1, 1, 2),
        (3, None, 2, 2),
        (1.0, 2, 2, 1),
    ],
)
def test_val_check_interval_and_every_n_epochs(interval, every, epochs, expected):
    _, calls = _fit(
        val_check_interval=interval, check_val_every_n_epoch=every, max_epochs=epochs, num_sanity_val_steps=0
    )
    assert calls["on_validation_start"] == expected


def test_val_check_interval_longer_than_an_epoch_is_refused():
    with pytest.raises(ValueError, match="`val_check_interval=5` is more than the 4 training batches"):
        _fit(val_check_interval=5, max_epochs=1)


@pytest.mark.parametrize(("steps", "batches"), [(0, 0), (1, 1), (2, 2), (-1, 4)])
def test_num_sanity_val_steps(steps, batches):
    _, calls = _fit(num_sanity_val_steps=steps, max_steps=1, val_check_interval=1.0, limit_train_batches=1)
    assert calls.get("on_sanity_check_start", 0) == int(steps != 0)
    assert calls["on_validation_batch_end"] - 4 == batches  # plus the 4 batches of the epoch-end validation


def test_fast_dev_run_runs_one_batch_of_each():
    trainer, calls = _fit(fast_dev_run=True)
    assert trainer.global_step == 1 and "on_sanity_check_start" not in calls
    assert calls["on_train_batch_end"] == 1 and calls["on_validation_batch_end"] == 1


def test_max_time_stops_training():
    # Lightning 2.6: a used-up limit stops at on_fit_start, before any batch or on_train_start
    trainer, calls = _fit(max_time=datetime.timedelta(0), max_epochs=5)
    assert trainer.global_step == 0 and "on_train_start" not in calls and calls["on_fit_end"] == 1
    trainer, calls = _fit(max_time={"days": 1}, max_epochs=2)
    assert trainer.global_step > 0 and calls["on_train_end"] == 1


class _StopAt(Callback):
    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        if trainer.global_step == 2:
            trainer.should_stop = True


def test_should_stop_ends_fit_after_validating_and_respects_min_epochs():
    stop = Trainer(callbacks=[_StopAt()], max_epochs=5, num_sanity_val_steps=0, **QUIET)
    stop.fit(ProbeModule(), datamodule=ProbeData(batch_size=4))
    assert stop.global_step == 2 and stop.current_epoch == 1 and "val_loss" in stop.callback_metrics
    longer = Trainer(callbacks=[_StopAt()], max_epochs=5, min_epochs=2, num_sanity_val_steps=0, **QUIET)
    longer.fit(ProbeModule(), datamodule=ProbeData(batch_size=4))
    assert longer.current_epoch == 2 and longer.global_step == 8


class _SkipRest(ProbeModule):
    def on_train_batch_start(self, batch, batch_idx):
        return -1 if batch_idx == 1 else None


def test_on_train_batch_start_returning_minus_one_skips_the_epoch():
    trainer, calls = _fit(_SkipRest(), max_epochs=2, num_sanity_val_steps=0)
    assert trainer.global_step == 2 and calls["on_train_epoch_end"] == 2


def test_deterministic_and_benchmark_set_torchs_flags():
    try:
        Trainer(deterministic=True, **QUIET)
        assert torch.are_deterministic_algorithms_enabled() and torch.backends.cudnn.benchmark is False
        Trainer(deterministic="warn", benchmark=True, **QUIET)
        assert torch.is_deterministic_algorithms_warn_only_enabled() and torch.backends.cudnn.benchmark is True
    finally:
        torch.use_deterministic_algorithms(False)
        torch.backends.cudnn.benchmark = False
    with pytest.raises(ValueError, match="`deterministic='yes'`"):
        Trainer(deterministic="yes", **QUIET)


class _BatchNormModule(ProbeModule):
    def setup(self, stage):
        super().setup(stage)
        self.norm = torch.nn.BatchNorm1d(4)

    def on_fit_start(self):
        self.seen["norm"] = type(self.norm).__name__

    def training_step(self, batch, batch_idx):
        return super().training_step((self.norm(batch[0]), batch[1]), batch_idx)


def test_sync_batchnorm_on_cpu_is_refused_at_construction():
    with pytest.raises(ValueError, match="`sync_batchnorm=True` needs CUDA"):
        Trainer(strategy="ddp", devices=2, sync_batchnorm=True, **QUIET)


def test_sync_batchnorm_is_ignored_on_one_device():
    module = _BatchNormModule()
    Trainer(devices=1, sync_batchnorm=True, max_steps=1, **QUIET).fit(module, datamodule=ProbeData(batch_size=4))
    assert module.seen["norm"] == "BatchNorm1d"


class _Order(ProbeModule):
    def __init__(self) -> None:
        super().__init__()
        self.firsts: list[float] = []

    def training_step(self, batch, batch_idx):
        if batch_idx == 0:
            self.firsts.append(float(batch[0][0, 0]))
        return super().training_step(batch, batch_idx)


def test_training_data_is_shuffled_per_epoch_by_a_seeded_distributed_sampler():
    module = _Order()
    trainer = Trainer(strategy="ddp", devices=1, max_epochs=2, num_sanity_val_steps=0, **QUIET)
    try:
        trainer.fit(module, datamodule=ProbeData(batch_size=4))
    finally:
        trainer.strategy.close()
    expected = []
    for epoch in range(2):
        sampler = DistributedSampler(dataset(), num_replicas=1, rank=0, shuffle=True, seed=0)
        sampler.set_epoch(epoch)
        expected.append(float(dataset()[next(iter(sampler))][0][0]))
    assert module.firsts == expected and expected[0] != expected[1]
