"""libcst codemods that migrate user code from the old Lightning API (names from compat.renames).

The public surface used by ``python -m compat.migrate``; everything else is private.
"""

from __future__ import annotations

from ._api import Result, migrate_source, prescan
from ._classes import class_bases, resolve_user_classes
from ._edits import Change
from ._ids import Rule
from ._registry import RULES
from ._todo import TODO_PREFIX

__all__ = [
    "RULES",
    "TODO_PREFIX",
    "Change",
    "Result",
    "Rule",
    "class_bases",
    "migrate_source",
    "prescan",
    "resolve_user_classes",
]
