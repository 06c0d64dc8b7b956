"""CM001: rewrite imports of old names."""

from __future__ import annotations

from collections import Counter
from functools import partial

import libcst as cst

from ._cm001_import_edits import Action, alias_text, fix_line, in_place, rewrite
from ._context import Context
from ._ids import Rule
from ._imports import ModuleMove
from ._rule import RuleCommand, Site

__all__ = ["RewriteImportsCommand"]


class RewriteImportsCommand(RuleCommand):
    """Rewrite imports of old names in place, keeping aliases; drop imports made unused.

    Every form is followed: ``from ... import``, ``as`` aliases (kept), deep module paths, the
    same names under ``compat.``, and imports inside ``try``/``except ImportError`` or
    version-gated ``if`` blocks (rewritten where they are). An old module import whose every use
    was rewritten (``import pytorch_lightning as pl`` used only as ``pl.plugins.DDPPlugin``)
    is removed; the new import takes its place.

    Before::

        from pytorch_lightning.plugins import DDPPlugin, DDPSpawnPlugin as Spawn

        try:
            from pytorch_lightning.plugins.environments import ClusterEnvironment
        except ImportError:
            from compat.plugins.environments import ClusterEnvironment

    After::

        from strategies import DDPStrategy, DDPSpawnStrategy as Spawn

        try:
            from strategies import ClusterEnvironment
        except ImportError:
            from strategies import ClusterEnvironment
    """

    RULE = Rule.CM001
    NEEDS = (Site.IMPORTS,)
    REQUIRES = (Rule.CM002,)
    RUNS_AFTER = (Rule.CM002, Rule.CM009)

    def run(self, ctx: Context) -> None:
        plan = ctx.import_plan
        unused = self._made_unused(ctx, plan.consumed)
        requests: dict[int, list[tuple[str, str]]] = {}
        for request in plan.requests:
            requests.setdefault(id(request.statement), []).append((request.module, request.name))
        by_alias = {id(b.node): b for b in ctx.analysis.import_bindings}
        lines: set[int] = set()
        for stmt, _scope in ctx.analysis.imports:
            if isinstance(stmt.names, cst.ImportStar):
                continue
            actions: dict[int, Action] = {}
            for i, alias in enumerate(stmt.names):
                binding = by_alias.get(id(alias))
                if binding is not None and id(binding) in unused:
                    actions[i] = None
                elif id(alias) in plan.by_alias:
                    actions[i] = plan.by_alias[id(alias)]
                elif id(alias) in plan.moves:
                    actions[i] = plan.moves[id(alias)]
            inserts = requests.get(id(stmt), [])
            if not actions and not inserts:
                continue
            self._report(ctx, stmt, actions)
            if not in_place(stmt, actions):
                for i, action in actions.items():
                    if not isinstance(action, ModuleMove):
                        ctx.edits.keep_comments(stmt, stmt.names[i])
            ctx.edits.replace(stmt, partial(rewrite, actions=actions, inserts=inserts), self.RULE, None)
            line = ctx.analysis.parent(stmt)
            if line is not None and id(line) not in lines:
                lines.add(id(line))
                count = len(line.body) if isinstance(line, (cst.SimpleStatementLine, cst.SimpleStatementSuite)) else 1
                ctx.edits.replace(line, partial(fix_line, count=count), self.RULE, None)

    def _report(self, ctx: Context, stmt: cst.Import | cst.ImportFrom, actions: dict[int, Action]) -> None:
        for i, action in actions.items():
            alias = stmt.names[i]  # type: ignore[index]
            if action is None:
                ctx.edits.report(alias, self.RULE, f"remove unused import {alias_text(alias)}")
            elif isinstance(action, ModuleMove):
                ctx.edits.report(alias, self.RULE, f"import {action.entry.old} -> {action.new}", action.entry)
            else:
                message = f"import {action.binding.qualname} -> {action.new.module}.{action.new.name}"
                ctx.edits.report(alias, self.RULE, message, action.entry)

    @staticmethod
    def _made_unused(ctx: Context, consumed_names: set[int]) -> set[int]:
        """Import bindings whose every reference was rewritten away by another rule."""
        total: Counter[int] = Counter()
        consumed: Counter[int] = Counter()
        for name, scope in ctx.analysis.names:
            for binding in ctx.bindings(name, scope):
                if binding.kind == "import":
                    total[id(binding)] += 1
                    if id(name) in consumed_names:
                        consumed[id(binding)] += 1
        return {key for key, count in consumed.items() if count == total[key]}
