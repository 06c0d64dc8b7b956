"""CM008: check the keywords of calls of renamed classes against the new constructors."""

from __future__ import annotations

from collections.abc import Callable

import libcst as cst

from compat import _catalog
from compat.renames import ClassHelper

from ._calls import CallSite
from ._context import Context
from ._facts import (
    OLD_TRAINER,
    NewSignature,
    new_signature,
    old_keywords,
    removed_classmethod,
    trainer,
    trainer_flag_changes,
)
from ._ids import Rule
from ._rule import RuleCommand, Site
from ._scopes import Scope

__all__ = ["CheckNewSignaturesCommand"]


_EQUAL = cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace(""))


class _Flags(cst.CSTVisitor):
    """The command-line flags a module spells in strings (``"--gpus"`` -> ``gpus``)."""

    def __init__(self) -> None:
        self.found: set[str] = set()

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        text = node.evaluated_value
        if isinstance(text, str) and text.startswith("--") and text[2:].isidentifier():
            self.found.add(text[2:])


def _keyword(name: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """An edit that passes an argument as ``name=``."""

    def fn(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Arg)
        return node.with_changes(keyword=cst.Name(name), equal=node.equal if node.keyword else _EQUAL)

    return fn


def owner_short(owner: str) -> str:
    return owner.rpartition(".")[2]


class CheckNewSignaturesCommand(RuleCommand):
    """Flag keywords that the new class does not take, checked against its real signature.

    Every keyword of a call of a renamed class (``Trainer(...)``, ``DDPPlugin(...)``, and
    ``super().__init__(...)`` in a class whose only base is the old one), positional arguments
    bound by the old signature included, is checked against the constructor of the new class
    for the target. Keywords the table rewrites are CM006's and CM007's; a keyword that went
    through ``**kwargs`` (to ``DistributedDataParallel``) before and still does is kept;
    ``**kwargs`` passed to a class that checks its keywords gets a TODO, as its keys cannot be
    seen. A keyword that the target's ``Trainer`` takes says so.

    Methods of an old class called on an object of it (``trainer.test(...)``, ``self.log(...)``)
    are checked against the method in the old catalogs and the target's: a keyword an older
    release used where 1.5 has another name gets the new name (``test_dataloaders=`` ->
    ``dataloaders=``), a positional argument whose parameter moved becomes a keyword, and a
    keyword the target's method lacks gets a TODO. Class helpers no class has now
    (``compat.renames.CLASS_HELPERS``: ``Trainer.add_argparse_args(p)``) become the target's
    function with the class first (``add_argparse_args(Trainer, p)``) or get a TODO where it has
    none; CM006 still rewrites their keywords.

    Before::

        from pytorch_lightning import Trainer
        from pytorch_lightning.plugins import DDPPlugin

        strategy = DDPPlugin(ddp_comm_hook=hook, find_unused_parameters=True)
        trainer = Trainer(max_epochs=3, track_grad_norm=2, **overrides)

    After::

        from pytorch_lightning import Trainer
        from pytorch_lightning.plugins import DDPPlugin

        # TODO(compat.migrate): CM008 `DDPStrategy` takes no `ddp_comm_hook=` (it would reach ...
        strategy = DDPPlugin(ddp_comm_hook=hook, find_unused_parameters=True)
        # TODO(compat.migrate): CM008 `Trainer` takes no `track_grad_norm=`: remove it or find where ...
        # TODO(compat.migrate): CM008 `**overrides`: keywords that `Trainer` does not take ...
        trainer = Trainer(max_epochs=3, track_grad_norm=2, **overrides)
    """

    RULE = Rule.CM008
    NEEDS = (Site.CALLS, Site.IMPORTS)
    RUNS_AFTER = (Rule.CM006,)

    def run(self, ctx: Context) -> None:
        for attribute, scope, _ in ctx.analysis.attributes:
            if not attribute.attr.value[:1].islower():
                continue
            cls, where = ctx.class_expression(attribute.value, scope)
            owner = ctx.class_origin(cls, where)
            if isinstance(owner, str) and (helper := removed_classmethod(owner, attribute.attr.value)):
                self._class_helper(ctx, attribute, scope, helper, (cls, where))
        self._method_calls(ctx)
        driver = trainer(self.target)
        driver_signature = new_signature(driver)
        for site in ctx.call_sites:
            entry = ctx.table.object(site.origin)
            new = ctx.table.new(entry) if entry is not None and ctx.table.auto(entry) else None
            builds = (
                new is not None and not site.direct and self._builds(site)
            )  # `Trainer.from_argparse_args(args, ...)`
            signature = new_signature(new) if new and (site.direct or builds) else None
            if new is None or signature is None or site.unbound:
                continue
            short = new.rpartition(".")[2]
            for index, name in sorted(site.names.items()):
                if self._takes(site, signature, index, name):
                    continue
                hint = f"`{short}` takes no `{name}=`"
                if signature.forwards and name in old_keywords(site.origin):
                    hint += f" (it would reach {signature.forwards} through `**kwargs`)"
                if driver_signature is not None and new != driver and name in driver_signature.params:
                    hint += f": pass it to `{driver.rpartition('.')[2]}({name}=...)`"
                else:
                    hint += ": remove it or find where the new API configures it"
                ctx.edits.todo(site.call.args[index], self.RULE, hint)
            if not signature.forwards:
                self._spreads(ctx, site, new)

    def _spreads(self, ctx: Context, site: CallSite, new: str) -> None:
        """A TODO at each ``**kwargs`` of a call that builds ``new``, which checks its keywords."""
        short = new.rpartition(".")[2]
        for arg in site.call.args:
            if arg.star == "**" and id(arg) not in site.shown:  # a dict built here is checked as its parts
                spread = cst.Module([]).code_for_node(arg.value)
                hint = f"`**{spread}`: keywords that `{short}` does not take fail there; check its keys"
                ctx.edits.todo(arg, self.RULE, hint)

    @staticmethod
    def _builds(site: CallSite) -> bool:
        """Whether the call is a class helper that builds the class from keywords
        (``Trainer.from_argparse_args(args, **kwargs)``)."""
        func = site.call.func
        helper = removed_classmethod(site.origin, func.attr.value) if isinstance(func, cst.Attribute) else None
        return helper is not None and helper.constructs

    def _class_helper(
        self,
        ctx: Context,
        attribute: cst.Attribute,
        scope: Scope,
        helper: ClassHelper,
        cls: tuple[cst.BaseExpression, Scope],
    ) -> None:
        """``Cls.add_argparse_args(parser)`` -> ``add_argparse_args(Cls, parser)`` where the target
        has the function (``compat.renames.CLASS_HELPERS``) and ``Cls`` is the old class or a
        class of this file that does not define the member; otherwise a TODO."""
        name = attribute.attr.value
        local = ctx.local_base(*cls)
        if local is not None and ctx.class_defines(local, name):
            return  # the user's own classmethod (an override): not the old API
        function = helper.target(self.target)
        call = ctx.analysis.parent(attribute)
        bound = None
        if function and isinstance(call, cst.Call) and call.func is attribute:
            bound = ctx.import_plan.bind_new(function, scope, self._imports(ctx, *cls))
        if bound is None or call is None:
            how = f"call `{function}(<the class>, ...)`" if function else helper.hint
            ctx.edits.todo(attribute, self.RULE, f"`{owner_short(helper.owner)}.{name}` is gone: {how}")
            return

        def rewrite(node: cst.CSTNode, fn: str = bound) -> cst.CSTNode:
            assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
            first = cst.Arg(node.func.value, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" ")))
            args = [first, *node.args] if node.args else [first.with_changes(comma=cst.MaybeSentinel.DEFAULT)]
            return node.with_changes(func=cst.Name(fn), args=args)

        message = f"`{owner_short(helper.owner)}.{name}(...)` -> `{bound}(<the class>, ...)` ({function})"
        ctx.edits.replace(call, rewrite, self.RULE, message, site=attribute)
        ctx.answered.add(id(attribute))
        if helper.owner == OLD_TRAINER and name == "add_argparse_args":
            self._flags_in_use(ctx, attribute)

    def _flags_in_use(self, ctx: Context, attribute: cst.Attribute) -> None:
        """A TODO at the Trainer's ``add_argparse_args`` when the file reads a flag that the new
        Trainer lacks or defaults differently (``args.max_steps``, ``"--gpus"``): the flags are the
        new Trainer's parameters now."""
        changes = trainer_flag_changes(self.target)
        read = {a.attr.value for a, _, store in ctx.analysis.attributes if not store and a.attr.value in changes}
        flags = _Flags()
        ctx.analysis.module.visit(flags)
        read |= {flag for flag in flags.found if flag in changes}
        if read:
            listed = "; ".join(f"`{n}`: {changes[n]}" for n in sorted(read))
            hint = (
                "the flags are the new Trainer's parameters now (`--gpus` is `--accelerator`/`--devices`), and this "
                f"file uses some that changed ({listed}): check the command lines and the code that reads them"
            )
            ctx.edits.todo(attribute, self.RULE, hint)

    def _method_calls(self, ctx: Context) -> None:
        """Calls of a method of an old class on a receiver of that class (``trainer.fit(...)``,
        ``self.log(...)``), checked against the method's signature in the old releases and on the
        target (the catalogs): a keyword an older release used at a position where the newest has
        another name (``trainer.test(test_dataloaders=...)``, ``fit(train_dataloader=...)``) gets
        the target's name; a positional argument whose parameter the target has at another
        position becomes a keyword; a keyword of the old method the target's lacks gets a TODO."""
        catalog = _catalog.target(self.target)
        for attribute, scope, store in ctx.analysis.attributes:
            call = ctx.analysis.parent(attribute)
            if store or not isinstance(call, cst.Call) or call.func is not attribute:
                continue
            method = attribute.attr.value
            if method.startswith("_") or id(attribute) in ctx.answered:
                continue
            origin, sure = ctx.receiver_of(attribute.value, scope)
            if not isinstance(origin, str) or sure not in ("exact", "open", "named"):
                continue
            local = ctx.local_base(attribute.value, scope)
            if local is not None and ctx.class_defines(local, method):
                continue  # the user's own method
            entry = ctx.table.object(origin)
            new = ctx.table.new(entry) if entry is not None and ctx.table.auto(entry) else None
            old_positional, renamed = _catalog.old_parameter_names(origin, method)
            signature = catalog.signature(catalog.resolve(new) or new, method) if new and old_positional else None
            if new is None or signature is None or signature.var_keyword:
                continue
            self._bind_method_call(ctx, call, f"{new.rpartition('.')[2]}.{method}", old_positional, renamed, signature)

    def _bind_method_call(
        self,
        ctx: Context,
        call: cst.Call,
        name: str,
        old_positional: tuple[str, ...],
        renamed: dict[str, str],
        signature: _catalog.Signature,
    ) -> None:
        if any(arg.star for arg in call.args):
            return  # `*args`/`**kwargs`: what binds where is not known
        new_positional = signature.positional()
        given = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        position = 0
        for arg in call.args:
            if id(arg) in ctx.answered:
                continue
            if arg.keyword is None:
                old = old_positional[position] if position < len(old_positional) else None
                here = new_positional[position] if position < len(new_positional) else None
                position += 1
                if old is None or old == here:
                    continue
                if here is not None and here not in old_positional and not signature.accepts(old):
                    continue  # the parameter renamed in its place (`save_checkpoint(filepath)` -> `(path)`)
                keyword = old if signature.accepts(old) else renamed.get(old)
                if keyword is None or not signature.accepts(keyword) or keyword in given:
                    hint = f"argument {position} of `{name}` was `{old}=` in 1.x"
                    hint += (
                        ": pass it by name" if keyword in given else f", which `{name}` does not take now: remove it"
                    )
                    ctx.edits.todo(arg, self.RULE, hint)
                    continue
                given.add(keyword)
                ctx.edits.replace(
                    arg,
                    _keyword(keyword),
                    self.RULE,
                    f"`{name}`: argument {position} -> `{keyword}=` (its place in 1.x)",
                )
                continue
            keyword = arg.keyword.value
            if signature.accepts(keyword) or keyword not in (*old_positional, *renamed):
                continue  # the same name now, or not the old method's (another rule's, or a mistake)
            new = renamed.get(keyword)
            if new is not None and signature.accepts(new) and new not in given:
                given.add(new)
                ctx.edits.replace(
                    arg,
                    _keyword(new),
                    self.RULE,
                    f"`{name}({keyword}=)` -> `{new}=`",
                )
            else:
                ctx.edits.todo(
                    arg, self.RULE, f"`{name}` takes no `{keyword}=` now: remove it or find what replaces it"
                )
            ctx.answered.add(id(arg))

    def _imports(self, ctx: Context, expr: cst.BaseExpression, scope: Scope) -> list[cst.Import | cst.ImportFrom]:
        """The import statements ``expr`` (a class) came through, or those of its bases' names for a
        class of this file: where an import of the new function goes."""
        root = expr
        while isinstance(root, cst.Attribute):
            root = root.value
        if not isinstance(root, cst.Name):
            return []
        local = ctx.local_base(root, scope)
        if local is not None:
            return [s for arg in local.node.bases for s in self._imports(ctx, arg.value, local.scope)]
        return [b.stmt for b in ctx.bindings(root, scope) if isinstance(b.stmt, (cst.Import, cst.ImportFrom))]

    @staticmethod
    def _takes(site: CallSite, signature: NewSignature, index: int, name: str) -> bool:
        if any(info.index == index for info in site.args):
            return True  # the table has entries for it: CM006 rewrites it or CM007 marks it
        if name in signature.params:
            return True
        return bool(signature.forwards) and name not in old_keywords(site.origin)
