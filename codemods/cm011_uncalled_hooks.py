"""CM011: mark overrides of old hooks that the new base never calls."""

from __future__ import annotations

import libcst as cst

from ._context import Context
from ._epoch_end import EPOCH_END_HOOKS, plan_epoch_end
from ._facts import uncalled_hook
from ._ids import Rule
from ._rule import RuleCommand

__all__ = ["MarkUncalledHooksCommand"]


class MarkUncalledHooksCommand(RuleCommand):
    """Mark overrides of old hooks that the new base class's Trainer never calls.

    Renaming the base of a ``LightningModule`` or ``Callback`` subclass keeps overrides such as
    ``validation_epoch_end`` or ``on_pretrain_routine_start``, but no new Trainer calls them:
    their code would never run. Each gets a TODO naming the hook where the code goes for the
    target (``strategies`` calls fewer hooks than Lightning 2.x). Hooks the table renames are
    CM003's and CM007's.

    ``training_epoch_end(self, outputs)``, ``validation_epoch_end`` and ``test_epoch_end`` are
    rewritten instead, to the pattern of Lightning's upgrade guide, when the class's own step can
    be followed: every ``return`` of the step gives ``None``, a dict literal of names and constants,
    or (validation and test) a name. The step then appends what 1.x kept of its output to
    ``self.<step>_outputs`` (for training, the dict with its ``"loss"`` detached; ``None`` skipped),
    the hook becomes ``on_*_epoch_end(self)`` with ``outputs`` bound to that list and a new list
    started at its end, and ``__init__`` (after ``super().__init__()``, or a new one) starts the list.
    A step returning a bare tensor name for training, extra step arguments (several optimizers or
    dataloaders), a ``*_step_end`` or ``on_*_epoch_end`` already defined, and the like keep the TODO,
    which says why. As in Lightning 2.x, the code then runs after the ``on_*_epoch_end`` of
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
                if name in table.members:
                    continue  # renamed or marked by the table's rules
                reason = uncalled_hook(old, new, name)
                if reason is None:
                    continue
                if name in EPOCH_END_HOOKS:
                    bases = info.node.bases
                    direct = len(bases) == 1 and ctx.old_object(bases[0].value, info.scope) is not None
                    plan = (
                        plan_epoch_end(info, statement, ctx.analysis.module.code)
                        if direct
                        else "the class has other bases than the library's, whose hooks this cannot see"
                    )
                    if not isinstance(plan, str):
                        for node, fn, message in plan:
                            ctx.edits.replace(node, fn, self.RULE, message, entry=entry)
                        continue
                    reason += f"; not rewritten here: {plan}"
                ctx.edits.todo(statement.name, self.RULE, reason, entry)
