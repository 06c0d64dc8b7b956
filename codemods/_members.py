"""Where old member names (methods, properties, hooks, attributes) are used, and on what.

Shared by CM003-CM005 and CM007: one list of sites per file, each with the table entries that
apply to its receiver (see ``Resolver.receiver_of``). A receiver is *known* when it is ``self``
in a user subclass, ``super()``, an old class or user subclass itself, a name bound to an
instance of one, a name annotated with one, or a name spelled like an old class (``trainer``,
``self.cluster_environment``); entries then come from that class and its bases. A member that
only a subclass has, on a name spelled like the base (``plugin.init_ddp_connection``), and any
old member name on a receiver of unknown class in a file that uses the old API, make an
*unknown* site: a TODO ("if this is a ..."), never a rename.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import libcst as cst

from compat.renames import Rename

from ._facts import OLD_ONLY_MEMBERS
from ._resolve import OTHER, Resolver
from ._scopes import ClassInfo, FunctionInfo, Scope

__all__ = [
    "MemberSite", "choose", "defines", "distinctive", "find_member_sites", "message", "pick", "unknown_hint",
]  # fmt: skip

_R = TypeVar("_R", bound=Resolver)


@dataclass(eq=False)
class MemberSite:
    """One use or definition of an old member name.

    Attributes:
        node: the ``FunctionDef`` (``kind == "def"``) or the ``Attribute``.
        kind: ``def``, ``super`` (``super().name``), ``use`` (load) or ``store``.
        entries: the entries that apply (all entries of the name when ``known`` is false).
        known: whether the receiver's class is known.
        call: the call whose function is ``node``, if any.
        function: for ``def``: the def; for others: the innermost method holding the site.
    """

    node: cst.FunctionDef | cst.Attribute
    kind: str
    scope: Scope
    entries: list[Rename]
    known: bool
    call: cst.Call | None = None
    function: FunctionInfo | None = None
    cls: ClassInfo | None = None


def _enclosing_method(ctx: Resolver, scope: Scope, functions: dict[int, FunctionInfo]) -> FunctionInfo | None:
    current: Scope | None = scope
    while current is not None:
        info = functions.get(id(current.node))
        if info is not None and info.cls is not None:
            return info
        current = current.parent
    return None


def find_member_sites(ctx: Resolver) -> list[MemberSite]:
    """Every site of an old member name in the file (the engine computes it once per file)."""
    table = ctx.table
    sites: list[MemberSite] = []
    functions = {id(f.body.node): f for f in ctx.analysis.functions}
    # Member names that classes of this file define themselves are theirs, not the old API's.
    own = {name for c in ctx.analysis.classes if ctx.user_old(c) is None for name in c.body.bindings}
    for info in ctx.analysis.functions:
        old = ctx.user_old(info.cls)
        name = info.node.name.value
        if old is not None and name in table.members:
            entries = table.member_entries(name, old)
            if entries:
                sites.append(MemberSite(info.node, "def", info.scope, entries, True, function=info, cls=info.cls))
    for attribute, scope, store in ctx.analysis.attributes:
        name = attribute.attr.value
        if name not in table.members:
            continue
        parent = ctx.analysis.parent(attribute)
        call = parent if isinstance(parent, cst.Call) and parent.func is attribute else None
        method = _enclosing_method(ctx, scope, functions)
        value = attribute.value
        if isinstance(value, cst.Call) and (cls := ctx.super_class(value, scope)) is not None:
            old = ctx.user_old(cls)
            if old is not None and (entries := table.member_entries(name, old)):
                sites.append(MemberSite(attribute, "super", scope, entries, True, call, method, cls))
            continue
        origin, sure = ctx.receiver_of(value, scope)
        kind = "store" if store else "use"
        if isinstance(origin, str):
            entries = table.member_entries(name, origin)
            if entries:
                sites.append(MemberSite(attribute, kind, scope, entries, sure != "config", call, method))
                continue
            if sure != "exact" and (entries := table.member_entries(name, origin, open=True)):
                # A member of a subclass: declared (annotation) counts as known; a name that
                # only looks like the base class (`plugin`) may hold it, so it gets a TODO.
                known = sure == "open"
                sites.append(MemberSite(attribute, kind, scope, entries, known, call, method))
                continue
            if sure != "named" or name not in OLD_ONLY_MEMBERS:
                continue
            # Only the spelling said which class (`acc_con = trainer.accelerator_connector`):
            # that guess must not hide a member only the old API had, so it is an unknown receiver.
            origin = None
        if origin is not OTHER and (ctx.uses_old_api or (name in OLD_ONLY_MEMBERS and name not in own)):
            sites.append(MemberSite(attribute, kind, scope, list(table.members[name]), False, call, method))
    return sites


def pick(ctx: Resolver, entries: list[Rename]) -> Rename | None:
    """The one entry to apply when all candidates agree on the new member, else ``None``."""
    first = entries[0]
    key = (ctx.table.new(first), first.params, first.to_property, ctx.table.auto(first))
    same = all((ctx.table.new(e), e.params, e.to_property, ctx.table.auto(e)) == key for e in entries[1:])
    return first if same else None


def choose(ctx: _R, site: MemberSite, owns: Callable[[_R, Rename], bool]) -> Rename | None:
    """The entry a rule applies at ``site``, if any.

    With a known receiver every applicable entry must agree (else it is ambiguous); with an
    unknown one, only the entries the rule ``owns`` are considered (the TODO says "if this is
    a ...").
    """
    entries = site.entries if site.known else [e for e in site.entries if owns(ctx, e)]
    entry = pick(ctx, entries) if entries else None
    return entry if entry is not None and owns(ctx, entry) else None


def unknown_hint(ctx: Resolver, entry: Rename) -> str:
    """The TODO text for an old member name used on a receiver of unknown class."""
    owner = entry.old.rpartition(".")[2]
    new = ctx.table.new(entry)
    name = entry.member
    if ctx.table.auto(entry) and new:
        change = f"the property `.{new}`" if entry.to_property else f"`.{new}`"
        return f"if this is a {owner}, `.{name}` is now {change}"
    return f"if this is a {owner}: {entry.hint or f'`.{name}` was removed'}"


def message(ctx: Resolver, entry: Rename, note: bool = False) -> str:
    """``DDPPlugin.init_ddp_connection -> setup_distributed``, with the table's note if asked."""
    text = f"{entry.old_name} -> {ctx.table.new(entry)}"
    return f"{text} ({entry.hint})" if note and entry.hint else text


def defines(info: ClassInfo | None, name: str) -> bool:
    """Whether the class body defines ``name`` (a def or an assignment)."""
    return info is not None and name in info.body.bindings


def distinctive(name: str) -> bool:
    """Member names worth a TODO on a receiver of unknown class (``master_address``, not ``setup``)."""
    return "_" in name.strip("_")
