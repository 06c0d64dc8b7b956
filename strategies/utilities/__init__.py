"""Tools around training runs; each submodule is imported on first use (``import strategies`` stays light).

- ``upgrade_checkpoint``: convert checkpoint files on disk (Lightning 1.2-1.5, older files of this
  library) to the current format: ``python -m strategies.utilities.upgrade_checkpoint PATH...``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

_SUBMODULES = ("upgrade_checkpoint",)


def __getattr__(name: str) -> ModuleType:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted([*globals(), *_SUBMODULES])
