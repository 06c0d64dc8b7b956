"""A one-line progress bar on rank 0, shown only when stderr is a terminal."""

from __future__ import annotations

import sys
import time


class ProgressBar:
    """Redraws ``stage epoch step/total metrics`` at most ten times a second."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled and sys.stderr.isatty()
        self._last = 0.0

    def update(self, stage: str, epoch: int, step: int, total: int | None, metrics: dict[str, float]) -> None:
        if not self.enabled or time.monotonic() - self._last < 0.1:
            return
        self._last = time.monotonic()
        shown = " ".join(f"{k}={v:.4g}" for k, v in list(metrics.items())[:4])
        sys.stderr.write(f"\r{stage} epoch {epoch} {step}/{total if total is not None else '?'} {shown}\033[K")
        sys.stderr.flush()

    def close(self) -> None:
        if self.enabled:
            sys.stderr.write("\n")
            sys.stderr.flush()
