"""CM008: check the keywords of calls of renamed classes against the new constructors."""

from __future__ import annotations

import libcst as cst

from ._calls import CallSite
from ._context import Context
from ._facts import (
    NewSignature,
    new_signature,
    old_keywords,
    removed_classmethod,
    trainer,
)
from ._ids import Rule
from ._rule import RuleCommand, Site

__all__ = ["CheckNewSignaturesCommand"]


class CheckNewSignaturesCommand(RuleCommand):
    """Flag keywords that the new class does not take, checked against its real signature.

    Every keyword of a call of a renamed class (``Trainer(...)``, ``DDPPlugin(...)``, and
    ``super().__init__(...)`` in a class whose only base is the old one), positional arguments
    bound by the old signature included, is checked against the constructor of the new class
    for the target. Keywords the table rewrites are CM006's and CM007's; a keyword that went
    through ``**kwargs`` (to ``DistributedDataParallel``) before and still does is kept;
    ``**kwargs`` passed to a class that checks its keywords gets a TODO, as its keys cannot be
    seen. A keyword that the target's ``Trainer`` takes says so. Class helpers that neither
    target has (``Trainer.from_argparse_args``) get a TODO; CM006 still rewrites their keywords.

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
    NEEDS = (Site.CALLS,)
    RUNS_AFTER = (Rule.CM006,)

    def run(self, ctx: Context) -> None:
        for attribute, scope, _ in ctx.analysis.attributes:
            owner = ctx.class_origin(attribute.value, scope) if attribute.attr.value[:1].islower() else None
            if isinstance(owner, str) and (reason := removed_classmethod(owner, attribute.attr.value)):
                ctx.edits.todo(attribute, self.RULE, reason)
        driver = trainer(self.target)
        driver_signature = new_signature(driver)
        for site in ctx.call_sites:
            entry = ctx.table.object(site.origin)
            new = ctx.table.new(entry) if entry is not None and ctx.table.auto(entry) else None
            signature = new_signature(new) if new and site.direct else None
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
            for arg in site.call.args:
                if arg.star == "**" and not signature.forwards:
                    spread = cst.Module([]).code_for_node(arg.value)
                    hint = f"`**{spread}`: keywords that `{short}` does not take fail there; check its keys"
                    ctx.edits.todo(arg, self.RULE, hint)

    @staticmethod
    def _takes(site: CallSite, signature: NewSignature, index: int, name: str) -> bool:
        if any(info.index == index for info in site.args):
            return True  # the table has entries for it: CM006 rewrites it or CM007 marks it
        if name in signature.params:
            return True
        return bool(signature.forwards) and name not in old_keywords(site.origin)
