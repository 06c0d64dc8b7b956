"""How the Trainer calls hooks: recorded, with ``_current_fx`` set, in Lightning's owner order."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import torch

from strategies._data import inject_distributed_sampler
from strategies._optimization import backward
from strategies.module import DataModule, TrainModule, _has_own

if TYPE_CHECKING:
    from strategies.callbacks import Callback, HookRecorder
    from strategies.strategy import Strategy
    from strategies.trainer import Trainer, TrainerState

_LOADER_HOOK = {
    "train": "train_dataloader",
    "val": "val_dataloader",
    "test": "test_dataloader",
    "predict": "predict_dataloader",
}


class _HookCalls:
    """Mixed into ``Trainer``: the loops call hooks, steps, dataloaders and batch transfer through these."""

    if TYPE_CHECKING:  # the Trainer's, which this class is mixed into
        strategy: Strategy
        state: TrainerState
        callbacks: list[Callback]
        datamodule: DataModule | None
        use_distributed_sampler: bool
        _recorder: HookRecorder | None
        _current_fx: str | None
        _given_loaders: dict[str, Any]

        @property
        def global_rank(self) -> int: ...

    def _record(self, name: str) -> None:
        if self._recorder is not None:
            self._recorder.record(self.global_rank, self.state.stage or "", name)

    def _call(self, owner: str, obj: Any, hook: str, *args: Any, **kwargs: Any) -> Any:
        """Call one hook, recorded as ``owner.hook``, with ``_current_fx`` naming it meanwhile."""
        if self._recorder is not None:
            self._recorder.record(self.global_rank, self.state.stage or "", f"{owner}.{hook}")
        previous, self._current_fx = self._current_fx, hook
        try:
            return getattr(obj, hook)(*args, **kwargs)
        finally:
            self._current_fx = previous

    def _call_module(self, hook: str, *args: Any, **kwargs: Any) -> Any:
        return self._call("module", self.strategy.module, hook, *args, **kwargs)

    def _call_callbacks(self, hook: str, *args: Any, monitoring: bool | None = None) -> None:
        """Every callback's ``hook``; ``monitoring`` picks only the monitoring ones (True) or the others (False)."""
        module = self.strategy.module
        for callback in self.callbacks:
            if monitoring is None or getattr(callback, "_monitors", False) == monitoring:
                self._call("callback", callback, hook, self, module, *args)

    def _call_step(self, name: str, batch: Any, batch_idx: int) -> Any:
        """``training_step``/``validation_step``/... through the strategy (so the wrapper sees it)."""
        return self._call("module", self.strategy, name, batch, batch_idx)

    def _backward(self, loss: torch.Tensor, *args: Any, **kwargs: Any) -> None:
        backward(cast("Trainer", self), loss, *args, **kwargs)

    def _has_validation_step(self) -> bool:
        return _has_own(self.strategy.module, "validation_step", TrainModule)

    def _request_loader(self, kind: str) -> Any:
        """The stage's loader: the one passed in, else the datamodule's hook, else the module's (Lightning's order)."""
        hook = _LOADER_HOOK[kind]
        loader = self._given_loaders.get(kind)
        if loader is None and self.datamodule is not None:
            if _has_own(self.datamodule, hook, DataModule):
                loader = self._call("datamodule", self.datamodule, hook)
        elif loader is None and _has_own(self.strategy.module, hook, TrainModule):
            loader = self._call_module(hook)
        if loader is not None and self.use_distributed_sampler:
            loader = inject_distributed_sampler(loader, self.strategy.distributed_sampler_kwargs, kind == "train")
        return loader

    def _transfer_batch(self, batch: Any) -> Any:
        """The precision's cast, then the three batch-transfer hooks (the datamodule's where it overrides one)."""
        batch = self.strategy.precision.convert_input(batch)
        device = self.strategy.root_device
        for hook, args in (
            ("on_before_batch_transfer", (0,)),
            ("transfer_batch_to_device", (device, 0)),
            ("on_after_batch_transfer", (0,)),
        ):
            if self.datamodule is not None and _has_own(self.datamodule, hook, DataModule):
                batch = self._call("datamodule", self.datamodule, hook, batch, *args)
            else:
                batch = self._call_module(hook, batch, *args)
        self._current_batch = batch  # self.log reads the batch size from it
        return batch
