"""Calls of old classes (``Trainer(...)``, ``DDPPlugin(...)``, ``super().__init__(...)``) and
the argument entries that apply to each keyword; shared by CM006 and CM007."""

from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from compat.renames import Rename

from ._context import Context
from ._scopes import Scope

__all__ = ["ArgInfo", "CallSite", "call_sites", "literal"]


@dataclass(eq=False)
class ArgInfo:
    """A keyword argument of a call to an old class, with the entries for it.

    Attributes:
        index: position in the call's arguments.
        arg: the argument.
        literal: its value when it is a plain string literal, else ``None``.
        values: ``ARGUMENT_VALUE`` entries matching the keyword and the literal value.
        any_values: whether the keyword has ``ARGUMENT_VALUE`` entries at all.
        arguments: ``ARGUMENT`` entries for the keyword.
    """

    index: int
    arg: cst.Arg
    literal: str | None
    values: list[Rename]
    any_values: list[Rename]
    arguments: list[Rename]


@dataclass(eq=False)
class CallSite:
    """A call of an old class (or a user subclass) with at least one old keyword."""

    call: cst.Call
    scope: Scope
    origin: str
    args: list[ArgInfo]


def literal(node: cst.BaseExpression) -> str | None:
    """The value of a plain (not formatted, not bytes) string literal."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _origin(ctx: Context, call: cst.Call, scope: Scope) -> str | None:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call):
        return ctx.user_old(ctx.super_class(func.value, scope))
    origin = ctx.class_origin(func, scope)
    return origin if isinstance(origin, str) else None


def call_sites(ctx: Context) -> list[CallSite]:
    """Calls of old classes that pass old keyword arguments, computed once per file."""
    if ctx.call_sites is not None:
        return ctx.call_sites
    table = ctx.table
    sites: list[CallSite] = []
    keywords = {kw for kw, _ in table.values} | set(table.arguments)
    for call, scope in ctx.analysis.calls:
        if not any(a.keyword is not None and a.keyword.value in keywords for a in call.args):
            continue
        origin = _origin(ctx, call, scope)
        if origin is None:
            continue
        infos = []
        for index, arg in enumerate(call.args):
            if arg.keyword is None:
                continue
            kw = arg.keyword.value
            value = literal(arg.value)
            related = [e for e in table.arguments.get(kw, ()) if table.related(e.old, origin)]
            any_values = [
                e
                for (k, _), es in table.values.items()
                if k == kw
                for e in es
                if table.related(e.old, origin)
            ]
            values = [e for e in any_values if e.value == value] if value is not None else []
            if related or any_values:
                infos.append(ArgInfo(index, arg, value, values, any_values, related))
        if infos:
            sites.append(CallSite(call, scope, origin, infos))
    ctx.call_sites = sites
    return sites
