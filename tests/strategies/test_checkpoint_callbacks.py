"""``ModelCheckpoint`` and ``EarlyStopping``: Lightning 2.6's file names, top-k, last, and stopping rules."""

from __future__ import annotations

import os

import pytest
import torch
from _logging_host import Host

from strategies import CSVLogger, EarlyStopping, ModelCheckpoint
from strategies.early_stopping import EarlyStoppingReason


def _files(path) -> list[str]:
    return sorted(os.listdir(path)) if os.path.isdir(path) else []


def _fit(host: Host, epochs: list[tuple[list[float], list[float] | None]]) -> None:
    host.call("setup", "fit")
    for train, val in epochs:
        host.fit_epoch(train, val)
        if host.should_stop:
            break
    host.call("on_train_end")


def test_default_keeps_the_latest_epoch_under_the_loggers_version(tmp_path):
    host = Host(logger=CSVLogger(tmp_path), enable_checkpointing=True)
    _fit(host, [([1.0, 1.0], None)] * 3)
    ckpt_dir = tmp_path / "lightning_logs" / "version_0" / "checkpoints"
    assert _files(ckpt_dir) == ["epoch=2-step=6.ckpt"]
    assert host.checkpoint_callback.best_model_path == str(ckpt_dir / "epoch=2-step=6.ckpt")
    saved = torch.load(ckpt_dir / "epoch=2-step=6.ckpt", weights_only=True)
    assert saved == {"global_step": 6, "epoch": 2}


def test_without_logger_checkpoints_go_to_default_root_dir(tmp_path):
    host = Host(logger=False, enable_checkpointing=True, default_root_dir=tmp_path)
    _fit(host, [([1.0], None)])
    assert _files(tmp_path / "checkpoints") == ["epoch=0-step=1.ckpt"]


def test_monitor_keeps_the_top_k_and_last(tmp_path):
    ckpt = ModelCheckpoint(
        dirpath=tmp_path, monitor="val_loss", save_top_k=2, save_last=True, filename="{epoch}-{val_loss:.2f}"
    )
    host = Host(callbacks=[ckpt])
    _fit(host, [([1.0], [0.5]), ([1.0], [0.2]), ([1.0], [0.9]), ([1.0], [0.1])])
    assert _files(tmp_path) == ["epoch=1-val_loss=0.20.ckpt", "epoch=3-val_loss=0.10.ckpt", "last.ckpt"]
    assert ckpt.best_model_path == str(tmp_path / "epoch=3-val_loss=0.10.ckpt")
    assert float(ckpt.best_model_score) == pytest.approx(0.1)
    assert {os.path.basename(p): round(float(v), 2) for p, v in ckpt.best_k_models.items()} == {
        "epoch=1-val_loss=0.20.ckpt": 0.2,
        "epoch=3-val_loss=0.10.ckpt": 0.1,
    }
    assert ckpt.last_model_path == str(tmp_path / "last.ckpt")
    restored = ModelCheckpoint(dirpath=tmp_path, monitor="val_loss", save_top_k=2)
    restored.load_state_dict(ckpt.state_dict())
    assert restored.best_model_path == ckpt.best_model_path and restored.kth_best_model_path == ckpt.kth_best_model_path


def test_mode_max_every_n_train_steps_and_version_suffix(tmp_path):
    (tmp_path / "step=2.ckpt").write_bytes(b"taken")
    ckpt = ModelCheckpoint(dirpath=tmp_path, filename="{step}", every_n_train_steps=2, save_top_k=-1)
    host = Host(callbacks=[ckpt])
    with pytest.warns(UserWarning, match="exists and is not empty"):
        _fit(host, [([1.0] * 4, None)])
    assert _files(tmp_path) == ["step=2-v1.ckpt", "step=2.ckpt", "step=4.ckpt"]
    best = ModelCheckpoint(
        dirpath=tmp_path / "max",
        monitor="val_loss",
        mode="max",
        auto_insert_metric_name=False,
        filename="best-{val_loss:.1f}",
    )
    host = Host(callbacks=[best])
    _fit(host, [([1.0], [0.5]), ([1.0], [0.7]), ([1.0], [0.6])])
    assert _files(tmp_path / "max") == ["best-0.7.ckpt"]


def test_nothing_is_saved_outside_fit(tmp_path):
    host = Host(stage="validate", callbacks=[ModelCheckpoint(dirpath=tmp_path)])
    _fit(host, [([1.0], [1.0])])
    assert _files(tmp_path) == []


def test_a_missing_monitor_is_an_error_once_validation_ran(tmp_path):
    host = Host(callbacks=[ModelCheckpoint(dirpath=tmp_path, monitor="val_acc")])
    with pytest.raises(RuntimeError, match=r"self.log\('val_acc', value\)"):
        _fit(host, [([1.0], [1.0])])


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"save_top_k": 3}, "no metric to rank"),
        ({"mode": "best"}, "'min' or 'max'"),
        ({"every_n_epochs": 1, "every_n_train_steps": 5}, "only one"),
        ({"save_top_k": -2}, ">= -1"),
    ],
)
def test_model_checkpoint_refuses_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        ModelCheckpoint(**kwargs)


def test_early_stopping_after_patience_checks_without_improvement(tmp_path):
    stopper = EarlyStopping("val_loss", patience=2, min_delta=0.05)
    host = Host(callbacks=[stopper])
    _fit(host, [([1.0], [v]) for v in (1.0, 0.5, 0.48, 0.47, 0.1, 0.1)])
    assert host.should_stop and stopper.stopped_epoch == 3 and host.current_epoch == 3
    assert stopper.stopping_reason is EarlyStoppingReason.PATIENCE_EXHAUSTED
    assert float(stopper.best_score) == pytest.approx(0.5) and stopper.wait_count == 2
    again = EarlyStopping("val_loss", patience=2)
    again.load_state_dict(stopper.state_dict())
    assert again.wait_count == 2 and again.stopped_epoch == 3


@pytest.mark.parametrize(
    ("kwargs", "values", "reason"),
    [
        ({"stopping_threshold": 0.3}, [0.5, 0.2, 0.1], EarlyStoppingReason.STOPPING_THRESHOLD),
        ({"divergence_threshold": 2.0}, [0.5, 3.0, 0.1], EarlyStoppingReason.DIVERGENCE_THRESHOLD),
        ({}, [0.5, float("nan"), 0.1], EarlyStoppingReason.NON_FINITE_METRIC),
    ],
)
def test_early_stopping_thresholds(kwargs, values, reason):
    stopper = EarlyStopping("val_loss", patience=10, **kwargs)
    host = Host(callbacks=[stopper])
    _fit(host, [([1.0], [v]) for v in values])
    assert stopper.stopping_reason is reason and stopper.stopped_epoch == 1


def test_early_stopping_strict_and_not_strict():
    host = Host(callbacks=[EarlyStopping("val_acc")])
    with pytest.raises(RuntimeError, match="strict=False"):
        _fit(host, [([1.0], [1.0])])
    host = Host(callbacks=[EarlyStopping("val_acc", strict=False)])
    _fit(host, [([1.0], [1.0])] * 2)
    assert not host.should_stop and host.current_epoch == 2


def test_with_validation_every_other_epoch_it_saves_after_validation(tmp_path):
    ckpt = ModelCheckpoint(dirpath=tmp_path, monitor="val_loss", save_top_k=-1)
    stopper = EarlyStopping("val_loss", patience=1)
    host = Host(callbacks=[stopper, ckpt])
    host.check_val_every_n_epoch = 2
    _fit(host, [([1.0], None), ([1.0], [0.5]), ([1.0], None), ([1.0], [0.3])])
    assert _files(tmp_path) == ["epoch=1-step=2.ckpt", "epoch=3-step=4.ckpt"]
    assert not host.should_stop and float(stopper.best_score) == pytest.approx(0.3)  # checked after validation only


def test_a_users_checkpoint_subclass_runs_last_and_no_default_model_checkpoint_joins_it(tmp_path):
    from torch.utils.data import DataLoader, TensorDataset

    from strategies import Trainer, TrainModule
    from strategies.callbacks import Callback, Checkpoint

    seen: list[str] = []

    class Saver(Checkpoint):
        def on_train_epoch_end(self, trainer, module):
            seen.append("saver")

    class Other(Callback):
        def on_train_epoch_end(self, trainer, module):
            seen.append("other")

    class Net(TrainModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = Trainer(
        max_epochs=1, logger=False, enable_progress_bar=False, default_root_dir=tmp_path, callbacks=[Saver(), Other()]
    )
    trainer.fit(Net(), DataLoader(TensorDataset(torch.randn(4, 2)), batch_size=2))
    assert seen == ["other", "saver"]
    assert not any(isinstance(cb, ModelCheckpoint) for cb in trainer.callbacks)
    assert not list(tmp_path.rglob("*.ckpt"))
    assert issubclass(ModelCheckpoint, Checkpoint)
    with pytest.raises(ValueError, match="enable_checkpointing=False"):
        Trainer(enable_checkpointing=False, callbacks=[Saver()])
