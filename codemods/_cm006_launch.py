"""How CM006 keeps the way 1.x launched CPU processes (see ``_facts``: the connector's rules)."""

from __future__ import annotations

from dataclasses import replace

import libcst as cst

from compat.renames import Kind

from ._calls import CallSite
from ._cm006_argument_edits import ArgOp, template
from ._context import Context
from ._facts import cpu_count_default, spawn_strategy, spawns_by_count
from ._ids import Rule

__all__ = ["keep_launch"]


def keep_launch(ctx: Context, site: CallSite, ops: dict[int, ArgOp], rule: Rule, target: str) -> None:
    """Spawned stays spawned (``strategy='ddp_spawn'`` added); one process per CPU is a TODO."""
    keywords = frozenset(site.names.values())
    for index, op in list(ops.items()):
        arg, name = site.call.args[index], site.names.get(index, "")
        if op.kind != "expand":
            continue
        if op.entry.kind is Kind.ARGUMENT_VALUE and cpu_count_default(op.entry.value or "", keywords):
            hint = (
                f"1.x started one process per CPU (`os.cpu_count()`) for `{name}={op.entry.value!r}` "
                "with no process count; the new default is one: pass `devices=os.cpu_count()` to keep that"
            )
            ctx.edits.todo(site.call, rule, hint, op.entry)
        elif op.entry.kind is Kind.ARGUMENT and spawns_by_count(name, keywords):
            spawn = spawn_strategy(target)
            count = arg.value.evaluated_value if isinstance(arg.value, cst.Integer) else None
            if count is not None and count > 1:
                ops[index] = replace(op, template=(*op.template, *template(f"strategy={spawn!r}")))
            elif count is None:
                hint = (
                    f"1.x spawned the `{name}=` processes on CPU (`{spawn}`) when more than one; several "
                    f"devices now re-run the script (`ddp`): add `strategy={spawn!r}` if this can exceed 1"
                )
                ctx.edits.todo(arg, rule, hint, op.entry)
