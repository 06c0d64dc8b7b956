"""``self.log`` with a torchmetrics ``Metric``: its forward value per step, its ``compute()`` per epoch,
reset after each epoch, as Lightning 2.6 logs one (torchmetrics: an extra; skipped without it)."""

from __future__ import annotations

import csv
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from _helpers import quiet_trainer, spawn_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import TrainModule

torchmetrics = pytest.importorskip("torchmetrics", reason="needs torchmetrics (installed with the lightning extra)")

torch.manual_seed(0)
X = torch.randn(48, 4)
Y = (X.sum(1) > 0).long()


def _loader(start: int = 0, stop: int = 48) -> DataLoader:
    return DataLoader(TensorDataset(X[start:stop], Y[start:stop]), batch_size=8)


def _module_class(base: type) -> type:
    class Module(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = nn.Linear(4, 2)
            self.train_acc = torchmetrics.classification.MulticlassAccuracy(num_classes=2, average="micro")
            self.val_acc = torchmetrics.classification.MulticlassAccuracy(num_classes=2, average="micro")

        def training_step(self, batch, batch_idx):
            x, y = batch
            logits = self.layer(x)
            self.train_acc(logits, y)  # forward: the batch's value, kept as `_forward_cache`
            self.log("train_acc", self.train_acc, on_step=True, on_epoch=True, prog_bar=True)
            return nn.functional.cross_entropy(logits, y)

        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.val_acc.update(self.layer(x), y)  # update only: nothing per step
            self.log("val_acc", self.val_acc)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.5)

    return Module


_Module = _module_class(TrainModule)


def _rows(log_dir: str) -> list[dict[str, str]]:
    with open(Path(log_dir) / "metrics.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_a_metric_is_its_forward_value_per_step_and_its_compute_per_epoch(tmp_path: Path) -> None:
    module = _Module()
    trainer = quiet_trainer(max_epochs=2, logger=strategies.CSVLogger(tmp_path), log_every_n_steps=1)
    trainer.fit(module, _loader(0, 32), _loader(32, 48))
    rows = _rows(trainer.logger.log_dir)
    epochs = [r for r in rows if r["train_acc_epoch"]]
    vals = [float(r["val_acc"]) for r in rows if r["val_acc"]]
    assert len(epochs) == 2 and len(vals) == 2  # the sanity check's batches were not counted
    with torch.no_grad():  # the last validation's value, from the final weights, over the 16 samples
        expected = (module.layer(X[32:48]).argmax(1) == Y[32:48]).float().mean()
    assert vals[-1] == pytest.approx(float(expected))
    steps = [float(r["train_acc_step"]) for r in rows if r["train_acc_step"]]
    assert len(steps) == 8 and all(v in (0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0) for v in steps)
    assert not module.val_acc.update_called, "the metric was not reset after the epoch"


@pytest.mark.extras
def test_the_rows_are_lightnings(tmp_path: Path) -> None:
    L = pytest.importorskip("lightning.pytorch", reason="the side-by-side test needs Lightning 2.6")
    seen: list[Any] = []
    for base, trainer_cls, logger in (
        (TrainModule, strategies.Trainer, strategies.CSVLogger(tmp_path / "ours")),
        (L.LightningModule, L.Trainer, L.loggers.CSVLogger(tmp_path / "theirs")),
    ):
        trainer = quiet_trainer(trainer_cls, max_epochs=3, logger=logger, log_every_n_steps=2)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer.fit(_module_class(base)(), _loader(0, 32), _loader(32, 48))
        results = trainer.validate(trainer.lightning_module, _loader(32, 48), verbose=False)
        seen.append((_rows(trainer.logger.log_dir), results))
    assert len(seen[1][0]) > 6 and seen[0] == seen[1]


class _Spawnable(_Module):
    """The same module at module level, so that ddp_spawn can pickle it."""


@pytest.mark.timeout(600)
def test_under_ddp_the_metric_syncs_its_own_state_over_the_ranks() -> None:
    trainer = spawn_trainer()
    module = _Spawnable()  # its validation_step only updates the metric: compute() syncs it
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (result,) = trainer.validate(module, _loader(0, 40), verbose=False)
    with torch.no_grad():  # each rank saw half of the 40 samples; the value is over all of them
        expected = (module.layer(X[:40]).argmax(1) == Y[:40]).float().mean()
    assert result["val_acc"] == pytest.approx(float(expected))
