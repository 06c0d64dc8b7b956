"""The base class of a rule: its id, what it needs and what it runs after; the rules subclass it.

A rule is not a ``libcst`` visitor: it reads the file through one
``codemods._context.Context`` (the facts it lists in ``NEEDS`` are computed for it by the
engine, ``codemods._engine``) and asks ``ctx.edits`` for its edits; the engine runs every
selected rule in ``RUNS_AFTER`` order and applies all edits together at the end. The list of
rules is ``codemods.RULES`` (``_api.py``); the ids are ``codemods._ids.Rule``.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import ClassVar

from compat.renames import TARGETS

from ._context import Context, Site
from ._ids import TODO_PREFIX, Rule

__all__ = ["TARGETS", "TODO_PREFIX", "Rule", "RuleCommand", "Site"]


class RuleCommand:
    """One migration rule: its docstring (summary line, then Before::/After::) is its documentation.

    Args:
        target: one of ``TARGETS``.
        user_classes: user class qualname -> old class, from ``codemods.resolve_user_classes``.
    """

    #: The rule id.
    RULE: ClassVar[Rule]
    #: The per-file sites this rule reads (``ctx.import_plan``, ``ctx.member_sites``,
    #: ``ctx.call_sites``); the engine computes each once, before the first rule runs.
    NEEDS: ClassVar[tuple[Site, ...]] = ()
    #: Rules that must run too for this one to leave valid code (selecting it brings them).
    REQUIRES: ClassVar[tuple[Rule, ...]] = ()
    #: Rules whose edits this one reads, so they run first when selected.
    RUNS_AFTER: ClassVar[tuple[Rule, ...]] = ()
    #: The first line of the class docstring (generated; the docstring is the documentation).
    DESCRIPTION: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        doc = (inspect.getdoc(cls) or "").strip()
        cls.DESCRIPTION = doc.splitlines()[0] if doc else ""

    def __init__(self, target: str = "strategies", user_classes: Mapping[str, str] | None = None) -> None:
        self.target = target
        self.user_classes: Mapping[str, str] = user_classes or {}

    def run(self, ctx: Context) -> None:
        """Look at the file through ``ctx`` and ask ``ctx.edits`` for this rule's edits."""
        raise NotImplementedError
