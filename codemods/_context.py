"""What a rule sees of one file: the resolution, the sites it declared it needs, and the edits.

Where a rule's facts come from:

- ``ctx.analysis``: the single walk of the file (``codemods._scan.analyze``): scopes,
  bindings, imports, classes, functions, calls, attributes, strings;
- ``ctx.table``: the rename table (``compat.renames``) indexed for the target
  (``codemods._table.index``), with the catalog's facts in ``codemods._facts``;
- name, class and receiver resolution (``codemods._resolve.Resolver``, which ``Context``
  extends);
- the sites a rule lists in its ``NEEDS``, computed once per file by the engine
  (``codemods._engine.run_rules``) before any rule runs: ``ctx.import_plan``
  (``codemods._imports.plan_imports``), ``ctx.member_sites``
  (``codemods._members.find_member_sites``) and ``ctx.call_sites``
  (``codemods._calls.find_call_sites``);
- ``ctx.edits``: where a rule asks for its edits and TODOs (applied together at the end), and
  ``ctx.answered``: the sites earlier rules already handled.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import TypeVar

from ._calls import CallSite
from ._edits import Edits
from ._imports import ImportPlan
from ._members import MemberSite
from ._resolve import OTHER, Resolver
from ._scopes import Analysis
from ._table import Index

__all__ = ["OTHER", "Context", "Site"]

_T = TypeVar("_T")


class Site(enum.Enum):
    """The per-file facts a rule can ask the engine for (a rule's ``NEEDS``)."""

    #: the decisions for every old import (``ctx.import_plan``), shared by CM001, CM002, CM009.
    IMPORTS = "import_plan"
    #: every use or definition of an old member name (``ctx.member_sites``).
    MEMBERS = "member_sites"
    #: every call of an old class with arguments (``ctx.call_sites``).
    CALLS = "call_sites"


class Context(Resolver):
    """One file as every rule sees it: ``Resolver`` plus the sites and the edits.

    Args:
        analysis: the walk of the file.
        table: the rename table indexed for the target.
        user_classes: user class qualname -> the old class it derives from (other files).
    """

    def __init__(self, analysis: Analysis, table: Index, user_classes: Mapping[str, str]) -> None:
        super().__init__(analysis, table, user_classes)
        self.edits = Edits(analysis)
        #: ids of the member sites and call arguments that a rule rewrote or marked, so that
        #: CM007 (which runs after every other rule) does not mark them again.
        self.answered: set[int] = set()
        #: whether the file's text may hold a ``# TODO(compat.migrate)`` comment (set by the
        #: engine from the source; ``True`` when it cannot tell): a rule that looks for its own
        #: TODOs of an earlier run skips generating code for that when there is none.
        self.todo_comments = True
        #: whether the file is a config file read as Python (``CONFIG_MARKER``): only values a
        #: config can hold may be written.
        self.config = False
        self._import_plan: ImportPlan | None = None
        self._member_sites: list[MemberSite] | None = None
        self._call_sites: list[CallSite] | None = None

    def provide(
        self,
        import_plan: ImportPlan | None = None,
        member_sites: list[MemberSite] | None = None,
        call_sites: list[CallSite] | None = None,
    ) -> None:
        """Hand over the sites the engine computed (only the engine calls this)."""
        self._import_plan = import_plan
        self._member_sites = member_sites
        self._call_sites = call_sites

    @property
    def import_plan(self) -> ImportPlan:
        """The import decisions of the file (the rule must list ``Site.IMPORTS`` in ``NEEDS``)."""
        return _provided(self._import_plan, Site.IMPORTS)

    @property
    def member_sites(self) -> list[MemberSite]:
        """Every site of an old member name (the rule must list ``Site.MEMBERS`` in ``NEEDS``)."""
        return _provided(self._member_sites, Site.MEMBERS)

    @property
    def call_sites(self) -> list[CallSite]:
        """Every call of an old class with arguments (the rule must list ``Site.CALLS`` in ``NEEDS``)."""
        return _provided(self._call_sites, Site.CALLS)


def _provided(value: _T | None, site: Site) -> _T:
    if value is None:
        raise RuntimeError(f"`ctx.{site.value}` was not computed: add `Site.{site.name}` to the rule's NEEDS")
    return value
