"""The old PyTorch Lightning accelerator/plugin names, working on top of ``strategies``.

``import compat`` stays cheap (no torch) until a shim is touched: names are resolved lazily
through PEP 562 ``__getattr__``. ``compat.migrate`` (the codemod CLI) never imports torch.

Old layout: ``compat.Trainer``, ``compat.LightningModule``, ``compat.LightningDataModule``,
``compat.Callback``, ``compat.seed_everything``, ``compat.accelerators``, ``compat.plugins``
(``.training_type``, ``.precision``, ``.environments``), ``compat.callbacks``, ``compat.loggers``,
``compat.utilities``, and every other 1.2-1.5 module path and name, resolved from the releases'
catalog (``compat._legacy``). Every old name warns once with ``CompatDeprecationWarning`` (see
docs/compat.md); one with no counterpart yet raises ``MissingNameError`` where it is imported.
``python -m compat.run train.py`` runs a script whose imports still say ``pytorch_lightning``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from compat._legacy import MissingNameError, install_finder
from compat._warnings import CompatDeprecationWarning, reset_warned

__all__ = [
    "Callback",
    "CompatDeprecationWarning",
    "LightningDataModule",
    "LightningModule",
    "MissingNameError",
    "Trainer",
    "accelerators",
    "callbacks",
    "loggers",
    "plugins",
    "utilities",
]

_LAZY = {
    "Trainer": "compat.trainer",
    "LightningModule": "compat.module",
    "LightningDataModule": "compat.module",
    "Callback": "compat.module",
}
_SUBMODULES = (
    "accelerators",
    "callbacks",
    "loggers",
    "plugins",
    "utilities",
    "trainer",
    "module",
    "renames",
    "migrate",
    "run",
)

install_finder()  # `compat.core.lightning` & co.: the 1.x module paths compat has no file for

if TYPE_CHECKING:
    from compat import accelerators, callbacks, loggers, plugins, utilities
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
    if name == "__version__":
        # What `pytorch_lightning.__version__` said in the newest 1.x release whose API compat
        # provides, so version-gated 1.x code (`if pl.__version__ >= "1.4": ...`) takes the
        # paths compat runs; the package's own version is `strategies.__version__`.
        from compat import _catalog

        return _catalog.load(_catalog.OLD[-1]).version
    if name.startswith("_"):  # private names (and `from compat import _catalog` before it is imported)
        raise AttributeError(f"module 'compat' has no attribute {name!r}")
    # Any other name `pytorch_lightning` had (`seed_everything`, `core`, ...): see compat._legacy.
    from compat import _legacy

    return _legacy.resolve(_legacy.OLD_PACKAGE, name)


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_SUBMODULES})
