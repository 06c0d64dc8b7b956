"""The type of a keyword argument's value, against the types a renamed keyword takes.

A keyword rename (``checkpoint_callback=`` -> ``enable_checkpointing=``) is only right when the
value's type is one the new keyword takes: the table's ``ARGUMENT`` entries say which types the
old and new keywords take (``old_types``/``new_types``) and where a value of another type goes
(``moves``: a ``ModelCheckpoint`` joins ``callbacks=[...]``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import libcst as cst

from compat import _catalog
from compat.renames import Rename, compat_path

from ._context import Context
from ._scopes import Scope

__all__ = ["Fit", "append_to_list", "fit", "value_type"]

#: The packages of the targets' names (``strategies.ModelCheckpoint``, ``lightning.pytorch...``).
_NEW_ROOTS = frozenset(name.partition("-")[0] for name in _catalog.TARGETS.values())


def _class_path(qualname: str) -> str | None:
    """The old catalog path of a class named by its old or its ``compat.`` spelling."""
    root, _, rest = qualname.partition(".")
    candidates = [qualname]
    if root == compat_path(_catalog.OLD_PACKAGE):
        candidates.append(f"{_catalog.OLD_PACKAGE}.{rest}")
    for name in _catalog.OLD:
        catalog = _catalog.load(name)
        for candidate in candidates:
            if (resolved := catalog.resolve(candidate)) is not None:
                return resolved
    return None


def _subclass(path: str, base: str) -> bool:
    return any(
        catalog.has(path) and catalog.has(base) and catalog.is_subclass(path, base)
        for catalog in map(_catalog.load, _catalog.OLD)
    )


def _same_class(qualname: str, wanted: str) -> bool:
    """Whether ``qualname`` is ``wanted`` (an old path) or derives from it, under any name; a
    new class (``strategies.ModelCheckpoint``) counts by its name."""
    path = _class_path(qualname)
    if path is not None:
        return _subclass(path, wanted) or path == _class_path(wanted)
    root = qualname.partition(".")[0]
    return root in _NEW_ROOTS and qualname.rpartition(".")[2] == wanted.rpartition(".")[2]


def _instance_of(ctx: Context, value: cst.BaseExpression, scope: Scope, depth: int = 0) -> list[str]:
    """Qualified names of the classes ``value`` is an instance of (its class and, for a class of
    this file, the bases it derives from), as far as the file shows."""
    if isinstance(value, cst.Call):
        func = value.func
        if isinstance(func, cst.Name):
            bound = ctx.bindings(func, scope)
            if len(bound) == 1 and bound[0].kind == "class":
                return _class_bases(ctx, bound[0].node, depth)  # type: ignore[arg-type]
        qualname = ctx.qualname(func, scope)
        return [qualname] if qualname else []
    if isinstance(value, cst.Name) and depth < 3:
        bound = ctx.bindings(value, scope)
        if len(bound) == 1 and bound[0].kind == "assign" and bound[0].value is not None:
            return _instance_of(ctx, bound[0].value, bound[0].scope, depth + 1)
    return []


def _class_bases(ctx: Context, node: cst.ClassDef, depth: int) -> list[str]:
    info = next((c for c in ctx.analysis.classes if c.node is node), None)
    if info is None or depth > 3:
        return []
    found = []
    for arg in node.bases:
        if isinstance(arg.value, cst.Name):
            bound = ctx.bindings(arg.value, info.scope)
            if len(bound) == 1 and bound[0].kind == "class":
                found += _class_bases(ctx, bound[0].node, depth + 1)  # type: ignore[arg-type]
                continue
        qualname = ctx.qualname(arg.value, info.scope)
        if qualname:
            found.append(qualname)
    return found


def value_type(ctx: Context, value: cst.BaseExpression, scope: Scope) -> str | list[str] | None:
    """``"bool"``, ``"int"``, ``"str"``, ``"None"`` or ``"list"`` for a literal, the qualified
    names of an instance's classes, or ``None`` when the file does not show it."""
    if isinstance(value, cst.Name) and value.value in ("True", "False", "None"):
        return "None" if value.value == "None" else "bool"
    if isinstance(value, cst.Integer):
        return "int"
    if isinstance(value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
        return "str"
    if isinstance(value, (cst.List, cst.Tuple)):
        return "list"
    return _instance_of(ctx, value, scope) or None


@dataclass(frozen=True)
class Fit:
    """What to do with a value for a renamed keyword: ``rename``, ``move`` (to ``keyword``) or
    ``todo`` (with ``hint``)."""

    action: str
    keyword: str = ""
    hint: str = ""


def _names(types: tuple[str, ...]) -> str:
    return " or ".join(f"a `{t.rpartition('.')[2]}`" if "." in t else f"a {t}" for t in types)


def fit(ctx: Context, entry: Rename, new: str, value: cst.BaseExpression, scope: Scope) -> Fit:
    """Whether ``value`` may be renamed to ``new=`` (see the entry's ``old_types``/``new_types``)."""
    if not entry.new_types:
        return Fit("rename")
    kind = value_type(ctx, value, scope)
    classes = kind if isinstance(kind, list) else []
    plain = kind if isinstance(kind, str) else None
    if plain in entry.new_types or any(_same_class(c, t) for c in classes for t in entry.new_types if "." in t):
        return Fit("rename")
    for cls, keyword in entry.moves:
        if any(_same_class(c, cls) for c in classes):
            return Fit("move", keyword)
    if kind is None and set(entry.old_types) <= set(entry.new_types):
        return Fit("rename")
    old = entry.member
    moved = "".join(f"; {_names((c,))} goes in `{k}=[...]`" for c, k in entry.moves)
    hint = (
        f"`{old}=` took {_names(entry.old_types)}; `{new}=` takes only {_names(entry.new_types)}{moved}: "
        f"pass this value where its type belongs"
    )
    return Fit("todo", hint=hint)


def append_to_list(old: str, keyword: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """An edit of a call: drop ``old=value`` and put ``value`` in ``keyword=[...]`` (appended to
    the list literal there, ``[*name, value]`` for a name there, or as a new ``keyword=[value]`` in
    the old argument's place)."""

    def fn(call: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(call, cst.Call)
        args = list(call.args)
        index = next(i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == old)
        moved = args[index]
        target = next((i for i, a in enumerate(args) if a.keyword is not None and a.keyword.value == keyword), None)
        if target is None:
            args[index] = moved.with_changes(keyword=cst.Name(keyword), value=cst.List([cst.Element(moved.value)]))
            return call.with_changes(args=args)
        value = args[target].value
        if isinstance(value, cst.Name):  # a name bound to a list: a new list of its items and the value
            listed = cst.List(
                [
                    cst.StarredElement(value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))),
                    cst.Element(moved.value),
                ]
            )
            args[target] = args[target].with_changes(value=listed)
            if index > 0:
                args[index - 1] = args[index - 1].with_changes(comma=moved.comma)
            del args[index]
            return call.with_changes(args=args)
        assert isinstance(value, cst.List)
        elements = list(value.elements)
        if elements:
            last = elements[-1]
            comma = last.comma
            between = elements[-2].comma if len(elements) > 1 else None
            if isinstance(between, cst.Comma):
                elements[-1] = last.with_changes(comma=between)
            else:
                elements[-1] = last.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            elements.append(cst.Element(moved.value, comma=comma))
        else:
            elements.append(cst.Element(moved.value))
        args[target] = args[target].with_changes(value=value.with_changes(elements=elements))
        if index > 0:  # the comma after the dropped argument holds the next line's comments (a TODO)
            args[index - 1] = args[index - 1].with_changes(comma=moved.comma)
        del args[index]
        return call.with_changes(args=args)

    return fn
