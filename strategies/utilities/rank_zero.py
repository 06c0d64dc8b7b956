"""Run or report on global rank 0 only: ``rank_zero_only`` and the ``rank_zero_*`` messages.

The names and arguments of ``lightning.pytorch.utilities.rank_zero``, so a Lightning program's
``from lightning.pytorch.utilities import rank_zero_only`` becomes
``from strategies.utilities import rank_zero_only`` and behaves the same:

* ``@rank_zero_only`` calls the function on global rank 0 and returns ``None`` elsewhere;
* ``rank_zero_only.rank`` is that rank. A parallel strategy sets it in ``setup_distributed``
  (and forgets it in ``close``), as Lightning's strategies do; a program may set it too. Unset,
  it is read when a wrapped function is called: from the live process group, else ``RANK``,
  ``SLURM_PROCID``, ``LOCAL_RANK`` or ``JSM_NAMESPACE_RANK`` (what launchers export), else 0.
* ``rank_zero_info``/``rank_zero_debug`` log to the ``strategies`` logger, ``rank_zero_warn``
  warns (``UserWarning`` by default), ``rank_zero_deprecation`` warns a ``DeprecationWarning``.
"""

from __future__ import annotations

import functools
import logging
import os
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

import torch.distributed as dist

__all__ = ["rank_zero_debug", "rank_zero_deprecation", "rank_zero_info", "rank_zero_only", "rank_zero_warn"]

_F = TypeVar("_F", bound=Callable[..., Any])
log = logging.getLogger("strategies")
# As Lightning does for its own logger: rank_zero_info and the profilers' reports show at INFO on
# stderr, unless the program configured logging itself (then its handlers decide).
log.setLevel(logging.INFO)
if not logging.getLogger().hasHandlers():
    log.addHandler(logging.StreamHandler())
    log.propagate = False
_RANK_VARIABLES = ("RANK", "SLURM_PROCID", "LOCAL_RANK", "JSM_NAMESPACE_RANK")


def _current_rank() -> int:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank()
    for name in _RANK_VARIABLES:
        value = os.environ.get(name, "")
        if value.lstrip("-").isdigit():
            return max(int(value), 0)
    return 0


class RankZeroOnly:
    """The ``@rank_zero_only`` decorator, with the settable ``rank`` it compares with 0."""

    def __init__(self) -> None:
        self._rank: int | None = None

    @property
    def rank(self) -> int:
        """This process's global rank: as set, else read now (see the module's docstring)."""
        return self._rank if self._rank is not None else _current_rank()

    @rank.setter
    def rank(self, value: int | None) -> None:
        self._rank = value

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if self.rank == 0:
                return fn(*args, **kwargs)
            return None

        return wrapped  # type: ignore[return-value]


#: ``@rank_zero_only``: call on global rank 0 only; ``rank_zero_only.rank`` is the rank.
rank_zero_only = RankZeroOnly()


@rank_zero_only
def rank_zero_info(*args: Any, stacklevel: int = 4, **kwargs: Any) -> None:
    """``logging.info`` on the ``strategies`` logger, on rank 0 only."""
    log.info(*args, stacklevel=stacklevel, **kwargs)


@rank_zero_only
def rank_zero_debug(*args: Any, stacklevel: int = 4, **kwargs: Any) -> None:
    """``logging.debug`` on the ``strategies`` logger, on rank 0 only."""
    log.debug(*args, stacklevel=stacklevel, **kwargs)


@rank_zero_only
def rank_zero_warn(message: str | Warning, stacklevel: int = 4, **kwargs: Any) -> None:
    """``warnings.warn`` on rank 0 only (``category=`` as for ``warnings.warn``; default ``UserWarning``)."""
    warnings.warn(message, stacklevel=stacklevel, **kwargs)


def rank_zero_deprecation(message: str | Warning, stacklevel: int = 5, **kwargs: Any) -> None:
    """A ``DeprecationWarning`` on rank 0 only."""
    category = kwargs.pop("category", DeprecationWarning)
    rank_zero_warn(message, stacklevel=stacklevel, category=category, **kwargs)
