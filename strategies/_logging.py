"""The Trainer's logging side: ``self.log`` storage, loggers, checkpoint/early-stopping lookups.

``trainer.metrics`` (a ``TrainerMetrics``) stores what ``self.log`` gets. The loops tell it where
they are with three calls, per loop kind (``"train"``, ``"val"``, ``"test"``, ``"predict"``,
``"sanity"``):

- ``reset(kind)`` when the loop (an epoch of it) starts;
- ``batch_end(kind)`` after each batch's ``on_*_batch_end`` hooks: training step
  values go to the loggers every ``log_every_n_steps`` optimizer steps; evaluation values
  logged ``on_step`` go to them every batch, as Lightning does;
- ``loader_end(kind)`` after each evaluation loader's batches (``dataloader_idx`` names the loader
  while several run: their values get ``/dataloader_idx_N`` names);
- ``epoch_end(kind)`` after the module's ``on_*_epoch_end`` hooks and before the
  monitoring callbacks (``ModelCheckpoint``, ``EarlyStopping``) run: epoch values are computed,
  synced over ranks where ``sync_dist=True``, stored in ``callback_metrics`` and sent to the
  loggers. The sanity check logs nothing.

The logger ``step`` follows Lightning: during ``fit`` it is the number of optimizer steps before
the batch that logged (``global_step - 1`` after it), in ``validate``/``test`` it is ``global_step``.
Loggers are called on global rank 0 only.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import torch

from strategies._metrics import (
    LOOP_STEP_HOOK,
    ReduceFx,
    _Options,
    _Results,
    batch_size_of,
    is_metric,
    parse_reduce_fx,
    resolve_levels,
    to_tensor,
)
from strategies.loggers import CSVLogger, Logger, _VersionedLogger

_KINDS = ("train", "val", "test", "predict", "sanity")
_KIND_OF_HOOK_PREFIX = (("on_train_", "train"), ("on_validation_", "val"), ("on_test_", "test"))


def default_logger(save_dir: str) -> Logger:
    """Lightning's ``logger=True``: TensorBoard when ``tensorboard`` is installed, else CSV."""
    import importlib.util

    if importlib.util.find_spec("tensorboard") is not None:
        from strategies.loggers import TensorBoardLogger

        return TensorBoardLogger(save_dir)
    return CSVLogger(save_dir)


class _LoggerProperties:
    """The Trainer's loggers and the callbacks' lookups (mixed into ``Trainer``; it reads only its own state,
    ``self.callbacks`` and ``self.metrics``)."""

    callbacks: list[Any]
    metrics: TrainerMetrics
    strategy: Any

    def _configure_logging(
        self,
        logger: bool | Logger | Iterable[Logger] | None = True,
        enable_checkpointing: bool | None = True,
        default_root_dir: str | os.PathLike[str] | None = None,
        log_every_n_steps: int = 50,
        enable_progress_bar: bool = True,
    ) -> None:
        from strategies.model_checkpoint import ModelCheckpoint

        # None is Lightning's "not given": a default logger and checkpointing, as with True.
        logger = True if logger is None else logger
        enable_checkpointing = True if enable_checkpointing is None else enable_checkpointing
        if not isinstance(log_every_n_steps, int) or isinstance(log_every_n_steps, bool) or log_every_n_steps < 0:
            raise ValueError(f"`log_every_n_steps={log_every_n_steps!r}` must be an int >= 0 (0: never per step).")
        self._default_root_dir = os.fspath(default_root_dir) if default_root_dir is not None else None
        self.log_every_n_steps = log_every_n_steps
        self.enable_progress_bar = enable_progress_bar
        self.loggers = _resolve_loggers(logger, self.default_root_dir)
        # Lightning's `Checkpoint` callbacks: a `ModelCheckpoint`, one that only saves (`OnExceptionCheckpoint`),
        # or a user's own subclass of `Checkpoint`
        given = [cb for cb in self.callbacks if getattr(cb, "_is_checkpoint", False) or getattr(cb, "_saves", False)]
        if not enable_checkpointing and given:
            raise ValueError(
                f"`Trainer(enable_checkpointing=False)` was given together with a `{type(given[0]).__name__}` in "
                "`callbacks`: remove the callback, or drop `enable_checkpointing=False`."
            )
        if enable_checkpointing and not given:
            self.callbacks.append(ModelCheckpoint())

    # -- properties ---------------------------------------------------------------------------

    @property
    def loggers(self) -> list[Logger]:
        """The loggers metrics go to (empty with ``logger=False``)."""
        return self._loggers

    @loggers.setter
    def loggers(self, loggers: list[Logger] | None) -> None:
        self._loggers = list(loggers or [])

    @property
    def logger(self) -> Logger | None:
        """The first logger, or None."""
        return self._loggers[0] if self._loggers else None

    @logger.setter
    def logger(self, logger: Logger | None) -> None:
        self._loggers = [] if logger is None else [logger]

    @property
    def default_root_dir(self) -> str:
        """Where logs and checkpoints go when no path is given (the working directory by default)."""
        path = self._default_root_dir if self._default_root_dir is not None else os.getcwd()
        return os.path.normpath(os.path.expanduser(path))

    @property
    def log_dir(self) -> str:
        """The first logger's run folder (``save_dir`` for other loggers), else ``default_root_dir``."""
        first = self.logger
        if first is None:
            return self.default_root_dir
        path = first.log_dir if isinstance(first, _VersionedLogger) else first.save_dir
        return path if path is not None else self.default_root_dir

    @property
    def callback_metrics(self) -> dict[str, torch.Tensor]:
        """Every logged value by name (also ``x_step``/``x_epoch``): what callbacks monitor."""
        return self.metrics.callback_metrics

    @callback_metrics.setter
    def callback_metrics(self, metrics: dict[str, torch.Tensor]) -> None:
        self.metrics.callback_metrics = metrics

    @property
    def logged_metrics(self) -> dict[str, torch.Tensor]:
        """The latest value of every metric logged with ``logger=True``, under the name the loggers see."""
        return self.metrics.logged_metrics

    @property
    def progress_bar_metrics(self) -> dict[str, float]:
        """The metrics logged with ``prog_bar=True``, as numbers."""
        return {k: float(v) for k, v in self.metrics.progress_bar_metrics.items()}

    @property
    def checkpoint_callbacks(self) -> list[Any]:
        """Every ``ModelCheckpoint`` in ``callbacks``.

        Lightning 2.6 lists every ``Checkpoint`` here (an ``OnExceptionCheckpoint`` too); here only
        those with a best model to give ``ckpt_path="best"`` and the spawn transfer.
        """
        return [cb for cb in self.callbacks if getattr(cb, "_is_checkpoint", False)]

    @property
    def checkpoint_callback(self) -> Any:
        """The first ``ModelCheckpoint``, or None."""
        found = self.checkpoint_callbacks
        return found[0] if found else None

    @property
    def early_stopping_callbacks(self) -> list[Any]:
        """Every ``EarlyStopping`` in ``callbacks``."""
        from strategies.early_stopping import EarlyStopping

        return [cb for cb in self.callbacks if isinstance(cb, EarlyStopping)]

    @property
    def early_stopping_callback(self) -> Any:
        """The first ``EarlyStopping``, or None."""
        found = self.early_stopping_callbacks
        return found[0] if found else None

    def _finalize_loggers(self, status: str = "success") -> None:
        """Close the loggers (the Trainer calls it when a run ends)."""
        if self.strategy.is_global_zero:
            for logger in self._loggers:
                logger.finalize(status)


class TrainerMetrics:
    """What ``self.log`` feeds and the loggers get: ``trainer.metrics`` (see the module docstring).

    ``callback_metrics``, ``logged_metrics`` and ``progress_bar_metrics`` hold the latest value of
    each name (tensors; ``trainer.progress_bar_metrics`` gives them as numbers). The loops drive it
    with ``reset``/``batch_end``/``epoch_end`` and tell it the batch being run in
    ``current_batch`` (``self.log`` infers the batch size from it). It reads the hook running from
    ``trainer.hooks.current_fx`` and the loggers, strategy and state from the Trainer.

    A subclass named in ``Trainer.metrics_class`` can extend it (e.g. override ``log``).

    Args:
        trainer: the Trainer whose metrics these are.
    """

    def __init__(self, trainer: Any) -> None:
        self.trainer = trainer
        self.callback_metrics: dict[str, torch.Tensor] = {}
        self.logged_metrics: dict[str, torch.Tensor] = {}
        self.progress_bar_metrics: dict[str, torch.Tensor] = {}
        self.current_batch: Any = None
        """The batch being run, after its transfer hooks."""
        self._results: dict[str, _Results] = {}
        self._active: list[str] = []
        self._run_state: Any = None
        self._versions_agreed = False
        self._logger_step = 0
        self._seen_global_step = 0
        self._eval_batches: dict[tuple[str, int | None], int] = {}
        self._loader_outputs: list[dict[str, torch.Tensor]] = []
        self._sanity_metrics: list[Any] = []
        self.dataloader_idx: int | None = None
        """The evaluation loader whose batches run now, when there are several (None otherwise)."""
        self._logged_hparams: dict[str, Any] | None = None
        self._warned: set[str] = set()

    # -- self.log ------------------------------------------------------------------------------

    def log(
        self,
        name: str,
        value: Any,
        prog_bar: bool = False,
        logger: bool | None = None,
        on_step: bool | None = None,
        on_epoch: bool | None = None,
        reduce_fx: ReduceFx | Any = "mean",
        enable_graph: bool = False,
        sync_dist: bool = False,
        sync_dist_group: Any = None,
        add_dataloader_idx: bool = True,
        batch_size: int | None = None,
        metric_attribute: str | None = None,
        rank_zero_only: bool = False,
    ) -> None:
        """Store one ``self.log`` value with Lightning's semantics (see ``TrainModule.log``)."""
        trainer = self.trainer
        if getattr(trainer, "barebones", False):
            raise ValueError(
                "You are trying to `self.log()` but `Trainer(barebones=True)` is configured. Logging can impact "
                "raw speed so it is disabled under this setting."
            )
        self._check_new_run()
        kind = self._active[-1] if self._active else None
        fx = trainer.hooks.current_fx or LOOP_STEP_HOOK.get(kind or "")
        if fx is None:
            raise RuntimeError(
                f"`self.log({name!r}, ...)` was called outside the Trainer's loops: log inside a step or "
                "epoch hook, or call `trainer.logger.log_metrics(...)`."
            )
        step, epoch = resolve_levels(fx, kind, name, on_step, on_epoch)
        metric = is_metric(value)
        tensor = None if metric else to_tensor(value, name, enable_graph)
        if logger and not trainer.loggers:
            self._warn_once(
                f"no-logger:{name}",
                f"`self.log({name!r}, ..., logger=True)` has no logger to go to: "
                "pass `Trainer(logger=CSVLogger(...))` or another logger.",
            )
        if kind == "sanity":
            if is_metric(value):  # its state from the sanity batches goes, as Lightning resets it after them
                self._sanity_metrics.append(value)
            return
        options = _Options(
            prog_bar=bool(prog_bar),
            logger=logger is not False,
            on_step=step,
            on_epoch=epoch,
            reduce_fx=parse_reduce_fx(reduce_fx, name),
            # A Metric syncs itself (torchmetrics' `compute`): `sync_dist` is not for it, as in Lightning.
            sync=bool(sync_dist) and not rank_zero_only and trainer.strategy.world_size > 1 and not metric,
        )
        results = self._results.setdefault(kind or _kind_of_hook(fx), _Results())
        loader = self.dataloader_idx if kind in ("val", "test") else None
        entry = results.entry(fx, name, options, loader, add_dataloader_idx)
        if tensor is None:
            entry.update_metric(value)
        else:
            if batch_size is None and epoch and options.reduce_fx == "mean":
                batch_size = batch_size_of(self.current_batch)
            entry.update(tensor, int(batch_size or 1), self._sync)
        if step and entry.last is not None:
            shown = entry.names()[0]
            if options.logger:
                self.logged_metrics[shown] = entry.last
            if kind == "train":
                self.callback_metrics[name] = self.callback_metrics[shown] = entry.last
            if options.prog_bar:
                self.progress_bar_metrics[shown] = entry.last

    def _sync(self, tensor: torch.Tensor, reduce_op: str) -> torch.Tensor:
        reduced: torch.Tensor = self.trainer.strategy.reduce(tensor, reduce_op)
        return reduced

    # -- loop notifications ----------------------------------------------------------------------

    def reset(self, kind: str) -> None:
        """A loop of ``kind`` starts (or a new epoch of it): later logs belong to it."""
        _check_kind(kind)
        self._check_new_run()
        self._agree_logger_versions()
        if kind != "train":
            self._results[kind] = _Results()
            self._loader_outputs, self.dataloader_idx = [], None
        if not self._active or self._active[-1] != kind:
            self._active.append(kind)

    def batch_end(self, kind: str) -> None:
        """After a batch's ``on_*_batch_end`` hooks: step values to the loggers when it is time."""
        _check_kind(kind)
        results = self._results.get(kind)
        if kind == "train":
            step = self._logger_step
            if not self._batch_stepped():
                return
            due = self.step_logs_due()
            self._logger_step += 1
            if results is not None and due:
                self._send(results.step_view(training=True)[0], step, with_epoch=True)
        elif kind in ("val", "test"):
            # Each loader counts its own batches for the step, over the validation runs of one `fit`
            # (Lightning's `_seen_batches_per_dataloader`, reset when the loaders are fetched).
            key = (kind, self.dataloader_idx)
            step = self._eval_batches.get(key, 0)
            self._eval_batches[key] = step + 1
            if results is not None:
                logged = results.step_view(training=False, dataloader_idx=self.dataloader_idx)[0]
                self.logged_metrics.update(logged)
                self._send(logged, step)

    def new_loaders(self, kind: str) -> None:
        """The loaders of ``kind`` were fetched: their batch counts (the step of on-step values) restart."""
        self._eval_batches = {key: count for key, count in self._eval_batches.items() if key[0] != kind}

    @property
    def logger_step(self) -> int:
        """The ``step`` the loggers get for the current training batch (Lightning's ``_batches_that_stepped``)."""
        return self._logger_step

    def step_logs_due(self) -> bool:
        """Whether the current training batch's step values go to the loggers: every
        ``log_every_n_steps`` batches that step, and always when stopping or under ``fast_dev_run``."""
        trainer = self.trainer
        every = trainer.log_every_n_steps
        due = every > 0 and (self._logger_step + 1) % every == 0
        return bool(due or trainer.should_stop or trainer.fast_dev_run)

    def epoch_preview(self, kind: str) -> None:
        """Before ``on_train_epoch_end``: the epoch values logged so far, in ``callback_metrics``.

        Lightning shows them there to those hooks (a callback reading ``train_loss_epoch`` in
        ``on_train_epoch_end`` sees this epoch's); ``epoch_end``, after the hooks, adds what
        they logged and reports to the loggers. Every rank calls it (``sync_dist`` values sync;
        once: ``epoch_end`` reuses what was computed here).
        """
        results = self._results.get(kind)
        if kind == "sanity" or results is None:
            return
        _, callback, pbar = results.epoch_view(self._sync)
        self.callback_metrics.update(callback)
        self.progress_bar_metrics.update(pbar)

    def loader_end(self, kind: str) -> None:
        """After the batches of one evaluation loader (``dataloader_idx``): its epoch values, in
        ``callback_metrics``, ``logged_metrics`` and the progress bar's, and kept for the run's
        results (Lightning's ``_store_dataloader_outputs``; the ``on_*_epoch_end`` hooks see them)."""
        results = self._results.get(kind)
        if kind == "sanity" or results is None:
            self._loader_outputs.append({})
            return
        logged, callback, pbar = results.epoch_view(self._sync, self.dataloader_idx)
        self.logged_metrics.update(logged)
        self.callback_metrics.update(callback)
        self.progress_bar_metrics.update(pbar)
        self._loader_outputs.append(logged)

    def epoch_end(self, kind: str) -> list[dict[str, float]]:
        """After the ``on_*_epoch_end`` hooks: compute, sync and report the epoch values of ``kind``.

        Returns them per loader (one dict for training and for one loader): each loader's own
        values and those logged outside the batches (the epoch-end hooks), as Lightning's
        ``trainer.validate()`` returns them. The loggers get one row with all of them.
        """
        _check_kind(kind)
        if self._active and self._active[-1] == kind:
            self._active.pop()
        results = self._results.pop(kind, None)
        outputs, self._loader_outputs, self.dataloader_idx = self._loader_outputs or [{}], [], None
        if kind == "sanity":
            for metric in self._sanity_metrics:
                metric.reset()
            self._sanity_metrics = []
        if kind == "sanity" or results is None:
            return [{} for _ in outputs]
        if self.trainer.strategy.world_size > 1:
            for name in results.unsynced_epoch_names():
                self._warn_once(
                    f"sync:{name}",
                    f"`self.log({name!r}, ...)` is reduced per epoch on each rank alone: "
                    f"pass `sync_dist=True` to reduce it over all ranks.",
                )
        logged, callback, pbar = results.epoch_view(self._sync)
        self.logged_metrics.update(logged)
        self.callback_metrics.update(callback)
        self.progress_bar_metrics.update(pbar)
        for output in outputs:
            output.update(logged)
        for entry in results.entries.values():
            entry.reset_metric()
        row: dict[str, torch.Tensor] = {}
        for output in reversed(outputs):  # the first loader's value wins a shared name, as in Lightning
            row.update(output)
        in_fit = self.trainer.state.stage == "fit"
        self._send(row, max(self._logger_step - 1, 0) if in_fit else self._logger_step, with_epoch=True)
        return [{k: float(v) for k, v in output.items()} for output in outputs]

    def _send(self, metrics: dict[str, torch.Tensor], step: int, with_epoch: bool = False) -> None:
        """To the loggers (rank 0); training and epoch rows carry an ``epoch`` column, as in Lightning."""
        loggers = self.trainer.loggers
        if not metrics or not loggers or not self.trainer.strategy.is_global_zero:
            return
        scalars: dict[str, float] = {k: float(v) for k, v in metrics.items()}
        if with_epoch:
            scalars.setdefault("epoch", int(self.trainer.state.epoch))
        for logger in loggers:
            logger.log_metrics(scalars, step)
            logger.save()

    # -- runs ------------------------------------------------------------------------------------

    def _check_new_run(self) -> None:
        """At a run's first logging call (``Trainer._run`` makes a new ``state`` per run): start afresh."""
        state = self.trainer.state
        if self._run_state is state:
            return
        self._run_state = state
        self.callback_metrics.clear()
        self.logged_metrics.clear()
        self.progress_bar_metrics.clear()
        self._results.clear()
        self._active.clear()
        self._seen_global_step = self._logger_step = int(state.global_step)
        self._log_hyperparams()

    def _agree_logger_versions(self) -> None:
        """Every rank uses rank 0's logger versions (their folders may appear while others look)."""
        if self._versions_agreed:
            return
        self._versions_agreed = True
        strategy, loggers = self.trainer.strategy, self.trainer.loggers
        if strategy.world_size > 1 and loggers:
            versions = strategy.broadcast([logger.version for logger in loggers])
            for logger, version in zip(loggers, versions, strict=False):
                if hasattr(logger, "_version"):
                    logger._version = version

    def _log_hyperparams(self) -> None:
        trainer = self.trainer
        if not trainer.loggers or not trainer.strategy.is_global_zero:
            return
        params: dict[str, Any] = {}
        for owner in (trainer.datamodule, trainer.strategy.module):
            hparams = getattr(owner, "hparams", None)
            if isinstance(hparams, Mapping):
                params.update(hparams)
        if not params or params == self._logged_hparams:
            return
        self._logged_hparams = dict(params)
        for logger in trainer.loggers:
            logger.log_hyperparams(params)
            logger.save()

    def _batch_stepped(self) -> bool:
        """Whether the batch just finished stepped an optimizer (accumulating batches log nothing)."""
        global_step = int(self.trainer.state.global_step)
        stepped = global_step != self._seen_global_step
        self._seen_global_step = global_step
        return stepped or not getattr(self.trainer.strategy.module, "automatic_optimization", True)

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned and self.trainer.strategy.is_global_zero:
            self._warned.add(key)
            warnings.warn(message, UserWarning, stacklevel=4)

    # -- ddp_spawn: what rank 0 sends back ---------------------------------------------------

    def worker_output(self) -> dict[str, dict[str, torch.Tensor]]:
        """The three metric dicts as CPU tensors, for the caller of a spawned run."""
        return {
            "callback_metrics": {k: v.detach().cpu() for k, v in self.callback_metrics.items()},
            "logged_metrics": {k: v.detach().cpu() for k, v in self.logged_metrics.items()},
            "progress_bar_metrics": {k: v.detach().cpu() for k, v in self.progress_bar_metrics.items()},
        }

    def recover(self, output: dict[str, dict[str, torch.Tensor]]) -> None:
        """Apply ``worker_output`` in the caller's process."""
        self.callback_metrics.update(output["callback_metrics"])
        self.logged_metrics.update(output["logged_metrics"])
        self.progress_bar_metrics.update(output["progress_bar_metrics"])


def _resolve_loggers(logger: Any, save_dir: str) -> list[Logger]:
    if logger is None or logger is False:
        return []
    if logger is True:
        return [default_logger(save_dir)]
    loggers = [logger] if isinstance(logger, Logger) else list(logger) if isinstance(logger, Iterable) else [logger]
    for item in loggers:
        if not isinstance(item, Logger):
            raise TypeError(
                f"`Trainer(logger=...)` got a `{type(item).__name__}`: pass True, False, a `strategies.loggers.Logger` "
                "(`CSVLogger`, `TensorBoardLogger`, or your subclass) or a list of them."
            )
    return loggers


def _kind_of_hook(fx: str) -> str:
    for prefix, kind in _KIND_OF_HOOK_PREFIX:
        if fx.startswith(prefix):
            return kind
    return "train"


def _check_kind(kind: str) -> None:
    if kind not in _KINDS:
        raise ValueError(f"Unknown loop kind {kind!r}; expected one of {', '.join(_KINDS)}.")
