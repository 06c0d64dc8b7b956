"""CM005: rename old attributes where the receiver is known."""

from __future__ import annotations

from compat.renames import Kind, Rename

from ._context import Context
from ._ids import Rule
from ._member_edits import rename_attribute, rename_def
from ._members import choose, unknown_hint
from ._rule import RuleCommand, Site

__all__ = ["RenameAttributesCommand"]


class RenameAttributesCommand(RuleCommand):
    """Rename old attributes (``trainer.training_type_plugin``) where the receiver is known.

    The receiver must plausibly be the owner: named like it (``trainer``, ``self.trainer``,
    ``pl_module.trainer``), bound to ``Trainer(...)``, annotated with it, or ``self`` in a
    subclass. Any other receiver, and assignments to the old name, get a TODO instead of a guess.

    Before::

        def on_fit_start(self):
            plugin = self.trainer.training_type_plugin
            backend = trainer.accelerator_backend

    After::

        def on_fit_start(self):
            plugin = self.trainer.strategy
            backend = trainer.strategy
    """

    RULE = Rule.CM005
    NEEDS = (Site.MEMBERS,)

    @staticmethod
    def owns(ctx: Context, entry: Rename) -> bool:
        """Whether ``entry`` is this rule's: an attribute renamed without a person."""
        new = ctx.table.new(entry)
        return entry.kind is Kind.ATTRIBUTE and ctx.table.auto(entry) and new is not None and new != entry.member

    def run(self, ctx: Context) -> None:
        for site in ctx.member_sites:
            entry = choose(ctx, site, self.owns)
            if entry is None:
                continue
            new = ctx.table.new(entry)
            assert new is not None
            if not site.known:
                ctx.edits.todo(site.node, self.RULE, unknown_hint(ctx, entry), entry)
            elif site.kind == "def":
                rename_def(ctx, site, new, self.RULE, entry)
            elif site.kind == "store":
                hint = entry.hint or f"`.{entry.member}` is now `.{new}`: check that it can be assigned"
                ctx.edits.todo(site.node, self.RULE, hint, entry)
            else:
                rename_attribute(ctx, site, new, self.RULE, entry)
