"""CM004: apply signature changes of old methods in user subclasses and at their call sites."""

from __future__ import annotations

from functools import partial

import libcst as cst

from compat.renames import Rename

from ._cm004_signature_edits import (
    add_property,
    call_to_attribute,
    drop_args,
    drop_params,
    dropped_args,
    prepend_assignments,
    replacement,
)
from ._context import Context
from ._edits import set_value
from ._facts import super_required
from ._ids import Rule
from ._member_edits import rename_def
from ._members import (
    MemberSite,
    choose,
    distinctive,
    message,
    unknown_hint,
)
from ._rule import RuleCommand, Site
from ._scopes import dotted

__all__ = ["ChangeMemberSignaturesCommand"]


class ChangeMemberSignaturesCommand(RuleCommand):
    """Apply signature changes: dropped parameters, and methods that became properties.

    A dropped parameter's uses in the body become the table's replacement (``self.global_rank``)
    and ``super()``/``self`` calls lose the matching arguments; a method that became a property
    gets ``@property`` and its calls on receivers known to be such a class lose their ``()``.

    Before::

        from pytorch_lightning.plugins import ClusterEnvironment, DDPPlugin

        class MyDDP(DDPPlugin):
            def init_ddp_connection(self, global_rank=None, world_size=None):
                print(global_rank, world_size)
                super().init_ddp_connection(global_rank, world_size)

        class MyEnv(ClusterEnvironment):
            def master_address(self):
                return "10.0.0.1"

            def url(self):
                return f"tcp://{self.master_address()}"

    After::

        from pytorch_lightning.plugins import ClusterEnvironment, DDPPlugin

        class MyDDP(DDPPlugin):
            def setup_distributed(self):
                print(self.global_rank, self.world_size)
                super().setup_distributed()

        class MyEnv(ClusterEnvironment):
            @property
            def main_address(self):
                return "10.0.0.1"

            def url(self):
                return f"tcp://{self.main_address}"
    """

    RULE = Rule.CM004
    NEEDS = (Site.MEMBERS,)

    @staticmethod
    def owns(ctx: Context, entry: Rename) -> bool:
        """Whether ``entry`` is this rule's: a member whose parameters or call form changed."""
        return bool(entry.params or entry.to_property) and ctx.table.auto(entry) and ctx.table.new(entry) is not None

    def run(self, ctx: Context) -> None:
        uses: dict[int, list[cst.Name]] | None = None
        for site in ctx.member_sites:
            entry = choose(ctx, site, self.owns)
            if entry is None:
                continue
            new = ctx.table.new(entry)
            assert new is not None
            if not site.known:
                if distinctive(entry.member or ""):
                    ctx.edits.todo(site.node, self.RULE, unknown_hint(ctx, entry), entry)
            elif site.kind == "def":
                if uses is None:
                    uses = self._param_uses(ctx)
                self._def(ctx, site, entry, new, uses)
            elif site.kind == "store":
                ctx.edits.todo(
                    site.node,
                    self.RULE,
                    f"`.{entry.member}` is now `.{new}`: check that it can be assigned",
                    entry,
                )
            else:
                self._use(ctx, site, entry, new)

    # -- definitions -------------------------------------------------------------------------

    def _def(self, ctx: Context, site: MemberSite, entry: Rename, new: str, uses: dict[int, list[cst.Name]]) -> None:
        node = site.node
        assert isinstance(node, cst.FunctionDef) and site.function is not None
        params = node.params
        positional = [*params.posonly_params, *params.params][1:]
        dropped = dict(entry.params)
        extra = positional or params.kwonly_params or isinstance(params.star_arg, cst.Param) or params.star_kwarg
        if entry.to_property and (extra or node.asynchronous is not None):
            if node.asynchronous is not None:
                hint = f"`{node.name.value}` is async but `{new}` is a plain property: compute it eagerly"
            else:
                hint = f"`{node.name.value}` takes arguments but `{new}` is a property: move them to attributes"
            ctx.edits.todo(node.name, self.RULE, hint, entry)
            return
        if not rename_def(ctx, site, new, self.RULE, entry):
            return
        reason = super_required(new)
        if reason and not any(
            s.kind == "super" and s.function is site.function and s.node.attr.value == entry.member  # type: ignore[union-attr]
            for s in ctx.member_sites
        ):
            ctx.edits.todo(node.name, self.RULE, reason, entry)
        if entry.to_property and not any(dotted(d.decorator) == "property" for d in node.decorators):
            ctx.edits.replace(node, add_property, self.RULE, None)
        self_name = site.function.self_name or "self"
        removed = [p for p in (*positional, *params.kwonly_params) if p.name.value in dropped]
        if not removed:
            return
        names = {p.name.value for p in removed}
        for param in removed:
            ctx.edits.keep_comments(node, param)
        ctx.edits.replace(params, partial(drop_params, names=names), self.RULE, None)
        assignments: list[str] = []
        for param in removed:
            expression = replacement(dropped[param.name.value], self_name)
            binding = next(b for b in site.function.body.bindings[param.name.value] if b.node is param)
            if len(site.function.body.bindings[param.name.value]) > 1:
                assignments.append(f"{param.name.value} = {expression}")
                continue
            for name in uses.get(id(binding), ()):
                ctx.edits.replace(name, partial(_parsed, expression=expression), self.RULE, None)
        if assignments:
            ctx.edits.replace(node.body, partial(prepend_assignments, assignments=assignments), self.RULE, None)

    @staticmethod
    def _param_uses(ctx: Context) -> dict[int, list[cst.Name]]:
        uses: dict[int, list[cst.Name]] = {}
        for name, scope in ctx.analysis.names:
            for binding in ctx.bindings(name, scope):
                if binding.kind == "param":
                    uses.setdefault(id(binding), []).append(name)
        return uses

    # -- calls and other uses ----------------------------------------------------------------

    def _use(self, ctx: Context, site: MemberSite, entry: Rename, new: str) -> None:
        attribute = site.node
        assert isinstance(attribute, cst.Attribute)
        call = site.call
        if entry.to_property:
            if call is None or call.args:
                hint = f"`.{entry.member}` is now the property `.{new}`: read it without calling it"
                ctx.edits.todo(attribute, self.RULE, hint, entry)
                return
            ctx.edits.replace(
                call,
                partial(call_to_attribute, new=new),
                self.RULE,
                message(ctx, entry),
                attribute,
                entry,
            )
            ctx.answered.add(id(attribute))
            return
        names = [old for old, _ in entry.params]
        if call is not None:
            if any(a.star for a in call.args) or not _only_pass_through(call, names):
                hint = f"`.{entry.member}(...)` is now `.{new}()`: drop the arguments {', '.join(names)}"
                ctx.edits.todo(attribute, self.RULE, hint, entry)
                return
            for index in dropped_args(call, names):
                ctx.edits.keep_comments(call, call.args[index])
            ctx.edits.replace(call, partial(drop_args, names=names), self.RULE, None)
        ctx.edits.replace(
            attribute.attr,
            set_value(new),
            self.RULE,
            message(ctx, entry),
            attribute,
            entry,
        )
        ctx.answered.add(id(attribute))


def _only_pass_through(call: cst.Call, names: list[str]) -> bool:
    """Whether every argument of ``call`` just passes a dropped parameter on (``x`` or ``self.x``).

    Anything else (``world_size * 2``, a literal) would change meaning when dropped: a TODO then.
    """
    positional = [a for a in call.args if a.keyword is None]
    if len(positional) > len(names):
        return False
    for index, arg in enumerate(call.args):
        name = names[index] if arg.keyword is None else arg.keyword.value
        if name not in names or not _is_name_or_self_attr(arg.value, name):
            return False
    return True


def _is_name_or_self_attr(node: cst.BaseExpression, name: str) -> bool:
    if isinstance(node, cst.Name):
        return node.value == name
    return (
        isinstance(node, cst.Attribute)
        and isinstance(node.value, cst.Name)
        and node.value.value == "self"
        and node.attr.value == name
    )


def _parsed(_node: cst.CSTNode, expression: str) -> cst.CSTNode:
    """A fresh parse of ``expression`` in place of a dropped parameter's use."""
    return cst.parse_expression(expression)
