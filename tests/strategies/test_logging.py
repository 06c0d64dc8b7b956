"""``self.log`` storage: Lightning's per-hook defaults, step/epoch aggregation and what reaches the loggers."""

from __future__ import annotations

import csv
import warnings
from types import SimpleNamespace

import pytest
import torch
from _logging_host import Host

from strategies import CSVLogger, ModelCheckpoint, Trainer


def test_training_step_logs_per_step_and_reaches_the_logger_every_n_steps():
    host = Host(log_every_n_steps=2)
    host.metrics.reset("train")
    for value in (1.0, 2.0, 3.0, 4.0):
        host.train_batch(("loss", value, {}))
    assert float(host.callback_metrics["loss"]) == 4.0
    # Lightning's step: optimizer steps before the logging batch; every 2nd step.
    assert host.logger.rows == [(1, {"loss": 2.0, "epoch": 0}), (3, {"loss": 4.0, "epoch": 0})]
    assert host.metrics.epoch_end("train") == [{}]  # on_step only: nothing per epoch


def test_on_step_and_on_epoch_fork_the_names_and_weight_the_mean_by_batch_size():
    host = Host(log_every_n_steps=1)
    host.metrics.reset("train")
    host.train_batch(("acc", 1.0, {"on_epoch": True, "prog_bar": True, "batch_size": 3}))
    host.train_batch(("acc", 0.0, {"on_epoch": True, "prog_bar": True, "batch_size": 1}))
    assert set(host.callback_metrics) == {"acc", "acc_step"}
    (epoch,) = host.metrics.epoch_end("train")
    assert epoch == {"acc_epoch": pytest.approx(0.75)}
    assert float(host.callback_metrics["acc"]) == pytest.approx(0.75)
    assert host.progress_bar_metrics == {"acc_step": 0.0, "acc_epoch": pytest.approx(0.75)}
    assert host.logger.rows[-1] == (1, {"acc_epoch": pytest.approx(0.75), "epoch": 0})
    assert set(host.logged_metrics) == {"acc_step", "acc_epoch"}


@pytest.mark.parametrize(("reduce_fx", "expected"), [("sum", 6.0), ("max", 3.0), ("min", 1.0), (torch.mean, 2.0)])
def test_reduce_fx(reduce_fx, expected):
    host = Host()
    host.metrics.reset("val")
    for value in (1.0, 3.0, 2.0):
        host.log("validation_step", "m", torch.tensor(value), reduce_fx=reduce_fx)
        host.metrics.batch_end("val")
    assert host.metrics.epoch_end("val") == [{"m": pytest.approx(expected)}]


def test_eval_defaults_are_per_epoch_and_the_batch_size_is_read_from_the_batch():
    host = Host()
    host.metrics.reset("train")
    host.train_batch(("loss", 1.0, {}))
    host.metrics.reset("val")
    for batch, value in ((torch.zeros(4, 2), 1.0), (torch.zeros(2, 2), 4.0)):
        host.metrics.current_batch = (batch, batch)
        host.log("validation_step", "val_loss", value)
        host.metrics.batch_end("val")
    assert "val_loss" not in host.callback_metrics  # eval values appear at the epoch's end
    assert host.metrics.epoch_end("val") == [{"val_loss": pytest.approx(2.0)}]
    # In fit the epoch row shares the step of the last training row.
    assert host.logger.rows[-1] == (0, {"val_loss": pytest.approx(2.0), "epoch": 0})


def test_epoch_end_hooks_log_per_epoch_and_refuse_on_step():
    host = Host()
    host.metrics.reset("train")
    host.log("on_train_epoch_end", "lr", 0.1)
    assert host.metrics.epoch_end("train") == [{"lr": pytest.approx(0.1)}]
    with pytest.raises(ValueError, match="on_step=True, on_epoch=True.*on_train_epoch_end"):
        host.log("on_train_epoch_end", "lr", 0.1, on_step=True)


@pytest.mark.parametrize("fx", ["setup", "on_fit_start", "predict_step", "configure_optimizers"])
def test_hooks_lightning_refuses_to_log_in(fx):
    host = Host()
    with pytest.raises(RuntimeError, match=f"called in `{fx}`"):
        host.log(fx, "x", 1.0)


def test_bad_values_and_options_name_the_fix():
    host = Host()
    host.metrics.reset("train")
    with pytest.raises(ValueError, match=r"value.mean\(\)"):
        host.log("training_step", "x", torch.ones(3))
    with pytest.raises(TypeError, match="log_dict"):
        host.log("training_step", "x", {"a": 1.0})
    with pytest.raises(ValueError, match="'mean', 'sum', 'max', 'min'"):
        host.log("training_step", "x", 1.0, reduce_fx="median")
    host.log("training_step", "y", 1.0)
    with pytest.raises(ValueError, match="twice in `training_step` with different arguments"):
        host.log("training_step", "y", 1.0, prog_bar=True)


def test_accumulating_batches_log_nothing():
    host = Host(log_every_n_steps=1)
    host.metrics.reset("train")
    host.train_batch(("loss", 1.0, {}), stepped=False)
    host.train_batch(("loss", 2.0, {}), stepped=True)
    assert host.logger.rows == [(0, {"loss": 2.0, "epoch": 0})]


def test_sanity_check_logs_nothing_and_a_new_run_starts_afresh():
    host = Host()
    host.metrics.reset("sanity")
    host.log("validation_step", "val_loss", 1.0)
    assert host.metrics.epoch_end("sanity") == [{}]
    assert host.callback_metrics == {} and host.logger.rows == []
    host.metrics.reset("train")
    host.train_batch(("loss", 1.0, {}))
    host.state = SimpleNamespace(stage="validate", epoch=0, global_step=5)  # the Trainer's next run
    host.metrics.reset("val")
    assert host.callback_metrics == {}
    host.log("validation_step", "val_loss", 3.0)
    host.metrics.epoch_end("val")
    assert host.logger.rows[-1] == (5, {"val_loss": 3.0, "epoch": 0})  # outside fit: step = global_step


def test_hyperparameters_reach_the_logger_once_per_change():
    host = Host()
    host.strategy.module.hparams = {"lr": 0.1}
    host.metrics.reset("train")
    host.state = SimpleNamespace(stage="fit", epoch=0, global_step=0)
    host.metrics.reset("train")
    assert host.logger.hparams == [{"lr": 0.1}]


def test_default_checkpoint_callback_and_its_refusal(tmp_path):
    host = Host(enable_checkpointing=True, default_root_dir=tmp_path)
    assert isinstance(host.checkpoint_callback, ModelCheckpoint) and host.checkpoint_callbacks == host.callbacks
    assert host.default_root_dir == str(tmp_path)
    host2 = Host.__new__(Host)
    host2.callbacks = [ModelCheckpoint()]
    with pytest.raises(ValueError, match="enable_checkpointing=False"):
        host2._configure_logging(enable_checkpointing=False)


def test_logger_argument_forms(tmp_path):
    csv_logger = CSVLogger(tmp_path)
    assert Host(logger=False).loggers == [] and Host(logger=False).logger is None
    assert Host(logger=csv_logger).loggers == [csv_logger]
    assert Host(logger=[csv_logger, csv_logger]).loggers == [csv_logger, csv_logger]
    host = Host(logger=True, default_root_dir=tmp_path)
    assert type(host.logger).__name__ in ("CSVLogger", "TensorBoardLogger")  # Lightning's choice: TB if installed
    assert host.log_dir == str(tmp_path / "lightning_logs" / "version_0")
    with pytest.raises(TypeError, match="got a `str`"):
        Host(logger="csv")
    with pytest.raises(ValueError, match="log_every_n_steps"):
        Host(log_every_n_steps=-1)


def test_csv_rows_match_lightnings_layout(tmp_path):
    host = Host(logger=CSVLogger(tmp_path), log_every_n_steps=1)
    host.metrics.reset("train")
    host.train_batch(("loss", 1.0, {}))
    host.metrics.reset("val")
    host.log("validation_step", "val_loss", 0.5)
    host.metrics.epoch_end("val")
    host.metrics.epoch_end("train")
    path = tmp_path / "lightning_logs" / "version_0" / "metrics.csv"
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["epoch", "loss", "step", "val_loss"]  # sorted columns, as Lightning writes them
    assert rows == [
        {"epoch": "0", "loss": "1.0", "step": "0", "val_loss": ""},
        {"epoch": "0", "loss": "", "step": "0", "val_loss": "0.5"},
    ]


def test_eval_values_logged_on_step_reach_the_logger_each_batch_at_the_batch_index():
    host = Host(stage="validate")
    host.metrics.reset("val")
    for value in (1.0, 3.0):
        host.log("validation_step", "acc", value, on_step=True)
        host.metrics.batch_end("val")
    assert host.metrics.epoch_end("val") == [{"acc_epoch": pytest.approx(2.0)}]
    assert host.logger.rows == [
        (0, {"acc_step": 1.0}),
        (1, {"acc_step": 3.0}),
        (0, {"acc_epoch": pytest.approx(2.0), "epoch": 0}),
    ]
    assert "acc_step" not in host.callback_metrics  # eval step values are not monitored, as in Lightning


def _epoch_end_readings(trainer_cls, base, callback_base):
    """What ``callback_metrics`` holds in the epoch-end hooks (callback and module), per epoch."""
    seen = []

    class Reader(callback_base):
        def on_validation_epoch_end(self, trainer, module):
            seen.append(("callback/val", trainer.current_epoch, round(float(trainer.callback_metrics["val_loss"]), 5)))

        def on_train_epoch_end(self, trainer, module):
            seen.append(("callback/train", trainer.current_epoch, round(float(trainer.callback_metrics["t_loss"]), 5)))

    class Module(base):
        def __init__(self):
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(3, 1)

        def training_step(self, batch, batch_idx):
            loss = self.layer(batch).pow(2).mean()
            self.log("t_loss", loss, on_step=False, on_epoch=True)
            return loss

        def validation_step(self, batch, batch_idx):
            self.log("val_loss", self.layer(batch).pow(2).mean())

        def on_validation_epoch_end(self):
            seen.append(("module/val", self.current_epoch, round(float(self.trainer.callback_metrics["val_loss"]), 5)))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    torch.manual_seed(0)
    data = torch.utils.data.DataLoader(torch.randn(8, 3), batch_size=4)
    trainer = trainer_cls(
        max_epochs=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        callbacks=[Reader()],
        **({} if trainer_cls is Trainer else {"accelerator": "cpu"}),
    )
    trainer.fit(Module(), data, data)
    return seen


def test_the_epoch_end_hooks_see_this_epochs_values_in_callback_metrics():
    """Lightning shows a hook the epoch's reduced values; reading them must not give the last epoch's."""
    from strategies import Callback, TrainModule

    seen = _epoch_end_readings(Trainer, TrainModule, Callback)
    by_epoch = {(who, epoch): value for who, epoch, value in seen}
    assert by_epoch[("callback/val", 0)] == by_epoch[("module/val", 0)] != by_epoch[("callback/val", 1)]
    pl = pytest.importorskip("lightning.pytorch", reason="needs the lightning extra (pip install -e '.[lightning]')")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert seen == _epoch_end_readings(pl.Trainer, pl.LightningModule, pl.Callback)


def test_a_synced_epoch_value_is_reduced_once_however_often_it_is_read() -> None:
    """The epoch-end hooks read it, then the loggers get it: one all-reduce (ranks must agree on the count)."""
    from strategies._metrics import _Entry, _Options

    calls: list[str] = []

    def sync(tensor: torch.Tensor, op: str) -> torch.Tensor:
        calls.append(op)
        return tensor

    entry = _Entry("loss", _Options(False, True, False, True, "mean", True))
    entry.update(torch.tensor(2.0), 2, sync)
    entry.update(torch.tensor(4.0), 2, sync)
    assert float(entry.compute(sync)) == 3.0 and float(entry.compute(sync)) == 3.0
    assert calls == ["sum"]
    entry.update(torch.tensor(6.0), 4, sync)  # a value logged after the first read: computed again
    assert float(entry.compute(sync)) == pytest.approx(4.5) and calls == ["sum", "sum"]
