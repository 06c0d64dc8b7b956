"""CM011: mark overrides of old hooks that the new base never calls."""

from __future__ import annotations

import libcst as cst

from ._context import Context
from ._facts import uncalled_hook
from ._rule import Rule, RuleCommand

__all__ = ["MarkUncalledHooksCommand"]


class MarkUncalledHooksCommand(RuleCommand):
    """Mark overrides of old hooks that the new base class's Trainer never calls.

    Renaming the base of a ``LightningModule`` or ``Callback`` subclass keeps overrides such as
    ``validation_epoch_end`` or ``on_pretrain_routine_start``, but no new Trainer calls them:
    their code would never run. Each gets a TODO naming the hook where the code goes for the
    target (``strategies`` calls fewer hooks than Lightning 2.x). Hooks the table renames are
    CM003's and CM007's.

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
                if reason is not None:
                    ctx.edits.todo(statement.name, self.RULE, reason, entry)
