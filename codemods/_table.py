"""The rename table (``compat.renames``) indexed for one target, plus the pre-scan pattern."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from compat import renames
from compat.renames import TARGETS, Kind, Rename

from ._facts import OLD_ONLY_MEMBERS

__all__ = ["Index", "NewName", "index", "snake", "split_qualname"]

_OBJECTS = (Kind.CLASS, Kind.FUNCTION)
_MEMBERS = (Kind.METHOD, Kind.PROPERTY, Kind.HOOK, Kind.ATTRIBUTE)


@dataclass(frozen=True)
class NewName:
    """A new object split into the module to import from and the name to import."""

    module: str
    name: str


def split_qualname(qualname: str) -> NewName:
    """``strategies.DDPStrategy`` -> ``NewName("strategies", "DDPStrategy")``."""
    module, _, name = qualname.rpartition(".")
    return NewName(module, name)


def snake(name: str) -> str:
    """``TrainingTypePlugin`` -> ``training_type_plugin``, ``DDPPlugin`` -> ``ddp_plugin``."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()


def _spellings(entry: Rename) -> tuple[str, ...]:
    paths = (entry.old, *entry.aliases)
    return (*paths, *(renames.compat_path(p) for p in paths))


class Index:
    """Every old name of the table, looked up the ways the rules need, for one target.

    Args:
        entries: the table rows (``compat.renames.RENAMES``).
        target: ``"strategies"`` or ``"lightning"``; picks the entry field holding new names.
    """

    def __init__(self, entries: Iterable[Rename], target: str) -> None:
        if target not in TARGETS:
            raise ValueError(f"unknown target `{target}`; expected one of {', '.join(TARGETS)}")
        self.target = target
        self.entries = tuple(entries)
        old_roots = sorted({e.old.partition(".")[0] for e in self.entries})
        self._compat_roots = {renames.compat_path(root): root for root in old_roots}
        #: the top-level packages of old names (``pytorch_lightning`` and ``compat``).
        self.roots: tuple[str, ...] = (*old_roots, *self._compat_roots)
        self.objects: dict[str, Rename] = {}
        self.modules: dict[str, Rename] = {}
        self.classes: dict[str, str] = {}
        self.members: dict[str, list[Rename]] = {}
        self.arguments: dict[str, list[Rename]] = {}
        self.values: dict[tuple[str, str], list[Rename]] = {}
        self._bases: dict[str, tuple[str, ...]] = {}
        for entry in self.entries:
            self._add(entry)
        self._by_short: dict[str, list[str]] = {}
        for canon in set(self.classes.values()):
            self._by_short.setdefault(canon.rpartition(".")[2], []).append(canon)
        self.snakes = {snake(short): canons[0] for short, canons in self._by_short.items() if len(canons) == 1}
        #: new qualified class name -> an old class it replaces (for code already migrated).
        self.replacements: dict[str, str] = {}
        for entry in self.entries:
            new = self.new(entry)
            if entry.kind is Kind.CLASS and new:
                self.replacements.setdefault(new, entry.old)

    def _to_old(self, path: str) -> str:
        """The table's spelling (``pytorch_lightning.``) of a ``compat.`` path."""
        root, dot, rest = path.partition(".")
        old = self._compat_roots.get(root)
        return old + dot + rest if old else path

    def _add(self, entry: Rename) -> None:
        if entry.kind in _OBJECTS or entry.kind is Kind.MODULE:
            target = self.objects if entry.kind in _OBJECTS else self.modules
            for path in _spellings(entry):
                target[path] = entry
            if entry.kind is Kind.CLASS:
                for path in _spellings(entry):
                    self.classes[path] = entry.old
                if entry.bases:
                    self._bases[entry.old] = tuple(self._to_old(b) for b in entry.bases)
            return
        owner = self._to_old(entry.old)
        self.classes.setdefault(owner, owner)
        self.classes.setdefault(renames.compat_path(owner), owner)
        if entry.kind in _MEMBERS and entry.member:
            self.members.setdefault(entry.member, []).append(entry)
        elif entry.kind is Kind.ARGUMENT and entry.member:
            self.arguments.setdefault(entry.member, []).append(entry)
        elif entry.kind is Kind.ARGUMENT_VALUE and entry.member and entry.value is not None:
            self.values.setdefault((entry.member, entry.value), []).append(entry)

    # -- lookups -----------------------------------------------------------------------------

    def new(self, entry: Rename) -> str | None:
        """The entry's new name for this target (``None``: nothing replaces it)."""
        return entry.target(self.target)

    def auto(self, entry: Rename) -> bool:
        """Whether the entry is rewritten without a person for this target."""
        return entry.automatic_for(self.target)

    def object(self, qualname: str) -> Rename | None:
        """The class/function entry an old qualified name refers to (deep paths included)."""
        entry = self.objects.get(qualname)
        if entry is None and (canon := self._deep(qualname)) is not None:
            entry = self.objects.get(canon)
        return entry

    def module(self, qualname: str) -> Rename | None:
        """The module entry for an old module path."""
        return self.modules.get(qualname)

    def canonical(self, qualname: str) -> str | None:
        """The table's path of an old class (a class entry or the owner of member entries)."""
        return self.classes.get(qualname) or self._deep(qualname)

    def _deep(self, qualname: str) -> str | None:
        # `pytorch_lightning.plugins.training_type.ddp.DDPPlugin` is the entry
        # `pytorch_lightning.plugins.DDPPlugin` seen through the module that defines it.
        module, _, short = self._to_old(qualname).rpartition(".")
        best = None
        for canon in self._by_short.get(short, ()):
            prefix = canon.rpartition(".")[0]
            if module.startswith(prefix + ".") and (best is None or len(canon) > len(best)):
                best = canon
        return best

    def ancestors(self, canon: str) -> set[str]:
        """The old class and all its old bases (the table's ``bases`` field, transitively)."""
        seen, todo = set(), [canon]
        while todo:
            cls = todo.pop()
            if cls not in seen:
                seen.add(cls)
                todo.extend(self._bases.get(cls, ()))
        return seen

    def related(self, owner: str, canon: str) -> bool:
        """Whether members of ``owner`` apply to instances of the old class ``canon``."""
        owner = self.canonical(owner) or owner
        return owner in self.ancestors(canon)

    def class_entries(self) -> list[Rename]:
        """The ``CLASS`` entries."""
        return [e for e in self.entries if e.kind is Kind.CLASS]

    def descendants(self, canon: str) -> set[str]:
        """The old classes that are ``canon`` or derive from it (the table's ``bases``)."""
        return {e.old for e in self.entries if e.kind is Kind.CLASS and canon in self.ancestors(e.old)}

    def family(self, short: str) -> set[str]:
        """Old classes whose new name for this target is ``short`` (``"Strategy"``)."""
        return {e.old for e in self.entries if e.kind is Kind.CLASS and (self.new(e) or "").rpartition(".")[2] == short}

    def member_entries(self, member: str, canon: str, open: bool = False) -> list[Rename]:
        """Member entries named ``member`` that apply to the old class ``canon``.

        With ``open``, the object may also be of a subclass, so members of subclasses count too.
        """
        return [
            e
            for e in self.members.get(member, ())
            if self.related(e.old, canon) or (open and canon in self.ancestors(self.canonical(e.old) or e.old))
        ]

    # -- pre-scan ----------------------------------------------------------------------------

    def pattern_source(self) -> str:
        """A regex that matches every file a rule could change (see ``codemods.prescan``)."""
        return "|".join(source for _, source in self.pattern_groups())

    def pattern_groups(self) -> list[tuple[frozenset[str], str]]:
        """``pattern_source``'s alternatives, each with the literal names it needs.

        A text matches an alternative's regex only if it contains one of its names, so a
        substring search for (parts of) the names can rule a file out before any regex runs.
        """
        words = {c.rpartition(".")[2] for c in self.classes}
        for path in (*self.objects, *self.modules):
            words.add(path.rpartition(".")[2])
        members = "|".join(sorted(map(re.escape, self.members)))
        receivers = "|".join(sorted(self.snakes))
        groups = [
            (
                frozenset(words),
                r"\b(?:{})\b".format("|".join(sorted(map(re.escape, words), key=len, reverse=True))),
            ),
            (frozenset(self.roots), r"\b(?:from|import)\s+(?:{})\b".format("|".join(map(re.escape, self.roots)))),
        ]
        if members and receivers:
            groups.append((frozenset(self.snakes), rf"\b(?:{receivers})\s*\.\s*(?:{members})\b"))
        only = sorted(OLD_ONLY_MEMBERS & set(self.members))
        if only:
            groups.append((frozenset(only), rf"\.\s*(?:{'|'.join(only)})\b"))
        return groups


_CACHE: dict[str, tuple[tuple[Rename, ...], Index]] = {}


def index(target: str) -> Index:
    """The index of the current table for ``target`` (rebuilt when the table object changes)."""
    cached = _CACHE.get(target)
    if cached is None or cached[0] is not renames.RENAMES:
        cached = (renames.RENAMES, Index(renames.RENAMES, target))
        _CACHE[target] = cached
    return cached[1]
