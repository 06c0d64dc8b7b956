"""CM012: mark members used on a renamed object that its new class does not have."""

from __future__ import annotations

import libcst as cst

from compat.renames import ASSIGNED_PROPERTIES, MEMBER_READS, Kind, Rename

from ._context import Context
from ._facts import (
    CLASS_ONLY_METHODS,
    HOLD_TRAINER,
    OLD_TRAINER,
    attribute_types,
    missing_member,
    removed_classmethod,
)
from ._ids import Rule
from ._members import choose
from ._rule import RuleCommand, Site
from ._scopes import Scope
from .cm005_attributes import RenameAttributesCommand

__all__ = ["CheckRenamedMembersCommand"]


class CheckRenamedMembersCommand(RuleCommand):
    """Mark members used on a renamed object that its new class does not have.

    A rename keeps whatever is used on the result: ``trainer.accelerator_backend.on_save(...)``
    becomes ``trainer.strategy.on_save(...)``, and no ``Strategy`` has ``on_save``. Every member
    read or written on a renamed class, on an attribute the table renames, on an
    instance of a renamed class built or annotated in the file, or on ``self.trainer`` in a
    subclass of ``LightningModule``/``LightningDataModule`` is looked up on the new class
    (and its bases) in the target's catalog; a member some old release had and the new class
    lacks gets a TODO naming the class and where the member lived. Members the table renames are
    CM003-CM007's; members the old releases never had (the user's own attributes) are left alone.
    ``load_from_checkpoint`` on an instance of a module class (``self.``, a name bound to
    ``Model(...)`` or annotated with it) gets a TODO as well: 1.x ran it and returned a new module,
    which code often dropped; both targets raise ``TypeError`` there (``_facts.CLASS_ONLY_METHODS``).
    Two 1.x members become what they stood for: ``self.hparams = args`` in a module or datamodule
    subclass is ``self.save_hyperparameters(args)`` (1.x's setter; both targets only read
    ``hparams``: ``compat.renames.ASSIGNED_PROPERTIES``), and ``dm.size()`` / ``dm.size(i)`` on a
    datamodule is ``dm.dims`` / ``dm.dims[i]`` where the file's classes set ``dims``
    (``compat.renames.MEMBER_READS``). The example shows this rule alone (the other rules rename
    the names).

    Before::

        from pytorch_lightning import LightningModule

        def save(trainer, model: LightningModule):
            trainer.accelerator_backend.on_save({})
            model.load_from_checkpoint("last.ckpt")

    After::

        from pytorch_lightning import LightningModule

        def save(trainer, model: LightningModule):
            # TODO(compat.migrate): CM012 `Strategy` has no `on_save` (it was on `Accelerator` in 1.2.10-1.4.9): ...
            trainer.accelerator_backend.on_save({})
            # TODO(compat.migrate): CM012 `load_from_checkpoint` is a classmethod that raises TypeError on an ...
            model.load_from_checkpoint("last.ckpt")
    """

    RULE = Rule.CM012
    NEEDS = (Site.MEMBERS,)
    RUNS_AFTER = (Rule.CM002, Rule.CM005)

    def run(self, ctx: Context) -> None:
        renamed: dict[int, Rename] = {}  # attributes CM005 renames (known receivers, loads)
        for site in ctx.member_sites:
            if site.known and site.kind == "use" and isinstance(site.node, cst.Attribute):
                entry = choose(ctx, site, RenameAttributesCommand.owns)
                if entry is not None:
                    renamed[id(site.node)] = entry
        # Names the file's own classes define or that the file assigns on any object: those are
        # the user's attributes, whatever the old class had.
        own = {name for c in ctx.analysis.classes for name in c.body.bindings}
        own |= {a.attr.value for a, _, store in ctx.analysis.attributes if store}
        for attribute, scope, store in ctx.analysis.attributes:
            name = attribute.attr.value
            if store and self._assigned_property(ctx, attribute, scope):
                continue
            if not store and self._member_read(ctx, attribute, scope, own):
                continue
            if name in CLASS_ONLY_METHODS and not store:
                self._on_an_instance(ctx, attribute, scope)
            if name in own:
                continue
            found = self._types(ctx, attribute.value, scope, renamed)
            if found is None:
                continue
            old, new, exact, entry = found
            if ctx.table.member_entries(name, old) or removed_classmethod(old, name):
                continue  # renamed or marked by the member rules, or CM008's
            hint = missing_member(old, new, name, exact)
            if hint is not None:
                ctx.edits.todo(attribute, self.RULE, hint, entry)

    @staticmethod
    def _assigned_property(ctx: Context, attribute: cst.Attribute, scope: Scope) -> bool:
        """``self.hparams = args`` in a subclass of an old class whose property had a setter that
        the targets lack -> ``self.save_hyperparameters(args)`` (``ASSIGNED_PROPERTIES``)."""
        if not isinstance(attribute.value, cst.Name):
            return False
        origin, sure = ctx.receiver_of(attribute.value, scope)
        if not isinstance(origin, str) or sure != "exact":
            return False
        bound = [b for b in ctx.bindings(attribute.value, scope) if b.owner is not None]
        if not bound:
            return False  # `self` in a method of a subclass only: an instance built elsewhere may differ
        method = next(
            (m for old in ctx.table.ancestors(origin) if (m := ASSIGNED_PROPERTIES.get((old, attribute.attr.value)))),
            None,
        )
        target = ctx.analysis.parent(attribute)
        assign = ctx.analysis.parent(target) if isinstance(target, cst.AssignTarget) else target
        if method is None or not isinstance(assign, cst.Assign) or len(assign.targets) != 1:
            return False
        owner = bound[0].owner
        if owner is not None and ctx.class_defines(owner, attribute.attr.value):
            return False  # the class's own property

        def rewrite(node: cst.CSTNode, receiver: str = attribute.value.value) -> cst.CSTNode:
            assert isinstance(node, cst.Assign)
            call = cst.Call(cst.Attribute(cst.Name(receiver), cst.Name(method)), [cst.Arg(node.value)])
            return cst.Expr(call, semicolon=node.semicolon)

        message = f"`{attribute.value.value}.{attribute.attr.value} = ...` -> `{attribute.value.value}.{method}(...)`"
        ctx.edits.replace(assign, rewrite, Rule.CM012, message, site=attribute)
        ctx.answered.add(id(attribute))
        return True

    @staticmethod
    def _member_read(ctx: Context, attribute: cst.Attribute, scope: Scope, own: set[str]) -> bool:
        """``dm.size()`` -> ``dm.dims`` (``dm.size(0)`` -> ``dm.dims[0]``) on an instance of a
        subclass of the old class, when the file's classes set the attribute (``MEMBER_READS``)."""
        call = ctx.analysis.parent(attribute)
        if not isinstance(call, cst.Call) or call.func is not attribute or any(a.keyword or a.star for a in call.args):
            return False
        if len(call.args) > 1:
            return False
        origin, sure = ctx.receiver_of(attribute.value, scope)
        if not isinstance(origin, str) or sure not in ("exact", "open"):
            return False
        read = next(
            (r for old in ctx.table.ancestors(origin) if (r := MEMBER_READS.get((old, attribute.attr.value)))), None
        )
        if read is None or read not in own:
            return False

        def rewrite(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            value = node.func.with_changes(attr=cst.Name(read))
            if not node.args:
                return value
            return cst.Subscript(value, [cst.SubscriptElement(cst.Index(node.args[0].value))])

        ctx.edits.replace(call, rewrite, Rule.CM012, f"`.{attribute.attr.value}()` -> `.{read}`", site=attribute)
        ctx.answered.add(id(attribute))
        return True

    def _on_an_instance(self, ctx: Context, attribute: cst.Attribute, scope: Scope) -> None:
        """A TODO at ``model.load_from_checkpoint`` when ``model`` is an instance of a module class.

        ``Model.load_from_checkpoint`` and ``cls.load_from_checkpoint`` are calls on a class;
        ``self.``, and a name bound to ``Model(...)`` or annotated with the class, are instances.
        """
        value = attribute.value
        if isinstance(value, cst.Name) and value.value == "cls":
            return
        if ctx.old_object(value, scope) is not None:
            return  # the old class itself
        if isinstance(value, cst.Name) and any(b.kind in ("import", "class") for b in ctx.bindings(value, scope)):
            return  # a class of this file, or one imported
        origin, sure = ctx.receiver_of(value, scope)
        if isinstance(origin, str) and sure in ("exact", "open") and origin.rsplit(".", 1)[-1].startswith("Lightning"):
            entry = ctx.table.object(origin)
            ctx.edits.todo(attribute, self.RULE, CLASS_ONLY_METHODS[attribute.attr.value], entry)

    def _types(
        self, ctx: Context, value: cst.BaseExpression, scope: Scope, renamed: dict[int, Rename]
    ) -> tuple[str, str, bool, Rename | None] | None:
        """``(old class, new class, exact, entry)`` of what ``value`` is, when it is renamed."""
        table = ctx.table
        if id(value) in renamed:
            entry = renamed[id(value)]
            new_member = table.new(entry)
            types = attribute_types(entry.old, entry.member or "", new_member or "", self.target)
            return (*types, False, entry) if types is not None else None
        if not isinstance(value, (cst.Name, cst.Attribute, cst.Call)):
            return None
        if not isinstance(value, cst.Call):
            cls = ctx.old_object(value, scope)
            if cls is not None:  # the class itself: `LightningModule.CHECKPOINT_HYPER_PARAMS_KEY`
                return self._renamed_class(ctx, cls, cls, True)
        if isinstance(value, cst.Attribute):
            if self._own_trainer(ctx, value, scope):  # `self.trainer` in a LightningModule or Callback
                trainer = table.object(OLD_TRAINER)
                return self._renamed_class(ctx, trainer, None, True) if trainer is not None else None
            return None  # `cfg.plugin`: spelled like a class, not known to be one
        if isinstance(value, cst.Name) and any(b.owner is not None for b in ctx.bindings(value, scope)):
            return None  # `self` in a subclass: its own members are CM003's and CM011's
        origin, sure = ctx.receiver_of(value, scope)
        if not isinstance(origin, str) or sure not in ("exact", "open"):
            return None
        instance = table.object(origin)
        return self._renamed_class(ctx, instance, None, sure == "exact") if instance is not None else None

    @staticmethod
    def _own_trainer(ctx: Context, value: cst.Attribute, scope: Scope) -> bool:
        """Whether ``value`` is ``self.trainer`` in a user subclass of a class that holds its Trainer."""
        if value.attr.value != "trainer" or not isinstance(value.value, cst.Name):
            return False
        for binding in ctx.bindings(value.value, scope):
            old = ctx.user_old(binding.owner) if binding.owner is not None else None
            if old is not None and ctx.table.ancestors(old) & HOLD_TRAINER:
                return True
        return False

    @staticmethod
    def _renamed_class(
        ctx: Context, entry: Rename, flagged: Rename | None, exact: bool
    ) -> tuple[str, str, bool, Rename | None] | None:
        new = ctx.table.new(entry)
        if entry.kind is not Kind.CLASS or not ctx.table.auto(entry) or not new:
            return None
        return entry.old, new, exact, flagged
