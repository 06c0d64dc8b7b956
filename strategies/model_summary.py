"""``ModelSummary``: the table of the module's layers, printed on rank 0 when ``fit`` starts.

``Trainer(enable_model_summary=True)`` (the default) prints the ``ModelSummary()`` table unless
the callbacks hold a ``ModelSummary``, which then prints its own (``ModelSummary(max_depth=2)``
lists nested layers); Lightning adds its default as a callback, here it is not in ``callbacks``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from strategies._summary import model_summary
from strategies.callbacks import Callback

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer

__all__ = ["ModelSummary"]


class ModelSummary(Callback):
    """Print a summary of the module's layers when ``fit`` starts (global rank 0).

    Args:
        max_depth: the levels of nesting to list (1: the direct children, -1: all, 0: no summary).
        **summarize_kwargs: kept for Lightning's signature (its rich subclass reads them).

    Raises:
        ValueError: a ``max_depth`` that is not an int >= -1.
    """

    def __init__(self, max_depth: int = 1, **summarize_kwargs: Any) -> None:
        if not isinstance(max_depth, int) or isinstance(max_depth, bool) or max_depth < -1:
            raise ValueError(f"`ModelSummary(max_depth={max_depth!r})`: use an int >= -1 (-1: every level).")
        self._max_depth = max_depth
        self._summarize_kwargs = summarize_kwargs

    def on_fit_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Print the table (unless ``max_depth=0``)."""
        if self._max_depth and trainer.is_global_zero:
            print(model_summary(module, self._max_depth))
