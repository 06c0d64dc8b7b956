"""The progress bar: tqdm on rank 0, drawn only when stdout is a terminal.

Lightning's ``TQDMProgressBar`` draws on stdout whatever it is; here a redirected stdout (a log
file, a CI job, pytest) gets no bar, because the bar's carriage returns fill such files with
partial lines. tqdm is imported on the first draw, so ``import strategies`` does not pay for it.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from strategies.callbacks import Callback

_DESCRIPTION = {
    "train": "Epoch {epoch}",
    "val": "Validation",
    "sanity": "Sanity Checking",
    "test": "Testing",
    "predict": "Predicting",
}


class _TqdmBar:
    """One tqdm bar per loop run: ``Epoch 3: 40%|████ | 4/10 [00:01<00:01, 3.9it/s, loss=0.52]``.

    ``refresh_rate``, ``process_position`` and ``leave`` are ``TQDMProgressBar``'s (the callback
    that carries them, ``bar_for``): redraw every N batches (0: no bar), offset by that many bars,
    one new training bar per epoch (``leave``) or one bar reset at each epoch (the default).
    """

    def __init__(self, enabled: bool, refresh_rate: int = 1, process_position: int = 0, leave: bool = False) -> None:
        self.enabled = enabled and refresh_rate > 0 and sys.stdout.isatty()
        self.refresh_rate, self.process_position, self.leave = refresh_rate, process_position, leave
        self._bar: Any = None
        self._key: tuple[str, int] | None = None

    def update(self, stage: str, epoch: int, step: int, total: int | None, metrics: dict[str, float]) -> None:
        """Show ``step`` of ``total`` batches of ``stage`` with the ``prog_bar`` metrics."""
        if not self.enabled:
            return
        if step % self.refresh_rate != 0 and step != total:
            return
        if self._key != (stage, epoch):
            self._open(stage, epoch, total)
        bar = self._bar
        bar.set_postfix(metrics, refresh=False)
        bar.update(step - bar.n)  # tqdm redraws at most every 0.1 s
        if total is not None and step >= total:
            bar.refresh()

    def close(self) -> None:
        """Finish the current bar."""
        if self._bar is not None:
            self._bar.close()
            self._bar, self._key = None, None

    def _open(self, stage: str, epoch: int, total: int | None) -> None:
        from tqdm import tqdm

        description = _DESCRIPTION.get(stage, stage).format(epoch=epoch)
        if stage == "train" and not self.leave and self._bar is not None and self._key and self._key[0] == "train":
            self._key = (stage, epoch)  # Lightning's default: one training bar, reset each epoch
            self._bar.reset(total=total)
            self._bar.set_description(description, refresh=False)
            return
        self.close()
        self._key = (stage, epoch)
        self._bar = tqdm(
            total=total,
            desc=description,
            file=sys.stdout,
            dynamic_ncols=True,
            leave=stage in ("train", "test", "predict"),  # `self.leave`: a new training bar per epoch
            position=2 * self.process_position + (stage == "val"),
            smoothing=0,
        )


def check_count(owner: str, name: str, value: Any) -> None:
    """A bar setting that is a count: an int >= 0."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"`{owner}({name}={value!r})`: use an int >= 0.")


class _NoBar:
    """What the loops draw with a progress bar of the user's own: nothing (its hooks draw)."""

    enabled = False

    def update(self, stage: str, epoch: int, step: int, total: int | None, metrics: dict[str, float]) -> None:
        pass

    def close(self) -> None:
        pass


class ProgressBar(Callback):
    """The base class of progress bars, as Lightning's ``lightning.pytorch.callbacks.ProgressBar``.

    Subclass it to draw your own: override the batch hooks (``on_train_batch_end``, ...) and
    ``disable``/``enable``, and read ``total_train_batches``, ``total_val_batches_current_dataloader``
    and the other totals, or ``get_metrics`` for what to show. A Trainer holds at most one
    progress bar and then draws no other; ``Trainer(enable_progress_bar=False)`` refuses one.
    ``setup`` keeps the trainer and calls ``disable()`` on every rank but global rank 0.
    """

    def __init__(self) -> None:
        self._trainer: Any = None
        self._current_eval_dataloader_idx: int | None = None

    @property
    def trainer(self) -> Any:
        """The Trainer, from ``setup`` on (a ``TypeError`` before)."""
        if self._trainer is None:
            raise TypeError(f"The `{type(self).__name__}._trainer` reference has not been set yet.")
        return self._trainer

    @property
    def sanity_check_description(self) -> str:
        return "Sanity Checking"

    @property
    def train_description(self) -> str:
        return "Training"

    @property
    def validation_description(self) -> str:
        return "Validation"

    @property
    def test_description(self) -> str:
        return "Testing"

    @property
    def predict_description(self) -> str:
        return "Predicting"

    @property
    def total_train_batches(self) -> int | float:
        """The training batches of this epoch (``inf`` for a loader without a length)."""
        trainer = self.trainer
        if trainer.max_epochs == -1 and trainer.max_steps is not None and trainer.max_steps > 0:
            remaining: int | float = min(trainer.num_training_batches, trainer.max_steps - trainer.global_step)
            return remaining
        total: int | float = trainer.num_training_batches
        return total

    def _current(self, batches: Any) -> int | float:
        if isinstance(batches, list):
            if not batches:
                return 0
            index = self._current_eval_dataloader_idx or 0
            return batches[index] if index < len(batches) else 0
        total: int | float = batches
        return total

    @property
    def total_val_batches_current_dataloader(self) -> int | float:
        """The batches of the validation loader being run (the sanity check's while it runs)."""
        trainer = self.trainer
        return self._current(trainer.num_sanity_val_batches if trainer.sanity_checking else trainer.num_val_batches)

    @property
    def total_test_batches_current_dataloader(self) -> int | float:
        """The batches of the test loader being run."""
        return self._current(self.trainer.num_test_batches)

    @property
    def total_predict_batches_current_dataloader(self) -> int | float:
        """The batches of the predict loader being run."""
        return self._current(self.trainer.num_predict_batches)

    @property
    def total_val_batches(self) -> int | float:
        """The batches of all validation loaders this epoch: 0 in an epoch that does not validate."""
        trainer = self.trainer
        every = getattr(trainer, "check_val_every_n_epoch", 1)
        if every and (trainer.current_epoch + 1) % every != 0:
            return 0
        batches = trainer.num_val_batches
        total: int | float = sum(batches) if isinstance(batches, list) else batches
        return total

    def has_dataloader_changed(self, dataloader_idx: int) -> bool:
        """Whether ``dataloader_idx`` is another loader than the last one asked about (and remember it)."""
        old, self._current_eval_dataloader_idx = self._current_eval_dataloader_idx, dataloader_idx
        return old != dataloader_idx

    def reset_dataloader_idx_tracker(self) -> None:
        self._current_eval_dataloader_idx = None

    def disable(self) -> None:
        """Stop drawing; a subclass provides it."""
        raise NotImplementedError

    def enable(self) -> None:
        """Draw again; a subclass provides it."""
        raise NotImplementedError

    def print(self, *args: Any, **kwargs: Any) -> None:
        """Print without breaking the bar (a subclass may do better than ``print``)."""
        print(*args, **kwargs)

    def setup(self, trainer: Any, pl_module: Any, stage: str) -> None:
        self._trainer = trainer
        if not trainer.is_global_zero:
            self.disable()

    def get_metrics(self, trainer: Any, pl_module: Any) -> dict[str, Any]:
        """What the bar shows: the logger's version as ``v_num`` and the ``prog_bar`` metrics."""
        items: dict[str, Any] = {}
        if trainer.loggers:
            versions = {logger.version for logger in trainer.loggers}
            version = versions.pop() if len(versions) == 1 else "_".join(str(v) for v in versions)
            if version not in ("", None):
                items["v_num"] = version[-4:] if isinstance(version, str) else version
        metrics = dict(trainer.progress_bar_metrics)
        duplicates = sorted(items.keys() & metrics.keys())
        if duplicates:
            import warnings

            warnings.warn(
                f"The progress bar already tracks a metric with the name(s) '{', '.join(duplicates)}' and "
                f"`self.log('{duplicates[0]}', ..., prog_bar=True)` will overwrite this value. If this is "
                "undesired, change the name or override `get_metrics()` in the progress bar callback.",
                UserWarning,
                stacklevel=2,
            )
        return {**items, **metrics}

    def bar(self, enabled: bool) -> Any:
        """The bar the loops draw with: none for a bar of your own (its hooks draw)."""
        return _NoBar()


class BarSettings(ProgressBar):
    """What the built-in progress bars share (``TQDMProgressBar``, ``RichProgressBar``): the
    ``refresh_rate``, ``leave``, ``disable``/``enable``, and the bar each loop draws (``bar``).
    """

    def __init__(self, refresh_rate: int, leave: bool) -> None:
        super().__init__()
        self._refresh_rate, self._leave = refresh_rate, leave
        self._enabled = True

    @property
    def refresh_rate(self) -> int:
        """Batches between redraws."""
        return self._refresh_rate

    @property
    def is_enabled(self) -> bool:
        """Whether it draws (``refresh_rate > 0`` and not ``disable()``d)."""
        return self._enabled and self._refresh_rate > 0

    @property
    def is_disabled(self) -> bool:
        return not self.is_enabled

    def disable(self) -> None:
        self._enabled = False

    def enable(self) -> None:
        self._enabled = True


class TQDMProgressBar(BarSettings):
    """The progress bar's settings, as Lightning's ``TQDMProgressBar`` takes them.

    Args:
        refresh_rate: redraw every N batches (0: no bar).
        process_position: offset the bars by this many (several trainers in one terminal).
        leave: keep each training epoch's bar when it ends.

    Raises:
        ValueError: a ``refresh_rate`` or ``process_position`` that is not an int >= 0.
        ValueError: at ``Trainer(...)``, with ``enable_progress_bar=False`` (Lightning's rule).
    """

    def __init__(self, refresh_rate: int = 1, process_position: int = 0, leave: bool = False) -> None:
        check_count("TQDMProgressBar", "refresh_rate", refresh_rate)
        check_count("TQDMProgressBar", "process_position", process_position)
        minimum = os.environ.get("TQDM_MINITERS")  # as Lightning: the environment can slow it down
        if minimum and minimum.isdigit() and refresh_rate:
            refresh_rate = max(int(minimum), refresh_rate)
        super().__init__(refresh_rate, leave)
        self._process_position = process_position

    @property
    def process_position(self) -> int:
        """The bars' offset."""
        return self._process_position

    def bar(self, enabled: bool) -> _TqdmBar:
        """A tqdm bar with these settings."""
        return _TqdmBar(enabled and self._enabled, self._refresh_rate, self._process_position, self._leave)


def bar_for(trainer: Any, enabled: bool) -> Any:
    """The bar a loop draws: the trainer's setting, with the options of a progress-bar callback
    (``ProgressBar``) when it holds one."""
    settings = next((cb for cb in trainer.callbacks if isinstance(cb, ProgressBar)), None)
    return _TqdmBar(enabled) if settings is None else settings.bar(enabled)
