"""The user's side: ``TrainModule`` (an ``nn.Module`` with hooks) and ``DataModule``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn

if TYPE_CHECKING:
    from strategies.trainer import Trainer


class _Hooks:
    """The data hooks modules and datamodules share (all no-ops)."""

    def prepare_data(self) -> None:
        """Download or write data once per node (local rank 0), before ``setup``."""

    def setup(self, stage: str) -> None:
        """Build what the stage needs; ``torch.distributed`` is live here for parallel strategies."""

    def teardown(self, stage: str) -> None:
        """Release what ``setup`` built."""

    def train_dataloader(self) -> Any:
        """The training data (or pass ``train_dataloaders`` / a DataModule to ``fit``)."""
        return None

    def val_dataloader(self) -> Any:
        """The validation data."""
        return None

    def test_dataloader(self) -> Any:
        """The test data."""
        return None

    def predict_dataloader(self) -> Any:
        """The prediction data."""
        return None


class TrainModule(nn.Module, _Hooks):
    """An ``nn.Module`` with the training hooks the Trainer calls.

    Override ``training_step`` (returns a loss, or a dict with ``"loss"``) and
    ``configure_optimizers``; the rest is optional. Layers may be created in ``setup`` or
    ``configure_model``: they are moved to the device and wrapped after those hooks.
    """

    def __init__(self) -> None:
        super().__init__()
        self._trainer: Trainer | None = None

    @property
    def trainer(self) -> Trainer:
        """The Trainer running this module."""
        if self._trainer is None:
            raise RuntimeError(f"`{type(self).__name__}` is not attached to a Trainer.")
        return self._trainer

    @property
    def device(self) -> torch.device:
        """Where the module runs: the strategy's device, also inside ``setup`` before the move."""
        if self._trainer is not None:
            return self._trainer.strategy.root_device
        param = next(self.parameters(), None)
        return param.device if param is not None else torch.device("cpu")

    @property
    def global_rank(self) -> int:
        """This process's rank (0 outside a run)."""
        return self._trainer.global_rank if self._trainer is not None else 0

    def log(self, name: str, value: Any, sync_dist: bool = False) -> None:
        """Record a metric in ``trainer.callback_metrics``; ``sync_dist=True`` averages it over ranks.

        In training the latest value is kept; in validation/test/predict the epoch's mean.
        """
        self.trainer._log(name, value, sync_dist)

    def configure_model(self) -> None:
        """Create layers inside the strategy's sharded context (FSDP/DeepSpeed shard them here)."""

    def configure_optimizers(self) -> Any:
        """Return an optimizer, a list, or a dict with ``"optimizer"`` and ``"lr_scheduler"``."""
        raise NotImplementedError(
            f"`{type(self).__name__}.configure_optimizers` is not defined: return an optimizer (e.g. "
            "`torch.optim.SGD(self.parameters(), lr=0.1)`) to fit."
        )

    def training_step(self, batch: Any, batch_idx: int) -> Any:
        """One training step: return the loss (or a dict with ``"loss"``)."""
        raise NotImplementedError

    def validation_step(self, batch: Any, batch_idx: int) -> Any:
        """One validation step."""
        raise NotImplementedError

    def test_step(self, batch: Any, batch_idx: int) -> Any:
        """One test step."""
        raise NotImplementedError

    def predict_step(self, batch: Any, batch_idx: int) -> Any:
        """One prediction step; the default calls the module on the batch."""
        return self(batch)

    def on_fit_start(self) -> None:
        """After ``strategy.setup``: the model is on its device and wrapped; optimizers exist."""

    def on_fit_end(self) -> None:
        """After the training loop."""

    def on_train_epoch_start(self) -> None:
        """Before each training epoch."""

    def on_train_epoch_end(self) -> None:
        """After each training epoch (and its validation)."""

    def on_train_batch_start(self, batch: Any, batch_idx: int) -> None:
        """Before each training step."""

    def on_train_batch_end(self, outputs: Any, batch: Any, batch_idx: int) -> None:
        """After each optimizer step."""

    def on_validation_epoch_end(self) -> None:
        """After each validation epoch."""

    def on_test_epoch_end(self) -> None:
        """After the test epoch."""

    def state_dict_extra(self) -> dict[str, Any]:
        """Extra state to keep in checkpoints (besides the weights)."""
        return {}


def _has_own(obj: Any, name: str, base: type) -> bool:
    """Whether ``obj``'s class overrides ``name`` of ``base``."""
    return getattr(type(obj), name, None) is not getattr(base, name, None)


class DataModule(_Hooks):
    """Data in one place: ``prepare_data``, ``setup(stage)`` and the dataloaders of each stage."""

    def __init__(self) -> None:
        self.trainer: Trainer | None = None
