"""The progress bar: tqdm on rank 0, drawn only when stdout is a terminal.

Lightning's ``TQDMProgressBar`` draws on stdout whatever it is; here a redirected stdout (a log
file, a CI job, pytest) gets no bar, because the bar's carriage returns fill such files with
partial lines. tqdm is imported on the first draw, so ``import strategies`` does not pay for it.
"""

from __future__ import annotations

import sys
from typing import Any

_DESCRIPTION = {
    "train": "Epoch {epoch}",
    "val": "Validation",
    "sanity": "Sanity Checking",
    "test": "Testing",
    "predict": "Predicting",
}


class ProgressBar:
    """One tqdm bar per loop run: ``Epoch 3: 40%|████ | 4/10 [00:01<00:01, 3.9it/s, loss=0.52]``."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stdout.isatty()
        self._bar: Any = None
        self._key: tuple[str, int] | None = None

    def update(self, stage: str, epoch: int, step: int, total: int | None, metrics: dict[str, float]) -> None:
        """Show ``step`` of ``total`` batches of ``stage`` with the ``prog_bar`` metrics."""
        if not self.enabled:
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

        self.close()
        self._key = (stage, epoch)
        self._bar = tqdm(
            total=total,
            desc=_DESCRIPTION.get(stage, stage).format(epoch=epoch),
            file=sys.stdout,
            dynamic_ncols=True,
            leave=stage in ("train", "test", "predict"),
            smoothing=0,
        )
