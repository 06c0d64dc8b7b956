"""CM006: rewrite old keyword arguments and string values in calls of old classes."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from compat.renames import Kind, Rename

from ._calls import ArgInfo, CallSite, call_sites, literal
from ._cm006_argument_edits import (
    ArgOp,
    apply_ops,
    conflict,
    falsy,
    message,
    quote_of,
    template,
)
from ._context import Context
from ._layout import comments
from ._rule import Rule, RuleCommand

__all__ = ["RewriteTrainerArgumentsCommand"]


class RewriteTrainerArgumentsCommand(RuleCommand):
    """Rewrite old ``Trainer`` keyword arguments and string values.

    Keyword renames and expansions come from the table (``gpus=2`` becomes
    ``accelerator="cuda", devices=2``; ``accelerator="ddp"`` becomes ``strategy="ddp"``); the
    training-type plugin in ``plugins=[...]`` moves to ``strategy=``, other plugins stay. A
    non-literal value where a literal decides the meaning, a falsy device count, or keywords
    that would conflict get a TODO, not a guess. Calls of user subclasses count too.

    Before::

        from pytorch_lightning import Trainer
        from pytorch_lightning.plugins import DDPPlugin, SLURMEnvironment

        ddp = Trainer(accelerator="ddp", num_processes=2)
        gpu = Trainer(gpus=2, plugins=[DDPPlugin(), SLURMEnvironment()])

    After::

        from pytorch_lightning import Trainer
        from pytorch_lightning.plugins import DDPPlugin, SLURMEnvironment

        ddp = Trainer(strategy="ddp", accelerator="cpu", devices=2)
        gpu = Trainer(accelerator="cuda", devices=2, strategy=DDPPlugin(), plugins=[SLURMEnvironment()])
    """

    RULE = Rule.CM006

    def run(self, ctx: Context) -> None:
        for site in call_sites(ctx):
            self._site(ctx, site)

    def _site(self, ctx: Context, site: CallSite) -> None:
        ops: dict[int, ArgOp] = {}
        for info in site.args:
            op = self._op(ctx, site, info)
            if op is not None:
                ops[info.index] = op
        if not ops:
            return
        self._supersede(ops)
        module = ctx.analysis.module
        clash = conflict(module, site.call, ops)
        if clash:
            ctx.edits.todo(
                site.call, self.RULE, f"after migration these keywords conflict: {clash}; merge them by hand"
            )
            ctx.answered.update(id(info.arg) for info in site.args)
            return
        quote = quote_of(site.call) or ctx.analysis.quote
        for index, op in ops.items():
            if op.kind == "expand" and not op.template:
                ctx.edits.keep_comments(site.call, site.call.args[index].comma)
            if op.kind == "move" and op.element is not None and op.comment is None:
                ctx.edits.keep_comments(site.call, site.call.args[index].value.elements[op.element].comma)  # type: ignore[attr-defined]
        ctx.edits.replace(site.call, lambda n, o=ops, q=quote: apply_ops(n, o, q), self.RULE, None)
        for index, op in ops.items():
            arg = site.call.args[index]
            ctx.answered.add(id(arg))
            ctx.edits.report(arg, self.RULE, message(module, arg, op), op.entry)

    @staticmethod
    def _supersede(ops: dict[int, ArgOp]) -> None:
        """``accelerator="ddp", plugins=[DDPPlugin(...)]``: the plugin instance wins.

        Lightning documented this pair, and used the instance; the string only named the same
        strategy, so it is dropped instead of reported as a conflict.
        """
        moved = {op.keyword for op in ops.values() if op.kind == "move"}
        for index, op in list(ops.items()):
            if op.kind == "expand" and op.entry.kind is Kind.ARGUMENT_VALUE:
                kept = tuple(t for t in op.template if t.keyword is None or t.keyword.value not in moved)
                if len(kept) != len(op.template):
                    dropped = next(iter(moved))
                    ops[index] = replace(op, template=kept, superseded=True, template_dropped=dropped)

    def _op(self, ctx: Context, site: CallSite, info: ArgInfo) -> ArgOp | None:
        table = ctx.table
        arg = info.arg
        if info.values:
            entry = info.values[0]
            new = table.new(entry)
            return ArgOp("expand", entry, template=template(new)) if table.auto(entry) and new else None
        if info.arguments:
            entry = info.arguments[0]
            new = table.new(entry)
            if new is None:
                return None
            if not new.isidentifier():
                if not table.auto(entry):
                    return None
                if falsy(arg.value):
                    hint = entry.hint or f"`{arg.keyword.value}=` with this value has no direct equivalent"  # type: ignore[union-attr]
                    ctx.edits.todo(arg, self.RULE, hint, entry)
                    return None
                return ArgOp("expand", entry, template=template(new))
            if table.auto(entry):
                return ArgOp("rename", entry, keyword=new)
            return self._move(ctx, site, info, entry, new)
        if (
            info.literal is None
            and info.any_values
            and not isinstance(ctx.receiver(arg.value, site.scope), str)
        ):
            kw = arg.keyword.value  # type: ignore[union-attr]
            olds = ", ".join(sorted({repr(e.value) for e in info.any_values}))
            news = {template(new)[0].keyword.value for e in info.any_values if (new := table.new(e))}  # type: ignore[union-attr]
            where = " or ".join(f"`{n}=`" for n in sorted(news))
            hint = f"`{kw}=` no longer takes {olds}: if this value can be one of them, pass it as {where}"
            ctx.edits.todo(arg, self.RULE, hint)
            ctx.answered.add(id(arg))
        return None

    @staticmethod
    def _move(ctx: Context, site: CallSite, info: ArgInfo, entry: Rename, keyword: str) -> ArgOp | None:
        """``plugins=[MyDDP(), X()]`` -> ``strategy=MyDDP(), plugins=[X()]``, when unambiguous."""
        family = ctx.table.family(keyword[:1].upper() + keyword[1:])
        value = info.arg.value
        elements = [e.value for e in value.elements] if isinstance(value, (cst.List, cst.Tuple)) else [value]
        members, unknown = [], 0
        for index, element in enumerate(elements):
            origin = None if literal(element) is not None else ctx.receiver(element, site.scope, new=True)
            if isinstance(origin, str) and ctx.table.ancestors(origin) & family:
                members.append(index)
            elif origin is None or isinstance(element, cst.StarredElement):
                unknown += 1
        already = any(a.keyword is not None and a.keyword.value == keyword for a in site.call.args)
        if not members and not unknown:
            ctx.answered.add(id(info.arg))  # nothing of that kind in there: nothing to do
            return None
        if len(members) != 1 or unknown or already:
            return None
        if not isinstance(value, (cst.List, cst.Tuple)):
            return ArgOp("move", entry, keyword=keyword)
        # The moved element's end-of-line comment follows it when both end their lines.
        comma, separator = value.elements[members[0]].comma, info.arg.comma
        follows = (
            isinstance(comma, cst.Comma)
            and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)
            and not comments(comma.whitespace_after.with_changes(first_line=cst.TrailingWhitespace()))
            and isinstance(separator, cst.Comma)
            and isinstance(separator.whitespace_after, cst.ParenthesizedWhitespace)
        )
        comment = comma.whitespace_after.first_line if follows else None  # type: ignore[union-attr]
        return ArgOp("move", entry, keyword=keyword, element=members[0], comment=comment)
