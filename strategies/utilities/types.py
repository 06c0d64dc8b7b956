"""The type aliases Lightning programs annotate their hooks with (``lightning.pytorch.utilities.types``).

The same names as Lightning 2.6, so that ``def training_step(self, batch, batch_idx) ->
STEP_OUTPUT`` and ``def configure_optimizers(self) -> OptimizerLRScheduler`` keep their imports
when a program moves to ``strategies``. They are annotations only: the Trainer accepts what
``configure_optimizers`` and the step hooks return whatever the annotation says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NotRequired, TypedDict

import torch
from torch.optim import Optimizer
from torch.optim.lr_scheduler import LRScheduler, ReduceLROnPlateau

__all__ = [
    "EVAL_DATALOADERS",
    "LRSchedulerConfig",
    "LRSchedulerConfigType",
    "LRSchedulerPLType",
    "LRSchedulerType",
    "LRSchedulerTypeTuple",
    "LRSchedulerTypeUnion",
    "OptimizerConfig",
    "OptimizerLRScheduler",
    "OptimizerLRSchedulerConfig",
    "STEP_OUTPUT",
    "TRAIN_DATALOADERS",
]

#: What a training/validation/test step returns: a loss tensor, a dict holding ``"loss"``, or None.
STEP_OUTPUT = torch.Tensor | Mapping[str, Any] | None
#: What ``train_dataloader`` returns: a DataLoader, or a collection of them.
TRAIN_DATALOADERS = Any
#: What ``val_dataloader``/``test_dataloader``/``predict_dataloader`` return.
EVAL_DATALOADERS = Any

#: The scheduler classes ``configure_optimizers`` may return.
LRSchedulerTypeTuple = (LRScheduler, ReduceLROnPlateau)
LRSchedulerTypeUnion = LRScheduler | ReduceLROnPlateau
LRSchedulerPLType = LRSchedulerTypeUnion
#: The scheduler classes themselves.
LRSchedulerType = type[LRScheduler] | type[ReduceLROnPlateau]
#: A scheduler's configuration as a dict (``{"scheduler": ..., "interval": "step", ...}``).
LRSchedulerConfigType = dict[str, Any]


@dataclass
class LRSchedulerConfig:
    """A scheduler with when to step it: the dict form of ``configure_optimizers``, as a dataclass."""

    scheduler: Any
    name: str | None = None
    interval: str = "epoch"
    frequency: int = 1
    reduce_on_plateau: bool = False
    monitor: str | None = None
    strict: bool = True


class OptimizerConfig(TypedDict):
    """``{"optimizer": ...}``."""

    optimizer: Optimizer


class OptimizerLRSchedulerConfig(TypedDict):
    """``{"optimizer": ..., "lr_scheduler": ..., "monitor": ...}``."""

    optimizer: Optimizer
    lr_scheduler: NotRequired[LRSchedulerTypeUnion | LRSchedulerConfigType]
    monitor: NotRequired[str]


#: Every form ``configure_optimizers`` may return.
OptimizerLRScheduler = (
    Optimizer
    | Sequence[Optimizer]
    | tuple[Sequence[Optimizer], Sequence[LRSchedulerTypeUnion | LRSchedulerConfig]]
    | OptimizerConfig
    | OptimizerLRSchedulerConfig
    | Sequence[OptimizerConfig]
    | Sequence[OptimizerLRSchedulerConfig]
    | None
)
