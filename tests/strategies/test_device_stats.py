"""``DeviceStatsMonitor``: the CPU statistics reach the loggers around each training batch, as in Lightning 2.6."""

from __future__ import annotations

import csv
import importlib.util
import sys
import warnings
from pathlib import Path

import pytest
import torch
from _helpers import quiet_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import DeviceStatsMonitor, TrainModule

needs_psutil = pytest.mark.skipif(
    importlib.util.find_spec("psutil") is None, reason="CPU statistics need psutil (the psutil extra)"
)
X, Y = torch.randn(24, 4), torch.randn(24, 1)


def _module_class(base: type) -> type:
    class Module(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            loss = nn.functional.mse_loss(self.layer(batch[0]), batch[1])
            self.log("loss", loss)
            return loss

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Module


def _rows(log_dir: str) -> list[dict[str, str]]:
    with open(Path(log_dir) / "metrics.csv", newline="") as f:
        return list(csv.DictReader(f))


def _fit(trainer_cls, base, logger, **kwargs) -> list[dict[str, str]]:
    trainer = quiet_trainer(trainer_cls, max_epochs=2, logger=logger, log_every_n_steps=2, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(_module_class(base)(), DataLoader(TensorDataset(X, Y), batch_size=4))
    return _rows(trainer.logger.log_dir)


@needs_psutil
def test_the_cpu_statistics_are_logged_before_and_after_the_batches_that_log(tmp_path: Path) -> None:
    rows = _fit(None, TrainModule, strategies.CSVLogger(tmp_path), callbacks=[DeviceStatsMonitor()])
    keys = {k for row in rows for k, v in row.items() if v and k.startswith("DeviceStatsMonitor")}
    assert keys == {
        f"DeviceStatsMonitor.{hook}/{stat}"
        for hook in ("on_train_batch_start", "on_train_batch_end")
        for stat in ("cpu_vm_percent", "cpu_percent", "cpu_swap_percent")
    }
    logged = [r for r in rows if r.get("DeviceStatsMonitor.on_train_batch_start/cpu_vm_percent")]
    assert len(logged) == 6  # 12 steps, every 2nd
    assert all(0 <= float(r["DeviceStatsMonitor.on_train_batch_start/cpu_vm_percent"]) <= 100 for r in logged)


@needs_psutil
def test_cpu_stats_false_logs_nothing_on_a_cpu_run(tmp_path: Path) -> None:
    rows = _fit(None, TrainModule, strategies.CSVLogger(tmp_path), callbacks=[DeviceStatsMonitor(cpu_stats=False)])
    assert not [k for row in rows for k in row if k.startswith("DeviceStatsMonitor")]


def test_no_logger_or_no_psutil_says_what_to_do(monkeypatch) -> None:
    with pytest.raises(RuntimeError, match=r"Trainer\(logger=False\)"):
        quiet_trainer(max_steps=1, callbacks=[DeviceStatsMonitor()]).fit(
            _module_class(TrainModule)(), DataLoader(TensorDataset(X, Y), batch_size=4)
        )
    monkeypatch.setitem(sys.modules, "psutil", None)  # `import psutil` fails
    with pytest.raises(ModuleNotFoundError, match="pip install psutil"):
        quiet_trainer(max_steps=1, logger=True, callbacks=[DeviceStatsMonitor()]).fit(
            _module_class(TrainModule)(), DataLoader(TensorDataset(X, Y), batch_size=4)
        )


@pytest.mark.extras
@needs_psutil
def test_the_columns_and_steps_are_lightnings(tmp_path: Path) -> None:
    L = pytest.importorskip("lightning.pytorch", reason="the side-by-side test needs Lightning 2.6")
    ours = _fit(None, TrainModule, strategies.CSVLogger(tmp_path / "ours"), callbacks=[DeviceStatsMonitor()])
    theirs = _fit(
        L.Trainer,
        L.LightningModule,
        L.loggers.CSVLogger(tmp_path / "theirs"),
        callbacks=[L.callbacks.DeviceStatsMonitor()],
    )

    def shape(rows: list[dict[str, str]]) -> list[tuple[str, tuple[str, ...]]]:
        return [(r["step"], tuple(sorted(k for k, v in r.items() if v and k != "step"))) for r in rows]

    assert len(theirs) > 6 and shape(ours) == shape(theirs)
