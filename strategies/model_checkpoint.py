"""``ModelCheckpoint``: save the model every N epochs or steps, keep the best ``save_top_k`` by a metric."""

from __future__ import annotations

import copy
import os
import re
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import torch
from typing_extensions import override

from strategies.callbacks import Checkpoint

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer

_FIELD = re.compile(r"\{([^{}:]+)(:[^{}]*)?\}")


class ModelCheckpoint(Checkpoint):
    """Save checkpoints as Lightning 2.6's ``ModelCheckpoint`` does, with the same names and defaults.

    Files are ``<dirpath>/<filename>.ckpt``. ``dirpath`` defaults to
    ``<save_dir>/<name>/version_<N>/checkpoints`` of the Trainer's first logger, or
    ``<default_root_dir>/checkpoints`` without a logger. ``filename`` defaults to
    ``"{epoch}-{step}"``, which gives ``epoch=1-step=8.ckpt``; any logged metric may appear in it
    (``"{epoch}-{val_loss:.2f}"``). A name already taken gets ``-v1``, ``-v2``, ...

    When it saves: after every ``every_n_epochs``-th training epoch (default 1) or every
    ``every_n_train_steps`` optimizer steps. The epoch save happens in ``on_train_epoch_end``
    (after that epoch's validation) unless validation runs on another schedule
    (``check_val_every_n_epoch != 1`` or ``val_check_interval != 1.0``): then after validation.
    Nothing is saved outside ``fit``, in the sanity check, or twice at the same global step.
    Every rank calls ``trainer.save_checkpoint``; rank 0 writes and deletes files.

    Args:
        dirpath: where to write (see above for the default).
        filename: the file name template, without ``.ckpt``.
        monitor: the ``callback_metrics`` key to rank checkpoints by; None keeps the latest.
        verbose: print a line when a checkpoint is kept.
        save_last: also keep ``last.ckpt``, a copy of the latest save.
        save_top_k: how many to keep (``-1``: all; ``0``: none); with ``monitor=None`` only 1, 0 or -1.
        save_weights_only: ``trainer.save_checkpoint(path, weights_only=True)``: no optimizer,
            scheduler or callback state (the weights, hyperparameters and loop state are kept).
        mode: ``"min"`` or ``"max"``: which end of ``monitor`` is best.
        auto_insert_metric_name: write ``{epoch}`` as ``epoch=3`` rather than ``3``.
        every_n_train_steps: save every N optimizer steps instead of per epoch.
        every_n_epochs: save every N epochs.
        save_on_train_epoch_end: force the epoch save to ``on_train_epoch_end`` (True) or to the end of
            validation (False).
        enable_version_counter: add ``-v1``, ... instead of overwriting a file of the same name.
    """

    _is_checkpoint: ClassVar[bool] = True
    _monitors: ClassVar[bool] = True
    CHECKPOINT_JOIN_CHAR = "-"
    CHECKPOINT_EQUALS_CHAR = "="
    CHECKPOINT_NAME_LAST = "last"
    FILE_EXTENSION = ".ckpt"
    STARTING_VERSION = 1

    def __init__(
        self,
        dirpath: str | os.PathLike[str] | None = None,
        filename: str | None = None,
        monitor: str | None = None,
        verbose: bool = False,
        save_last: bool | None = None,
        save_top_k: int = 1,
        save_weights_only: bool = False,
        mode: str = "min",
        auto_insert_metric_name: bool = True,
        every_n_train_steps: int | None = None,
        every_n_epochs: int | None = None,
        save_on_train_epoch_end: bool | None = None,
        enable_version_counter: bool = True,
    ) -> None:
        if mode not in ("min", "max"):
            raise ValueError(f"`ModelCheckpoint(mode={mode!r})` must be 'min' or 'max'.")
        if save_last not in (None, True, False):
            raise ValueError(
                f"`ModelCheckpoint(save_last={save_last!r})` must be True, False or None "
                "('link' is not supported here: use True)."
            )
        if every_n_train_steps is None and every_n_epochs is None:
            every_n_epochs, every_n_train_steps = 1, 0
        self._every_n_epochs = every_n_epochs or 0
        self._every_n_train_steps = every_n_train_steps or 0
        _check_init(save_top_k, monitor, self._every_n_epochs, self._every_n_train_steps)
        self.dirpath = os.path.realpath(os.path.expanduser(os.fspath(dirpath))) if dirpath is not None else None
        self.filename = filename
        self.monitor = monitor
        self.verbose = verbose
        self.save_last = save_last
        self.save_top_k = save_top_k
        self.save_weights_only = save_weights_only
        self.mode = mode
        self.auto_insert_metric_name = auto_insert_metric_name
        self._save_on_train_epoch_end = save_on_train_epoch_end
        self._enable_version_counter = enable_version_counter
        self.best_k_models: dict[str, torch.Tensor] = {}
        self.kth_best_model_path = ""
        self.kth_value = torch.tensor(torch.inf if mode == "min" else -torch.inf)
        self.best_model_score: torch.Tensor | None = None
        self.best_model_path = ""
        self.last_model_path = ""
        self.current_score: torch.Tensor | None = None
        self._last_global_step_saved = 0  # nothing to save before the first step
        self._last_checkpoint_saved = ""
        self._defer_to_validation = False
        self._validation_ran = False

    @property
    def every_n_epochs(self) -> int:
        """Save every this many epochs (0: not per epoch)."""
        return self._every_n_epochs

    @property
    @override
    def state_key(self) -> str:
        """The key of this callback's state in a checkpoint (Lightning's format)."""
        return f"{type(self).__qualname__}" + repr(
            {
                "monitor": self.monitor,
                "mode": self.mode,
                "every_n_train_steps": self._every_n_train_steps,
                "every_n_epochs": self._every_n_epochs,
                "train_time_interval": None,
            }
        )

    # -- hooks ---------------------------------------------------------------------------------

    @override
    def setup(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        self.dirpath = trainer.strategy.broadcast(self._resolve_dirpath(trainer))
        path = Path(self.dirpath)
        if trainer.is_global_zero and stage == "fit" and self.save_top_k != 0 and path.is_dir() and any(path.iterdir()):
            warnings.warn(f"Checkpoint directory {self.dirpath} exists and is not empty.", UserWarning, stacklevel=2)

    @override
    def on_train_batch_end(
        self, trainer: Trainer, module: TrainModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        every = self._every_n_train_steps
        if every < 1 or trainer.global_step % every != 0:
            return
        candidates = self._monitor_candidates(trainer)
        if self.monitor is not None and self.monitor not in candidates:
            self._defer_to_validation = True  # the metric comes from validation: save once it exists
            return
        if self._should_skip_saving(trainer):
            return
        self._save_topk_checkpoint(trainer, candidates)
        self._save_last_checkpoint(trainer, candidates)

    @override
    def on_train_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        if not self._should_skip_saving(trainer) and self._should_save_on_train_epoch_end(trainer):
            self._save_for_epoch(trainer)

    @override
    def on_validation_end(self, trainer: Trainer, module: TrainModule) -> None:
        """After validation: save here when validation does not run once at each epoch's end."""
        if not trainer.sanity_checking:
            self._validation_ran = True
        if self._should_skip_saving(trainer) or self._should_save_on_train_epoch_end(trainer):
            return
        if self._defer_to_validation:
            candidates = self._monitor_candidates(trainer)
            self._save_topk_checkpoint(trainer, candidates)
            self._save_last_checkpoint(trainer, candidates)
            self._defer_to_validation = False
            return
        self._save_for_epoch(trainer)

    @override
    def on_train_end(self, trainer: Trainer, module: TrainModule) -> None:
        """Write ``last.ckpt`` if ``save_last`` and nothing was saved yet."""
        if self.save_last and not self._last_checkpoint_saved:
            self._save_last_checkpoint(trainer, self._monitor_candidates(trainer))

    @override
    def state_dict(self) -> dict[str, Any]:
        return {
            "monitor": self.monitor,
            "best_model_score": self.best_model_score,
            "best_model_path": self.best_model_path,
            "current_score": self.current_score,
            "dirpath": self.dirpath,
            "best_k_models": dict(self.best_k_models),
            "kth_best_model_path": self.kth_best_model_path,
            "kth_value": self.kth_value,
            "last_model_path": self.last_model_path,
        }

    @override
    def load_state_dict(self, state: dict[str, Any]) -> None:
        if not state:
            return
        if state.get("dirpath", self.dirpath) == self.dirpath:
            self.best_model_score = state["best_model_score"]
            self.kth_best_model_path = state.get("kth_best_model_path", self.kth_best_model_path)
            self.kth_value = state.get("kth_value", self.kth_value)
            self.best_k_models = dict(state.get("best_k_models", self.best_k_models))
            self.last_model_path = state.get("last_model_path", self.last_model_path)
        else:
            warnings.warn(
                f"The checkpoint directory changed from {state.get('dirpath')!r} to {self.dirpath!r}: only "
                "`best_model_path` is restored (not the scores, the top-k list or `last_model_path`).",
                UserWarning,
                stacklevel=2,
            )
        self.best_model_path = state["best_model_path"]

    # -- names ---------------------------------------------------------------------------------

    def format_checkpoint_name(
        self, metrics: dict[str, Any], filename: str | None = None, ver: int | None = None, prefix: str | None = None
    ) -> str:
        """The path for ``metrics``: ``ModelCheckpoint(filename="{epoch}")`` gives ``<dirpath>/epoch=0.ckpt``."""
        template = filename or self.filename or "{epoch}" + self.CHECKPOINT_JOIN_CHAR + "{step}"

        def field(match: re.Match[str]) -> str:
            name, spec = match.group(1), (match.group(2) or ":")[1:]
            value = metrics.get(name, torch.tensor(0))
            text = format(value, spec)
            return f"{name}{self.CHECKPOINT_EQUALS_CHAR}{text}" if self.auto_insert_metric_name else text

        name = _FIELD.sub(field, template)
        if prefix is not None:
            name = self.CHECKPOINT_JOIN_CHAR.join([prefix, name])
        if ver is not None:
            name = self.CHECKPOINT_JOIN_CHAR.join([name, f"v{ver}"])
        name += self.FILE_EXTENSION
        return os.path.join(self.dirpath, name) if self.dirpath else name

    def _find_last_checkpoints(self, trainer: Trainer) -> set[str]:
        """The ``last*.ckpt`` files (or sharded directories) in this callback's folder, and the last one it wrote."""
        found = {self.last_model_path} if self.last_model_path else set()
        folder = Path(self._resolve_dirpath(trainer))
        if folder.is_dir():
            pattern = re.compile(rf"^{re.escape(self.CHECKPOINT_NAME_LAST)}(-v\d+)?{re.escape(self.FILE_EXTENSION)}$")
            found |= {os.path.normpath(p) for p in folder.iterdir() if pattern.match(p.name)}
        return {p for p in found if os.path.exists(p)}

    def _resolve_dirpath(self, trainer: Trainer) -> str:
        if self.dirpath is not None:
            return self.dirpath
        if trainer.loggers:
            first = trainer.loggers[0]
            save_dir = first.save_dir if first.save_dir is not None else trainer.default_root_dir
            version = first.version
            version = version if isinstance(version, str) else f"version_{version}"
            return os.path.join(save_dir, str(first.name or ""), version, "checkpoints")
        return os.path.join(trainer.default_root_dir, "checkpoints")

    def _unused_path(self, trainer: Trainer, candidates: dict[str, Any], name: str | None, keep: str | None) -> str:
        path = self.format_checkpoint_name(candidates, name)
        version = self.STARTING_VERSION
        while self._enable_version_counter and self._file_exists(trainer, path) and path != keep:
            path = self.format_checkpoint_name(candidates, name, ver=version)
            version += 1
        return path

    # -- when and what to save -----------------------------------------------------------------

    def _should_skip_saving(self, trainer: Trainer) -> bool:
        return (
            bool(trainer.fast_dev_run)
            or trainer.state.stage != "fit"
            or trainer.sanity_checking
            or self._last_global_step_saved == trainer.global_step
        )

    def _should_save_on_train_epoch_end(self, trainer: Trainer) -> bool:
        if self._save_on_train_epoch_end is not None:
            return self._save_on_train_epoch_end
        num_val_batches = getattr(trainer, "num_val_batches", None)  # Lightning's attribute, when the Trainer has it
        if num_val_batches is not None and not (
            sum(num_val_batches) if isinstance(num_val_batches, list) else num_val_batches
        ):
            return True  # no validation: the epoch's end is the only place
        if trainer.check_val_every_n_epoch != 1:
            return False
        return trainer.val_check_interval == 1.0

    def _save_for_epoch(self, trainer: Trainer) -> None:
        candidates = self._monitor_candidates(trainer)
        if self._every_n_epochs >= 1 and (trainer.current_epoch + 1) % self._every_n_epochs == 0:
            self._save_topk_checkpoint(trainer, candidates)
        if self._last_global_step_saved == trainer.global_step:
            self._save_last_checkpoint(trainer, candidates)

    def _monitor_candidates(self, trainer: Trainer) -> dict[str, torch.Tensor]:
        candidates = copy.deepcopy(trainer.callback_metrics)
        epoch, step = candidates.get("epoch"), candidates.get("step")
        candidates["epoch"] = epoch.int() if isinstance(epoch, torch.Tensor) else torch.tensor(trainer.current_epoch)
        candidates["step"] = step.int() if isinstance(step, torch.Tensor) else torch.tensor(trainer.global_step)
        return candidates

    def _save_topk_checkpoint(self, trainer: Trainer, candidates: dict[str, torch.Tensor]) -> None:
        if self.save_top_k == 0:
            return
        if self.monitor is None:
            self._save_none_monitor_checkpoint(trainer, candidates)
            return
        if self.monitor not in candidates:
            message = (
                f"`ModelCheckpoint(monitor={self.monitor!r})` could not find {self.monitor!r} in the logged metrics "
                f"{sorted(candidates)}: log it with `self.log({self.monitor!r}, value)` in the module."
            )
            if self._validation_ran:
                raise RuntimeError(message)
            warnings.warn(message, UserWarning, stacklevel=2)
        current = candidates.get(self.monitor)
        if self._check_monitor_top_k(trainer, current):
            self._update_best_and_save(current, trainer, candidates)  # type: ignore[arg-type]
        elif self.verbose and trainer.is_global_zero:
            print(
                f"Epoch {int(candidates['epoch'])}, global step {int(candidates['step'])}: "
                f"{self.monitor!r} was not in top {self.save_top_k}"
            )

    def _check_monitor_top_k(self, trainer: Trainer, current: torch.Tensor | None) -> bool:
        if current is None:
            return False
        if self.save_top_k == -1 or len(self.best_k_models) < self.save_top_k:
            return True
        better = torch.lt if self.mode == "min" else torch.gt
        decision = bool(better(current, self.best_k_models[self.kth_best_model_path]))
        return trainer.strategy.reduce_boolean_decision(decision)

    def _save_none_monitor_checkpoint(self, trainer: Trainer, candidates: dict[str, torch.Tensor]) -> None:
        path = self._unused_path(trainer, candidates, None, self.best_model_path)
        previous, self.best_model_path = self.best_model_path, path
        self._save(trainer, path)
        if self.save_top_k == 1 and previous and self._should_remove(trainer, previous, path):
            self._remove(trainer, previous)

    def _update_best_and_save(
        self, current: torch.Tensor, trainer: Trainer, candidates: dict[str, torch.Tensor]
    ) -> None:
        k = len(self.best_k_models) + 1 if self.save_top_k == -1 else self.save_top_k
        removed = None
        if len(self.best_k_models) == k and k > 0:
            removed = self.kth_best_model_path
            self.best_k_models.pop(removed)
        if torch.isnan(current):
            current = torch.tensor(float("inf" if self.mode == "min" else "-inf"), device=current.device)
        path = self._unused_path(trainer, candidates, None, removed)
        self.current_score = current
        self.best_k_models[path] = current
        if len(self.best_k_models) == k:
            worst = max if self.mode == "min" else min
            self.kth_best_model_path = worst(self.best_k_models, key=self.best_k_models.__getitem__)
            self.kth_value = self.best_k_models[self.kth_best_model_path]
        best = min if self.mode == "min" else max
        self.best_model_path = best(self.best_k_models, key=self.best_k_models.__getitem__)
        self.best_model_score = self.best_k_models[self.best_model_path]
        if self.verbose and trainer.is_global_zero:
            print(
                f"Epoch {int(candidates['epoch'])}, global step {int(candidates['step'])}: {self.monitor!r} reached "
                f"{float(current):0.5f} (best {float(self.best_model_score):0.5f}), saving model to {path!r} "
                f"as top {k}"
            )
        self._save(trainer, path)
        if removed and self._should_remove(trainer, removed, path):
            self._remove(trainer, removed)

    def _save_last_checkpoint(self, trainer: Trainer, candidates: dict[str, torch.Tensor]) -> None:
        if not self.save_last:
            return
        path = self._unused_path(trainer, candidates, self.CHECKPOINT_NAME_LAST, self.last_model_path)
        previous, self.last_model_path = self.last_model_path, path
        self._save(trainer, path)
        if previous and self._should_remove(trainer, previous, path):
            self._remove(trainer, previous)

    # -- files -----------------------------------------------------------------------------------

    def _save(self, trainer: Trainer, path: str) -> None:
        trainer.save_checkpoint(path, weights_only=self.save_weights_only)
        self._last_global_step_saved = trainer.global_step
        self._last_checkpoint_saved = path
        if trainer.is_global_zero:
            for logger in trainer.loggers:
                logger.after_save_checkpoint(self)

    def _file_exists(self, trainer: Trainer, path: str) -> bool:
        """Whether rank 0 sees ``path`` (one answer for all ranks, so their state never diverges)."""
        exists = os.path.exists(path) if trainer.is_global_zero else False
        return trainer.strategy.reduce_boolean_decision(exists, all=False)

    def _should_remove(self, trainer: Trainer, previous: str, current: str) -> bool:
        if previous == current:
            return False
        resumed = getattr(trainer, "ckpt_path", None)  # Lightning's name for the checkpoint a fit resumed from
        if resumed is not None and Path(previous).absolute() == Path(resumed).absolute():
            return False
        return self.dirpath is not None and Path(self.dirpath).absolute() in Path(previous).absolute().parents

    def _remove(self, trainer: Trainer, path: str) -> None:
        if trainer.is_global_zero and os.path.exists(path):
            os.remove(path)


def _check_init(save_top_k: int, monitor: str | None, every_n_epochs: int, every_n_train_steps: int) -> None:
    if save_top_k < -1:
        raise ValueError(f"`ModelCheckpoint(save_top_k={save_top_k})` must be >= -1 (-1 keeps all).")
    if every_n_epochs < 0 or every_n_train_steps < 0:
        raise ValueError(
            f"`ModelCheckpoint(every_n_epochs={every_n_epochs}, every_n_train_steps="
            f"{every_n_train_steps})` must not be negative."
        )
    if every_n_epochs >= 1 and every_n_train_steps >= 1:
        raise ValueError("`ModelCheckpoint(every_n_epochs=..., every_n_train_steps=...)`: give only one of them.")
    if monitor is None and save_top_k not in (-1, 0, 1):
        raise ValueError(
            f"`ModelCheckpoint(save_top_k={save_top_k}, monitor=None)` has no metric to rank checkpoints by: "
            "pass `monitor=` (a name you log), or use save_top_k=1 (keep the latest), -1 (keep all) or 0."
        )
