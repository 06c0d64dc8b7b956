"""``EarlyStopping``: stop ``fit`` when a logged metric stops improving, on every rank at the same epoch."""

from __future__ import annotations

from enum import Enum
from typing import TYPE_CHECKING, Any, ClassVar

import torch
from typing_extensions import override

from strategies.callbacks import Callback

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer


class EarlyStoppingReason(Enum):
    """Why ``EarlyStopping`` stopped the run (Lightning's values)."""

    NOT_STOPPED = 0
    STOPPING_THRESHOLD = 1
    DIVERGENCE_THRESHOLD = 2
    PATIENCE_EXHAUSTED = 3
    NON_FINITE_METRIC = 4


class EarlyStopping(Callback):
    """Stop training when ``monitor`` has not improved for ``patience`` checks (Lightning 2.6's rules).

    A check runs once per validation: at the end of each training epoch when validation runs
    once per epoch (the default), else after each validation. An improvement is a change beyond
    ``min_delta`` in the ``mode`` direction. If any rank decides to stop, all ranks stop at the same
    epoch (``strategy.reduce_boolean_decision(..., all=False)``).

    Args:
        monitor: the ``callback_metrics`` key to watch (log it with ``self.log``).
        min_delta: the smallest change that counts as an improvement.
        patience: checks without improvement before stopping.
        verbose: print why it stops or improves.
        mode: ``"min"`` or ``"max"``.
        strict: raise when ``monitor`` was not logged (else skip the check).
        check_finite: stop when the metric becomes NaN or infinite.
        stopping_threshold: stop as soon as the metric is better than this.
        divergence_threshold: stop as soon as the metric is worse than this.
        check_on_train_epoch_end: force the check to the end of the training epoch (True) or of
            validation (False).
        log_rank_zero_only: print the messages on rank 0 only.
    """

    _monitors: ClassVar[bool] = True
    mode_dict: ClassVar[dict[str, Any]] = {"min": torch.lt, "max": torch.gt}
    order_dict: ClassVar[dict[str, str]] = {"min": "<", "max": ">"}

    def __init__(
        self,
        monitor: str,
        min_delta: float = 0.0,
        patience: int = 3,
        verbose: bool = False,
        mode: str = "min",
        strict: bool = True,
        check_finite: bool = True,
        stopping_threshold: float | None = None,
        divergence_threshold: float | None = None,
        check_on_train_epoch_end: bool | None = None,
        log_rank_zero_only: bool = False,
    ) -> None:
        if mode not in self.mode_dict:
            raise ValueError(f"`EarlyStopping(mode={mode!r})` must be 'min' or 'max'.")
        self.monitor = monitor
        self.patience = patience
        self.verbose = verbose
        self.mode = mode
        self.strict = strict
        self.check_finite = check_finite
        self.stopping_threshold = stopping_threshold
        self.divergence_threshold = divergence_threshold
        self.log_rank_zero_only = log_rank_zero_only
        self.min_delta = min_delta if mode == "max" else -min_delta
        self.wait_count = 0
        self.stopped_epoch = 0
        self.stopping_reason = EarlyStoppingReason.NOT_STOPPED
        self.stopping_reason_message: str | None = None
        self.best_score = torch.tensor(torch.inf if mode == "min" else -torch.inf)
        self._check_on_train_epoch_end = check_on_train_epoch_end

    @property
    def monitor_op(self) -> Any:
        """``torch.lt`` for ``"min"``, ``torch.gt`` for ``"max"``."""
        return self.mode_dict[self.mode]

    @property
    @override
    def state_key(self) -> str:
        """The key of this callback's state in a checkpoint (Lightning's format)."""
        return type(self).__qualname__ + repr({"monitor": self.monitor, "mode": self.mode})

    @override
    def setup(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        if self._check_on_train_epoch_end is None:
            self._check_on_train_epoch_end = trainer.val_check_interval == 1.0 and trainer.check_val_every_n_epoch == 1

    @override
    def on_train_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        if self._check_on_train_epoch_end and not self._should_skip_check(trainer):
            self._run_early_stopping_check(trainer)

    @override
    def on_validation_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After validation: check here when validation does not run once at each epoch's end."""
        if not self._check_on_train_epoch_end and not self._should_skip_check(trainer):
            self._run_early_stopping_check(trainer)

    @override
    def state_dict(self) -> dict[str, Any]:
        return {
            "wait_count": self.wait_count,
            "stopped_epoch": self.stopped_epoch,
            "best_score": self.best_score,
            "patience": self.patience,
            "stopping_reason": self.stopping_reason.value,
            "stopping_reason_message": self.stopping_reason_message,
        }

    @override
    def load_state_dict(self, state: dict[str, Any]) -> None:
        if not state:
            return
        self.wait_count = state["wait_count"]
        self.stopped_epoch = state["stopped_epoch"]
        self.best_score = state["best_score"]
        self.patience = state["patience"]
        self.stopping_reason = EarlyStoppingReason(state.get("stopping_reason", 0))
        self.stopping_reason_message = state.get("stopping_reason_message")

    def _should_skip_check(self, trainer: Trainer) -> bool:
        return trainer.state.stage != "fit" or trainer.sanity_checking

    def _run_early_stopping_check(self, trainer: Trainer) -> None:
        logs = trainer.callback_metrics
        if trainer.fast_dev_run or not self._metric_present(logs):
            return
        current = logs[self.monitor].squeeze()
        should_stop, reason = self._evaluate_stopping_criteria(current)
        should_stop = trainer.strategy.reduce_boolean_decision(should_stop, all=False)
        trainer.should_stop = trainer.should_stop or should_stop
        if should_stop:
            self.stopped_epoch = trainer.current_epoch
            self.stopping_reason_message = reason
        if reason and self.verbose and (not self.log_rank_zero_only or trainer.is_global_zero):
            prefix = f"[rank: {trainer.global_rank}] " if trainer.world_size > 1 else ""
            print(prefix + reason)

    def _metric_present(self, logs: dict[str, torch.Tensor]) -> bool:
        if self.monitor in logs:
            return True
        if self.strict:
            raise RuntimeError(
                f"`EarlyStopping(monitor={self.monitor!r})` found no {self.monitor!r} in the logged metrics "
                f"{sorted(logs)}: log it with `self.log({self.monitor!r}, value)`, or pass `strict=False` to skip "
                "the check while it is missing."
            )
        return False

    def _evaluate_stopping_criteria(self, current: torch.Tensor) -> tuple[bool, str | None]:
        op, order = self.monitor_op, self.order_dict[self.mode]
        if self.check_finite and not torch.isfinite(current):
            self.stopping_reason = EarlyStoppingReason.NON_FINITE_METRIC
            return True, (
                f"Monitored metric {self.monitor} = {current} is not finite. Previous best value was "
                f"{self.best_score:.3f}. Signaling Trainer to stop."
            )
        if self.stopping_threshold is not None and op(current, self.stopping_threshold):
            self.stopping_reason = EarlyStoppingReason.STOPPING_THRESHOLD
            return True, (
                f"Stopping threshold reached: {self.monitor} = {current} {order} {self.stopping_threshold}."
                " Signaling Trainer to stop."
            )
        if self.divergence_threshold is not None and op(-current, -self.divergence_threshold):
            self.stopping_reason = EarlyStoppingReason.DIVERGENCE_THRESHOLD
            return True, (
                f"Divergence threshold reached: {self.monitor} = {current} {order} "
                f"{self.divergence_threshold}. Signaling Trainer to stop."
            )
        if op(current - self.min_delta, self.best_score.to(current.device)):
            message = (
                f"Metric {self.monitor} improved by {abs(self.best_score - current):.3f} >= min_delta = "
                f"{abs(self.min_delta)}. New best score: {current:.3f}"
                if torch.isfinite(self.best_score)
                else f"Metric {self.monitor} improved. New best score: {current:.3f}"
            )
            self.best_score, self.wait_count = current, 0
            return False, message
        self.wait_count += 1
        if self.wait_count >= self.patience:
            self.stopping_reason = EarlyStoppingReason.PATIENCE_EXHAUSTED
            return True, (
                f"Monitored metric {self.monitor} did not improve in the last {self.wait_count} records. "
                f"Best score: {self.best_score:.3f}. Signaling Trainer to stop."
            )
        return False, None
