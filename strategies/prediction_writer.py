"""``BasePredictionWriter``: write predictions as they come, per batch or per run, as in Lightning 2.6.

Subclass it and define ``write_on_batch_end`` and/or ``write_on_epoch_end``; each also gets the
dataset indices of the samples (``batch_indices``), so every rank of a DDP run can write its own
share and the shares can be put back in dataset order. The indices are those the loader's batch
sampler yields: ``Trainer.predict`` records them for a plain ``DataLoader`` with a batch sampler
(also the one it gives a ``DistributedSampler``); for any other iterable they are ``[]``.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from strategies.callbacks import Callback

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer

__all__ = ["BasePredictionWriter", "WriteInterval"]


class WriteInterval(enum.StrEnum):
    """When a ``BasePredictionWriter`` writes (Lightning's values)."""

    BATCH = "batch"
    EPOCH = "epoch"
    BATCH_AND_EPOCH = "batch_and_epoch"

    @property
    def on_batch(self) -> bool:
        """Whether it writes after each batch."""
        return self in (WriteInterval.BATCH, WriteInterval.BATCH_AND_EPOCH)

    @property
    def on_epoch(self) -> bool:
        """Whether it writes once the run's batches are done."""
        return self in (WriteInterval.EPOCH, WriteInterval.BATCH_AND_EPOCH)


class BasePredictionWriter(Callback):
    """Base class for callbacks that write predictions (``Trainer.predict``).

    Args:
        write_interval: ``"batch"`` (``write_on_batch_end`` after each batch), ``"epoch"``
            (``write_on_epoch_end`` once, with every batch's predictions) or ``"batch_and_epoch"``.

    Raises:
        ValueError: another ``write_interval``.

    Example::

        class Writer(BasePredictionWriter):
            def write_on_epoch_end(self, trainer, module, predictions, batch_indices):
                torch.save((predictions, batch_indices), f"predictions-{trainer.global_rank}.pt")

        trainer = Trainer(strategy="ddp", devices=2, callbacks=[Writer("epoch")])
        trainer.predict(model, loader, return_predictions=False)
    """

    def __init__(self, write_interval: str = "batch") -> None:
        values = [interval.value for interval in WriteInterval]
        if getattr(write_interval, "value", write_interval) not in values:
            raise ValueError(f"`BasePredictionWriter(write_interval={write_interval!r})`: use one of {values}.")
        self.interval = WriteInterval(write_interval)

    def write_on_batch_end(
        self,
        trainer: Trainer,
        module: TrainModule,
        prediction: Any,
        batch_indices: list[int] | None,
        batch: Any,
        batch_idx: int,
        dataloader_idx: int,
    ) -> None:
        """Write one batch's ``prediction`` (``batch_indices``: the dataset indices of its samples)."""
        raise NotImplementedError(f"`{type(self).__name__}` writes per batch but defines no `write_on_batch_end`")

    def write_on_epoch_end(
        self, trainer: Trainer, module: TrainModule, predictions: list[Any], batch_indices: list[Any]
    ) -> None:
        """Write every batch's prediction at once (``batch_indices``: per loader, per batch, per sample)."""
        raise NotImplementedError(f"`{type(self).__name__}` writes per run but defines no `write_on_epoch_end`")

    def on_predict_batch_end(
        self, trainer: Trainer, module: TrainModule, outputs: Any, batch: Any, batch_idx: int, dataloader_idx: int = 0
    ) -> None:
        """``write_on_batch_end`` (``"batch"``/``"batch_and_epoch"``)."""
        if self.interval.on_batch:
            indices = trainer.predict_loop.current_batch_indices
            self.write_on_batch_end(trainer, module, outputs, indices, batch, batch_idx, dataloader_idx)

    def on_predict_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        """``write_on_epoch_end`` (``"epoch"``/``"batch_and_epoch"``)."""
        if self.interval.on_epoch:
            loop = trainer.predict_loop
            self.write_on_epoch_end(trainer, module, loop.predictions, loop.epoch_batch_indices)


class PredictLoop:
    """What ``trainer.predict_loop`` shows a prediction writer (Lightning's attribute names).

    Attributes:
        epoch_batch_indices: per loader, per batch, the dataset indices of its samples.
        current_batch_indices: the indices of the batch in hand.
        return_predictions: whether ``Trainer.predict`` returns the predictions.
    """

    def __init__(self) -> None:
        self._predictions: list[list[Any]] = []
        self.epoch_batch_indices: list[list[list[int]]] = []
        self.current_batch_indices: list[int] = []
        self.return_predictions = True

    @property
    def predictions(self) -> list[Any]:
        """This run's predictions, batch by batch, on the CPU: one list, or one per loader when
        there are several (kept while they are returned or a writer writes per run)."""
        if not self._predictions:
            return []
        return self._predictions[0] if len(self._predictions) == 1 else self._predictions

    @property
    def num_dataloaders(self) -> int:
        """The number of prediction loaders of the run."""
        return len(self._predictions)

    def start(self, num_dataloaders: int) -> None:
        """A run over ``num_dataloaders`` loaders starts: nothing kept yet."""
        self._predictions = [[] for _ in range(num_dataloaders)]
        self.epoch_batch_indices = [[] for _ in range(num_dataloaders)]
        self.current_batch_indices = []

    def add_prediction(self, dataloader_idx: int, prediction: Any) -> None:
        """Keep one batch's prediction (already on the CPU) of loader ``dataloader_idx``."""
        self._predictions[dataloader_idx].append(prediction)

    def clear(self) -> None:
        """Drop the predictions (after a run that does not return them)."""
        self._predictions = []


def record_indices(loader: Any, callbacks: list[Any]) -> Any:
    """``loader`` with its batch sampler wrapped in an ``IndexRecorder`` when a writer needs the indices.

    Only a plain ``DataLoader`` with a batch sampler is rebuilt (a subclass's own arguments are not
    known); any other loader is returned as it is, and its indices are ``[]``.
    """
    from torch.utils.data import DataLoader

    if not any(isinstance(cb, BasePredictionWriter) for cb in callbacks):
        return loader
    sampler = getattr(loader, "batch_sampler", None)
    if type(loader) is not DataLoader or sampler is None or isinstance(sampler, IndexRecorder):
        return loader
    from strategies._data import loader_options

    return DataLoader(loader.dataset, **loader_options(loader, batch_sampler=IndexRecorder(sampler)))


def writers_need(callbacks: list[Any]) -> tuple[bool, bool]:
    """Whether some writer writes per batch, and whether some writes per run."""
    writers = [cb for cb in callbacks if isinstance(cb, BasePredictionWriter)]
    return any(w.interval.on_batch for w in writers), any(w.interval.on_epoch for w in writers)


class IndexRecorder:
    """A batch sampler that keeps every batch of indices it yields (``seen``), for the writers."""

    def __init__(self, batch_sampler: Any) -> None:
        self.batch_sampler = batch_sampler
        self.seen: list[list[int]] = []

    def __iter__(self) -> Iterator[list[int]]:
        self.seen = []
        for batch in self.batch_sampler:
            self.seen.append(list(batch))
            yield batch

    def __len__(self) -> int:
        return len(self.batch_sampler)

    def __getattr__(self, name: str) -> Any:  # sampler, batch_size, drop_last, set_epoch, ...
        if name == "batch_sampler":
            raise AttributeError(name)
        return getattr(self.batch_sampler, name)
