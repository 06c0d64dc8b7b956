"""``BasePredictionWriter``: per-batch and per-run writes with the samples' dataset indices (Lightning 2.6's)."""

from __future__ import annotations

import datetime
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from _helpers import quiet_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import BasePredictionWriter, Trainer

X = torch.arange(40, dtype=torch.float32).reshape(10, 4)


def _loader(shuffle: bool = False) -> DataLoader:
    x = torch.arange(40, dtype=torch.float32).reshape(10, 4)
    return DataLoader(TensorDataset(x), batch_size=3, shuffle=shuffle, generator=torch.Generator().manual_seed(1))


class _Module(strategies.TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def predict_step(self, batch, batch_idx):
        return batch[0].sum(1)  # each sample's row sum: its index is (sum - 6) / 16


class _Writer(BasePredictionWriter):
    def __init__(self, interval: str, out: Path | None = None) -> None:
        super().__init__(interval)
        self.out, self.batches, self.runs = out, [], []

    def write_on_batch_end(self, trainer, module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        self.batches.append((batch_idx, dataloader_idx, list(batch_indices), prediction.tolist()))

    def write_on_epoch_end(self, trainer, module, predictions, batch_indices):
        self.runs.append(([p.tolist() for p in predictions], batch_indices))
        if self.out is not None:
            torch.save(
                {"predictions": predictions, "indices": batch_indices}, self.out / f"rank{trainer.global_rank}.pt"
            )


class _Data(strategies.DataModule):
    """Made in each spawned rank (tensors sent to a spawned process go through shared memory)."""

    def predict_dataloader(self):
        return _loader()


def _trainer(trainer_cls=Trainer, **kwargs):
    return quiet_trainer(trainer_cls, **kwargs)


def _sample(row_sum: float) -> int:
    return int((row_sum - 6) / 16)


def test_batch_and_epoch_writes_get_the_dataset_indices_of_each_sample() -> None:
    writer = _Writer("batch_and_epoch")
    returned = _trainer(callbacks=[writer]).predict(_Module(), _loader(shuffle=True))
    assert len(writer.batches) == 4 and len(writer.runs) == 1
    assert [b[0] for b in writer.batches] == [0, 1, 2, 3]
    for _, dataloader_idx, indices, prediction in writer.batches:
        assert dataloader_idx == 0 and indices == [_sample(v) for v in prediction]
    assert sorted(i for _, _, indices, _ in writer.batches for i in indices) == list(range(10))  # shuffled, all seen
    predictions, indices = writer.runs[0]
    assert indices == [[b[2] for b in writer.batches]]  # per loader, per batch, per sample (Lightning's nesting)
    assert predictions == [b[3] for b in writer.batches] == [r.tolist() for r in returned]


def test_return_predictions_false_returns_none_and_an_epoch_writer_still_gets_them() -> None:
    writer = _Writer("epoch")
    trainer = _trainer(callbacks=[writer])
    assert trainer.predict(_Module(), _loader(), return_predictions=False) is None
    assert writer.batches == [] and len(writer.runs[0][0]) == 4
    assert trainer.predict_loop.predictions == [] and trainer.predict_loop.epoch_batch_indices == []


def test_a_writer_must_define_what_its_interval_writes_and_a_bad_interval_is_refused() -> None:
    with pytest.raises(
        ValueError, match=r"write_interval='step'\)`: use one of \['batch', 'epoch', 'batch_and_epoch'\]"
    ):
        BasePredictionWriter("step")
    with pytest.raises(NotImplementedError, match="defines no `write_on_batch_end`"):
        _trainer(callbacks=[BasePredictionWriter("batch")]).predict(_Module(), _loader())


def test_a_loader_that_is_not_a_plain_dataloader_gives_empty_indices_with_a_warning() -> None:
    writer = _Writer("batch")
    with pytest.warns(UserWarning, match="Couldn't infer the batch indices"):
        _trainer(callbacks=[writer]).predict(_Module(), _Batches([(X[:3],), (X[3:6],)]))
    assert [b[2] for b in writer.batches] == [[], []]


class _Batches:
    """An iterable of batches that is not a DataLoader (a list would be several loaders, as in Lightning)."""

    def __init__(self, batches: list[Any]) -> None:
        self.batches = batches

    def __iter__(self) -> Any:
        return iter(self.batches)

    def __len__(self) -> int:
        return len(self.batches)


def test_the_writes_match_lightnings() -> None:
    pl = pytest.importorskip("lightning.pytorch", reason="needs the lightning extra (pip install -e '.[lightning]')")

    class LightningModule(pl.LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.Linear(4, 1)

        def predict_step(self, batch, batch_idx):
            return batch[0].sum(1)

    class LightningWriter(pl.callbacks.BasePredictionWriter):
        write_on_batch_end = _Writer.write_on_batch_end
        write_on_epoch_end = _Writer.write_on_epoch_end

        def __init__(self, interval):
            super().__init__(interval)
            self.out, self.batches, self.runs = None, [], []

    theirs, ours = LightningWriter("batch_and_epoch"), _Writer("batch_and_epoch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _trainer(pl.Trainer, callbacks=[theirs]).predict(LightningModule(), _loader(shuffle=True))
    _trainer(callbacks=[ours]).predict(_Module(), _loader(shuffle=True))
    assert ours.batches == theirs.batches and ours.runs == theirs.runs


@pytest.mark.timeout(900)
def test_under_ddp_each_rank_writes_its_share_and_the_shares_cover_the_dataset(tmp_path) -> None:
    trainer = _trainer(strategy="ddp_spawn", accelerator="cpu", devices=2, callbacks=[_Writer("epoch", tmp_path)])
    trainer.strategy.timeout = datetime.timedelta(seconds=120)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.predict(_Module(), datamodule=_Data(), return_predictions=False)
    seen = []
    for rank in (0, 1):
        saved = torch.load(tmp_path / f"rank{rank}.pt", weights_only=True)
        (batches,) = saved["indices"]
        for prediction, indices in zip(saved["predictions"], batches, strict=True):
            assert indices == [_sample(v) for v in prediction.tolist()]
            seen += indices
    assert sorted(seen) == list(range(10))  # each sample once, on one of the two ranks
