"""``pytorch_lightning.utilities`` on compat: every 1.x utility name, resolved when it is used.

``rank_zero_only``, ``rank_zero_info``, ``rank_zero_warn``, ``rank_zero_debug`` and
``rank_zero_deprecation`` are provided here (``strategies`` has no counterpart; Lightning 2.x has
them in ``lightning.pytorch.utilities``); ``AttributeDict`` is ``strategies``'; each warns once.
A 1.x utility with no counterpart (``move_data_to_device``, ``DistributedType``, ...) raises
``compat.MissingNameError`` where it is imported. ``pytorch_lightning.utilities.seed`` and the
other 1.x submodules resolve their names the same way (``compat._legacy``).

Standard library only: importing this module does not import torch.
"""

from __future__ import annotations

import functools
import logging
import warnings
from collections.abc import Callable
from typing import Any, TypeVar

from compat import _legacy
from compat._warnings import global_rank

__all__ = ["rank_zero_debug", "rank_zero_deprecation", "rank_zero_info", "rank_zero_only", "rank_zero_warn"]  # noqa: F822 (resolved by __getattr__)

_F = TypeVar("_F", bound=Callable[..., Any])
log = logging.getLogger("pytorch_lightning")


class _RankZeroOnly:
    """``@rank_zero_only``: call the function on global rank 0 only (others get ``None``).

    The rank is read when the function is called (from the live process group, else ``RANK`` /
    ``SLURM_PROCID`` / ``LOCAL_RANK``), unless a program set ``rank_zero_only.rank`` itself, as
    1.x Trainers did.
    """

    def __init__(self) -> None:
        self._rank: int | None = None

    @property
    def rank(self) -> int:
        """This process's global rank (settable, as in 1.x)."""
        return self._rank if self._rank is not None else max(global_rank(), 0)

    @rank.setter
    def rank(self, value: int) -> None:
        self._rank = value

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            if self.rank == 0:
                return fn(*args, **kwargs)
            return None

        return wrapped  # type: ignore[return-value]


_rank_zero_only = _RankZeroOnly()


@_rank_zero_only
def _rank_zero_info(*args: Any, **kwargs: Any) -> None:
    log.info(*args, **kwargs)


@_rank_zero_only
def _rank_zero_debug(*args: Any, **kwargs: Any) -> None:
    log.debug(*args, **kwargs)


@_rank_zero_only
def _rank_zero_warn(message: Any, category: type[Warning] = UserWarning, stacklevel: int = 4, **kwargs: Any) -> None:
    warnings.warn(message, category, stacklevel=stacklevel, **kwargs)


def _rank_zero_deprecation(message: Any, stacklevel: int = 5, **kwargs: Any) -> None:
    _rank_zero_warn(message, DeprecationWarning, stacklevel=stacklevel, **kwargs)


_OWN: dict[str, Callable[[], Any]] = {
    "rank_zero_only": lambda: _rank_zero_only,
    "rank_zero_info": lambda: _rank_zero_info,
    "rank_zero_debug": lambda: _rank_zero_debug,
    "rank_zero_warn": lambda: _rank_zero_warn,
    "rank_zero_deprecation": lambda: _rank_zero_deprecation,
}

__getattr__ = _legacy.module_getattr(__name__, _OWN)
__dir__ = _legacy.module_dir(__name__, _OWN)
