"""The old PyTorch Lightning accelerator/plugin names, working on top of ``strategies``.

``import compat`` stays cheap (no torch) until a shim is touched: names are resolved lazily
through PEP 562 ``__getattr__``. ``compat.migrate`` (the codemod CLI) never imports torch.

Old layout: ``compat.Trainer``, ``compat.LightningModule``, ``compat.LightningDataModule``,
``compat.Callback``, ``compat.accelerators``, ``compat.plugins`` (``.training_type``,
``.precision``, ``.environments``). Every old name warns once with
``CompatDeprecationWarning`` (see docs/compat.md).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from compat._warnings import CompatDeprecationWarning, reset_warned

__all__ = [
    "Callback",
    "CompatDeprecationWarning",
    "LightningDataModule",
    "LightningModule",
    "Trainer",
    "accelerators",
    "plugins",
]

_LAZY = {
    "Trainer": "compat.trainer",
    "LightningModule": "compat.module",
    "LightningDataModule": "compat.module",
    "Callback": "compat.module",
}
_SUBMODULES = ("accelerators", "plugins", "trainer", "module", "renames", "migrate")

if TYPE_CHECKING:
    from compat import accelerators, plugins
    from compat.module import Callback, LightningDataModule, LightningModule
    from compat.trainer import Trainer


def _reset_warned() -> None:
    """Forget which call sites were warned (tests call it between cases)."""
    reset_warned()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if name in _SUBMODULES:
        return importlib.import_module(f"compat.{name}")
    raise AttributeError(f"module 'compat' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_SUBMODULES})
