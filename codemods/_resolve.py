"""Name, class and receiver resolution for one file: what every fact about it is computed from.

``Resolver`` reads the walk of the file (``codemods._scan``) and the rename table
indexed for the target (``codemods._table``); the sites (``codemods._imports``,
``codemods._members``, ``codemods._calls``) are computed from it, and
``codemods._context.Context`` adds the edits on top.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import libcst as cst

from compat.renames import Rename, class_helper

from ._facts import CONFIG_NAMES
from ._scopes import Analysis, Binding, ClassInfo, Scope, dotted
from ._table import Index

__all__ = ["OTHER", "Resolver"]


class _Other:
    def __repr__(self) -> str:
        return "OTHER"


#: A receiver or class known NOT to be (derived from) an old class.
OTHER: Final = _Other()


class Resolver:
    """Resolution of names, classes and receivers for one file.

    Args:
        analysis: the walk of the file.
        table: the rename table indexed for the target.
        user_classes: user class qualname -> the old class it derives from (other files).
    """

    def __init__(self, analysis: Analysis, table: Index, user_classes: Mapping[str, str]) -> None:
        self.analysis = analysis
        self.table = table
        self.user_classes = user_classes
        self._class_nodes = {id(info.node): info for info in analysis.classes}
        self._user_old: dict[int, str] = self._resolve_user_classes(False)
        self._user_any: dict[int, str] | None = None
        self.uses_old_api = self._uses_old_api()

    # -- names -------------------------------------------------------------------------------

    def bindings(self, name: cst.Name, scope: Scope) -> list[Binding]:
        """The bindings a name reference resolves to (empty for builtins and unknown names)."""
        return scope.lookup(name.value)[1]

    def qualnames(self, expr: cst.BaseExpression, scope: Scope) -> list[str]:
        """Every qualified name a Name/Attribute chain can have, one per binding of its root.

        Empty unless every binding of the root is an import or a class (``try: import a as m
        except ImportError: import b as m`` gives two).
        """
        root = expr
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return []
        bound = self.bindings(root, scope)
        if not bound or any(b.kind not in ("import", "class") or b.qualname is None for b in bound):
            return []
        text = dotted(expr)
        if text is None:
            return []
        rest = text[len(root.value) :]
        return list(dict.fromkeys(f"{b.qualname}{rest}" for b in bound))

    def qualname(self, expr: cst.BaseExpression, scope: Scope) -> str | None:
        """The qualified name of a Name/Attribute chain rooted at an import or a class."""
        names = self.qualnames(expr, scope)
        return names[0] if len(names) == 1 else None

    def old_object(self, expr: cst.BaseExpression, scope: Scope) -> Rename | None:
        """The class/function entry ``expr`` refers to, if it is an old name (in every branch)."""
        entries = {self.table.object(q) for q in self.qualnames(expr, scope)}
        return entries.pop() if len(entries) == 1 else None

    # -- classes -----------------------------------------------------------------------------

    def class_origin(self, expr: cst.BaseExpression, scope: Scope, new: bool = False) -> str | _Other | None:
        """The old class that the class expression ``expr`` is or derives from.

        Args:
            expr: a class expression (a base, a callee, an annotation).
            scope: where it appears.
            new: also follow the new names (``strategies.DDPStrategy`` counts as ``DDPPlugin``),
                for decisions that must read the same before and after migration.

        Returns:
            The table path of that old class, ``OTHER`` for a class known to be unrelated, or
            ``None`` when nothing is known.
        """
        if isinstance(expr, cst.Name):
            bound = self.bindings(expr, scope)
            if len(bound) == 1 and bound[0].kind == "class":
                info = self._class_nodes.get(id(bound[0].node))
                return (self.user_old(info, new) or OTHER) if info else None
        qualname = self.qualname(expr, scope)
        if qualname is None:
            return None
        canon = self.table.canonical(qualname) or (self.table.replacements.get(qualname) if new else None)
        if canon is not None:
            return canon
        if qualname in self.user_classes:
            return self.table.canonical(self.user_classes[qualname]) or self.user_classes[qualname]
        return OTHER

    def local_base(self, expr: cst.BaseExpression, scope: Scope) -> ClassInfo | None:
        """The class of this file that the base expression ``expr`` names (``None``: another)."""
        if isinstance(expr, cst.Name):
            bound = self.bindings(expr, scope)
            if len(bound) == 1 and bound[0].kind == "class":
                return self._class_nodes.get(id(bound[0].node))
        return None

    def class_expression(self, expr: cst.BaseExpression, scope: Scope) -> tuple[cst.BaseExpression, Scope]:
        """The class expression ``expr`` names: itself, or for ``dm_cls`` bound once to
        ``dm_cls = MNISTDataModule``, that name (followed up to three assignments)."""
        for _ in range(3):
            if not isinstance(expr, cst.Name):
                break
            bound = self.bindings(expr, scope)
            if (
                len(bound) != 1
                or bound[0].kind != "assign"
                or not isinstance(bound[0].value, (cst.Name, cst.Attribute))
            ):
                break
            expr, scope = bound[0].value, bound[0].scope
        return expr, scope

    def class_defines(self, info: ClassInfo, name: str) -> bool:
        """Whether the class of this file ``info``, or one of its bases in this file, binds ``name``."""
        frontier, seen = [info], set()
        while frontier:
            current = frontier.pop()
            if id(current) in seen:
                continue
            seen.add(id(current))
            if name in current.body.bindings:
                return True
            frontier += [b for arg in current.node.bases if (b := self.local_base(arg.value, current.scope))]
        return False

    def local_subclasses(self, info: ClassInfo) -> list[ClassInfo]:
        """The classes of this file that derive from ``info``, directly or through each other."""
        found: list[ClassInfo] = []
        frontier = [info]
        while frontier:
            parent = frontier.pop()
            for other in self.analysis.classes:
                if other is info or other in found:
                    continue
                if any(self.local_base(arg.value, other.scope) is parent for arg in other.node.bases):
                    found.append(other)
                    frontier.append(other)
        return found

    def user_old(self, info: ClassInfo | None, new: bool = False) -> str | None:
        """The old class a class defined in this file derives from (``None``: it does not)."""
        if info is None:
            return None
        if new:
            if self._user_any is None:
                self._user_any = self._resolve_user_classes(True)
            return self._user_any.get(id(info))
        return self._user_old.get(id(info))

    def _resolve_user_classes(self, new: bool) -> dict[int, str]:
        found: dict[int, str] = {}
        changed = True
        while changed:
            changed = False
            for info in self.analysis.classes:
                if id(info) in found:
                    continue
                for arg in info.node.bases:
                    if isinstance(arg.value, cst.Name):
                        bound = self.bindings(arg.value, info.scope)
                        if len(bound) == 1 and bound[0].kind == "class":
                            base = self._class_nodes.get(id(bound[0].node))
                            known = found.get(id(base)) if base is not None else None
                            if known is not None:
                                found[id(info)] = known
                                changed = True
                                break
                            continue
                    origin = self.class_origin(arg.value, info.scope, new)
                    if isinstance(origin, str):
                        found[id(info)] = origin
                        changed = True
                        break
        return found

    def _uses_old_api(self) -> bool:
        if self._user_old or (
            self.analysis.star_imports
            and any(m.partition(".")[0] in self.table.roots for m, _ in self.analysis.star_imports)
        ):
            return True
        return any(
            b.qualname and (b.qualname.partition(".")[0] in self.table.roots or b.qualname in self.user_classes)
            for b in self.analysis.import_bindings
        )

    # -- receivers ---------------------------------------------------------------------------

    def receiver(self, expr: cst.BaseExpression, scope: Scope, new: bool = False) -> str | _Other | None:
        """The old class an object expression is an instance of (see ``receiver_of``)."""
        return self.receiver_of(expr, scope, new=new)[0]

    def receiver_of(
        self, expr: cst.BaseExpression, scope: Scope, depth: int = 0, new: bool = False
    ) -> tuple[str | _Other | None, str]:
        """The old class an object expression is an instance of, and how sure that is.

        The second value is ``"exact"`` for ``self`` in a method of a user subclass and a name
        bound to ``OldClass(...)``; ``"open"`` for an annotation (``plugin: TrainingTypePlugin``:
        any subclass); ``"named"`` for a name spelled like an old class (``trainer``,
        ``self.cluster_environment``: that class for sure, a subclass maybe); ``"config"`` for
        such a name reached through a configuration object (``cfg.trainer``: maybe a config
        section, so a rename would be a guess). A value of an unrelated class is ``OTHER``;
        anything else is ``None``.
        """
        if isinstance(expr, cst.Name):
            return self._name_receiver(expr, scope, depth, new)
        if isinstance(expr, cst.Attribute):
            root = expr.value
            while isinstance(root, cst.Attribute):
                root = root.value
            config = isinstance(root, cst.Name) and root.value.lower().strip("_") in CONFIG_NAMES
            return self.table.snakes.get(expr.attr.value), "config" if config else "named"
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value[:1].islower():
                owner = self.class_origin(
                    *self.class_expression(func.value, scope), new
                )  # `X.from_argparse_args(args)`
                helper = class_helper(owner, func.attr.value) if isinstance(owner, str) else None
                if helper is not None and helper.constructs:
                    return owner, "exact"
            return (self.class_origin(func, scope, new) if not _is_super(expr) else None), "exact"
        if isinstance(expr, (cst.SimpleString, cst.Integer, cst.Float, cst.List, cst.Dict, cst.Tuple)):
            return OTHER, "exact"
        return None, "exact"

    def _name_receiver(self, expr: cst.Name, scope: Scope, depth: int, new: bool) -> tuple[str | _Other | None, str]:
        bound = self.bindings(expr, scope)
        heuristic = self.table.snakes.get(expr.value), "named"
        if len(bound) > 1 and depth < 3 and all(b.kind == "assign" and b.value is not None for b in bound):
            # `dm = MNISTDataModule()` ... `dm = CIFAR10DataModule()`: one class whichever ran last
            each = {self.receiver_of(b.value, b.scope, depth + 1, new) for b in bound if b.value is not None}
            if len(each) == 1:
                only = each.pop()
                if isinstance(only[0], str):
                    return only
        if len(bound) != 1:
            return heuristic
        binding = bound[0]
        if binding.owner is not None:
            return self.user_old(binding.owner, new) or OTHER, "exact"
        if binding.kind in ("import", "class"):
            return self.class_origin(expr, scope, new), "exact"
        if binding.annotation is not None and not isinstance(binding.annotation, cst.SimpleString):
            origin = self.class_origin(binding.annotation, binding.scope, new)
            if isinstance(origin, str):
                return origin, "open"
        value = binding.value
        if binding.kind == "assign" and value is not None and depth < 3:
            found = self.receiver_of(value, binding.scope, depth + 1, new)
            if found[0] is not None:
                return found
        return heuristic

    def super_class(self, call: cst.Call, scope: Scope) -> ClassInfo | None:
        """The class whose method holds ``super()`` / ``super(Cls, self)``."""
        if not _is_super(call):
            return None
        if call.args and isinstance(call.args[0].value, cst.Name):
            bound = self.bindings(call.args[0].value, scope)
            if len(bound) == 1 and bound[0].kind == "class":
                return self._class_nodes.get(id(bound[0].node))
            return None
        current: Scope | None = scope
        while current is not None and current.kind != "class":
            if current.parent is not None and current.parent.kind == "class":
                return current.parent.cls
            current = current.parent
        return None


def _is_super(call: cst.Call) -> bool:
    return isinstance(call.func, cst.Name) and call.func.value == "super"
