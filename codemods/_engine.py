"""The shared pass: walk once, let each selected rule ask for edits, apply them together."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import libcst as cst

from compat.renames import Rename

from ._base import RuleCommand
from ._context import Context
from ._edits import Change
from ._scan import analyze
from ._table import index

__all__ = ["run_rules"]


def run_rules(
    tree: cst.Module,
    rules: Sequence[type[RuleCommand]],
    *,
    module: str = "",
    target: str = "strategies",
    user_classes: Mapping[str, str] | None = None,
    source: str | None = None,
) -> tuple[cst.Module, str | None, list[Change], set[Rename]]:
    """Run ``rules`` (already ordered) over ``tree``.

    Args:
        source: the text ``tree`` was parsed from; given, the new code is spliced into it.

    Returns:
        The new module, its code (``None`` without ``source``), the changes in source order,
        and the table entries that were exercised.
    """
    table = index(target)
    ctx = Context(analyze(tree, module), table, user_classes or {})
    for rule in rules:
        rule(target=target, user_classes=user_classes).run(ctx)
    module_node, code, changes = ctx.edits.finish(source)
    return module_node, code, changes, ctx.edits.used
