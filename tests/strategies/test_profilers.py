"""``Trainer(profiler=...)``: the simple and advanced profilers, their reports and Lightning's action names."""

from __future__ import annotations

import logging
import warnings
from pathlib import Path

import pytest
import torch
from _helpers import quiet_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import AdvancedProfiler, PassThroughProfiler, SimpleProfiler, TrainModule

torch.manual_seed(0)
X, Y = torch.randn(16, 4), torch.randn(16, 1)


def _loader() -> DataLoader:
    return DataLoader(TensorDataset(X, Y), batch_size=4)


def _module_class(base: type) -> type:
    class Module(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            return nn.functional.mse_loss(self.layer(batch[0]), batch[1])

        def validation_step(self, batch, batch_idx):
            self.log("v", 1.0)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Module


_Module = _module_class(TrainModule)


def test_the_simple_profiler_times_every_hook_step_and_fetch_under_lightnings_names(caplog) -> None:
    profiler = SimpleProfiler()
    with caplog.at_level(logging.INFO, logger="strategies"):
        quiet_trainer(max_epochs=2, profiler=profiler).fit(_Module(), _loader(), _loader())
    counts = {action: len(times) for action, times in profiler.recorded_durations.items()}
    assert counts["[Strategy]SingleDeviceStrategy.training_step"] == 8
    assert counts["run_training_epoch"] == 2 and counts["run_training_batch"] == 8
    assert counts["[_TrainingEpochLoop].train_dataloader_next"] == 8
    assert counts["[_EvaluationLoop].val_next"] == 2 * 4 + 2  # two validations and the 2-batch sanity check
    assert counts["[LightningModule]Module.on_train_epoch_end"] == 2
    report = "\n".join(r.getMessage() for r in caplog.records if r.name == "strategies.profilers")
    assert report.startswith("FIT Profiler Report") and "run_training_epoch" in report and "Percentage %" in report


def test_a_filename_writes_the_report_per_stage_into_the_log_dir(tmp_path: Path) -> None:
    trainer = quiet_trainer(
        max_epochs=1, profiler=SimpleProfiler(filename="perf"), logger=strategies.CSVLogger(tmp_path)
    )
    module = _Module()
    trainer.fit(module, _loader())
    trainer.validate(module, _loader(), verbose=False)
    log_dir = Path(trainer.log_dir)
    assert sorted(p.name for p in log_dir.glob("*.txt")) == ["fit-perf.txt", "validate-perf.txt"]
    assert "VALIDATE Profiler Report" in (log_dir / "validate-perf.txt").read_text()


def test_the_advanced_profiler_reports_cprofile_stats_per_action(tmp_path: Path) -> None:
    profiler = AdvancedProfiler(dirpath=tmp_path, filename="adv", dump_stats=True)
    quiet_trainer(max_steps=2, profiler=profiler).fit(_Module(), _loader())
    text = (tmp_path / "fit-adv.txt").read_text()
    assert "Profile stats for: [Strategy]SingleDeviceStrategy.training_step" in text
    assert "function calls" in text and "cumulative" in text
    assert (tmp_path / "fit-adv-[Strategy]SingleDeviceStrategy.training_step.prof").exists()


def test_the_names_and_what_they_refuse() -> None:
    assert isinstance(quiet_trainer(profiler="simple").profiler, SimpleProfiler)
    assert isinstance(quiet_trainer(profiler="Advanced").profiler, AdvancedProfiler)
    assert isinstance(quiet_trainer().profiler, PassThroughProfiler)
    with pytest.raises(ValueError, match="pass None, 'simple', 'advanced'"):
        quiet_trainer(profiler="pytorch")
    with pytest.raises(ValueError, match=r"barebones=True, profiler='simple'\)` was passed"):
        strategies.Trainer(barebones=True, profiler="simple")
    profiler = SimpleProfiler()
    with pytest.raises(ValueError, match="which was never started"):
        profiler.stop("x")
    profiler.start("x")
    with pytest.raises(ValueError, match="already started"):
        profiler.start("x")


def test_a_profiler_of_ones_own_sees_every_action() -> None:
    class Counting(strategies.Profiler):
        def __init__(self) -> None:
            super().__init__()
            self.started: list[str] = []

        def start(self, action_name: str) -> None:
            self.started.append(action_name)

        def stop(self, action_name: str) -> None:
            pass

    profiler = Counting()
    quiet_trainer(max_steps=1, profiler=profiler).fit(_Module(), _loader())
    assert "[Strategy]SingleDeviceStrategy.training_step" in profiler.started


@pytest.mark.extras
def test_the_actions_and_their_counts_are_lightnings() -> None:
    L = pytest.importorskip("lightning.pytorch", reason="the side-by-side test needs Lightning 2.6")
    counts: list[dict[str, int]] = []
    for base, trainer_cls, profiler in (
        (TrainModule, strategies.Trainer, SimpleProfiler()),
        (L.LightningModule, L.Trainer, L.profilers.SimpleProfiler()),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quiet_trainer(trainer_cls, max_epochs=2, profiler=profiler).fit(_module_class(base)(), _loader(), _loader())
        counts.append({a: len(t) for a, t in profiler.recorded_durations.items()})
    ours, theirs = counts
    shared = set(ours) & set(theirs)
    assert len(shared) > 30
    assert {a: ours[a] for a in shared} == {a: theirs[a] for a in shared}
    # Lightning also times the strategy's own hooks, which this library does not call as hooks.
    assert all(a.startswith("[Strategy]") for a in set(theirs) - set(ours)), set(theirs) - set(ours)
    assert set(ours) - set(theirs) <= {
        "[LightningModule]Module.backward",
        "[LightningModule]Module.configure_model",
        "[LightningModule]Module.prepare_data",
        "[LightningModule]Module.on_validation_model_train",
    }
