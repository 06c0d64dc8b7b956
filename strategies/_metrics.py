"""What ``self.log`` stores: Lightning's per-hook defaults and its step/epoch aggregation.

One ``_Results`` holds the values of one loop (training, or one validation/test run). A
value logged ``on_step`` is kept as the latest step value; one logged ``on_epoch`` is aggregated
with ``reduce_fx`` (the mean weighted by ``batch_size``) and computed, synced over ranks when
``sync_dist=True``, when the loop's epoch ends. Logged both ways, it is reported as
``<name>_step`` and ``<name>_epoch``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

import torch

ReduceFx = Literal["mean", "sum", "max", "min"]
_REDUCE_NAMES = {"mean": "mean", "avg": "mean", "sum": "sum", "max": "max", "min": "min"}


class _Levels(NamedTuple):
    """Where a hook may log: allowed ``on_step``/``on_epoch`` values and the defaults."""

    allowed_step: tuple[bool, ...]
    allowed_epoch: tuple[bool, ...]
    default_step: bool
    default_epoch: bool


_STEP = _Levels((False, True), (False, True), True, False)
_EVAL_STEP = _Levels((False, True), (False, True), False, True)
_EPOCH = _Levels((False,), (True,), False, True)

# Lightning 2.6's table (trainer/connectors/logger_connector/fx_validator.py), plus the 1.x
# hook names compat bridges. A hook missing here logs with its loop's step-hook defaults.
HOOK_LEVELS: dict[str, _Levels | None] = {
    **dict.fromkeys(
        (
            "training_step",
            "on_train_batch_start",
            "on_train_batch_end",
            "on_before_backward",
            "backward",
            "on_after_backward",
            "on_before_optimizer_step",
            "optimizer_step",
            "configure_gradient_clipping",
            "clip_gradients",
            "on_before_zero_grad",
            "optimizer_zero_grad",
            "training_step_end",
        ),
        _STEP,
    ),
    **dict.fromkeys(
        (
            "validation_step",
            "test_step",
            "on_validation_batch_start",
            "on_validation_batch_end",
            "on_test_batch_start",
            "on_test_batch_end",
            "validation_step_end",
            "test_step_end",
        ),
        _EVAL_STEP,
    ),
    **dict.fromkeys(
        (
            "on_train_start",
            "on_validation_start",
            "on_test_start",
            "on_train_epoch_start",
            "on_train_epoch_end",
            "on_validation_epoch_start",
            "on_validation_epoch_end",
            "on_test_epoch_start",
            "on_test_epoch_end",
            "training_epoch_end",
            "validation_epoch_end",
            "test_epoch_end",
        ),
        _EPOCH,
    ),
    **dict.fromkeys(
        (
            "on_fit_start",
            "on_fit_end",
            "on_sanity_check_start",
            "on_sanity_check_end",
            "on_train_end",
            "on_validation_end",
            "on_test_end",
            "on_predict_start",
            "on_predict_end",
            "on_predict_epoch_start",
            "on_predict_epoch_end",
            "on_before_batch_transfer",
            "transfer_batch_to_device",
            "on_after_batch_transfer",
            "on_predict_batch_start",
            "on_predict_batch_end",
            "on_exception",
            "state_dict",
            "on_save_checkpoint",
            "on_load_checkpoint",
            "load_state_dict",
            "setup",
            "teardown",
            "configure_sharded_model",
            "configure_model",
            "predict_step",
            "configure_optimizers",
            "train_dataloader",
            "val_dataloader",
            "test_dataloader",
            "predict_dataloader",
            "prepare_data",
            "configure_callbacks",
            "on_validation_model_zero_grad",
            "on_validation_model_eval",
            "on_test_model_eval",
            "on_validation_model_train",
            "on_test_model_train",
            "lr_scheduler_step",
        ),
        None,
    ),
}

LOOP_STEP_HOOK = {
    "train": "training_step",
    "val": "validation_step",
    "sanity": "validation_step",
    "test": "test_step",
    "predict": "predict_step",
}


def resolve_levels(
    fx: str, kind: str | None, name: str, on_step: bool | None, on_epoch: bool | None
) -> tuple[bool, bool]:
    """``(on_step, on_epoch)`` for a ``self.log`` in hook ``fx``, checked as Lightning checks them."""
    levels = HOOK_LEVELS.get(fx, HOOK_LEVELS.get(LOOP_STEP_HOOK.get(kind or "", ""), _STEP))
    if levels is None:
        raise RuntimeError(
            f"`self.log({name!r}, ...)` was called in `{fx}`, where Lightning does not allow logging either. "
            "Log in a step or epoch hook (`training_step`, `on_train_epoch_end`, `validation_step`, ...), or "
            "write to the logger directly with `self.trainer.logger.log_metrics({...})`."
        )
    step = levels.default_step if on_step is None else bool(on_step)
    epoch = levels.default_epoch if on_epoch is None else bool(on_epoch)
    if not step and not epoch:
        raise ValueError(f"`self.log({name!r}, on_step=False, on_epoch=False)` logs nothing: set one of them.")
    if step not in levels.allowed_step or epoch not in levels.allowed_epoch:
        raise ValueError(
            f"`self.log({name!r}, on_step={step}, on_epoch={epoch})` is not possible in `{fx}`, which only "
            f"logs once per epoch: drop `on_step`, or pass `on_step=False, on_epoch=True`."
        )
    return step, epoch


def parse_reduce_fx(reduce_fx: Any, name: str) -> ReduceFx:
    """``"mean"``/``torch.mean``/... as one of the four names Lightning supports."""
    key = reduce_fx.lower() if isinstance(reduce_fx, str) else getattr(reduce_fx, "__name__", None)
    if key not in _REDUCE_NAMES:
        raise ValueError(
            f"`self.log({name!r}, ..., reduce_fx={reduce_fx!r})` is not supported: use one of "
            "'mean', 'sum', 'max', 'min' (or torch.mean, ...), or reduce the values yourself and log the result."
        )
    return _REDUCE_NAMES[key]  # type: ignore[return-value]


def to_tensor(value: Any, name: str, enable_graph: bool) -> torch.Tensor:
    """A one-element floating tensor (float32 or float64) from a number or a tensor."""
    if isinstance(value, torch.Tensor):
        if value.numel() != 1:
            raise ValueError(
                f"`self.log({name!r}, value)` got a tensor with {value.numel()} elements; log one number, "
                f"e.g. `self.log({name!r}, value.mean())`."
            )
        tensor = value if enable_graph else value.detach()
    elif isinstance(value, (int, float)):
        tensor = torch.tensor(float(value))
    elif isinstance(value, Mapping):
        raise TypeError(f"`self.log({name!r}, value)` got a dict: use `self.log_dict(value)` instead.")
    else:
        raise TypeError(
            f"`self.log({name!r}, value)` got a `{type(value).__name__}`: log a number, a one-element tensor "
            "or a torchmetrics `Metric`."
        )
    tensor = tensor.squeeze()
    return tensor if tensor.dtype in (torch.float32, torch.float64) else tensor.float()


def batch_size_of(batch: Any) -> int:
    """The size of the first tensor found in ``batch`` (1 when there is none), as Lightning infers it."""
    if isinstance(batch, torch.Tensor):
        return int(batch.size(0)) if batch.ndim > 0 else 1
    if isinstance(batch, str):
        return len(batch)
    if isinstance(batch, Mapping):
        batch = list(batch.values())
    if isinstance(batch, (list, tuple)):
        for item in batch:
            if isinstance(item, (torch.Tensor, Mapping, list, tuple)):
                return batch_size_of(item)
    return 1


@dataclass(frozen=True)
class _Options:
    """How one ``self.log`` call site logs; a second call with other options is an error."""

    prog_bar: bool
    logger: bool
    on_step: bool
    on_epoch: bool
    reduce_fx: ReduceFx
    sync: bool


class _Entry:
    """One logged name of one hook (and one loader): its latest step value and its epoch aggregate."""

    __slots__ = ("computed", "dataloader_idx", "last", "metric", "name", "options", "suffix", "total", "weight")

    def __init__(self, name: str, options: _Options, dataloader_idx: int | None = None, suffix: str = "") -> None:
        self.name = name
        self.options = options
        self.dataloader_idx = dataloader_idx
        """The loader it was logged for (None with one loader, or in an epoch-end hook)."""
        self.suffix = suffix
        """``/dataloader_idx_N`` added to its names (``self.log(..., add_dataloader_idx=True)``)."""
        self.last: torch.Tensor | None = None
        self.total: torch.Tensor | None = None
        self.weight = 0.0
        self.computed: torch.Tensor | None = None
        self.metric: Any = None
        """A torchmetrics ``Metric`` logged as the value: it keeps its own state and reduces (and syncs) it."""

    @property
    def shown_name(self) -> str:
        """The name callbacks see for it: ``name``, with the loader's suffix."""
        return self.name + self.suffix

    def names(self) -> tuple[str, str]:
        """``(step_name, epoch_name)``: ``x_step``/``x_epoch`` when logged both ways, else ``x`` twice
        (each with the loader's suffix)."""
        if self.options.on_step and self.options.on_epoch:
            return f"{self.name}_step{self.suffix}", f"{self.name}_epoch{self.suffix}"
        return self.shown_name, self.shown_name

    def update(self, value: torch.Tensor, batch_size: int, sync: Callable[[torch.Tensor, str], torch.Tensor]) -> None:
        """Add one step's value (synced at once when it is reported per step)."""
        opts = self.options
        if opts.on_step:
            self.last = sync(value, opts.reduce_fx) if opts.sync else value
        if not opts.on_epoch:
            return
        self.computed = None
        if opts.reduce_fx == "mean":
            weighted = value * batch_size
            self.total = weighted if self.total is None else self.total + weighted
            self.weight += batch_size
        elif self.total is None:
            self.total = value
        elif opts.reduce_fx == "sum":
            self.total = self.total + value
        else:
            extreme = torch.maximum if opts.reduce_fx == "max" else torch.minimum
            self.total = extreme(self.total, value)

    def update_metric(self, metric: Any) -> None:
        """Log a torchmetrics ``Metric``: its last ``forward`` value per step (``_forward_cache``, none
        after ``update`` alone), its ``compute()`` per epoch, as Lightning logs one."""
        self.metric = metric
        self.computed = None
        if self.options.on_step:
            cache = getattr(metric, "_forward_cache", None)
            self.last = cache.detach() if isinstance(cache, torch.Tensor) else None

    def reset_metric(self) -> None:
        """The epoch is over: the ``Metric`` starts afresh (Lightning resets it then)."""
        if self.metric is not None:
            self.metric.reset()

    def compute(self, sync: Callable[[torch.Tensor, str], torch.Tensor]) -> torch.Tensor | None:
        """The epoch value; with ``sync_dist`` over all ranks (means weighted by every rank's batch sizes).

        Kept until the next ``update``, so asking again (the epoch-end hooks see the value, then
        the loggers get it) does not sync again.
        """
        if self.computed is None:
            self.computed = self._compute(sync)
        return self.computed

    def _compute(self, sync: Callable[[torch.Tensor, str], torch.Tensor]) -> torch.Tensor | None:
        if self.metric is not None:
            value = self.metric.compute()  # torchmetrics syncs its own state over the ranks
            if not isinstance(value, torch.Tensor):
                raise ValueError(
                    f"The `.compute()` return of the metric logged as {self.name!r} must be a tensor; found "
                    f"{type(value).__name__}. Log the entries of a dict-valued metric one by one."
                )
            return value.detach()
        if self.total is None:
            return None
        opts = self.options
        if opts.reduce_fx != "mean":
            return sync(self.total, opts.reduce_fx) if opts.sync else self.total
        pair = torch.stack(
            [self.total.double(), torch.tensor(self.weight, dtype=torch.float64, device=self.total.device)]
        )
        if opts.sync:
            pair = sync(pair, "sum")
        return (pair[0] / pair[1]).to(self.total.dtype)


class _Results:
    """The entries of one loop run, keyed by ``(hook, name, loader)`` as Lightning keys them."""

    def __init__(self) -> None:
        self.entries: dict[tuple[str, str, int | None], _Entry] = {}

    def entry(
        self, fx: str, name: str, options: _Options, dataloader_idx: int | None = None, add_dataloader_idx: bool = True
    ) -> _Entry:
        """The entry for ``fx``/``name`` (of loader ``dataloader_idx``: its own entry and
        ``/dataloader_idx_N`` names with ``add_dataloader_idx``), created on first use; options must
        not change."""
        own = dataloader_idx if add_dataloader_idx else None
        entry = self.entries.get((fx, name, own))
        if entry is None:
            suffix = f"/dataloader_idx_{dataloader_idx}" if own is not None else ""
            entry = self.entries[(fx, name, own)] = _Entry(name, options, dataloader_idx, suffix)
        elif entry.dataloader_idx != dataloader_idx:
            raise ValueError(
                f"`self.log({name!r}, ..., add_dataloader_idx=False)` was called in `{fx}` for loader "
                f"{dataloader_idx} after loader {entry.dataloader_idx}: with several loaders, log it with "
                "`add_dataloader_idx=True` or under a name of its own per loader."
            )
        elif entry.options != options:
            raise ValueError(
                f"`self.log({name!r}, ...)` was called twice in `{fx}` with different arguments "
                f"({entry.options} then {options}): log it with the same arguments each time."
            )
        return entry

    def step_view(self, training: bool, dataloader_idx: int | None = None) -> tuple[dict[str, torch.Tensor], ...]:
        """``(logged, callback, prog_bar)`` of the latest step values (of loader ``dataloader_idx``)."""
        logged: dict[str, torch.Tensor] = {}
        callback: dict[str, torch.Tensor] = {}
        pbar: dict[str, torch.Tensor] = {}
        for entry in self.entries.values():
            if entry.last is None or entry.dataloader_idx != dataloader_idx:
                continue
            step_name, _ = entry.names()
            _place(entry, step_name, entry.last, logged, callback if training else None, pbar)
        return logged, callback, pbar

    def epoch_view(
        self, sync: Callable[[torch.Tensor, str], torch.Tensor], dataloader_idx: int | None = None
    ) -> tuple[dict[str, torch.Tensor], ...]:
        """``(logged, callback, prog_bar)`` of the epoch values of loader ``dataloader_idx`` (None: those
        logged with one loader or outside the batches); computing them syncs over ranks."""
        logged: dict[str, torch.Tensor] = {}
        callback: dict[str, torch.Tensor] = {}
        pbar: dict[str, torch.Tensor] = {}
        for entry in self.entries.values():
            if entry.dataloader_idx != dataloader_idx:
                continue
            value = entry.compute(sync) if entry.options.on_epoch else None
            if value is not None:
                _place(entry, entry.names()[1], value, logged, callback, pbar)
        return logged, callback, pbar

    def unsynced_epoch_names(self) -> list[str]:
        """Names aggregated per epoch without ``sync_dist`` (Lightning warns about them on several ranks)."""
        return [e.name for e in self.entries.values() if e.options.on_epoch and not e.options.sync and e.metric is None]


def _place(
    entry: _Entry,
    shown: str,
    value: torch.Tensor,
    logged: dict[str, torch.Tensor],
    callback: dict[str, torch.Tensor] | None,
    pbar: dict[str, torch.Tensor],
) -> None:
    if entry.options.logger:
        logged[shown] = value
    if callback is not None:
        callback[entry.shown_name] = value
        callback[shown] = value
    if entry.options.prog_bar:
        pbar[shown] = value


def is_metric(value: Any) -> bool:
    """Whether ``value`` is a torchmetrics ``Metric`` (without importing torchmetrics when it is not loaded)."""
    module = sys.modules.get("torchmetrics")
    return module is not None and isinstance(value, module.Metric)
