"""How a rule runs: its id, the TODO it leaves, its base class, the shared pass, and the order.

The engine parses a file once, walks it once (:mod:`codemods._scan`) and hands one
:class:`~codemods._context.Context` to every selected rule's :meth:`RuleCommand.run`, in the
order their ``RUNS_AFTER`` declare; rules only ask for edits, applied together at the end.
Rules are not ``libcst`` visitors: a visitor pass per rule costs about a parse each, and
``libcst.codemod`` alone takes 0.6 s to import (``codemods.as_codemod`` adapts a rule to it).
This module knows no rule: the list of rules is ``codemods.RULES`` (``_api.py``).
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Collection, Mapping, Sequence
from typing import ClassVar

import libcst as cst

from compat.renames import TARGETS, Rename

from ._context import Context
from ._edits import Change
from ._layout import TODO_PREFIX
from ._scan import analyze
from ._table import index

__all__ = ["TARGETS", "TODO_PREFIX", "Rule", "RuleCommand", "order_rules", "run_rules"]


class Rule(enum.StrEnum):
    """The stable rule ids: ``--select/--ignore``, reports, TODO comments and fixture folders.

    A rule's summary is the first line of its class docstring (``RULES[rule].DESCRIPTION``).
    """

    CM001 = "CM001"
    CM002 = "CM002"
    CM003 = "CM003"
    CM004 = "CM004"
    CM005 = "CM005"
    CM006 = "CM006"
    CM007 = "CM007"
    CM008 = "CM008"
    CM009 = "CM009"
    CM010 = "CM010"
    CM011 = "CM011"
    CM012 = "CM012"
    CM013 = "CM013"

    def todo(self, hint: str) -> str:
        """The full comment for one site: the prefix, this id, then the hint on one line."""
        return f"{TODO_PREFIX}{self} {' '.join(hint.split())}".rstrip()


class RuleCommand:
    """One migration rule: its docstring (summary line, then Before::/After::) is its documentation.

    Args:
        target: one of :data:`TARGETS`.
        user_classes: user class qualname -> old class, from :func:`codemods.resolve_user_classes`.
    """

    #: The rule id.
    RULE: ClassVar[Rule]
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


def run_rules(
    tree: cst.Module,
    rules: Sequence[type[RuleCommand]],
    *,
    module: str = "",
    target: str = "strategies",
    user_classes: Mapping[str, str] | None = None,
    source: str | None = None,
    lightning_namespace: str | None = None,
) -> tuple[cst.Module, str | None, list[Change], set[Rename]]:
    """Run ``rules`` (already ordered) over ``tree`` in one shared pass.

    Args:
        source: the text ``tree`` was parsed from; given, the new code is spliced into it.
        lightning_namespace: for the Lightning target, the package the file's Lightning imports
            end up in (:func:`codemods._lightning.finish_lightning`, run after the rules).

    Returns:
        The new module, its code (``None`` without ``source``), the changes in source order,
        and the table entries that were exercised.
    """
    ctx = Context(analyze(tree, module), index(target), user_classes or {})
    for rule in rules:
        rule(target=target, user_classes=user_classes).run(ctx)
    module_node, code, changes = ctx.edits.finish(source)
    if target == "lightning":
        from ._lightning import finish_lightning  # it needs Rule from here

        module_node, code, more = finish_lightning(
            module_node, code, lightning_namespace, {rule.RULE for rule in rules}, source or tree.code
        )
        changes = [*changes, *more]
    return module_node, code, changes, ctx.edits.used


def _matching(rules: Collection[Rule], patterns: Collection[str], what: str) -> set[Rule]:
    chosen: set[Rule] = set()
    for pattern in patterns:
        hits = {rule for rule in rules if rule.startswith(pattern)}
        if not hits:
            valid = ", ".join(sorted(rules))
            raise ValueError(f"unknown rule `{pattern}` in {what}; valid rule ids (or prefixes): {valid}")
        chosen |= hits
    return chosen


def _closure(chosen: set[Rule], rules: Mapping[Rule, type[RuleCommand]]) -> set[Rule]:
    while True:
        wider = chosen | {req for rule in chosen for req in rules[rule].REQUIRES}
        if wider == chosen:
            return chosen
        chosen = wider


def order_rules(
    rules: Mapping[Rule, type[RuleCommand]],
    select: Collection[str] | None = None,
    ignore: Collection[str] = (),
) -> list[type[RuleCommand]]:
    """The rule classes to run, in order.

    ``select``/``ignore`` take ids or id prefixes (``"CM00"``). Selecting a rule brings the
    rules it ``REQUIRES`` (CM001 and CM002 only make sense together); ignoring a rule drops the
    rules that require it. ``RUNS_AFTER`` orders the rest, ties broken by id.

    Raises:
        ValueError: an id or prefix that names no rule.
    """
    chosen = set(rules) if select is None else _closure(_matching(rules, select, "select"), rules)
    chosen -= _matching(rules, ignore, "ignore")
    while True:
        kept = {rule for rule in chosen if all(req in chosen for req in rules[rule].REQUIRES)}
        if kept == chosen:
            break
        chosen = kept
    ordered: list[Rule] = []
    pending = sorted(chosen)
    while pending:
        for rule in pending:
            if all(dep not in pending or dep is rule for dep in rules[rule].RUNS_AFTER):
                ordered.append(rule)
                pending.remove(rule)
                break
        else:
            raise RuntimeError(f"RUNS_AFTER cycle among {pending}")
    return [rules[rule] for rule in ordered]
