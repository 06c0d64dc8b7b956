"""The edits CM003-CM005 make at a member site: rename an attribute or a method definition."""

from __future__ import annotations

import libcst as cst

from compat.renames import Rename

from ._context import Context
from ._edits import set_value
from ._ids import Rule
from ._members import MemberSite, defines, message

__all__ = ["rename_attribute", "rename_def"]


def rename_attribute(ctx: Context, site: MemberSite, new: str, rule: Rule, entry: Rename) -> None:
    """``receiver.old`` -> ``receiver.new``."""
    assert isinstance(site.node, cst.Attribute)
    ctx.edits.replace(site.node.attr, set_value(new), rule, message(ctx, entry), site.node, entry)
    ctx.answered.add(id(site.node))


def rename_def(ctx: Context, site: MemberSite, new: str, rule: Rule, entry: Rename) -> bool:
    """``def old(...)`` -> ``def new(...)``; a TODO instead when the class already has ``new``."""
    assert isinstance(site.node, cst.FunctionDef)
    ctx.answered.add(id(site.node))
    if new != site.node.name.value and defines(site.cls, new):
        hint = f"both `{site.node.name.value}` and `{new}` are defined: merge the old override into `{new}`"
        ctx.edits.todo(site.node.name, rule, hint, entry)
        return False
    ctx.edits.replace(
        site.node.name,
        set_value(new),
        rule,
        message(ctx, entry, note=True),
        entry=entry,
    )
    return True
