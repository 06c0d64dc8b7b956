"""CM006: rewrite old keyword arguments and string values in calls of old classes."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import cast

import libcst as cst

from compat import _catalog
from compat._legacy import new_home
from compat.renames import Kind, Rename

from ._calls import ArgInfo, CallSite, literal
from ._cm006_argument_edits import (
    ArgOp,
    apply_ops,
    branches,
    conditional,
    conflict,
    falsy,
    message,
    named,
    quote_of,
    template,
)
from ._cm006_launch import keep_launch
from ._cm006_value_types import append_to_list, fit
from ._context import Context
from ._facts import PURE_FUNCTIONS, PURE_METHODS
from ._ids import Rule
from ._layout import comments
from ._rule import RuleCommand, Site
from ._scopes import Scope, dotted

__all__ = ["RewriteTrainerArgumentsCommand"]


class RewriteTrainerArgumentsCommand(RuleCommand):
    """Rewrite the arguments of calls of old classes: old keywords, string values, positional order.

    Keyword renames and expansions come from the table (``gpus=2`` becomes
    ``accelerator="cuda", devices=2``; ``accelerator="ddp"`` becomes ``strategy="ddp"``); the
    training-type plugin in ``plugins=[...]`` moves to ``strategy=``, other plugins stay.
    Positional arguments of an old constructor (``DDPPlugin(devices, 1, env)``, and
    ``super().__init__(...)`` in a class whose only base is the old one) are bound by the old
    signature and passed by keyword, as the new classes order their parameters differently.
    How 1.x launched CPU processes is kept: ``num_processes=N`` alone spawned (``strategy=
    "ddp_spawn"`` is added), ``ddp_cpu`` without a count started one process per CPU (a TODO).
    A literal the table says is a callback's setting now (``progress_bar_refresh_rate=20``)
    becomes that callback in ``callbacks=[...]`` (``TQDMProgressBar(refresh_rate=20)``); a value
    read at run time whose falsy values meant something else (``gpus=args.gpus``: 0 meant CPU)
    becomes a conditional of both meanings when it can be read twice (a name, an attribute, a
    call of a function known to be pure, ``torch.cuda.device_count()``); a conditional of literals
    (``gpus=1 if torch.cuda.is_available() else 0``) becomes the rewrite of either branch chosen by
    the same condition (``accelerator="cuda" if torch.cuda.is_available() else "cpu", devices=1 if
    ... else "auto"``).
    Other non-literal values where a literal decides the meaning, a falsy
    device count, positional arguments whose meaning changed between 1.x releases, or keywords
    that would conflict get a TODO, not a guess. Calls of user subclasses count too.

    A dict of Trainer keywords built in the file and spread into the call (``kwargs =
    dict(gpus=2)``, ``kwargs.update(...)``, or returned by a helper whose every call is spread,
    ``Trainer(**trainer_kwargs(args))``) is read as part of the call, and its ``dict(...)`` and
    ``update(...)`` keywords are rewritten and checked as the call's own, when every use of the
    dict is seen and the launch arguments (``gpus``, ``accelerator``, ``num_processes``, ...) are
    all in one of its parts and not in the call (``codemods/_keyword_dicts.py``); otherwise its
    keywords keep their TODOs.

    Before::

        from pytorch_lightning import Trainer
        from pytorch_lightning.plugins import DDPPlugin, SLURMEnvironment

        ddp = Trainer(accelerator="ddp", num_processes=2)
        gpu = Trainer(gpus=2, plugins=[DDPPlugin([], 1), SLURMEnvironment()])

    After::

        from pytorch_lightning import Trainer
        from pytorch_lightning.plugins import DDPPlugin, SLURMEnvironment

        ddp = Trainer(strategy="ddp", accelerator="cpu", devices=2)
        gpu = Trainer(accelerator="cuda", devices=2, strategy=DDPPlugin(parallel_devices=[], num_nodes=1), plugins=[SLURMEnvironment()])
    """  # noqa: E501 -- the docstring's Before:: example is the rule's documentation, kept on one line

    RULE = Rule.CM006
    NEEDS = (Site.CALLS,)

    def run(self, ctx: Context) -> None:
        for site in ctx.call_sites:
            self._moves: list[tuple[ArgInfo, str, Rename]] = []
            self._bars: list[tuple[ArgInfo, str, Rename]] = []
            self._site(ctx, site)
            for info, keyword, entry in self._moves:  # after the other edits of the call: they index its arguments
                name = info.name
                ctx.edits.replace(site.call, append_to_list(name, keyword), self.RULE, None)
                message = f"{name}=<{keyword[:-1] if keyword.endswith('s') else keyword}> -> {keyword}=[...]"
                ctx.edits.report(info.arg, self.RULE, message, entry)
            for info, made, entry in self._bars:
                ctx.edits.replace(site.call, _as_callback(info.name, made), self.RULE, None)
                message = f"{info.name}=... -> callbacks=[{made}]"
                ctx.edits.report(info.arg, self.RULE, message, entry)

    def _site(self, ctx: Context, site: CallSite) -> None:
        entry = ctx.table.object(site.origin)
        renamed = entry is not None and ctx.table.auto(entry) and bool(ctx.table.new(entry))
        if renamed and site.unbound:
            # The call's arguments are not marked answered: once the base is migrated a second run
            # no longer sees an old class here, so CM007's hints on them (a plugin in `plugins=`)
            # must come now, or the second run would add them (a file refused as not idempotent).
            ctx.edits.todo(site.call, self.RULE, self._unbound_hint(site))
            return
        names = site.bound if renamed else {}
        ops: dict[int, ArgOp] = {}
        for info in site.args:
            if info.index in site.bound and not names:
                continue  # positional, and the class keeps its old signature
            op = self._op(ctx, site, info)
            if op is not None:
                ops[info.index] = op
        keep_launch(ctx, site, ops, self.RULE, self.target)
        if not ops and not names:
            return
        self._supersede(ops)
        module = ctx.analysis.module
        clash = conflict(module, site.call, ops, names)
        fallbacks = [index for index, op in ops.items() if op.fallback]
        if clash and fallbacks:
            # A conditional rewrite (`gpus=n`) that would clash with another keyword of the call
            # (`accelerator=backend`) is not made: the value keeps its TODO, the rest goes on.
            for index in fallbacks:
                op = ops.pop(index)
                arg = site.call.args[index]
                ctx.edits.todo(arg, self.RULE, op.fallback, op.entry)
                ctx.answered.add(id(arg))
            if not ops and not names:
                return
            clash = conflict(module, site.call, ops, names)
        if clash and any(
            info.values and not any(ctx.table.auto(e) for e in info.values) and info.index not in ops
            for info in site.args
        ):
            # A value with no equivalent on the target stays (`accelerator='dp'` on Lightning):
            # CM007 leaves its hint, and the rest of the call waits until that is decided.
            return
        if clash:
            ctx.edits.todo(
                site.call, self.RULE, f"after migration these keywords conflict: {clash}; merge them by hand"
            )
            ctx.answered.update(id(info.arg) for info in site.args)
            return
        quote = quote_of(site.call) or ctx.analysis.quote
        for index, op in ops.items():
            if op.kind == "expand" and not op.template:
                comma = site.call.args[index].comma  # MaybeSentinel.DEFAULT: no comma, so no comments
                ctx.edits.keep_comments(site.call, comma if isinstance(comma, cst.Comma) else None)
            if op.kind == "move" and op.element is not None and op.comment is None:
                ctx.edits.keep_comments(site.call, site.call.args[index].value.elements[op.element].comma)  # type: ignore[attr-defined]
        ctx.edits.replace(site.call, partial(apply_ops, ops=ops, quote=quote, names=names), self.RULE, None)
        if names:
            old = site.origin.rpartition(".")[2]
            order = ", ".join(f"{name}=" for _, name in sorted(names.items()))
            ctx.edits.report(site.call, self.RULE, f"positional arguments of {old}(...) by keyword: {order}")
        plain = named(site.call, names)
        for index, op in ops.items():
            arg = site.call.args[index]
            ctx.answered.add(id(arg))
            ctx.edits.report(arg, self.RULE, message(module, plain.args[index], op), op.entry)

    @staticmethod
    def _unbound_hint(site: CallSite) -> str:
        old = site.origin.rpartition(".")[2]
        return (
            f"the positional arguments of `{old}(...)` meant different parameters in different "
            "Lightning releases (or come from `*args`), and the new class orders them differently: "
            "pass each one by keyword, then run the migration again"
        )

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
            if entry.as_callback and entry.falsy and isinstance(arg.value, cst.Integer) and not ctx.config:
                return self._as_callback(ctx, site, info, entry)
            if new is None:
                return None
            if not new.isidentifier():
                if not table.auto(entry):
                    return None
                if entry.falsy and entry.truthy and _value_map(entry.truthy, entry.falsy) and not ctx.config:
                    if falsy(arg.value):  # one keyword, the value mapped: `=0`, `=1`, `=1 if value else 0`
                        return ArgOp("expand", entry, template=template(entry.falsy))
                    if _constant(arg.value) or (isinstance(arg.value, cst.Name) and arg.value.value == "True"):
                        return ArgOp("expand", entry, template=template(entry.truthy))
                    made = conditional(entry.truthy, entry.falsy, _trainer_defaults(self.target))
                    return ArgOp("expand", entry, template=made)
                if falsy(arg.value):
                    hint = entry.hint or f"`{info.name}=` with this value has no direct equivalent"
                    ctx.edits.todo(arg, self.RULE, hint, entry)
                    return None
                hint = f"`{info.name}=` may be 0 or None here, and {entry.hint}; then rewrite it"
                value = arg.value
                if (
                    entry.falsy
                    and not ctx.config
                    and isinstance(value, cst.IfExp)
                    and all(_constant(b) or falsy(b) for b in (value.body, value.orelse))
                    and _pure(value.test)
                    and not _reads_the_api(ctx, value.test, site.scope)
                ):  # `gpus=1 if torch.cuda.is_available() else 0`
                    made = branches(new, entry.falsy, _trainer_defaults(self.target), value)
                    return ArgOp("expand", entry, template=made, fallback=hint)
                if (
                    entry.falsy
                    and not ctx.config
                    and not _constant(arg.value)
                    and _pure(arg.value)
                    and not _reads_the_api(ctx, arg.value, site.scope)
                ):
                    made = conditional(new, entry.falsy, _trainer_defaults(self.target))
                    return ArgOp("expand", entry, template=made, fallback=hint)
                if entry.hint and not _constant(arg.value):
                    ctx.edits.todo(arg, self.RULE, hint, entry)
                    ctx.answered.add(id(arg))
                    return None
                return ArgOp("expand", entry, template=template(new))
            if table.auto(entry):
                return self._typed_rename(ctx, site, info, entry, new)
            return self._move(ctx, site, info, entry, new)
        if (
            info.literal is None
            and info.any_values
            and not isinstance(ctx.receiver(arg.value, site.scope), str)
            and not _none_of(arg.value, {str(e.value) for e in info.any_values})
        ):
            kw = info.name
            olds = ", ".join(sorted({repr(e.value) for e in info.any_values}))
            news = {template(new)[0].keyword.value for e in info.any_values if (new := table.new(e))}  # type: ignore[union-attr]
            where = " or ".join(f"`{n}=`" for n in sorted(news))
            hint = f"`{kw}=` no longer takes {olds}: if this value can be one of them, pass it as {where}"
            ctx.edits.todo(arg, self.RULE, hint)
            ctx.answered.add(id(arg))
        return None

    def _as_callback(self, ctx: Context, site: CallSite, info: ArgInfo, entry: Rename) -> ArgOp | None:
        """An integer literal of an entry with ``as_callback`` (``progress_bar_refresh_rate=N``):
        0 is the entry's ``falsy`` keywords (``enable_progress_bar=False``); N is
        ``callbacks=[TQDMProgressBar(refresh_rate=N)]`` (what 1.x did, at that rate), the class
        where the target has it. A ``callbacks=`` that is not a list literal, a config file, or a
        name already taken: CM007's TODO."""
        assert entry.as_callback is not None and entry.falsy is not None
        rate = int(cast(cst.Integer, info.arg.value).evaluated_value)
        if rate == 0:
            return ArgOp("expand", entry, template=template(entry.falsy))
        cls, keyword = entry.as_callback
        home = new_home(cls, self.target)
        if home is None:
            return None
        there = next((a for a in site.call.args if a.keyword is not None and a.keyword.value == "callbacks"), None)
        if there is not None and not self._a_list(ctx, there.value, site.scope):
            return None  # (a `**kwargs` holding callbacks too fails loudly at the call: two values)
        root = site.call.func
        while isinstance(root, cst.Attribute):
            root = root.value
        statements = [
            b.stmt
            for b in (ctx.bindings(root, site.scope) if isinstance(root, cst.Name) else ())
            if isinstance(b.stmt, (cst.Import, cst.ImportFrom))
        ]
        name = ctx.import_plan.bind_new(home, site.scope, statements)
        if name is None:
            return None
        self._bars.append((info, f"{name}({keyword}={rate})", entry))
        ctx.answered.add(id(info.arg))
        return None

    @staticmethod
    def _a_list(ctx: Context, value: cst.BaseExpression, scope: Scope) -> bool:
        """Whether ``value`` is a list literal, or a name every binding of which is one
        (``callbacks = []``), so that ``[*value, x]`` is the same list and ``x``."""
        if isinstance(value, cst.List):
            return True
        bound = ctx.bindings(value, scope) if isinstance(value, cst.Name) else []
        return bool(bound) and all(b.kind == "assign" and isinstance(b.value, cst.List) for b in bound)

    def _typed_rename(self, ctx: Context, site: CallSite, info: ArgInfo, entry: Rename, new: str) -> ArgOp | None:
        """``old=value`` -> ``new=value`` when the new keyword takes the value's type; a value of
        another type moves where the entry says (``checkpoint_callback=ModelCheckpoint(...)``
        joins ``callbacks=[...]``) or gets a TODO."""
        decision = fit(ctx, entry, new, info.arg.value, site.scope)
        if decision.action == "rename":
            return ArgOp("rename", entry, keyword=new)
        hint = decision.hint
        if decision.action == "move":
            keyword = decision.keyword
            there = next((a for a in site.call.args if a.keyword is not None and a.keyword.value == keyword), None)
            if any(a.star for a in site.call.args) or (there is not None and not isinstance(there.value, cst.List)):
                hint = (
                    f"`{info.name}=` no longer takes this object: add it to `{keyword}=` yourself "
                    f"(not a list literal here) and drop `{info.name}=`"
                )
            else:
                self._moves.append((info, keyword, entry))
                ctx.answered.add(id(info.arg))
                return None
        ctx.edits.todo(info.arg, self.RULE, hint, entry)
        ctx.answered.add(id(info.arg))
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


def _as_callback(old: str, made: str) -> Callable[[cst.CSTNode], cst.CSTNode]:
    """An edit of a call: ``old=<value>`` becomes the callback ``made`` in ``callbacks=[...]``."""
    append = append_to_list(old, "callbacks")

    def fn(call: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(call, cst.Call)
        value = cst.parse_expression(made)
        args = [
            a.with_changes(value=value) if a.keyword is not None and a.keyword.value == old else a for a in call.args
        ]
        return append(call.with_changes(args=args))

    return fn


def _none_of(value: cst.BaseExpression, olds: set[str]) -> bool:
    """Whether ``value`` is a literal, or a conditional of literals (``"cuda" if n else "cpu"``,
    as this rule writes for ``gpus=n``), that is none of ``olds``."""
    if isinstance(value, cst.IfExp):
        return _none_of(value.body, olds) and _none_of(value.orelse, olds)
    text = literal(value)
    return text is not None and str(text) not in olds


def _reads_the_api(ctx: Context, value: cst.BaseExpression, scope: Scope) -> bool:
    """Whether ``value`` reads a member of an object of the old API (``trainer.gpus``): that
    member may itself be gone, and copied into a conditional it would be judged again on the next
    run; such a value keeps its TODO."""
    node = value.value if isinstance(value, cst.Subscript) else value
    while isinstance(node, cst.Attribute):
        if isinstance(ctx.receiver(node.value, scope), str):
            return True
        node = node.value
    return False


def _repeatable(value: cst.BaseExpression) -> bool:
    """A name, an attribute chain or a subscript of one by a literal or a name: evaluating it twice
    gives the same value and does nothing else (``args.gpus``, ``config["gpus"]``)."""
    if isinstance(value, cst.Name):
        return value.value not in ("None", "True", "False")
    if isinstance(value, cst.Attribute):
        return _repeatable(value.value)
    if isinstance(value, cst.Subscript) and len(value.slice) == 1:
        index = value.slice[0].slice
        return (
            isinstance(index, cst.Index)
            and (_constant(index.value) or isinstance(index.value, cst.Name))
            and _repeatable(value.value)
        )
    return False


@functools.cache
def _trainer_defaults(target: str) -> dict[str, str]:
    """The new Trainer's defaults by keyword, as source text (the target catalog's)."""
    catalog = _catalog.target(target)
    signature = catalog.signature(catalog.trainer)
    return {p.name: p.default for p in (signature.params if signature else ()) if p.default is not None}


def _value_map(new: str, falsy_new: str) -> bool:
    """Whether an entry's rewrite and its falsy one set the same single keyword (only the value
    differs: ``reload_dataloaders_every_n_epochs=1`` / ``=0``), so a literal maps directly."""
    keys = [a.keyword.value for a in template(new) if a.keyword is not None]
    return len(keys) == 1 and keys == [a.keyword.value for a in template(falsy_new) if a.keyword is not None]


def _pure(value: cst.BaseExpression) -> bool:
    """A condition that evaluating twice gives the same value and does nothing else: what
    ``_repeatable`` allows, literals, comparisons, ``and``/``or``/``not`` of them, and calls the
    table of pure functions names (``torch.cuda.is_available()``, ``str(device).startswith("cuda")``)."""
    if _repeatable(value) or _constant(value) or (isinstance(value, cst.Name) and value.value in ("True", "False")):
        return True
    if isinstance(value, cst.Comparison):
        return _pure(value.left) and all(_pure(c.comparator) for c in value.comparisons)
    if isinstance(value, cst.BooleanOperation):
        return _pure(value.left) and _pure(value.right)
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Not):
        return _pure(value.expression)
    if isinstance(value, cst.Call) and all(a.keyword is None and not a.star and _pure(a.value) for a in value.args):
        func = value.func
        name = dotted(func) if isinstance(func, (cst.Name, cst.Attribute)) else None
        if name in PURE_FUNCTIONS:
            return True
        return isinstance(func, cst.Attribute) and func.attr.value in PURE_METHODS and _pure(func.value)
    return False


def _constant(value: cst.BaseExpression) -> bool:
    """A literal (number, string, list of literals): its value is known without running the code."""
    if isinstance(value, (cst.Integer, cst.Float, cst.SimpleString, cst.ConcatenatedString)):
        return True
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, cst.Minus):
        return isinstance(value.expression, cst.Integer)
    if isinstance(value, (cst.List, cst.Tuple)):
        return all(_constant(e.value) for e in value.elements)
    return False
