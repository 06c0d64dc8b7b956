"""``HookCaller``: how the Trainer calls hooks (recorded, with ``current_fx`` set, in Lightning's owner order)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from strategies._data import inject_distributed_sampler
from strategies.callbacks import HookRecorder
from strategies.module import DataModule, TrainModule, _has_own
from strategies.prediction_writer import record_indices

if TYPE_CHECKING:
    import torch

    from strategies.trainer import Trainer

_LOADER_HOOK = {
    "train": "train_dataloader",
    "val": "val_dataloader",
    "test": "test_dataloader",
    "predict": "predict_dataloader",
}


class HookCaller:
    """Calls the hooks of a Trainer's module, datamodule, callbacks and strategy: ``trainer.hooks``.

    Every hook the Trainer calls goes through ``call``, which records it (``record_hooks=True``)
    and names it in ``current_fx`` while it runs (``self.log`` reads it to pick Lightning's
    ``on_step``/``on_epoch`` defaults). The loops call hooks as *events*: ``fire(hook, *args)``
    is ``before(hook)``, every callback's ``hook``, the module's ``hook``, ``after(hook)``; an
    event with more inside (``on_train_epoch_end``: the callbacks, the module, the epoch's
    metrics, then the monitoring callbacks) is a ``with event(hook):`` block.

    Extending it: subclass it and name the subclass in ``Trainer.hooks_class``. Override
    ``before``/``after`` to run more hooks at an event's start and end (each through ``call``, so
    they are recorded and can log), ``call`` to see or change every single hook call, and
    ``on_run_exception`` to end a failed run quietly. ``compat.Trainer`` runs the Lightning 1.x
    hooks this way (``compat/_hooks.py``).

    Args:
        trainer: the Trainer whose hooks this calls.
        record_hooks: keep every lifecycle step and hook call in ``recorder``.
    """

    def __init__(self, trainer: Trainer, record_hooks: bool = False) -> None:
        self.trainer = trainer
        self.recorder: HookRecorder | None = HookRecorder() if record_hooks else None
        self.current_fx: str | None = None
        """The hook running now (the innermost), or None between hooks."""

    # -- the extension points -------------------------------------------------------------------

    def before(self, hook: str) -> None:
        """Called when the event ``hook`` starts, before any of its calls (nothing by default)."""

    def after(self, hook: str) -> None:
        """Called when the event ``hook`` has ended, after its last call (nothing by default)."""

    def on_run_exception(self, exception: BaseException) -> bool:
        """Called when a run failed, after the ``on_exception`` hooks and the strategy's teardown.

        Return True to end the run without raising (the entry point then returns None); the
        default re-raises every exception.
        """
        return False

    # -- calling hooks ----------------------------------------------------------------------------

    def record(self, name: str) -> None:
        """Add a lifecycle step (``strategy.setup``, ...) to the record, when recording."""
        if self.recorder is not None:
            trainer = self.trainer
            self.recorder.record(trainer.global_rank, trainer.state.stage or "", name)

    def call(self, owner: str, obj: Any, hook: str, *args: Any, **kwargs: Any) -> Any:
        """Call ``obj.hook(*args, **kwargs)``, recorded as ``owner.hook``, with ``current_fx`` naming it meanwhile.

        ``owner`` is ``"module"``, ``"datamodule"``, ``"callback"`` or ``"strategy"`` (the steps,
        called through the strategy so that its wrapper sees them, are recorded as ``module``).
        """
        self.record(f"{owner}.{hook}")
        previous, self.current_fx = self.current_fx, hook
        try:
            return getattr(obj, hook)(*args, **kwargs)
        finally:
            self.current_fx = previous

    def module(self, hook: str, *args: Any, **kwargs: Any) -> Any:
        """The module's ``hook``."""
        return self.call("module", self.trainer.strategy.module, hook, *args, **kwargs)

    def datamodule(self, hook: str, *args: Any, **kwargs: Any) -> Any:
        """The datamodule's ``hook`` (nothing without a datamodule)."""
        datamodule = self.trainer.datamodule
        return None if datamodule is None else self.call("datamodule", datamodule, hook, *args, **kwargs)

    def callbacks(self, hook: str, *args: Any, monitoring: bool | None = None) -> None:
        """Every callback's ``hook(trainer, module, *args)``; ``monitoring`` picks only the monitoring
        ones (True: ``ModelCheckpoint``, ``EarlyStopping``) or the others (False)."""
        trainer = self.trainer
        module = trainer.strategy.module
        for callback in trainer.callbacks:
            if monitoring is None or getattr(callback, "_monitors", False) == monitoring:
                self.call("callback", callback, hook, trainer, module, *args)

    def step(self, name: str, batch: Any, batch_idx: int) -> Any:
        """``training_step``/``validation_step``/... through the strategy (so the wrapper sees it)."""
        return self.call("module", self.trainer.strategy, name, batch, batch_idx)

    @contextlib.contextmanager
    def event(self, hook: str) -> Iterator[None]:
        """``before(hook)``, the block, ``after(hook)`` (not called when the block raises)."""
        self.before(hook)
        yield
        self.after(hook)

    def fire(self, hook: str, *args: Any) -> Any:
        """The event ``hook``: every callback's, then the module's; returns the module's result."""
        with self.event(hook):
            self.callbacks(hook, *args)
            result = self.module(hook, *args)
        return result

    # -- hooks with a job ---------------------------------------------------------------------

    def backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        """``on_before_backward``, ``module.backward``, ``on_after_backward`` (Lightning's order)."""
        self.fire("on_before_backward", loss)
        self.module("backward", loss, *args, **kwargs)
        self.fire("on_after_backward")

    def loader(self, kind: str) -> Any:
        """The loader of ``kind`` (``"train"``, ``"val"``, ...): the one passed in, else the datamodule's
        hook, else the module's (Lightning's order), with a ``DistributedSampler`` where one is due."""
        trainer = self.trainer
        hook = _LOADER_HOOK[kind]
        loader = trainer._given_loaders.get(kind)
        if loader is None:
            owner: Any = trainer.datamodule if trainer.datamodule is not None else trainer.strategy.module
            if _has_own(owner, hook, DataModule if owner is trainer.datamodule else TrainModule):
                with self.event(hook):
                    loader = self.call("datamodule" if owner is trainer.datamodule else "module", owner, hook)
        if loader is not None and trainer.use_distributed_sampler:
            loader = inject_distributed_sampler(loader, trainer.strategy.distributed_sampler_kwargs, kind == "train")
        if loader is not None and kind == "predict":
            loader = record_indices(loader, trainer.callbacks)
        return loader

    def transfer_batch(self, batch: Any) -> Any:
        """The precision's cast, then the three batch-transfer hooks (the datamodule's where it overrides one)."""
        trainer = self.trainer
        batch = trainer.strategy.precision.convert_input(batch)
        device = trainer.strategy.root_device
        for hook, args in (
            ("on_before_batch_transfer", (0,)),
            ("transfer_batch_to_device", (device, 0)),
            ("on_after_batch_transfer", (0,)),
        ):
            if trainer.datamodule is not None and _has_own(trainer.datamodule, hook, DataModule):
                batch = self.datamodule(hook, batch, *args)
            else:
                batch = self.module(hook, batch, *args)
        return batch
