"""``pytorch_lightning.callbacks`` on compat: every 1.x callback name, resolved when it is used.

``Callback`` is ``compat.Callback`` (old hook names bridged); ``ModelCheckpoint`` takes the 1.x
arguments (``period``, ``every_n_val_epochs``, ``prefix``) on top of ``strategies.ModelCheckpoint``;
``EarlyStopping``, ``LearningRateMonitor``, ``Timer``, ``LambdaCallback``,
``GradientAccumulationScheduler``, ``BasePredictionWriter``, ``ModelSummary``,
``StochasticWeightAveraging``, ... are ``strategies``' own. Each name warns once with its new
name. ``ProgressBar`` (1.x's tqdm bar) is ``strategies.TQDMProgressBar``; ``ProgressBarBase`` is
``strategies.ProgressBar`` with 1.x's batch counters (``train_batch_idx``, ...). A 1.x callback
``strategies`` has no counterpart for yet (``ModelPruning``, ...) raises
``compat.MissingNameError`` where it is imported. The names come
from the 1.2-1.5 catalogs (see ``compat._legacy``).
"""

from __future__ import annotations

import functools
from typing import Any

from compat import _legacy
from compat._warnings import deprecation_message, warn_deprecated

__all__ = ["BaseFinetuning", "ModelCheckpoint", "ProgressBar", "ProgressBarBase"]  # noqa: F822 (resolved by __getattr__)


@functools.cache
def _model_checkpoint() -> type:
    import strategies

    class ModelCheckpoint(strategies.ModelCheckpoint):
        """``strategies.ModelCheckpoint`` with the 1.2-1.5 arguments, each warning once.

        ``period=N`` / ``every_n_val_epochs=N`` are ``every_n_epochs=N``; ``prefix="p"`` puts
        ``p-`` before the file name, as 1.2 did.
        """

        def __init__(
            self,
            *args: Any,
            period: int | None = None,
            every_n_val_epochs: int | None = None,
            prefix: str = "",
            train_time_interval: Any = None,
            **kwargs: Any,
        ) -> None:
            old = "pytorch_lightning.callbacks.ModelCheckpoint"
            for keyword, value in (("period", period), ("every_n_val_epochs", every_n_val_epochs)):
                if value is None:
                    continue
                if kwargs.get("every_n_epochs") not in (None, value):
                    raise TypeError(
                        f"`ModelCheckpoint({keyword}={value}, every_n_epochs={kwargs['every_n_epochs']})`: "
                        f"`{keyword}` is the old name of `every_n_epochs`; pass only `every_n_epochs`."
                    )
                warn_deprecated(
                    deprecation_message(
                        old,
                        "every_n_epochs",
                        member=keyword,
                        old_display=f"ModelCheckpoint({keyword}=...)",
                        replacement=f"ModelCheckpoint(every_n_epochs={value})",
                    )
                )
                kwargs["every_n_epochs"] = value
            if prefix:
                warn_deprecated(
                    deprecation_message(
                        old,
                        None,
                        member="prefix",
                        old_display="ModelCheckpoint(prefix=...)",
                        replacement=f"ModelCheckpoint(filename='{prefix}-{{epoch}}-{{step}}')",
                    )
                )
                filename = kwargs.get("filename") or "{epoch}-{step}"
                kwargs["filename"] = f"{prefix}{self.CHECKPOINT_JOIN_CHAR}{filename}"
            if train_time_interval is not None:
                raise TypeError(
                    "`ModelCheckpoint(train_time_interval=...)` has no counterpart in `strategies`: save by "
                    "`every_n_train_steps=N` or `every_n_epochs=N` instead."
                )
            super().__init__(*args, **kwargs)

    ModelCheckpoint.__module__ = __name__
    ModelCheckpoint.__qualname__ = "ModelCheckpoint"  # its checkpoint state key and pickle path
    return ModelCheckpoint


@functools.cache
def _lambda_callback() -> type:
    import inspect
    import sys
    import warnings

    import strategies
    from compat.module import Callback as OldCallback

    new_hooks = frozenset(inspect.signature(strategies.LambdaCallback).parameters)

    class LambdaCallback(strategies.LambdaCallback):
        """``strategies.LambdaCallback`` that also takes the 1.x hooks (``on_epoch_start=fn``, ...).

        With a 1.x hook the instance's class is a ``compat.Callback`` subclass holding the
        functions as methods, made in the caller's module, so compat treats it as the user's 1.x
        callback: each old hook warns once with its new name, and ``compat.Trainer`` calls it at
        its 1.x step (or refuses it, saying so), exactly as for a 1.x ``Callback`` subclass.
        """

        def __new__(cls, **hooks: Any) -> Any:
            old = {name: fn for name, fn in hooks.items() if name not in new_hooks and fn is not None}
            if not old:
                return super().__new__(cls)
            methods = {name: _as_method(name, fn) for name, fn in old.items()}
            # The caller's module: compat's bridge treats the class as the user's 1.x callback
            # (it warns once per old hook and installs the bridges it installs for a subclass).
            methods["__module__"] = sys._getframe(1).f_globals.get("__name__", "__main__")
            with warnings.catch_warnings():  # "`Callback` is deprecated (subclassed by ...)": the user did not
                warnings.filterwarnings("ignore", message=r"`Callback` is deprecated")
                bridged = type("LambdaCallback", (cls, OldCallback), methods)
            return object.__new__(bridged)

        def __init__(self, **hooks: Any) -> None:
            super().__init__(**{name: fn for name, fn in hooks.items() if name in new_hooks})

    LambdaCallback.__module__ = __name__
    LambdaCallback.__qualname__ = "LambdaCallback"
    return LambdaCallback


def _as_method(name: str, fn: Any) -> Any:
    if not callable(fn):
        raise TypeError(f"`LambdaCallback({name}=...)` needs a function; got `{type(fn).__name__}`.")

    def hook(self: Any, *args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    hook.__name__ = hook.__qualname__ = name
    return hook


@functools.cache
def _progress_bar_base() -> type:
    import strategies
    from compat.module import Callback as OldCallback

    class ProgressBarBase(strategies.ProgressBar, OldCallback):
        """``strategies.ProgressBar`` with 1.x's counters of the batches each loop has run so far
        (``train_batch_idx``, ``val_batch_idx``, ``test_batch_idx``, ``predict_batch_idx``) and its
        ``total_test_batches``/``total_predict_batches``. A subclass's 1.x hooks (``dataloader_idx``
        in ``on_train_batch_end``) are adapted as any ``compat.Callback``'s; ``super()`` calls with
        1.x's arguments are accepted."""

        def __init__(self) -> None:
            super().__init__()
            self._train_batch_idx = self._val_batch_idx = self._test_batch_idx = self._predict_batch_idx = 0

        @property
        def train_batch_idx(self) -> int:
            """Training batches run in this epoch."""
            return self._train_batch_idx

        @property
        def val_batch_idx(self) -> int:
            """Validation batches run in this validation."""
            return self._val_batch_idx

        @property
        def test_batch_idx(self) -> int:
            return self._test_batch_idx

        @property
        def predict_batch_idx(self) -> int:
            return self._predict_batch_idx

        @property
        def total_test_batches(self) -> int | float:
            batches = self.trainer.num_test_batches
            total: int | float = sum(batches) if isinstance(batches, list) else batches
            return total

        @property
        def total_predict_batches(self) -> int | float:
            batches = self.trainer.num_predict_batches
            total: int | float = sum(batches) if isinstance(batches, list) else batches
            return total

        def on_train_epoch_start(self, trainer: Any, pl_module: Any, *args: Any) -> None:
            self._train_batch_idx = 0

        def on_train_batch_end(self, trainer: Any, pl_module: Any, *args: Any) -> None:
            self._train_batch_idx += 1

        def on_validation_start(self, trainer: Any, pl_module: Any) -> None:
            self._val_batch_idx = 0

        def on_validation_batch_end(self, trainer: Any, pl_module: Any, *args: Any) -> None:
            self._val_batch_idx += 1

        def on_test_start(self, trainer: Any, pl_module: Any) -> None:
            self._test_batch_idx = 0

        def on_test_batch_end(self, trainer: Any, pl_module: Any, *args: Any) -> None:
            self._test_batch_idx += 1

        def on_predict_start(self, trainer: Any, pl_module: Any) -> None:
            self._predict_batch_idx = 0

        def on_predict_batch_end(self, trainer: Any, pl_module: Any, *args: Any) -> None:
            self._predict_batch_idx += 1

    ProgressBarBase.__qualname__ = "ProgressBarBase"
    return ProgressBarBase


@functools.cache
def _base_finetuning() -> type:
    import inspect

    import strategies

    class BaseFinetuning(strategies.BaseFinetuning):
        """``strategies.BaseFinetuning`` as 1.x subclasses use it.

        - A subclass need not call ``super().__init__()`` (1.2's class had no ``__init__``; many
          1.x callbacks never call it): the state it sets has defaults here.
        - 1.x's ``finetune_function(pl_module, epoch, optimizer, opt_idx)`` is called with the
          optimizer's index, warning once per class (the new one takes no ``opt_idx``).
        """

        _restarting = False
        _rebuilt = False

        @property
        def _internal_optimizer_metadata(self) -> dict[int, list[dict[str, Any]]]:
            return self.__dict__.setdefault("_compat_optimizer_metadata", {})

        @_internal_optimizer_metadata.setter
        def _internal_optimizer_metadata(self, value: dict[int, list[dict[str, Any]]]) -> None:
            self.__dict__["_compat_optimizer_metadata"] = value

        def __init_subclass__(cls, **kwargs: Any) -> None:
            super().__init_subclass__(**kwargs)
            own = vars(cls).get("finetune_function")
            if own is None or len(inspect.signature(own).parameters) != 5:
                return
            warn_deprecated(
                deprecation_message(
                    "pytorch_lightning.callbacks.BaseFinetuning",
                    "finetune_function(module, epoch, optimizer)",
                    member="finetune_function",
                    old_display=f"{cls.__name__}.finetune_function(pl_module, epoch, optimizer, opt_idx)",
                    hint="drop `opt_idx`: it is called once per optimizer; `trainer.optimizers.index(optimizer)` "
                    "is the index",
                ),
                once_key=(cls, "finetune_function"),
            )

            @functools.wraps(own)
            def finetune_function(self: Any, module: Any, epoch: int, optimizer: Any) -> None:
                index = next(i for i, o in enumerate(self._compat_optimizers) if o is optimizer)
                own(self, module, epoch, optimizer, index)

            cls.finetune_function = finetune_function  # type: ignore[method-assign]

        def on_train_epoch_start(self, trainer: Any, module: Any) -> None:
            self._compat_optimizers = trainer.optimizers
            super().on_train_epoch_start(trainer, module)

    BaseFinetuning.__qualname__ = "BaseFinetuning"
    return BaseFinetuning


def _tqdm_progress_bar() -> tuple[type, str]:
    import strategies

    return strategies.TQDMProgressBar, "strategies.TQDMProgressBar"


_OWN = {
    "ProgressBar": _tqdm_progress_bar,
    "ProgressBarBase": lambda: (_progress_bar_base(), "strategies.ProgressBar"),
    "ModelCheckpoint": lambda: (_model_checkpoint(), "strategies.ModelCheckpoint"),
    "LambdaCallback": lambda: (_lambda_callback(), "strategies.LambdaCallback"),
    "BaseFinetuning": lambda: (_base_finetuning(), "strategies.BaseFinetuning"),
}

__getattr__ = _legacy.module_getattr(__name__, _OWN)
__dir__ = _legacy.module_dir(__name__, _OWN)
