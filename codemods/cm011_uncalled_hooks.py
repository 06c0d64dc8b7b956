"""CM011: mark overrides of old hooks that the new base never calls."""

from __future__ import annotations

import libcst as cst

from compat.renames import REMOVED_HOOK_PARAMETERS

from ._context import Context
from ._epoch_end import EPOCH_END_HOOKS, Fn, plan_epoch_end
from ._facts import dropped_defaults, override_arity, uncalled_hook
from ._ids import Rule
from ._rule import RuleCommand
from ._scopes import ClassInfo

__all__ = ["MarkUncalledHooksCommand"]


class _Names(cst.CSTVisitor):
    def __init__(self) -> None:
        self.found: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.found.add(node.value)


def _read_names(node: cst.CSTNode) -> set[str]:
    """Every name ``node`` mentions."""
    names = _Names()
    node.visit(names)
    return names.found


def _default(value: str) -> Fn:
    """An edit that gives a parameter the default ``value`` (Python source)."""

    def fn(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.Param)
        equal = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
        if node.annotation is not None:
            equal = cst.AssignEqual(cst.SimpleWhitespace(" "), cst.SimpleWhitespace(" "))
        return node.with_changes(default=cst.parse_expression(value), equal=equal)

    return fn


class MarkUncalledHooksCommand(RuleCommand):
    """Mark overrides of old hooks that the new base class's Trainer never calls.

    Renaming the base of a ``LightningModule`` or ``Callback`` subclass keeps overrides such as
    ``validation_epoch_end`` or ``on_pretrain_routine_start``, but no new Trainer calls them:
    their code would never run. Each gets a TODO naming the hook where the code goes for the
    target (``strategies`` calls fewer hooks than Lightning 2.x). Hooks the table renames are
    CM003's and CM007's.

    An override that still requires an argument the new Trainer no longer passes gets, where the
    newest 1.x release gave that parameter a default (1.5's ``on_train_batch_end(..., unused=0)``,
    the ``dataloader_idx`` 1.x always passed in training), that default; otherwise a TODO. An
    override declaring a parameter that stood for a removed feature
    (``training_step(..., optimizer_idx)``: several optimizers in automatic optimization;
    ``hiddens``: truncated BPTT; ``compat.renames.REMOVED_HOOK_PARAMETERS``) gets a TODO.

    An override of an old hook that the new Trainer still calls, but with other arguments, gets a
    TODO too: the new hook's signature comes from the target's catalog, so a 1.x
    ``on_train_batch_end(..., dataloader_idx)`` (2.x passes five arguments) or an override taking
    fewer than the Trainer passes is marked, where it would fail at its first call. Parameters with
    defaults and ``*args`` fit.

    ``training_epoch_end(self, outputs)``, ``validation_epoch_end`` and ``test_epoch_end`` are
    rewritten instead, to the pattern of Lightning's upgrade guide, when the class's own step can
    be followed: every ``return`` of the step gives ``None``, a dict literal of names and constants,
    or (validation and test) a name. The step then appends what 1.x kept of its output to
    ``self.<step>_outputs`` (for training, the dict with its ``"loss"`` detached; ``None`` skipped),
    the hook becomes ``on_*_epoch_end(self)`` with ``outputs`` bound to that list and a new list
    started at its end, and ``__init__`` (after ``super().__init__()``, or a new one) starts the list.
    A step returning a bare tensor name for training, extra step arguments (several optimizers or
    dataloaders), a ``*_step_end`` or ``on_*_epoch_end`` already defined, a class that another class
    of the file derives from and overrides the step or the hook in (the rewritten hook would be
    inherited and read a list the subclass's step never fills), and the like keep the TODO, which
    says why. As in Lightning 2.x, the code then runs after the ``on_*_epoch_end`` of
    callbacks other than checkpoint and early stopping (1.x ran it before every callback's).

    Before::

        from pytorch_lightning import LightningModule

        class Model(LightningModule):
            def validation_epoch_end(self, outputs):
                self.log("val_loss", sum(outputs) / len(outputs))

    After::

        from pytorch_lightning import LightningModule

        class Model(LightningModule):
            # TODO(compat.migrate): CM011 `validation_epoch_end` is never called on a `TrainModule`: ...
            def validation_epoch_end(self, outputs):
                self.log("val_loss", sum(outputs) / len(outputs))
    """

    RULE = Rule.CM011

    def run(self, ctx: Context) -> None:
        table = ctx.table
        for info in ctx.analysis.classes:
            old = ctx.user_old(info)
            entry = table.object(old) if old is not None else None
            new = table.new(entry) if entry is not None and table.auto(entry) else None
            if old is None or not new:
                continue
            for statement in info.node.body.body:
                if not isinstance(statement, cst.FunctionDef):
                    continue
                name = statement.name.value
                # a parameter with a default that the body never reads works either way (`optimizer_idx=0`)
                names = {
                    p.name.value
                    for p in (*statement.params.posonly_params, *statement.params.params)
                    if p.default is None or p.name.value in _read_names(statement.body)
                }
                removed = [
                    hint
                    for owner in sorted(table.ancestors(old))
                    for param in sorted(names)
                    if (hint := REMOVED_HOOK_PARAMETERS.get((owner, name, param)))
                ]
                for hint in removed:
                    ctx.edits.todo(statement.name, self.RULE, hint, entry)
                if name in table.members:
                    continue  # renamed or marked by the table's rules
                reason = uncalled_hook(old, new, name)
                if reason is None:
                    if (arity := override_arity(statement, old, new, name)) is None:
                        continue
                    defaults = dropped_defaults(statement, old, new, name)
                    if defaults is None:
                        ctx.edits.todo(statement.name, self.RULE, arity, entry)
                        continue
                    params = [*statement.params.posonly_params, *statement.params.params][1:]
                    for index, value in defaults:
                        param = params[index]
                        message = (
                            f"`{name}` is not passed `{param.name.value}` now: it defaults to {value}, what 1.x passed"
                        )
                        ctx.edits.replace(param, _default(value), self.RULE, message, site=statement.name, entry=entry)
                    continue
                if name in EPOCH_END_HOOKS:
                    plan = self._plan(ctx, info, statement)
                    if not isinstance(plan, str):
                        for node, fn, message in plan:
                            ctx.edits.replace(node, fn, self.RULE, message, entry=entry)
                        continue
                    reason += f"; not rewritten here: {plan}"
                ctx.edits.todo(statement.name, self.RULE, reason, entry)

    @staticmethod
    def _plan(ctx: Context, info: ClassInfo, hook: cst.FunctionDef) -> str | list[tuple[cst.CSTNode, Fn, str]]:
        """The rewrite of ``hook`` (see ``plan_epoch_end``), or why it stays a TODO.

        Only a class whose one base is the library's is rewritten. Nor is one that a class of the
        same file derives from and overrides the step or the hook in: the rewritten hook would be
        inherited and read a list that the subclass's own step never fills (in 1.x each class's
        ``*_epoch_end`` got the outputs of the steps that ran).
        """
        name = hook.name.value
        step_name, step_end, new_hook, _, _ = EPOCH_END_HOOKS[name]
        bases = info.node.bases
        if not (len(bases) == 1 and ctx.old_object(bases[0].value, info.scope) is not None):
            local = next((b for arg in bases if (b := ctx.local_base(arg.value, info.scope)) is not None), None)
            if local is not None:
                return (
                    f"the class derives from `{local.node.name.value}` (this file), not from the library's class: "
                    f"move this code to `{new_hook}(self)` and append what it needs in `{step_name}`"
                )
            return "the class has other bases than the library's, whose hooks this cannot see"
        for sub in ctx.local_subclasses(info):
            overridden = [
                n
                for n in (step_name, step_end, name, new_hook)
                if any(isinstance(s, cst.FunctionDef) and s.name.value == n for s in sub.node.body.body)
            ]
            if overridden:
                return (
                    f"`{sub.node.name.value}` (this file) derives from this class and overrides "
                    f"`{overridden[0]}`: a rewritten hook would be inherited there and read outputs "
                    "its step never appends"
                )
        return plan_epoch_end(info, hook, ctx.analysis.module.code)
