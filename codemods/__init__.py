"""libcst codemods that migrate user code from the old Lightning API (names from compat.renames).

The public surface used by the migrate CLI (``codemods.cli``); everything else is private.
The names below are imported on first use (PEP 562), so ``import codemods.cli`` (and
``python -m compat.migrate --help``) costs only the standard library, not libcst.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers (``X as X`` marks a re-export)
    from compat.renames import TARGETS as TARGETS

    from ._api import RULES as RULES
    from ._api import Result as Result
    from ._api import as_codemod as as_codemod
    from ._api import migrate_source as migrate_source
    from ._classes import class_bases as class_bases
    from ._classes import resolve_user_classes as resolve_user_classes
    from ._edits import Change as Change
    from ._ids import TODO_PREFIX as TODO_PREFIX
    from ._ids import Rule as Rule
    from ._lightning import NAMESPACES as NAMESPACES
    from ._lightning import declared_namespace as declared_namespace
    from ._prescan import prescan as prescan

#: public name -> the private module that defines it
_HOMES = {
    "RULES": "._api",
    "Result": "._api",
    "as_codemod": "._api",
    "migrate_source": "._api",
    "prescan": "._prescan",
    "class_bases": "._classes",
    "resolve_user_classes": "._classes",
    "Change": "._edits",
    "NAMESPACES": "._lightning",
    "declared_namespace": "._lightning",
    "TARGETS": "compat.renames",
    "TODO_PREFIX": "._ids",
    "Rule": "._ids",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'codemods' has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
