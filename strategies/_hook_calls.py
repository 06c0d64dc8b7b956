"""``HookCaller``: how the Trainer calls hooks (recorded, with ``current_fx`` set, in Lightning's owner order)."""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from strategies._data import EvalLoaders, batch_count, flatten_loaders, inject_distributed_sampler, sequential
from strategies.callbacks import Callback, HookRecorder
from strategies.module import DataModule, TrainModule, _has_own
from strategies.prediction_writer import record_indices
from strategies.profilers import PassThroughProfiler, Profiler

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
        self._profiler: Profiler | None = None

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
            if self._profiler is None:
                return getattr(obj, hook)(*args, **kwargs)
            with self._profiler.profile(action_name(obj, hook)):
                return getattr(obj, hook)(*args, **kwargs)
        finally:
            self.current_fx = previous

    @property
    def active_profiler(self) -> Profiler | None:
        """The profiler timing the hook calls (and the loops' batch fetches), None when not profiling."""
        return self._profiler

    def profile(self, profiler: Profiler) -> None:
        """Time every hook call with ``profiler`` from now on (a ``PassThroughProfiler``: none)."""
        self._profiler = None if isinstance(profiler, PassThroughProfiler) else profiler

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

    def step(self, name: str, batch: Any, batch_idx: int, dataloader_idx: int | None = None) -> Any:
        """``training_step``/``validation_step``/... through the strategy (so the wrapper sees it).

        As Lightning: ``batch_idx`` is left out for a step that takes only the batch, and
        ``dataloader_idx`` is passed only when given (several evaluation loaders).
        """
        args: tuple[Any, ...] = (batch, batch_idx) if takes_batch_idx(self.trainer.strategy.module, name) else (batch,)
        if dataloader_idx is not None:
            args = (*args, dataloader_idx)
        return self.call("module", self.trainer.strategy, name, *args)

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
        """The loader of ``kind`` (``"train"``, ``"val"``, ...) as given: the one passed in, else the
        datamodule's hook, else the module's (Lightning's order); None when there is none."""
        trainer = self.trainer
        hook = _LOADER_HOOK[kind]
        loader = trainer._given_loaders.get(kind)
        if loader is None:
            owner: Any = trainer.datamodule if trainer.datamodule is not None else trainer.strategy.module
            if _has_own(owner, hook, DataModule if owner is trainer.datamodule else TrainModule):
                with self.event(hook):
                    loader = self.call("datamodule" if owner is trainer.datamodule else "module", owner, hook)
        return loader

    def train_loader(self, reload: bool = False) -> Any:
        """The training loader, with a ``DistributedSampler`` where one is due (None without one);
        fetched once a run (``trainer.estimated_stepping_batches`` may fetch it early; ``reload``
        fetches it again) and kept in ``trainer.train_dataloader``."""
        trainer = self.trainer
        if trainer._train_loader is None or reload:
            loader = self.loader("train")
            trainer._train_loader = None if loader is None else self._prepared(loader, "train")
        return trainer._train_loader

    def eval_loaders(self, kind: str) -> EvalLoaders | None:
        """The ``"val"``/``"test"``/``"predict"`` loaders, flattened (one, or a list, tuple or dict of
        them: ``dataloader_idx`` is the index) and each prepared as ``train_loader`` prepares its
        one; kept in ``trainer`` for ``trainer.val_dataloaders``, ``num_val_batches``, ..."""
        given = self.loader(kind)
        if given is None:
            return None
        flat, rebuild = flatten_loaders(given)
        loaders = [self._prepared(loader, kind) for loader in flat]
        limit = self.trainer.limits[kind]
        found = EvalLoaders(loaders, [batch_count(loader, limit) for loader in loaders], rebuild(loaders))
        self.trainer._eval_loaders[kind] = found
        self.trainer.metrics.new_loaders(kind)
        return found

    def _prepared(self, loader: Any, kind: str) -> Any:
        trainer = self.trainer
        overfit = kind in ("train", "val") and trainer.overfit_batches > 0 and trainer.state.stage == "fit"
        if overfit:
            loader = sequential(loader, kind)
        if trainer.use_distributed_sampler:
            shuffle = kind == "train" and not overfit
            loader = inject_distributed_sampler(loader, trainer.strategy.distributed_sampler_kwargs, shuffle)
        if kind == "predict":
            loader = record_indices(loader, trainer.callbacks)
        return loader

    def transfer_batch(self, batch: Any, dataloader_idx: int = 0) -> Any:
        """The precision's cast, then the three batch-transfer hooks (the datamodule's where it overrides one)."""
        trainer = self.trainer
        batch = trainer.strategy.precision.convert_input(batch)
        device = trainer.strategy.root_device
        for hook, args in (
            ("on_before_batch_transfer", (dataloader_idx,)),
            ("transfer_batch_to_device", (device, dataloader_idx)),
            ("on_after_batch_transfer", (dataloader_idx,)),
        ):
            if trainer.datamodule is not None and _has_own(trainer.datamodule, hook, DataModule):
                batch = self.datamodule(hook, batch, *args)
            else:
                batch = self.module(hook, batch, *args)
        return batch


def takes_batch_idx(module: Any, step: str) -> bool:
    """Whether ``module``'s ``step`` takes a ``batch_idx`` (a parameter of that name, ``*args``, or two
    positional parameters), as Lightning decides whether to pass it."""
    function = getattr(type(module), step, None)
    function = getattr(function, "__wrapped__", function)
    if function is None:
        return True
    cached = _TAKES_BATCH_IDX.get(function)
    if cached is None:
        try:
            spec = inspect.getfullargspec(function)
        except TypeError:
            cached = True
        else:
            args = spec.args[1:]
            cached = "batch_idx" in args or spec.varargs is not None or len(args) >= 2
        _TAKES_BATCH_IDX[function] = cached
    return cached


def check_dataloader_idx(module: Any, kind: str, several: bool) -> None:
    """Lightning's check: with several loaders, the step and the module's batch hooks must take
    ``dataloader_idx``; with one, a ``dataloader_idx`` they take must have a default.

    The signature read is the function's own (through ``functools.wraps`` decorators); a wrapper
    that fills ``dataloader_idx`` in itself (``compat``'s 1.x hooks) is not refused for one loader.
    """
    name = _HOOK_NAME[kind]
    for hook in (_STEP_NAME[kind], f"on_{name}_batch_start", f"on_{name}_batch_end"):
        outer = getattr(module, hook, None)
        if outer is None:
            continue
        inner = getattr(outer, "__wrapped__", outer)
        try:
            spec = inspect.getfullargspec(inner)
        except TypeError:
            continue
        if several and "dataloader_idx" not in spec.args and spec.varargs is None:
            raise RuntimeError(
                f"You provided multiple `{_LOADER_HOOK[kind]}`s, but no `dataloader_idx` argument in "
                f"`{type(module).__name__}.{hook}()`. Try adding `dataloader_idx=0` to its signature."
            )
        if not several and _requires_dataloader_idx(inner) and _requires_dataloader_idx(outer):
            raise RuntimeError(
                f"You provided only a single `{_LOADER_HOOK[kind]}`, but have included `dataloader_idx` in "
                f"`{type(module).__name__}.{hook}()`. Either remove the argument or give it a default value "
                "i.e. `dataloader_idx=0`."
            )


def _requires_dataloader_idx(function: Any) -> bool:
    try:
        parameter = inspect.signature(function, follow_wrapped=False).parameters.get("dataloader_idx")
    except (TypeError, ValueError):
        return False
    return parameter is not None and parameter.default is inspect.Parameter.empty


_TAKES_BATCH_IDX: dict[Any, bool] = {}
_STEP_NAME = {"val": "validation_step", "test": "test_step", "predict": "predict_step"}
_HOOK_NAME = {"val": "validation", "test": "test", "predict": "predict"}


def action_name(obj: Any, hook: str) -> str:
    """The profiler's name for ``obj.hook``, as Lightning names it (``[Callback]<state_key>.hook``, ...)."""
    from strategies.strategy import Strategy

    if isinstance(obj, Strategy):
        return f"[Strategy]{type(obj).__name__}.{hook}"
    if isinstance(obj, Callback):
        return f"[Callback]{obj.state_key}.{hook}"
    if isinstance(obj, DataModule):
        return f"[LightningDataModule]{type(obj).__name__}.{hook}"
    return f"[LightningModule]{type(obj).__name__}.{hook}"
