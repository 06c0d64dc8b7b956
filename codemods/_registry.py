"""The rule classes by id, and how a ``--select``/``--ignore`` choice becomes an ordered list."""

from __future__ import annotations

from collections.abc import Collection

from ._base import RuleCommand
from ._ids import Rule
from .cm001_imports import RewriteImportsCommand
from .cm002_class_references import RenameClassReferencesCommand
from .cm003_overridden_members import RenameOverriddenMembersCommand
from .cm004_signatures import ChangeMemberSignaturesCommand
from .cm005_attributes import RenameAttributesCommand
from .cm006_trainer_arguments import RewriteTrainerArgumentsCommand
from .cm007_manual_todos import MarkManualMigrationsCommand

__all__ = ["RULES", "select_rules"]

#: Rule id -> rule class.
RULES: dict[Rule, type[RuleCommand]] = {
    cls.RULE: cls
    for cls in (
        RewriteImportsCommand,
        RenameClassReferencesCommand,
        RenameOverriddenMembersCommand,
        ChangeMemberSignaturesCommand,
        RenameAttributesCommand,
        RewriteTrainerArgumentsCommand,
        MarkManualMigrationsCommand,
    )
}


def _matching(patterns: Collection[str], what: str) -> set[Rule]:
    chosen: set[Rule] = set()
    for pattern in patterns:
        hits = {rule for rule in RULES if rule.value.startswith(str(getattr(pattern, "value", pattern)))}
        if not hits:
            valid = ", ".join(sorted(r.value for r in RULES))
            raise ValueError(f"unknown rule `{pattern}` in {what}; valid rule ids (or prefixes): {valid}")
        chosen |= hits
    return chosen


def select_rules(
    select: Collection[str] | None = None, ignore: Collection[str] = ()
) -> list[type[RuleCommand]]:
    """The rule classes to run, in order.

    ``select``/``ignore`` take ids or id prefixes (``"CM00"``). Selecting a rule brings the
    rules it ``REQUIRES`` (CM001 and CM002 only make sense together); ignoring a rule drops the
    rules that require it. ``RUNS_AFTER`` orders the rest, ties broken by id.

    Raises:
        ValueError: an id or prefix that names no rule.
    """
    chosen = set(RULES) if select is None else _matching(select, "select")
    while True:
        wider = chosen | {req for rule in chosen for req in RULES[rule].REQUIRES}
        if wider == chosen:
            break
        chosen = wider
    chosen -= _matching(ignore, "ignore")
    while True:
        kept = {rule for rule in chosen if all(req in chosen for req in RULES[rule].REQUIRES)}
        if kept == chosen:
            break
        chosen = kept
    ordered: list[Rule] = []
    pending = sorted(chosen, key=lambda r: r.value)
    while pending:
        for rule in pending:
            if all(dep not in pending or dep is rule for dep in RULES[rule].RUNS_AFTER):
                ordered.append(rule)
                pending.remove(rule)
                break
        else:
            raise RuntimeError(f"RUNS_AFTER cycle among {pending}")
    return [RULES[rule] for rule in ordered]
