"""CM009: keep the meaning of isinstance/issubclass checks against renamed classes."""

from __future__ import annotations

from functools import partial
from typing import cast

import libcst as cst

from compat.renames import Rename

from ._context import Context
from ._facts import new_hierarchy_known, new_is_subclass, subclassed_by_libraries
from ._ids import Rule
from ._rule import RuleCommand, Site
from ._scopes import Scope, dotted

__all__ = ["KeepTypeChecksCommand"]

_CHECKS = ("isinstance", "issubclass")


class KeepTypeChecksCommand(RuleCommand):
    """Keep the meaning of ``isinstance``/``issubclass`` against renamed classes.

    The new hierarchy is not the old one: ``DDPSpawnStrategy`` derives from ``DDPStrategy``
    (``DDPSpawnPlugin`` did not derive from ``DDPPlugin``), so ``isinstance(p, DDPStrategy)`` also
    matches spawn, and an ``if ddp ... elif spawn`` chain takes the wrong branch. A check whose
    new class matches classes the old one did not gets ``and not isinstance(x, <those>)``; one
    that no longer matches a class the old one did (``DeepSpeedPlugin`` was a ``DDPPlugin``,
    ``DeepSpeedStrategy`` is no ``DDPStrategy``) gets it added to a tuple. A check whose extra
    classes the type cannot tell apart (Lightning's spawn is ``DDPStrategy(start_method="spawn")``),
    and a tuple of classes whose union changed, get a TODO. So does a check against a base that
    libraries subclass (``LightningModule``, ``LightningDataModule``, ``Callback``) on a value not
    provably from this tree (``self``, an instance of a class of the tree, such a class): a
    library's model built on the old ``pytorch_lightning.LightningModule`` is no ``TrainModule``.

    Before::

        from pytorch_lightning.plugins import DDPPlugin, DDPSpawnPlugin

        def kind(plugin):
            if isinstance(plugin, DDPPlugin):
                return "ddp"
            elif isinstance(plugin, DDPSpawnPlugin):
                return "spawn"

    After::

        from strategies import DDPStrategy, DDPSpawnStrategy
        from strategies import DeepSpeedStrategy

        def kind(plugin):
            if isinstance(plugin, (DDPStrategy, DeepSpeedStrategy)) and not isinstance(plugin, DDPSpawnStrategy):
                return "ddp"
            elif isinstance(plugin, DDPSpawnStrategy):
                return "spawn"
    """

    RULE = Rule.CM009
    NEEDS = (Site.IMPORTS,)
    REQUIRES = (Rule.CM001, Rule.CM002)

    def run(self, ctx: Context) -> None:
        for call, scope in ctx.analysis.calls:
            func = call.func
            if not (isinstance(func, cst.Name) and func.value in _CHECKS and len(call.args) == 2):
                continue
            if ctx.bindings(func, scope):
                continue  # a local function named like the builtin
            self._check(ctx, call, scope)

    def _check(self, ctx: Context, call: cst.Call, scope: Scope) -> None:
        subject, classes = call.args[0].value, call.args[1].value
        if isinstance(classes, cst.Tuple):
            self._union(ctx, call, scope, classes)
            return
        entry = ctx.old_object(classes, scope)
        table = ctx.table
        if entry is None or not table.auto(entry) or not (new := table.new(entry)):
            return
        before = table.descendants(entry.old)
        extra: list[tuple[str, str]] = []  # (old name, new class) passing now, not before
        missing: list[tuple[str, str]] = []  # passing before, not now (objects this rule renames)
        for other in table.class_entries():
            other_new = table.new(other)
            if not other_new or other is entry or not new_hierarchy_known(other_new):
                continue
            now = new_is_subclass(other_new, new)
            if now and other.old not in before:
                extra.append((other.old_name, other_new))
            elif not now and other.old in before and table.auto(other):
                missing.append((other.old_name, other_new))
        if not extra and not missing:
            self._libraries(ctx, call, scope, [entry])
            return
        old_name = entry.old_name
        mixed = any(n == new or any(new_is_subclass(m, n) for _, m in missing) for _, n in extra)
        if mixed or dotted(subject) is None:
            lost = f"; `{'`, `'.join(o for o, _ in missing)}` no longer pass it" if missing else ""
            gained = f"; `{'`, `'.join(o for o, _ in extra)}` now pass it too" if extra else ""
            hint = f"`{_func_name(call)}(..., {old_name})` changes meaning as `{new}`{gained}{lost}: check the branch"
            ctx.edits.todo(call, self.RULE, hint, entry)
            return
        root = classes
        while isinstance(root, cst.Attribute):
            root = root.value
        bound = ctx.bindings(root, scope) if isinstance(root, cst.Name) else []
        statements = [b.stmt for b in bound if isinstance(b.stmt, (cst.Import, cst.ImportFrom))]
        excluded = [ctx.import_plan.bind_new(qualname, scope, statements) for _, qualname in extra]
        included = [ctx.import_plan.bind_new(qualname, scope, statements) for _, qualname in missing]
        if any(n is None for n in (*excluded, *included)):
            taken = "`, `".join(q for _, q in (*extra, *missing))
            ctx.edits.todo(call, self.RULE, f"also check `{taken}` here (a name is taken in this file)", entry)
            return
        wrap = bool(excluded) and not isinstance(ctx.analysis.parent(call), (cst.If, cst.While, cst.Assert))
        ctx.edits.replace(
            call,
            # no None left: the TODO above returned on any
            partial(
                _rewritten,
                included=tuple(cast("list[str]", included)),
                excluded=tuple(cast("list[str]", excluded)),
                wrap=wrap,
            ),
            self.RULE,
            f"{old_name}: "
            + ", ".join([*(f"not {o}" for o, _ in extra), *(f"or {o}" for o, _ in missing)])
            + " (the new hierarchy differs)",
            entry=entry,
        )

    def _union(self, ctx: Context, call: cst.Call, scope: Scope, classes: cst.Tuple) -> None:
        """A tuple of classes: a TODO when the union matches other classes than before."""
        table = ctx.table
        entries = [ctx.old_object(e.value, scope) for e in classes.elements]
        renamed = [(e, n) for e in entries if e is not None and table.auto(e) and (n := table.new(e))]
        if not renamed:
            return
        before = set().union(*(table.descendants(e.old) for e, _ in renamed))
        changed = []
        for other in table.class_entries():
            other_new = table.new(other)
            if not other_new or not new_hierarchy_known(other_new):
                continue
            now = any(new_is_subclass(other_new, n) for _, n in renamed)
            if now != (other.old in before) and (now or table.auto(other)):
                changed.append(other.old_name)
        if changed:
            names = "`, `".join(changed)
            hint = f"`{_func_name(call)}(..., (...))` changes meaning with the new hierarchy for `{names}`: check it"
            ctx.edits.todo(call, self.RULE, hint, renamed[0][0])
        else:
            self._libraries(ctx, call, scope, [e for e, _ in renamed])

    def _libraries(self, ctx: Context, call: cst.Call, scope: Scope, entries: list[Rename]) -> None:
        """A TODO when the check is against a base that libraries subclass, on a subject of unknown origin.

        ``isinstance(model, LightningModule)`` -> ``TrainModule``: a model from a library still
        built on ``pytorch_lightning`` derives from the old class, not from ``TrainModule``.
        """
        bases = [e for e in entries if subclassed_by_libraries(e.old)]
        if not bases or self._from_this_tree(ctx, call, scope):
            return
        names = "`, `".join(e.old for e in bases)
        news = ", ".join((ctx.table.new(e) or "").rpartition(".")[2] for e in bases)
        check = _func_name(call)
        what = "objects of library classes" if check == "isinstance" else "library classes"
        hint = (
            f"`{check}(..., {news})` is False for {what} still built on the old `{names}` "
            "(it was True): check where this value comes from"
        )
        ctx.edits.todo(call, self.RULE, hint, bases[0])

    @staticmethod
    def _from_this_tree(ctx: Context, call: cst.Call, scope: Scope) -> bool:
        """Whether the checked value is provably this tree's: ``self`` in a class defined here,
        an instance built from a class of the tree, or (``issubclass``) such a class itself."""

        def ours(name: cst.BaseExpression, where: Scope) -> bool:
            bound = ctx.bindings(name, where) if isinstance(name, cst.Name) else []
            return len(bound) == 1 and (
                bound[0].kind == "class" or (bound[0].kind == "import" and bound[0].qualname in ctx.user_classes)
            )

        subject = call.args[0].value
        if _func_name(call) == "issubclass":
            return ours(subject, scope)
        bound = ctx.bindings(subject, scope) if isinstance(subject, cst.Name) else []
        if len(bound) != 1:
            return False
        binding = bound[0]
        if binding.owner is not None:
            return True  # `self` in a method of a class defined here
        value = binding.value
        return binding.kind == "assign" and isinstance(value, cst.Call) and ours(value.func, binding.scope)


def _func_name(call: cst.Call) -> str:
    return call.func.value  # type: ignore[attr-defined, no-any-return]


def _rewritten(node: cst.CSTNode, included: tuple[str, ...], excluded: tuple[str, ...], wrap: bool) -> cst.CSTNode:
    """``isinstance(x, A)`` -> ``isinstance(x, (A, B)) and not isinstance(x, C)``.

    ``x`` is read from the node other rules already edited (``trainer.strategy``).
    """
    assert isinstance(node, cst.Call)
    empty = cst.Module([])
    check, subject = empty.code_for_node(node.func), empty.code_for_node(node.args[0].value)
    if included:
        classes = cst.Tuple([cst.Element(node.args[1].value), *(cst.Element(cst.Name(n)) for n in included)])
        node = node.with_changes(args=[node.args[0], node.args[1].with_changes(value=classes)])
    if not excluded:
        return node
    text = " and ".join([empty.code_for_node(node), *(f"not {check}({subject}, {n})" for n in excluded)])
    return cst.parse_expression(f"({text})" if wrap else text)
