"""Calls of old classes (``Trainer(...)``, ``DDPPlugin(...)``, ``super().__init__(...)``), their
positional arguments bound by the old signature, and the argument entries that apply to each;
shared by CM006-CM008."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from compat.renames import Rename

from ._facts import OLD_TRAINER, old_positional, removed_classmethod
from ._keyword_dicts import keyword_dict_parts, spreads_into_trainer
from ._resolve import Resolver
from ._scopes import Scope

__all__ = ["ArgInfo", "CallSite", "find_call_sites", "literal"]


@dataclass(eq=False)
class ArgInfo:
    """An argument of a call to an old class that the table has entries for.

    Attributes:
        index: position in the call's arguments.
        arg: the argument.
        name: its keyword, or the old parameter a positional argument binds to.
        literal: its value when it is a plain string literal, else ``None``.
        values: ``ARGUMENT_VALUE`` entries matching the keyword and the literal value.
        any_values: whether the keyword has ``ARGUMENT_VALUE`` entries at all.
        arguments: ``ARGUMENT`` entries for the keyword.
    """

    index: int
    arg: cst.Arg
    name: str
    literal: str | None
    values: list[Rename]
    any_values: list[Rename]
    arguments: list[Rename]


@dataclass(eq=False)
class CallSite:
    """A call of an old class (or of a user subclass) with arguments.

    Attributes:
        origin: the table path of the old class.
        direct: whether the old class's own constructor runs (``DDPPlugin(...)``, or
            ``super().__init__(...)`` in a class whose only base is the old class), so that its
            signature applies.
        args: the arguments the table has entries for.
        names: index -> keyword of every keyword argument and of every positional argument bound
            by the old signature.
        bound: index -> old parameter of the positional arguments bound by the old signature.
        unbound: positional arguments that the old signature does not bind the same way in every
            release (or ``*args``); when there are any, none is bound.
        shown: ids of its ``**`` arguments whose keys are all seen (dicts of Trainer keywords
            built in this file, read as parts of this call: ``_keyword_dicts``).
    """

    call: cst.Call
    scope: Scope
    origin: str
    direct: bool
    args: list[ArgInfo]
    names: dict[int, str] = field(default_factory=dict)
    bound: dict[int, str] = field(default_factory=dict)
    unbound: tuple[int, ...] = ()
    shown: frozenset[int] = frozenset()


def literal(node: cst.BaseExpression) -> str | None:
    """The value of a plain (not formatted, not bytes) string literal."""
    if isinstance(node, (cst.SimpleString, cst.ConcatenatedString)):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _may_be_class(func: cst.BaseExpression) -> bool:
    """A cheap filter: class names are CapWords; ``super().__init__`` is the other form."""
    name = func.attr.value if isinstance(func, cst.Attribute) else getattr(func, "value", "")
    if isinstance(func, cst.Attribute) and not name[:1].isupper():
        owner = func.value  # `Trainer.from_argparse_args(...)`
        owner_name = owner.attr.value if isinstance(owner, cst.Attribute) else getattr(owner, "value", "")
        if isinstance(owner_name, str) and owner_name[:1].isupper():
            return True
    return isinstance(name, str) and (name[:1].isupper() or name == "__init__")


def _origin(ctx: Resolver, call: cst.Call, scope: Scope) -> tuple[str | None, bool]:
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value == "__init__" and isinstance(func.value, cst.Call):
        cls = ctx.super_class(func.value, scope)
        old = ctx.user_old(cls)
        bases = cls.node.bases if cls is not None else ()
        direct = len(bases) == 1 and ctx.table.canonical(ctx.qualname(bases[0].value, cls.scope) or "") == old  # type: ignore[union-attr]
        return old, direct
    origin = ctx.class_origin(func, scope)
    if isinstance(func, cst.Attribute) and not isinstance(origin, str):
        # `Trainer.from_argparse_args(args, gpus=2)`: its keywords are the class's keywords
        owner = ctx.class_origin(func.value, scope)
        if isinstance(owner, str) and removed_classmethod(owner, func.attr.value):
            return owner, False
    if not isinstance(origin, str):
        return None, False
    return origin, ctx.table.canonical(ctx.qualname(func, scope) or "") == origin


def _bind(call: cst.Call, origin: str) -> tuple[dict[int, str], tuple[int, ...]]:
    """Positional arguments -> the old parameters they bind to, or the ones that cannot be bound."""
    positional = [i for i, a in enumerate(call.args) if a.keyword is None and not a.star]
    starred = [i for i, a in enumerate(call.args) if a.star == "*"]
    slots = old_positional(origin)
    if slots is None or not (positional or starred):
        return {}, ()
    bound: dict[int, str] = {}
    for slot, index in enumerate(positional):
        names = (slots[slot] if slot < len(slots) else frozenset()) - {"*"}
        value = call.args[index].value
        spelled = value.attr.value if isinstance(value, cst.Attribute) else getattr(value, "value", None)
        if len(names) == 1:
            bound[index] = next(iter(names))
        elif spelled in names:
            bound[index] = spelled  # the user's own name says which release's order they wrote
        else:
            return {}, tuple(positional + starred)
    if starred:
        return {}, tuple(positional + starred)
    return bound, ()


def find_call_sites(ctx: Resolver) -> list[CallSite]:
    """Calls of old classes (and user subclasses) with arguments (the engine computes it once per file)."""
    table = ctx.table
    sites: list[CallSite] = []
    by_keyword: dict[str, list[Rename]] = {}
    for (kw, _), entries in table.values.items():
        by_keyword.setdefault(kw, []).extend(entries)
    spreading: list[tuple[cst.Call, Scope]] = []
    for call, scope in ctx.analysis.calls:
        if not call.args or not _may_be_class(call.func):
            continue
        origin, direct = _origin(ctx, call, scope)
        if origin is None:
            continue
        bound, unbound = _bind(call, origin) if direct else ({}, ())
        sites.append(_site(ctx, call, scope, origin, direct, bound, unbound, by_keyword))
        if spreads_into_trainer(ctx, call, scope, origin, direct):
            spreading.append((call, scope))
    if spreading:  # `kwargs = dict(gpus=2)` ... `Trainer(**kwargs)`: its parts are the call's (_keyword_dicts)
        known = set(table.arguments) | {kw for kw, _ in table.values}
        parts, shown = keyword_dict_parts(ctx, spreading, known)
        for call, scope in parts:
            sites.append(_site(ctx, call, scope, OLD_TRAINER, True, {}, (), by_keyword))
        for site in sites:
            site.shown = frozenset(id(a) for a in site.call.args if id(a) in shown)
    return sites


def _site(
    ctx: Resolver,
    call: cst.Call,
    scope: Scope,
    origin: str,
    direct: bool,
    bound: dict[int, str],
    unbound: tuple[int, ...],
    by_keyword: dict[str, list[Rename]],
) -> CallSite:
    table = ctx.table
    names = {i: a.keyword.value for i, a in enumerate(call.args) if a.keyword is not None}
    names.update(bound)
    infos = []
    for index, kw in sorted(names.items()):
        arg = call.args[index]
        value = literal(arg.value)
        related = [e for e in table.arguments.get(kw, ()) if table.related(e.old, origin)]
        any_values = [e for e in by_keyword.get(kw, ()) if table.related(e.old, origin)]
        values = [e for e in any_values if e.value == value] if value is not None else []
        if related or any_values:
            infos.append(ArgInfo(index, arg, kw, value, values, any_values, related))
    return CallSite(call, scope, origin, direct, infos, names, bound, unbound)
