"""CM007: leave one TODO comment wherever a person has to finish the migration."""

from __future__ import annotations

import libcst as cst

from compat.renames import Kind, Rename

from ._context import Context
from ._facts import new_signature, trainer
from ._ids import Rule
from ._members import MemberSite, choose, distinctive, unknown_hint
from ._net import old_trainer_keywords
from ._rule import RuleCommand, Site
from ._scopes import Scope, dotted

__all__ = ["MarkManualMigrationsCommand"]

_DYNAMIC = ("getattr", "hasattr", "setattr", "delattr")
#: Packages whose calls are never a user's helper handing keywords on to a Trainer.
_LIBRARIES = frozenset({"lightning", "lightning_fabric", "strategies", "compat", "torch"})


def _hint(entry: Rename) -> str:
    return entry.hint or f"`{entry.old_name}` has no automatic replacement"


class MarkManualMigrationsCommand(RuleCommand):
    """Mark what cannot be migrated automatically with one ``# TODO(compat.migrate)`` comment.

    Overrides with no safe equivalent (``start_training``, ``new_process``, ``dispatch``, ...)
    and the ``super()`` calls of them inside, old names the table marks as manual (at the
    import and at every statement using a manual class), monkey-patching of Lightning classes
    or modules, dynamic access to old names (``getattr(obj, "init_ddp_connection")``), old
    ``Trainer`` keywords handed to a helper (``get_trainer(resume_from_checkpoint=...)``) and
    star imports from old modules get the table's hint on the line above, once: running again
    adds none.

    Before::

        from pytorch_lightning.plugins import DDPPlugin, DDPSpawnPlugin

        class MySpawn(DDPSpawnPlugin):
            def new_process(self, process_idx, trainer, mp_queue):
                ...

        DDPPlugin.barrier = my_barrier

    After::

        from pytorch_lightning.plugins import DDPPlugin, DDPSpawnPlugin

        class MySpawn(DDPSpawnPlugin):
            # TODO(compat.migrate): CM007 per-worker code goes to setup_environment() or ...
            def new_process(self, process_idx, trainer, mp_queue):
                ...

        # TODO(compat.migrate): CM007 assigning to `DDPPlugin.barrier` patches a Lightning ...
        DDPPlugin.barrier = my_barrier
    """

    RULE = Rule.CM007
    NEEDS = (Site.MEMBERS, Site.CALLS)
    RUNS_AFTER = (Rule.CM002, Rule.CM003, Rule.CM004, Rule.CM005, Rule.CM006)

    def run(self, ctx: Context) -> None:
        self._objects(ctx)
        self._members(ctx)
        self._arguments(ctx)
        self._patches_and_dynamic(ctx)
        for module, node in ctx.analysis.star_imports:
            if module.partition(".")[0] in ctx.table.roots:
                hint = f"import the names you use from `{module}` explicitly, then run the migration again"
                ctx.edits.todo(node, self.RULE, hint)

    def _manual(self, ctx: Context, entry: Rename | None) -> bool:
        return entry is not None and not ctx.table.auto(entry)

    def _objects(self, ctx: Context) -> None:
        """Manual classes/modules: a TODO at each import, and at each use of a manual class.

        A TODO at the import alone leaves ``class RayPlugin(DDPSpawnPlugin)`` sixty lines below
        it looking migrated; each statement that uses the class gets the hint too (once).
        """
        table = ctx.table
        manual: dict[int, Rename] = {}  # import binding -> its manual class entry
        for binding in ctx.analysis.import_bindings:
            qualname = binding.qualname or ""
            entry = table.object(qualname) if isinstance(binding.stmt, cst.ImportFrom) else None
            if entry is not None and self._manual(ctx, entry):
                manual[id(binding)] = entry
            if entry is None:
                entry = self._module_entry(ctx, binding.stmt, qualname)
            if entry is not None and self._manual(ctx, entry):
                ctx.edits.todo(binding.node, self.RULE, _hint(entry), entry)
        if manual:
            for name, scope in ctx.analysis.names:
                for binding in ctx.bindings(name, scope):
                    found = manual.get(id(binding))
                    if found is not None and name is not binding.node:
                        ctx.edits.todo(name, self.RULE, _hint(found), found)
                        break
        for attribute, scope, _ in ctx.analysis.attributes:
            root = _root(attribute)
            if root is None or not any(b.kind == "import" for b in ctx.bindings(root, scope)):
                continue
            entry = ctx.old_object(attribute, scope)
            if entry is not None and self._manual(ctx, entry):
                ctx.edits.todo(attribute, self.RULE, _hint(entry), entry)

    @staticmethod
    def _module_entry(ctx: Context, stmt: cst.CSTNode | None, qualname: str) -> Rename | None:
        """The module entry that covers an import, when no object entry does."""
        module = qualname.rpartition(".")[0] if isinstance(stmt, cst.ImportFrom) else qualname
        while module:
            entry = ctx.table.module(module)
            if entry is not None:
                return entry
            module = module.rpartition(".")[0]
        return None

    def _members(self, ctx: Context) -> None:
        for site in ctx.member_sites:
            if id(site.node) in ctx.answered:
                continue
            if not site.known and any(ctx.table.auto(e) for e in site.entries):
                continue  # the rule of the automatic entry leaves the TODO
            entry = choose(ctx, site, lambda c, e: not c.table.auto(e))
            if entry is None:
                continue
            if not site.known:
                if entry.kind is Kind.ATTRIBUTE and distinctive(entry.member or ""):
                    ctx.edits.todo(site.node, self.RULE, unknown_hint(ctx, entry), entry)
                continue
            if site.kind == "super" and _inside_override(site, entry):
                # The override has its TODO; the call to the base's own one fails on the new base.
                hint = (
                    f"`super().{entry.member}(...)` reaches the old `{entry.member}`, which the new base "
                    "does not have in this form: follow the TODO on this method"
                )
                ctx.edits.todo(site.node, self.RULE, hint, entry)
                continue
            target = site.node.name if isinstance(site.node, cst.FunctionDef) else site.node
            ctx.edits.todo(target, self.RULE, _hint(entry), entry)

    def _arguments(self, ctx: Context) -> None:
        sites = ctx.call_sites
        for site in sites:
            for info in site.args:
                if id(info.arg) in ctx.answered:
                    continue
                entries = info.values or ([] if info.literal is not None and info.any_values else info.arguments)
                entry = entries[0] if entries else None
                if self._manual(ctx, entry):
                    ctx.edits.todo(info.arg, self.RULE, _hint(entry), entry)  # type: ignore[arg-type]
        if ctx.uses_old_api:
            self._forwarded(ctx, {id(site.call) for site in sites})

    def _forwarded(self, ctx: Context, known: set[int]) -> None:
        """Old Trainer keywords passed to a call that is not a Trainer's (``get_trainer(...,
        progress_bar_refresh_rate=1)``, a helper that hands ``**kwargs`` on to the Trainer).

        Flagged when the keyword is distinctive (``resume_from_checkpoint``, not ``gpus``, which
        a model may take too), when the callee's name says it makes a trainer, or when the call
        passes another keyword of the old Trainer too (``model.predict(gpus=n, accelerator=a)``:
        a wrapper that builds a Trainer from them).
        """
        taken = new_signature(trainer(self.target))
        old_keywords = old_trainer_keywords()
        arguments = ctx.table.arguments
        for call, scope in ctx.analysis.calls:
            if id(call) in known:
                continue
            if not any(arg.keyword is not None and arg.keyword.value in arguments for arg in call.args):
                continue  # no old keyword at all: both cases below need one (most calls of a file)
            origin = self._migrated_origin(ctx, call, scope)
            if origin is not None:
                # A class already on the new base (a subclass migrated by an earlier run, or its
                # ``super().__init__``): the old keywords it still gets carry the TODO that run
                # left on them as a known call, so the same text, not a guess about forwarding.
                for arg in call.args:
                    name = arg.keyword.value if arg.keyword is not None else ""
                    entries = [e for e in ctx.table.arguments.get(name, ()) if ctx.table.related(e.old, origin)]
                    if entries and self._manual(ctx, entries[0]):
                        ctx.edits.todo(arg, self.RULE, _hint(entries[0]), entries[0])
                continue
            qualname = ctx.qualname(call.func, scope) or ""
            root = qualname.partition(".")[0]
            if root in _LIBRARIES or root in ctx.table.roots:  # the new Trainer, or a library class
                continue
            callee = (dotted(call.func) or "").lower()
            keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
            for arg in call.args:
                name = arg.keyword.value if arg.keyword is not None else ""
                entries = [e for e in ctx.table.arguments.get(name, ()) if e.old.endswith(".Trainer")]
                if not entries or (taken is not None and name in taken.params):
                    continue
                if distinctive(name) or "trainer" in callee or (keywords & old_keywords) - {name}:
                    entry = entries[0]
                    where = (
                        f"pass it as the new Trainer takes it (docs/migration.md, `{name}=`)"
                        if ctx.table.auto(entry) or not entry.hint
                        else entry.hint
                    )
                    hint = f"`{name}=` is an argument of the old Trainer: if this call hands it on to one, {where}"
                    ctx.edits.todo(arg, self.RULE, hint, entry)

    @staticmethod
    def _migrated_origin(ctx: Context, call: cst.Call, scope: Scope) -> str | None:
        """The old class a user class derives from when only the new names say so: for
        ``MyTrainer(...)`` or ``super().__init__(...)`` in ``class MyTrainer(lightning.pytorch.Trainer)``
        (the new classes themselves are not: their calls were migrated already)."""
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call):
            if func.attr.value != "__init__":
                return None
            cls = ctx.super_class(func.value, scope)
            return ctx.user_old(cls, new=True) if cls is not None else None
        if isinstance(func, cst.Name):  # a class of this file on the new base
            bound = ctx.bindings(func, scope)
            if len(bound) == 1 and bound[0].kind == "class":
                info = next((c for c in ctx.analysis.classes if c.node is bound[0].node), None)
                if info is not None and ctx.user_old(info) is None:
                    return ctx.user_old(info, new=True)
        return None

    def _patches_and_dynamic(self, ctx: Context) -> None:
        for attribute, scope, store in ctx.analysis.attributes:
            if store and self._lightning_object(ctx, attribute.value, scope):
                hint = (
                    f"assigning to `{dotted(attribute) or attribute.attr.value}` patches a Lightning "
                    "internal that the new API does not have: subclass the new class and override instead"
                )
                ctx.edits.todo(attribute, self.RULE, hint)
        for call, scope in ctx.analysis.calls:
            if not (isinstance(call.func, cst.Name) and call.func.value in _DYNAMIC and len(call.args) >= 2):
                continue
            if ctx.bindings(call.func, scope):
                continue
            name = call.args[1].value
            if not isinstance(name, cst.SimpleString) or not isinstance(name.evaluated_value, str):
                continue
            self._dynamic(ctx, call, scope, name.evaluated_value)

    def _dynamic(self, ctx: Context, call: cst.Call, scope: Scope, name: str) -> None:
        table = ctx.table
        receiver = call.args[0].value
        if call.func.value == "setattr" and self._lightning_object(ctx, receiver, scope):  # type: ignore[attr-defined]
            ctx.edits.todo(
                call,
                self.RULE,
                f"setattr on a Lightning class or module (`{name}`): subclass the new class instead",
            )
            return
        entries = table.members.get(name, [])
        # Read with the new names too: once an annotation is migrated (`model: TrainModule`), the
        # receiver must still be known, or the next run would flag what this one did not.
        origin, sure = ctx.receiver_of(receiver, scope, new=True)
        if isinstance(origin, str):
            entries = table.member_entries(name, origin, open=sure != "exact")
        elif origin is not None or not (ctx.uses_old_api and distinctive(name)):
            entries = []
        if entries:
            entry = entries[0]
            new = table.new(entry)
            where = f"the new name is `{new}`" if new and table.auto(entry) else _hint(entry)
            hint = f"`{call.func.value}(..., {name!r})` uses the old name `{entry.old_name}`: {where}"  # type: ignore[attr-defined]
            ctx.edits.todo(call, self.RULE, hint, entry)

    @staticmethod
    def _lightning_object(ctx: Context, expr: cst.BaseExpression, scope: Scope) -> bool:
        qualname = ctx.qualname(expr, scope)
        if qualname is None:
            return False
        return qualname.partition(".")[0] in ctx.table.roots or ctx.table.canonical(qualname) is not None


def _root(attribute: cst.Attribute) -> cst.Name | None:
    node: cst.BaseExpression = attribute
    while isinstance(node, cst.Attribute):
        node = node.value
    return node if isinstance(node, cst.Name) else None


def _inside_override(site: MemberSite, entry: Rename) -> bool:
    return site.function is not None and site.function.node.name.value == entry.member
