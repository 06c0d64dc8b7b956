"""Two small callbacks of Lightning 2.6: ``LambdaCallback`` and ``GradientAccumulationScheduler``.

``LambdaCallback(on_train_start=fn, ...)`` makes a callback of plain functions, one keyword per
hook (the hooks of ``strategies.Callback``, which are Lightning 2.x's). A function gets what the
hook gets, without ``self``: ``fn(trainer, module, ...)``.

``GradientAccumulationScheduler({epoch: factor})`` changes ``trainer.accumulate_grad_batches``
at the start of each training epoch: ``{0: 8, 4: 4, 8: 1}`` accumulates 8 batches per optimizer
step in epochs 0-3, 4 in epochs 4-7 and none from epoch 8 on (epochs count from 0; an epoch
before the first key accumulates nothing).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from strategies.callbacks import Callback
from strategies.module import TrainModule, _has_own

if TYPE_CHECKING:
    from strategies.trainer import Trainer

__all__ = ["GradientAccumulationScheduler", "LambdaCallback"]

_Fn = Callable[..., Any] | None


class LambdaCallback(Callback):
    """A callback made of functions: each keyword is a hook (``on_fit_start=lambda trainer, module: ...``).

    A hook left ``None`` does nothing. The functions are called as the hooks are, without ``self``.
    """

    def __init__(
        self,
        setup: _Fn = None,
        teardown: _Fn = None,
        on_fit_start: _Fn = None,
        on_fit_end: _Fn = None,
        on_sanity_check_start: _Fn = None,
        on_sanity_check_end: _Fn = None,
        on_train_batch_start: _Fn = None,
        on_train_batch_end: _Fn = None,
        on_train_epoch_start: _Fn = None,
        on_train_epoch_end: _Fn = None,
        on_validation_epoch_start: _Fn = None,
        on_validation_epoch_end: _Fn = None,
        on_test_epoch_start: _Fn = None,
        on_test_epoch_end: _Fn = None,
        on_validation_batch_start: _Fn = None,
        on_validation_batch_end: _Fn = None,
        on_test_batch_start: _Fn = None,
        on_test_batch_end: _Fn = None,
        on_train_start: _Fn = None,
        on_train_end: _Fn = None,
        on_validation_start: _Fn = None,
        on_validation_end: _Fn = None,
        on_test_start: _Fn = None,
        on_test_end: _Fn = None,
        on_exception: _Fn = None,
        on_save_checkpoint: _Fn = None,
        on_load_checkpoint: _Fn = None,
        on_before_backward: _Fn = None,
        on_after_backward: _Fn = None,
        on_before_optimizer_step: _Fn = None,
        on_before_zero_grad: _Fn = None,
        on_predict_start: _Fn = None,
        on_predict_end: _Fn = None,
        on_predict_batch_start: _Fn = None,
        on_predict_batch_end: _Fn = None,
        on_predict_epoch_start: _Fn = None,
        on_predict_epoch_end: _Fn = None,
    ) -> None:
        for hook, fn in locals().items():
            if hook in ("self", "__class__") or fn is None:
                continue
            if not callable(fn):
                raise TypeError(f"`LambdaCallback({hook}=...)` needs a function; got `{type(fn).__name__}`.")
            setattr(self, hook, fn)


class GradientAccumulationScheduler(Callback):
    """Change ``accumulate_grad_batches`` by epoch: ``scheduling`` maps an epoch (from 0) to a factor.

    Args:
        scheduling: ``{epoch: factor}``; an epoch int >= 0, a factor int >= 1. Without a key 0,
            epochs before the first key use 1 (the dict gets ``{0: 1}``, as in Lightning).

    Raises:
        TypeError: an empty ``scheduling``.
        ValueError: an epoch or a factor that is not such an int.
        RuntimeError: at ``fit``, manual optimization, or DeepSpeed (its factor is fixed at setup).
        ValueError: at ``fit``, with ``Trainer(accumulate_grad_batches=...)`` other than 1 as well.
    """

    def __init__(self, scheduling: dict[int, int]) -> None:
        if not scheduling:
            raise TypeError("`GradientAccumulationScheduler(scheduling={})`: give at least one {epoch: factor}.")
        if any(not isinstance(key, int) or isinstance(key, bool) or key < 0 for key in scheduling):
            raise ValueError(
                f"`GradientAccumulationScheduler`: epochs must be ints >= 0 (counted from 0); got {list(scheduling)}."
            )
        if any(not isinstance(value, int) or isinstance(value, bool) or value < 1 for value in scheduling.values()):
            raise ValueError(
                "`GradientAccumulationScheduler`: accumulation factors must be ints >= 1; "
                f"got {list(scheduling.values())}."
            )
        if 0 not in scheduling:
            scheduling.update({0: 1})
        self.scheduling = scheduling
        self.epochs = sorted(scheduling)

    def going_to_accumulate_grad_batches(self) -> bool:
        """Whether some epoch accumulates more than one batch."""
        return any(value > 1 for value in self.scheduling.values())

    def get_accumulate_grad_batches(self, epoch: int) -> int:
        """The factor of ``epoch``: that of the last scheduled epoch at or before it."""
        return next((self.scheduling[start] for start in reversed(self.epochs) if epoch >= start), 1)

    def on_train_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Refuse what cannot change its factor between epochs (Lightning's checks)."""
        if not module.automatic_optimization:
            raise RuntimeError(
                "`GradientAccumulationScheduler` needs automatic optimization; this module sets "
                "`automatic_optimization = False`: remove the callback, or accumulate in your `training_step`."
            )
        if self.going_to_accumulate_grad_batches() and (
            _has_own(module, "optimizer_step", TrainModule) or _has_own(module, "optimizer_zero_grad", TrainModule)
        ):
            warnings.warn(
                "With gradient accumulation, the module's own `optimizer_step`/`optimizer_zero_grad` run "
                "once per optimizer step, not once per batch.",
                UserWarning,
                stacklevel=2,
            )
        from strategies.deepspeed import DeepSpeedStrategy

        if isinstance(trainer.strategy, DeepSpeedStrategy):
            raise RuntimeError(
                "`DeepSpeedStrategy` fixes `accumulate_grad_batches` when it sets up; it cannot change between "
                "epochs: remove `GradientAccumulationScheduler`."
            )
        if trainer.accumulate_grad_batches != 1:
            raise ValueError(
                f"`Trainer(accumulate_grad_batches={trainer.accumulate_grad_batches})` and "
                "`GradientAccumulationScheduler` both set the factor: keep one of them."
            )

    def on_train_epoch_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Set this epoch's factor."""
        trainer.accumulate_grad_batches = self.get_accumulate_grad_batches(trainer.current_epoch)
