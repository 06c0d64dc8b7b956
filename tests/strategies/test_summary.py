"""``Trainer(enable_model_summary=...)``: Lightning's summary table, printed when a fit starts."""

from __future__ import annotations

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from strategies import Trainer, TrainModule
from strategies._summary import model_summary


class _Net(TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Linear(4, 3)
        self.head = nn.Linear(3, 1)
        self.head.bias.requires_grad_(False)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.head(self.encoder(x)), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _fit(capsys, **kwargs) -> str:
    data = DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4)
    trainer = Trainer(
        accelerator="cpu", max_steps=1, logger=False, enable_checkpointing=False, enable_progress_bar=False, **kwargs
    )
    trainer.fit(_Net(), data)
    return capsys.readouterr().out


def test_the_table_counts_each_child_and_the_totals() -> None:
    lines = model_summary(_Net()).splitlines()
    assert lines[0] == "  | Name    | Type   | Params | Mode"
    assert [line.split("|")[1].strip() for line in lines[2:4]] == ["encoder", "head"]
    assert [line.split("|")[3].strip() for line in lines[2:4]] == ["15", "4"]
    assert lines[-3:] == ["18        Trainable params", "1         Non-trainable params", "19        Total params"]


def test_a_fit_prints_it_by_default_and_not_when_disabled(capsys) -> None:
    assert "Total params" in _fit(capsys)
    assert "Total params" not in _fit(capsys, enable_model_summary=False)


class _Nested(TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 3)))
        self.head = nn.Linear(3, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.head(self.encoder(x)), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _names(table: str) -> list[str]:
    lines = table.splitlines()
    rule = [i for i, line in enumerate(lines) if set(line) == {"-"}]
    return [line.split("|")[1].strip() for line in lines[rule[0] + 1 : rule[1]]]


def test_max_depth_lists_nested_layers_as_lightning_names_them() -> None:
    assert _names(model_summary(_Nested(), 1)) == ["encoder", "head"]
    assert _names(model_summary(_Nested(), 2)) == ["encoder", "encoder.0", "encoder.1", "encoder.2", "head"]
    assert _names(model_summary(_Nested(), -1))[-2:] == ["encoder.2.0", "head"]


def test_a_model_summary_callback_replaces_the_default_table(capsys) -> None:
    from strategies import ModelSummary

    data = DataLoader(TensorDataset(torch.randn(8, 4), torch.randn(8, 1)), batch_size=4)
    for callback, expected in ((ModelSummary(max_depth=2), 1), (ModelSummary(max_depth=0), 0)):
        trainer = Trainer(
            max_steps=1, logger=False, enable_checkpointing=False, enable_progress_bar=False, callbacks=[callback]
        )
        trainer.fit(_Nested(), data)
        out = capsys.readouterr().out
        assert out.count("Total params") == expected, out
        if expected:
            assert "encoder.2" in out
    with pytest.raises(ValueError, match=r"`ModelSummary\(max_depth=-2\)`: use an int >= -1"):
        ModelSummary(max_depth=-2)


def test_the_nested_names_match_lightnings() -> None:
    summary = pytest.importorskip("lightning.pytorch.utilities.model_summary", reason="needs the lightning extra")
    pl = pytest.importorskip("lightning.pytorch")

    class Theirs(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Sequential(nn.Linear(3, 3)))
            self.head = nn.Linear(3, 1)

    for depth in (1, 2, -1):
        theirs = _names(str(summary.summarize(Theirs(), max_depth=depth)))
        assert _names(model_summary(_Nested(), depth)) == theirs
