"""CM002: rename references to old classes and functions."""

from __future__ import annotations

from functools import partial

import libcst as cst

from compat import _catalog
from compat._legacy import old_names
from compat.renames import Rename

from ._context import Context
from ._edits import set_value
from ._homes import call_changes, find_home, lightning_path, old_kind
from ._ids import Rule
from ._imports import ImportRequest
from ._rule import RuleCommand, Site
from ._scopes import Scope, dotted
from ._table import split_qualname

__all__ = ["RenameClassReferencesCommand"]


class RenameClassReferencesCommand(RuleCommand):
    """Rename references to old classes and functions: bases, isinstance, annotations, calls.

    A name is renamed only when it resolves, through the file's imports and scopes, to an old
    name; attribute chains (``pl.plugins.DDPPlugin``) become the new name, imported next to the
    import they went through. A chain to a 1.x function or value the rename table does not list
    (``pl.seed_everything``) becomes the target's name when the catalogs give it one home, as an
    import of it does. A local name that merely looks old is left alone.

    Before::

        import pytorch_lightning as pl
        from pytorch_lightning.plugins import DDPPlugin

        class MyDDP(DDPPlugin): ...

        assert isinstance(trainer.training_type_plugin, pl.plugins.DDPSpawnPlugin)

    After::

        from strategies import DDPSpawnStrategy
        from strategies import DDPStrategy

        class MyDDP(DDPStrategy): ...

        assert isinstance(trainer.training_type_plugin, DDPSpawnStrategy)
    """

    RULE = Rule.CM002
    NEEDS = (Site.IMPORTS,)
    REQUIRES = (Rule.CM001,)

    def run(self, ctx: Context) -> None:
        plan = ctx.import_plan
        # A name resolves only to bindings of its own spelling: look up just the spellings of
        # imports that get renamed, and of imports at all for the chains below (most of a
        # file's names are neither, and resolving each one is most of this rule's time).
        imported = {b.name for b in ctx.analysis.import_bindings}
        renamed = {
            b.name for b in ctx.analysis.import_bindings if (d := plan.by_binding.get(id(b))) is not None and d.rename
        }
        for name, scope in ctx.analysis.names:
            if name.value not in renamed:
                continue
            bound = ctx.bindings(name, scope)
            decisions = [plan.by_binding.get(id(b)) for b in bound]
            if not bound or any(d is None or not d.rename for d in decisions):
                continue
            decision = decisions[0]
            assert decision is not None and decision.entry is not None  # only table entries rename
            new_name = decision.new.name
            ctx.edits.replace(
                name, set_value(new_name), self.RULE,
                f"{decision.entry.old_name} -> {new_name}", entry=decision.entry,
            )  # fmt: skip
        for attribute, scope, _ in ctx.analysis.attributes:
            root = attribute.value
            while isinstance(root, cst.Attribute):
                root = root.value
            if not isinstance(root, cst.Name) or root.value not in imported:
                continue
            entry = self._chain_entry(ctx, attribute, scope)
            if entry is not None:
                self._chain(ctx, attribute, scope, entry)
            elif (found := self._found_home(ctx, attribute, scope, self.target)) is not None:
                self._chain(ctx, attribute, scope, None, found)
                self._changed_call(ctx, attribute, scope, found)
        for string, scope in ctx.analysis.strings:
            self._string(ctx, string, scope)

    @staticmethod
    def _chain_entry(ctx: Context, attribute: cst.Attribute, scope: Scope) -> Rename | None:
        root = attribute.value
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return None
        bound = ctx.bindings(root, scope)
        if not bound or any(b.kind != "import" or ctx.table.object(b.qualname or "") for b in bound):
            return None
        entry = ctx.old_object(attribute, scope)
        return entry if entry is not None and ctx.table.auto(entry) else None

    @staticmethod
    def _found_home(ctx: Context, attribute: cst.Attribute, scope: Scope, target: str) -> str | None:
        """``pl.seed_everything``: a 1.x function or value the rename table does not cover, reached
        through a module import, that the target has under one home (the catalogs say, as for
        ``from pytorch_lightning import seed_everything``): its new qualified name. For Lightning,
        only where the chain does not resolve as it is (``import lightning.pytorch as pl`` keeps
        ``pl.seed_everything``; ``pl.utilities.seed.seed_everything`` moved)."""
        text = dotted(attribute)
        if text is None or "." not in text:
            return None
        root_name, _, rest = text.partition(".")
        root = attribute.value
        while isinstance(root, cst.Attribute):
            root = root.value
        bound = ctx.bindings(root, scope) if isinstance(root, cst.Name) and root.value == root_name else []
        if len(bound) != 1 or not isinstance(bound[0].stmt, cst.Import) or not bound[0].qualname:
            return None
        qualname = bound[0].qualname
        if qualname.partition(".")[0] != _catalog.OLD_PACKAGE:
            return None
        path = f"{qualname}.{rest}"
        module, _, name = path.rpartition(".")
        kind = old_kind(path)
        if name.startswith("_") or old_kind(module) != "module" or kind == "module":
            return None  # not a name of a module, or a module
        if kind == "class" and ctx.table.object(path) is not None:
            return None  # a class the table has: `_chain_entry`'s
        if name not in old_names(module):
            return None
        if target == "lightning" and _catalog.target("lightning").binds(f"{lightning_path(module)}.{name}"):
            return None
        home = find_home(target, module, name)
        return f"{home.module}.{name}" if home.module is not None else None

    def _changed_call(self, ctx: Context, attribute: cst.Attribute, scope: Scope, new: str) -> None:
        """``pl.loggers.TensorBoardLogger("x")`` on a class found by name: a TODO where the new
        class would bind an argument elsewhere, not take it, or default differently (as CM001
        does for ``from pytorch_lightning.loggers import TensorBoardLogger``)."""
        call = ctx.analysis.parent(attribute)
        if not isinstance(call, cst.Call) or call.func is not attribute or any(a.star for a in call.args):
            return
        root = attribute.value
        while isinstance(root, cst.Attribute):
            root = root.value
        bound = ctx.bindings(root, scope) if isinstance(root, cst.Name) else []
        text = dotted(attribute)
        if len(bound) != 1 or not bound[0].qualname or text is None:
            return
        old = f"{bound[0].qualname}.{text.partition('.')[2]}"
        if old_kind(old) != "class":
            return
        positional = sum(1 for a in call.args if a.keyword is None)
        keywords = [a.keyword.value for a in call.args if a.keyword is not None]
        problems = call_changes(self.target, old, new, positional, keywords)
        if problems:
            short = new.rpartition(".")[2]
            ctx.edits.todo(call, self.RULE, f"`{short}` is `{new}` now: {'; '.join(problems)}")

    def _chain(
        self, ctx: Context, attribute: cst.Attribute, scope: Scope, entry: Rename | None, found: str | None = None
    ) -> None:
        new_qualname = ctx.table.new(entry) if entry is not None else found
        assert new_qualname is not None
        new = split_qualname(new_qualname)
        plan = ctx.import_plan
        name = plan.module_names.get(new_qualname)
        if name is not None and not plan.reaches_module_name(scope, name, new_qualname):
            name = None
        root = attribute.value
        while isinstance(root, cst.Attribute):
            root = root.value
        assert isinstance(root, cst.Name)
        if name is None:
            if not ctx.import_plan.name_free(new.name, new_qualname):
                old = dotted(attribute)
                hint = f"`{new.name}` is already bound here; replace `{old}` by `{new_qualname}` by hand"
                ctx.edits.todo(attribute, self.RULE, hint, entry)
                return
            plan.claims[new.name] = new_qualname
            name = new.name
            for binding in ctx.bindings(root, scope):
                if isinstance(binding.stmt, (cst.Import, cst.ImportFrom)):
                    plan.request(ImportRequest(binding.stmt, new.module, new.name))
        plan.consumed.add(id(root))
        ctx.edits.replace(
            attribute,
            partial(_named, name=name),
            self.RULE,
            f"{dotted(attribute)} -> {name}",
            entry=entry,
        )

    def _string(self, ctx: Context, string: cst.SimpleString, scope: Scope) -> None:
        value = string.evaluated_value
        if not isinstance(value, str) or not value.isidentifier():
            return
        bound = scope.lookup(value)[1]
        decisions = [ctx.import_plan.by_binding.get(id(b)) for b in bound]
        if bound and all(d is not None and d.rename for d in decisions):
            decision = decisions[0]
            assert decision is not None and decision.entry is not None  # only table entries rename
            quote = string.prefix + string.quote
            new_value = f"{quote}{decision.new.name}{string.quote}"
            ctx.edits.replace(
                string, set_value(new_value), self.RULE,
                f"{decision.entry.old_name} -> {decision.new.name}", entry=decision.entry,
            )  # fmt: skip


def _named(_node: cst.CSTNode, name: str) -> cst.CSTNode:
    """``name`` in place of a dotted reference to the class."""
    return cst.Name(name)
