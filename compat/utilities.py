"""``pytorch_lightning.utilities`` on compat: every 1.x utility name, resolved when it is used.

``rank_zero_only``, ``rank_zero_warn`` and ``rank_zero_deprecation`` are
``strategies.utilities``' (Lightning 2.x has them in ``lightning.pytorch.utilities``);
``rank_zero_info`` and ``rank_zero_debug`` log, on rank 0 only, to the ``pytorch_lightning``
logger 1.x programs configure; ``AttributeDict`` is ``strategies``'; each warns once.
A 1.x utility with no counterpart (``DistributedType``, ...) raises
``compat.MissingNameError`` where it is imported. ``pytorch_lightning.utilities.seed`` and the
other 1.x submodules resolve their names the same way (``compat._legacy``).

Standard library only: importing this module does not import torch; touching one of the
``rank_zero_*`` names imports ``strategies`` (and torch) then.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any

from compat import _legacy

__all__ = ["rank_zero_debug", "rank_zero_deprecation", "rank_zero_info", "rank_zero_only", "rank_zero_warn"]  # noqa: F822 (resolved by __getattr__)

log = logging.getLogger("pytorch_lightning")


@functools.cache
def _strategies(name: str) -> Any:
    from strategies.utilities import rank_zero

    return getattr(rank_zero, name)


@functools.cache
def _logged(level: str) -> Callable[..., None]:
    """``rank_zero_info``/``_debug`` on the ``pytorch_lightning`` logger 1.x programs configure."""

    def emit(*args: Any, stacklevel: int = 4, **kwargs: Any) -> None:
        getattr(log, level)(*args, stacklevel=stacklevel, **kwargs)

    emit.__name__ = emit.__qualname__ = f"rank_zero_{level}"
    return _strategies("rank_zero_only")(emit)


_OWN: dict[str, Callable[[], Any]] = {
    "rank_zero_only": lambda: _strategies("rank_zero_only"),
    "rank_zero_warn": lambda: _strategies("rank_zero_warn"),
    "rank_zero_deprecation": lambda: _strategies("rank_zero_deprecation"),
    "rank_zero_info": lambda: _logged("info"),
    "rank_zero_debug": lambda: _logged("debug"),
}

__getattr__ = _legacy.module_getattr(__name__, _OWN)
__dir__ = _legacy.module_dir(__name__, _OWN)
