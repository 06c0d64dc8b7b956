"""CM001: rewrite imports of old names."""

from __future__ import annotations

import ast
import re
from functools import partial

import libcst as cst

from compat import _catalog

from ._cm001_import_edits import Action, alias_text, fix_line, in_place, rewrite
from ._context import Context
from ._homes import call_changes, find_home, first_missing, lightning_path, old_kind
from ._ids import Rule
from ._imports import ModuleMove, manual_module
from ._rule import RuleCommand, Site
from ._scopes import Binding, dotted

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
        refs, texts = self._references(ctx)
        unused = self._made_unused(refs, plan.consumed) - texts.keys()
        self._module_uses(ctx, refs, texts, unused)
        requests: dict[int, list[tuple[str, str]]] = {}
        for request in plan.requests:
            requests.setdefault(id(request.statement), []).append((request.module, request.name))
        by_alias = {id(b.node): b for b in ctx.analysis.import_bindings}
        duplicates = self._duplicates(ctx, by_alias, unused)
        self._calls_of_found_classes(ctx)
        lines: set[int] = set()
        for stmt, _scope in ctx.analysis.imports:
            if isinstance(stmt.names, cst.ImportStar):
                continue
            missing = [
                plan.unresolved[id(a)]
                for a in stmt.names
                if id(a) in plan.unresolved and id(by_alias[id(a)]) not in unused
            ]
            self._unresolved(ctx, stmt, missing)
            actions: dict[int, Action] = {}
            for i, alias in enumerate(stmt.names):
                binding = by_alias.get(id(alias))
                if binding is not None and (id(binding) in unused or id(alias) in duplicates):
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

    def _calls_of_found_classes(self, ctx: Context) -> None:
        """Calls of a class imported from its new home by name (not by the rename table): a TODO
        where the new class would bind an argument elsewhere, not take it, or default differently."""
        found = {
            id(d.binding): d
            for d in ctx.import_plan.by_alias.values()
            if d.entry is None and d.binding.qualname and old_kind(d.binding.qualname) == "class"
        }
        if not found:
            return
        for call, scope in ctx.analysis.calls:
            if not isinstance(call.func, cst.Name):
                continue
            bound = ctx.bindings(call.func, scope)
            decision = found.get(id(bound[0])) if len(bound) == 1 else None
            if decision is None or any(a.star for a in call.args):
                continue
            positional = sum(1 for a in call.args if a.keyword is None)
            keywords = [a.keyword.value for a in call.args if a.keyword is not None]
            new = f"{decision.new.module}.{decision.new.name}"
            assert decision.binding.qualname is not None
            problems = call_changes(self.target, decision.binding.qualname, new, positional, keywords)
            if problems:
                ctx.edits.todo(call, self.RULE, f"`{call.func.value}` is `{new}` now: {'; '.join(problems)}")

    @staticmethod
    def _duplicates(ctx: Context, by_alias: dict[int, Binding], unused: set[int]) -> set[int]:
        """Aliases of module-level imports that, once migrated, bind a name an earlier module-level
        import already binds to the same object (``from pytorch_lightning import seed_everything``
        and ``from pytorch_lightning.utilities.seed import seed_everything``): dropped."""
        plan = ctx.import_plan
        seen: set[tuple[str, str]] = set()
        found: set[int] = set()
        for stmt, scope in ctx.analysis.imports:
            line = ctx.analysis.parent(stmt)
            if scope is not ctx.analysis.root or line is None or not isinstance(ctx.analysis.parent(line), cst.Module):
                continue  # in a function, a try/except or an if: every branch keeps its own
            if isinstance(stmt.names, cst.ImportStar):
                continue
            for alias in stmt.names:
                binding = by_alias.get(id(alias))
                if binding is None or binding.qualname is None or id(binding) in unused:
                    continue
                decision = plan.by_alias.get(id(alias))
                if decision is None:
                    key = (binding.qualname, binding.name)
                else:
                    key = (f"{decision.new.module}.{decision.new.name}", decision.asname or decision.new.name)
                if key in seen and decision is not None:
                    found.add(id(alias))
                seen.add(key)
        return found

    def _unresolved(self, ctx: Context, stmt: cst.Import | cst.ImportFrom, missing: list[tuple[str, str]]) -> None:
        """A TODO on an old import the target has no home for (it is left as it was)."""
        if not missing:
            return
        if self.target == "lightning":
            hint = f"{'; '.join(reason for _, reason in missing)}: this import still needs pytorch_lightning 1.x"
        else:
            names = ", ".join(f"`{name}`" for name, _ in missing)
            hint = f"`strategies` has no {names}: this import still needs pytorch_lightning, whose objects a "
            hint += "strategies Trainer does not drive; replace or drop it"
        ctx.edits.todo(stmt, self.RULE, hint)

    def _module_uses(
        self, ctx: Context, refs: dict[int, list[cst.Name]], texts: dict[int, list[str]], unused: set[int]
    ) -> None:
        """What an old module import (``import pytorch_lightning as pl``) still reaches after the rules.

        Lightning: a chain ``pl.a.b`` that Lightning 2.6 does not have gets a TODO where it is
        used (with the name's new home when it has one). strategies: the import gets a TODO
        listing what still goes through it.
        """
        consumed = ctx.import_plan.consumed
        for binding in ctx.analysis.import_bindings:
            if not isinstance(binding.stmt, cst.Import) or id(binding) in unused or not binding.qualname:
                continue
            if binding.qualname.partition(".")[0] != _catalog.OLD_PACKAGE or manual_module(ctx, binding.qualname):
                continue
            chains = [_chain(ctx, name) for name in refs.get(id(binding), ()) if id(name) not in consumed]
            chains = [c for c in chains if not (dotted(c) or "").rpartition(".")[2].startswith("__")]
            if self.target == "lightning":
                for node in chains:
                    self._check_chain(ctx, binding.qualname, node)
                continue
            shown = list(dict.fromkeys([*(dotted(c) or "" for c in chains), *texts.get(id(binding), ())]))
            if shown:
                listed = ", ".join(f"`{t}`" for t in shown[:3]) + (", ..." if len(shown) > 3 else "")
                hint = (
                    f"`{binding.name}` still reaches pytorch_lightning here ({listed}), whose objects a "
                    "strategies Trainer does not drive: import what strategies provides instead"
                )
                ctx.edits.todo(binding.stmt, self.RULE, hint)
            for node in chains:  # and each use, where a person reads it
                text = dotted(node)
                if text:
                    ctx.edits.todo(
                        node,
                        self.RULE,
                        f"`{text}` still comes from pytorch_lightning, whose objects a strategies Trainer "
                        "does not drive: use what strategies provides (docs/migration.md) or drop it",
                    )

    def _check_chain(self, ctx: Context, qualname: str, node: cst.BaseExpression) -> None:
        """A TODO on ``pl.a.b.name`` when Lightning 2.6 has no such object (1.x's modules, then its name)."""
        text = dotted(node)
        if text is None:
            return
        parts = (qualname + text[len(text.partition(".")[0]) :]).split(".")
        cut = 1
        while cut < len(parts) and old_kind(".".join(parts[: cut + 1])) == "module":
            cut += 1
        if cut == len(parts) or parts[cut].startswith("__"):
            # a module path, or a dunder (``__version__``) of one: the module itself must exist
            module = ".".join(parts[:cut])
            if cut > 1 and not manual_module(ctx, module) and ctx.table.module(module) is None:
                missing = first_missing("lightning", lightning_path(module))
                if missing is not None:
                    hint = (
                        f"Lightning 2.6 has no module `{missing}` (1.x's `{module}`): replace what this reads from it"
                    )
                    ctx.edits.todo(node, self.RULE, hint)
            return
        module, name = ".".join(parts[:cut]), parts[cut]
        old = f"{module}.{name}"
        if ctx.table.object(old) is not None or manual_module(ctx, old):
            return  # a name of the rename table: its rules rewrite it or leave their TODO
        if first_missing("lightning", lightning_path(old)) is None:
            return
        home = find_home("lightning", module, name)
        if home.module is not None:
            hint = f"Lightning 2.6 has `{name}` at `{home.module}.{name}`, not at `{lightning_path(old)}`"
            hint += ": import it from there"
        else:
            hint = f"{home.reason}: replace it"
        ctx.edits.todo(node, self.RULE, hint)

    def _report(self, ctx: Context, stmt: cst.Import | cst.ImportFrom, actions: dict[int, Action]) -> None:
        for i, action in actions.items():
            alias = stmt.names[i]  # type: ignore[index]
            if action is None:
                ctx.edits.report(alias, self.RULE, f"remove unused or repeated import {alias_text(alias)}")
            elif isinstance(action, ModuleMove):
                ctx.edits.report(alias, self.RULE, f"import {action.entry.old} -> {action.new}", action.entry)
            else:
                message = f"import {action.binding.qualname} -> {action.new.module}.{action.new.name}"
                ctx.edits.report(alias, self.RULE, message, action.entry)

    @staticmethod
    def _references(ctx: Context) -> tuple[dict[int, list[cst.Name]], dict[int, list[str]]]:
        """Every reference to each import binding: names in code, and (as text, never rewritten)
        dotted names in strings (``"pl.Trainer"`` annotations) and entries of ``__all__``."""
        refs: dict[int, list[cst.Name]] = {}
        for name, scope in ctx.analysis.names:
            for binding in ctx.bindings(name, scope):
                if binding.kind == "import":
                    refs.setdefault(id(binding), []).append(name)
        texts: dict[int, list[str]] = {}
        strings = [*ctx.analysis.strings]
        strings += [(s, ctx.analysis.root) for s in ctx.analysis.dotted_strings]
        for string, scope in strings:
            if isinstance(ctx.analysis.parent(string), cst.Expr):
                continue  # a docstring or a bare string: prose
            value = string.evaluated_value
            if not isinstance(value, str) or not _an_expression(value):
                continue  # a URL, a path, a message: not code that could name the import
            for match in _DOTTED.finditer(value):
                for binding in scope.lookup(match.group(1))[1]:
                    if binding.kind == "import":
                        texts.setdefault(id(binding), []).append(match.group(0))
        for exported in ctx.import_plan.exported:
            for binding in ctx.analysis.root.bindings.get(exported, ()):
                if binding.kind == "import":
                    texts.setdefault(id(binding), []).append(exported)
        return refs, texts

    @staticmethod
    def _made_unused(refs: dict[int, list[cst.Name]], consumed_names: set[int]) -> set[int]:
        """Import bindings whose every reference was rewritten away by another rule (a string or
        an ``__all__`` entry naming one is a reference: such imports stay)."""
        return {key for key, names in refs.items() if names and all(id(n) in consumed_names for n in names)}


#: The dotted names in a string (``"pl.Trainer"``, ``"Optional[pl.Trainer]"``), by their root.
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*")


def _an_expression(text: str) -> bool:
    """Whether ``text`` reads as a Python expression (a string annotation, a dotted path)."""
    try:
        ast.parse(text.strip(), mode="eval")
    except (SyntaxError, ValueError):
        return False
    return True


def _chain(ctx: Context, name: cst.Name) -> cst.BaseExpression:
    """The attribute chain ``name`` starts (``pl.utilities.rank_zero_only`` for ``pl``)."""
    node: cst.BaseExpression = name
    while isinstance(parent := ctx.analysis.parent(node), cst.Attribute) and parent.value is node:
        node = parent
    return node
