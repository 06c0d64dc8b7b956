"""``RichProgressBar`` and ``RichModelSummary`` (the ``rich`` extra): Lightning's arguments, what they draw."""

from __future__ import annotations

import importlib.util
import io
import sys

import pytest
import torch
from _helpers import quiet_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from strategies import RichModelSummary, RichProgressBar, RichProgressBarTheme, TrainModule

needs_rich = pytest.mark.skipif(importlib.util.find_spec("rich") is None, reason="needs rich (the rich extra)")
X, Y = torch.randn(16, 4), torch.randn(16, 1)


class _Module(TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 8), nn.ReLU())
        self.head = nn.Linear(8, 1)

    def training_step(self, batch, batch_idx):
        loss = nn.functional.mse_loss(self.head(self.encoder(batch[0])), batch[1])
        self.log("loss", loss, prog_bar=True)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val", 1.0, prog_bar=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader() -> DataLoader:
    return DataLoader(TensorDataset(X, Y), batch_size=4)


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@needs_rich
def test_the_rich_bar_draws_each_epoch_with_the_prog_bar_metrics(monkeypatch) -> None:
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    bar = RichProgressBar(console_kwargs={"force_terminal": True, "width": 120})
    trainer = quiet_trainer(max_epochs=2, enable_progress_bar=True, callbacks=[bar])
    assert trainer.progress_bar_callback is bar
    trainer.fit(_Module(), _loader(), _loader())
    out = terminal.getvalue()
    assert "Epoch 0" in out and "Epoch 1" in out and "4/4" in out and "loss:" in out
    assert bar._progress is None, "the live display was left running"


@needs_rich
def test_a_redirected_stdout_gets_no_bar_and_the_arguments_are_checked(capsys) -> None:
    quiet_trainer(max_epochs=1, enable_progress_bar=True, callbacks=[RichProgressBar()]).fit(_Module(), _loader())
    assert capsys.readouterr().out == ""
    with pytest.raises(ValueError, match="refresh_rate"):
        RichProgressBar(refresh_rate=-1)
    with pytest.raises(ValueError, match="enable_progress_bar=False"):
        quiet_trainer(enable_progress_bar=False, callbacks=[RichProgressBar()])
    assert RichProgressBarTheme().metrics_format == ".3f"


@needs_rich
def test_the_rich_summary_lists_the_layers_to_the_depth_asked(capsys) -> None:
    quiet_trainer(max_steps=1, callbacks=[RichModelSummary(max_depth=2)]).fit(_Module(), _loader())
    out = capsys.readouterr().out
    for name in ("encoder", "encoder.0", "encoder.1", "head", "Linear", "Trainable params"):
        assert name in out, name
    assert out.count("Total params") == 1  # it replaces the default summary


def test_without_rich_both_say_what_to_install(monkeypatch) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "rich" else find_spec(name, *a))
    for cls in (RichProgressBar, RichModelSummary):
        with pytest.raises(ModuleNotFoundError, match="pip install rich"):
            cls()
