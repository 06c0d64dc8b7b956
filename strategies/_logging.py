"""Metrics from ``self.log`` (a stand-in until the logging branch lands: no loggers, no checkpoints).

The Trainer inherits :class:`_LoggingMixin`; the loops tell it where they are through
``_metrics_reset(kind)``, ``_metrics_batch_end(kind)`` and ``_metrics_epoch_end(kind)``.
"""

from __future__ import annotations

import os
from typing import Any

import torch

_EVAL_KINDS = ("val", "test", "predict", "sanity")


class _LoggingMixin:
    """``callback_metrics`` and friends; ``self.log`` in training keeps the step value, in evaluation the mean."""

    def _configure_logging(self, *, logger: Any, enable_checkpointing: bool | None, default_root_dir: Any,
                           log_every_n_steps: int, enable_progress_bar: bool) -> None:
        self._default_root_dir = os.fspath(default_root_dir) if default_root_dir is not None else os.getcwd()
        self._callback_metrics: dict[str, torch.Tensor] = {}
        self._progress_bar_metrics: dict[str, float] = {}
        self._epoch_sums: dict[str, tuple[torch.Tensor, float, bool]] = {}
        self._active_kind: str | None = None

    @property
    def default_root_dir(self) -> str:
        """Where logs and checkpoints go (the working directory by default)."""
        return self._default_root_dir

    @property
    def logger(self) -> Any:
        """The first logger (none in this stand-in)."""
        return None

    @property
    def loggers(self) -> list[Any]:
        """All loggers."""
        return []

    @property
    def log_dir(self) -> str:
        """The logger's directory, else ``default_root_dir``."""
        return self._default_root_dir

    @property
    def callback_metrics(self) -> dict[str, torch.Tensor]:
        """The latest value of every logged metric (step values in training, epoch values after an epoch)."""
        return self._callback_metrics

    @property
    def logged_metrics(self) -> dict[str, torch.Tensor]:
        """What was sent to the loggers."""
        return self._callback_metrics

    @property
    def progress_bar_metrics(self) -> dict[str, float]:
        """The ``prog_bar=True`` metrics."""
        return self._progress_bar_metrics

    @property
    def checkpoint_callback(self) -> Any:
        """The first checkpoint callback, or None."""
        return next(iter(self.checkpoint_callbacks), None)

    @property
    def checkpoint_callbacks(self) -> list[Any]:
        """The checkpoint callbacks."""
        return [cb for cb in self.callbacks if cb._is_checkpoint]  # type: ignore[attr-defined]

    @property
    def early_stopping_callback(self) -> Any:
        """The first early-stopping callback, or None."""
        return next((cb for cb in self.callbacks if cb._monitors and not cb._is_checkpoint), None)  # type: ignore[attr-defined]

    def _log_metric(self, name: str, value: Any, prog_bar: bool = False, on_step: bool | None = None,
                    on_epoch: bool | None = None, sync_dist: bool = False, **kwargs: Any) -> None:
        value = value.detach() if isinstance(value, torch.Tensor) else torch.tensor(float(value))
        evaluating = self._active_kind in _EVAL_KINDS
        on_step = (not evaluating) if on_step is None else on_step
        on_epoch = evaluating if on_epoch is None else on_epoch
        if on_step:
            step_value = self.strategy.reduce(value, "mean") if sync_dist else value  # type: ignore[attr-defined]
            self._store(f"{name}_step" if on_epoch else name, step_value, prog_bar)
        if on_epoch:
            total, count, sync = self._epoch_sums.get(name, (torch.zeros(()), 0.0, False))
            self._epoch_sums[name] = (total + value.float().cpu(), count + 1, sync or sync_dist)
            self._epoch_names = getattr(self, "_epoch_names", {})
            self._epoch_names[name] = (f"{name}_epoch" if on_step else name, prog_bar)

    def _store(self, name: str, value: torch.Tensor, prog_bar: bool) -> None:
        self._callback_metrics[name] = value.detach().cpu()
        if prog_bar and value.numel() == 1:
            self._progress_bar_metrics[name] = float(value)

    def _metrics_reset(self, kind: str) -> None:
        self._active_kind = kind
        self._epoch_sums = {}

    def _metrics_batch_end(self, kind: str) -> None:
        """Nothing to do per batch in the stand-in."""

    def _metrics_epoch_end(self, kind: str) -> dict[str, float]:
        names = getattr(self, "_epoch_names", {})
        reduced = {}
        for name, (total, count, sync) in sorted(self._epoch_sums.items()):
            mean = total / count
            if sync:
                mean = self.strategy.reduce(mean.to(self.strategy.root_device), "mean").cpu()  # type: ignore[attr-defined]
            key, prog_bar = names.get(name, (name, False))
            if kind != "sanity":
                self._store(key, mean, prog_bar)
            reduced[key] = float(mean)
        self._epoch_sums = {}
        self._active_kind = "train" if kind in ("val", "sanity") else None
        return reduced
