"""libcst codemods that migrate user code from the old Lightning API (names from compat.renames).

The public surface used by ``python -m compat.migrate``; everything else is private.
"""

from __future__ import annotations

from compat.renames import TARGETS

from ._api import RULES, Result, as_codemod, migrate_source, prescan
from ._classes import class_bases, resolve_user_classes
from ._edits import Change
from ._ids import TODO_PREFIX, Rule
from ._lightning import NAMESPACES, declared_namespace

__all__ = [
    "NAMESPACES",
    "RULES",
    "TARGETS",
    "TODO_PREFIX",
    "Change",
    "Result",
    "Rule",
    "as_codemod",
    "class_bases",
    "declared_namespace",
    "migrate_source",
    "prescan",
    "resolve_user_classes",
]
