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


class ProgressBar:
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


class BarSettings(Callback):
    """What the progress-bar callbacks share (``TQDMProgressBar``, ``RichProgressBar``): the
    ``refresh_rate``, ``leave``, and the bar each loop draws with them (``bar``).

    A Trainer holds at most one, and refuses one with ``enable_progress_bar=False``.
    """

    def __init__(self, refresh_rate: int, leave: bool) -> None:
        self._refresh_rate, self._leave = refresh_rate, leave

    @property
    def refresh_rate(self) -> int:
        """Batches between redraws."""
        return self._refresh_rate

    @property
    def is_enabled(self) -> bool:
        """Whether it draws at all (``refresh_rate > 0``)."""
        return self._refresh_rate > 0

    def bar(self, enabled: bool) -> Any:
        """The bar one loop draws (``update``/``close``)."""
        raise NotImplementedError


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

    def bar(self, enabled: bool) -> ProgressBar:
        """A tqdm bar with these settings."""
        return ProgressBar(enabled, self._refresh_rate, self._process_position, self._leave)


def bar_for(trainer: Any, enabled: bool) -> Any:
    """The bar a loop draws: the trainer's setting, with the options of a progress-bar callback
    (``BarSettings``) when it holds one."""
    settings = next((cb for cb in trainer.callbacks if isinstance(cb, BarSettings)), None)
    return ProgressBar(enabled) if settings is None else settings.bar(enabled)
