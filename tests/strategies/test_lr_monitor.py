"""``strategies.LearningRateMonitor``: Lightning 2.6's names, steps and values, in ``metrics.csv``."""

from __future__ import annotations

import csv
import warnings

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies


def _loader() -> DataLoader:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(24, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def _module(base, scheduler: str = "epoch", groups: bool = False):
    class Regression(base):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.a, self.b = nn.Linear(4, 1), nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return nn.functional.mse_loss(self.a(x) + self.b(x), y)

        def configure_optimizers(self):
            params = (
                [{"params": self.a.parameters()}, {"params": self.b.parameters(), "lr": 0.05, "name": "head"}]
                if groups
                else self.parameters()
            )
            opt = torch.optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=0.01)
            if scheduler == "none":
                return opt
            sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
            return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": scheduler}}

    return Regression()


def _fit(base, trainer_cls, logger_cls, callback, tmp_path, **module_args):
    trainer = trainer_cls(
        max_epochs=3,
        logger=logger_cls(str(tmp_path), name="run", version=0),
        callbacks=[callback],
        log_every_n_steps=2,
        enable_progress_bar=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        **({"accelerator": "cpu"} if trainer_cls is not strategies.Trainer else {}),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(_module(base, **module_args), _loader())
    return trainer


def _rows(tmp_path) -> list[tuple[int, dict[str, float]]]:
    """``(step, {lr column: value})`` of every metrics.csv row that holds a learning rate."""
    with open(tmp_path / "run" / "version_0" / "metrics.csv", newline="") as f:
        rows = []
        for row in csv.DictReader(f):
            got = {k: float(v) for k, v in row.items() if k.startswith("lr-") and v != ""}
            if got:
                rows.append((int(row["step"]), got))
    return rows


def test_an_epoch_scheduler_is_logged_at_each_epoch_start(tmp_path) -> None:
    monitor = strategies.LearningRateMonitor()
    trainer = _fit(strategies.TrainModule, strategies.Trainer, strategies.CSVLogger, monitor, tmp_path)
    # 6 batches an epoch: the epochs start at steps 0, 6 and 12; StepLR halves the rate each epoch
    assert _rows(tmp_path) == [(0, {"lr-SGD": 0.1}), (6, {"lr-SGD": 0.05}), (12, {"lr-SGD": 0.025})]
    assert monitor.lrs == {"lr-SGD": [0.1, 0.05, 0.025]}
    assert float(trainer.callback_metrics["lr-SGD"]) == pytest.approx(0.025)


def test_step_interval_groups_momentum_and_weight_decay(tmp_path) -> None:
    monitor = strategies.LearningRateMonitor(logging_interval="step", log_momentum=True, log_weight_decay=True)
    _fit(strategies.TrainModule, strategies.Trainer, strategies.CSVLogger, monitor, tmp_path, groups=True)
    rows = _rows(tmp_path)
    # logged when the loggers are due (every 2nd batch: before the batches that make steps 2, 4, ...)
    assert [step for step, _ in rows] == [1, 3, 5, 7, 9, 11, 13, 15, 17]
    assert set(rows[0][1]) == {
        "lr-SGD/pg1",
        "lr-SGD/head",
        "lr-SGD/pg1-momentum",
        "lr-SGD/head-momentum",
        "lr-SGD/pg1-weight_decay",
        "lr-SGD/head-weight_decay",
    }
    assert rows[0][1]["lr-SGD/head"] == 0.05 and rows[-1][1]["lr-SGD/pg1"] == 0.025
    assert rows[0][1]["lr-SGD/pg1-momentum"] == 0.9 and rows[0][1]["lr-SGD/head-weight_decay"] == 0.01


def test_no_logger_and_bad_interval_fail_saying_what_to_do(tmp_path) -> None:
    with pytest.raises(ValueError, match="use 'step', 'epoch' or None"):
        strategies.LearningRateMonitor(logging_interval="batch")
    trainer = strategies.Trainer(
        max_epochs=1, logger=False, callbacks=[strategies.LearningRateMonitor()], enable_progress_bar=False
    )
    with pytest.raises(RuntimeError, match="needs a logger"):
        trainer.fit(_module(strategies.TrainModule), _loader())


def test_the_1x_name_runs_on_compat(tmp_path) -> None:
    import compat.callbacks

    with pytest.warns(DeprecationWarning, match="strategies.LearningRateMonitor"):
        cls = compat.callbacks.LearningRateMonitor
    assert cls is strategies.LearningRateMonitor


@pytest.mark.extras
@pytest.mark.parametrize(
    ("interval", "scheduler", "groups"),
    [(None, "epoch", False), (None, "step", True), ("epoch", "none", False), ("step", "epoch", True)],
)
def test_the_rows_are_lightnings(tmp_path, interval, scheduler, groups) -> None:
    """The same program on Lightning 2.6 writes the same learning-rate rows to metrics.csv."""
    L = pytest.importorskip("lightning.pytorch", reason="the side-by-side test needs Lightning 2.6")
    args = {"logging_interval": interval, "log_momentum": True, "log_weight_decay": True}
    _fit(
        strategies.TrainModule,
        strategies.Trainer,
        strategies.CSVLogger,
        strategies.LearningRateMonitor(**args),
        tmp_path / "ours",
        scheduler=scheduler,
        groups=groups,
    )
    _fit(
        L.LightningModule,
        L.Trainer,
        L.loggers.CSVLogger,
        L.callbacks.LearningRateMonitor(**args),
        tmp_path / "theirs",
        scheduler=scheduler,
        groups=groups,
    )
    ours, theirs = _rows(tmp_path / "ours"), _rows(tmp_path / "theirs")
    assert theirs, "Lightning logged no learning rate: the comparison would hold on nothing"
    assert ours == theirs
