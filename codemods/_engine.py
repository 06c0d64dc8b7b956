"""The engine: which rules run and in what order, the facts they need, and one shared pass.

For one file ``run_rules`` walks the parsed tree once (``codemods._scan.analyze``),
indexes the rename table for the target (``codemods._table.index``), builds the
``codemods._context.Context`` every rule reads, computes the sites the selected rules
declare in their ``NEEDS`` (import plan, member sites, call sites), runs the rules in order, and
applies every edit they asked for at once; on the Lightning target it then settles the file's
Lightning namespace (``codemods._lightning.finish_lightning``). ``order_rules`` turns
``--select/--ignore`` into that order. ``libcst.codemod`` alone takes 0.6 s to import, so the
rules are not visitors (``codemods.as_codemod`` adapts a rule to it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import libcst as cst

from compat.renames import Rename

from ._calls import find_call_sites
from ._context import Context, Site
from ._edits import Change
from ._ids import CONFIG_MARKER, TODO_PREFIX, Rule
from ._imports import plan_imports
from ._lightning import finish_lightning
from ._members import find_member_sites
from ._rule import RuleCommand
from ._scan import analyze
from ._suppress import Suppressions
from ._table import index

__all__ = ["order_rules", "run_rules"]


def _context(tree: cst.Module, module: str, target: str, user_classes: Mapping[str, str], needs: set[Site]) -> Context:
    ctx = Context(analyze(tree, module), index(target), user_classes)
    ctx.provide(
        import_plan=plan_imports(ctx) if Site.IMPORTS in needs else None,
        member_sites=find_member_sites(ctx) if Site.MEMBERS in needs else None,
        call_sites=find_call_sites(ctx) if Site.CALLS in needs else None,
    )
    return ctx


def run_rules(
    tree: cst.Module,
    rules: Sequence[type[RuleCommand]],
    *,
    module: str = "",
    target: str = "strategies",
    user_classes: Mapping[str, str] | None = None,
    source: str | None = None,
    lightning_namespace: str | None = None,
    suppressions: Suppressions | None = None,
) -> tuple[cst.Module, str | None, list[Change], set[Rename]]:
    """Run ``rules`` (already ordered) over ``tree`` in one shared pass.

    Args:
        source: the text ``tree`` was parsed from; given, the new code is spliced into it.
        lightning_namespace: for the Lightning target, the package the file's Lightning imports
            end up in (``codemods._lightning.finish_lightning``, run after the rules).
        suppressions: the file's ``# compat: ignore`` comments (see ``Edits.finish``).

    Returns:
        The new module, its code (``None`` without ``source``), the changes in source order,
        and the table entries that were exercised.
    """
    user_classes = user_classes or {}
    ctx = _context(tree, module, target, user_classes, {need for rule in rules for need in rule.NEEDS})
    ctx.todo_comments = source is None or TODO_PREFIX in source
    ctx.config = source is not None and source.startswith(CONFIG_MARKER)
    for rule in rules:
        rule(target=target, user_classes=user_classes).run(ctx)
    module_node, code, changes = ctx.edits.finish(source, suppressions)
    held = any(c.suppressed and not c.todo for c in changes)
    if target == "lightning" and not held:
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
