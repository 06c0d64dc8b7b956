"""``LearningRateMonitor``: the learning rate of every optimizer, sent to the loggers, as in Lightning 2.6.

The names are Lightning's, so a dashboard or a script that reads ``metrics.csv`` sees the same
columns on both:

* ``lr-<OptimizerClass>`` for an optimizer (``lr-SGD``), or the scheduler's ``"name"`` when its
  config has one; a second optimizer of the same class gets ``-1``, the next ``-2``, ...;
* ``<name>/pg1``, ``<name>/pg2``, ... when the optimizer has several parameter groups (or
  ``<name>/<group name>`` for a group with a ``"name"`` key);
* ``<name>-momentum`` (``momentum``, or ``betas[0]`` for Adam-like optimizers) with
  ``log_momentum=True`` and ``<name>-weight_decay`` with ``log_weight_decay=True``.

With ``logging_interval=None`` (the default) a scheduler stepped per batch is logged every
``log_every_n_steps`` batches and one stepped per epoch at each epoch's start; ``"step"`` or
``"epoch"`` logs every optimizer at that pace. The values also land in ``trainer.callback_metrics``.
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

import torch

from strategies.callbacks import Callback

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer

_INTERVALS = (None, "step", "epoch")


class LearningRateMonitor(Callback):
    """Log the learning rate (and optionally momentum and weight decay) of each optimizer.

    Args:
        logging_interval: ``"step"``, ``"epoch"``, or ``None`` (each scheduler at its own interval).
        log_momentum: also log ``<name>-momentum``.
        log_weight_decay: also log ``<name>-weight_decay``.

    Raises:
        ValueError: ``logging_interval`` is none of the above.
        RuntimeError: at ``fit``, the trainer has no logger (``logger=False``).
    """

    def __init__(
        self, logging_interval: str | None = None, log_momentum: bool = False, log_weight_decay: bool = False
    ) -> None:
        if logging_interval not in _INTERVALS:
            raise ValueError(
                f"`LearningRateMonitor(logging_interval={logging_interval!r})`: use 'step', 'epoch' or None."
            )
        self.logging_interval = logging_interval
        self.log_momentum = log_momentum
        self.log_weight_decay = log_weight_decay
        self.lrs: dict[str, list[float]] = {}

    def on_train_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Check that there is a logger, and name every optimizer's parameter groups."""
        if not trainer.loggers:
            raise RuntimeError(
                "`LearningRateMonitor` needs a logger, and this `Trainer` has none (`logger=False`): "
                "give it one (`Trainer(logger=CSVLogger(...))`) or drop the callback."
            )
        if self.log_momentum and not any(
            "momentum" in group or "betas" in group for opt in trainer.optimizers for group in opt.param_groups
        ):
            warnings.warn(
                "`LearningRateMonitor(log_momentum=True)`: none of the optimizers has momentum or betas; "
                "no momentum is logged.",
                RuntimeWarning,
                stacklevel=2,
            )
        self.lrs = {n: [] for base, opt, _ in self._named_groups(trainer) for n in self._group_names(base, opt)}

    def on_train_batch_start(self, trainer: Trainer, module: TrainModule, batch: Any, batch_idx: int) -> None:
        """Log per-step learning rates when the loggers are due (every ``log_every_n_steps``)."""
        if self.logging_interval == "epoch" or not trainer.metrics.step_logs_due():
            return
        self._log(trainer, self.logging_interval or "step")

    def on_train_epoch_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Log per-epoch learning rates at the start of each epoch."""
        if self.logging_interval == "step":
            return
        self._log(trainer, self.logging_interval or "epoch")

    # -- helpers ---------------------------------------------------------------------------------

    @staticmethod
    def _named_groups(trainer: Trainer) -> list[tuple[str, torch.optim.Optimizer, str | None]]:
        """``(name prefix, optimizer, its scheduler's interval or None)`` for every optimizer."""
        named: list[tuple[str, torch.optim.Optimizer, str | None]] = []
        counts: dict[str, int] = {}

        def prefix(base: str) -> str:
            seen = counts.get(base, 0)
            counts[base] = seen + 1
            return base if seen == 0 else f"{base}-{seen}"

        scheduled = []
        for config in trainer.lr_scheduler_configs:
            optimizer = config["scheduler"].optimizer
            scheduled.append(optimizer)
            base = config.get("name") or f"lr-{type(optimizer).__name__}"
            named.append((prefix(base), optimizer, config.get("interval", "epoch")))
        for optimizer in trainer.optimizers:
            if not any(optimizer is seen for seen in scheduled):
                named.append((prefix(f"lr-{type(optimizer).__name__}"), optimizer, None))
        return named

    @staticmethod
    def _group_names(base: str, optimizer: torch.optim.Optimizer) -> list[str]:
        groups = optimizer.param_groups
        if len(groups) == 1:
            return [f"{base}/{groups[0]['name']}" if "name" in groups[0] else base]
        return [f"{base}/{group.get('name', f'pg{i + 1}')}" for i, group in enumerate(groups)]

    def _stats(self, base: str, optimizer: torch.optim.Optimizer) -> dict[str, float]:
        stats: dict[str, float] = {}
        betas = "betas" in optimizer.defaults
        for name, group in zip(self._group_names(base, optimizer), optimizer.param_groups, strict=True):
            lr = group["lr"]
            stats[name] = float(lr.item() if isinstance(lr, torch.Tensor) else lr)
            self.lrs.setdefault(name, []).append(stats[name])
            if self.log_momentum:
                stats[f"{name}-momentum"] = float(group["betas"][0] if betas else group.get("momentum", 0))
            if self.log_weight_decay and "weight_decay" in group:
                stats[f"{name}-weight_decay"] = float(group["weight_decay"])
        return stats

    def _log(self, trainer: Trainer, interval: str) -> None:
        stats: dict[str, float] = {}
        for base, optimizer, scheduler_interval in self._named_groups(trainer):
            # an optimizer without a scheduler is logged at every interval; a scheduled one at its own
            # (or at the interval asked for)
            if scheduler_interval is None or self.logging_interval is not None or scheduler_interval == interval:
                stats.update(self._stats(base, optimizer))
        if not stats:
            return
        device = trainer.strategy.root_device
        trainer.callback_metrics.update({k: torch.tensor(v, device=device) for k, v in stats.items()})
        if not trainer.strategy.is_global_zero:  # the loggers write on rank 0 only
            return
        for logger in trainer.loggers:
            logger.log_metrics(stats, step=trainer.metrics.logger_step)
