"""CM003: rename old methods, hooks and properties in user subclasses."""

from __future__ import annotations

from compat.renames import Kind, Rename

from ._context import Context
from ._ids import Rule
from ._member_edits import rename_attribute, rename_def
from ._members import choose, distinctive, unknown_hint
from ._rule import RuleCommand, Site

__all__ = ["RenameOverriddenMembersCommand"]

_KINDS = (Kind.METHOD, Kind.HOOK, Kind.PROPERTY)


class RenameOverriddenMembersCommand(RuleCommand):
    """Rename old methods, hooks and properties in user subclasses, with their ``super()`` calls.

    The class is followed through its bases, also across files (``user_classes``), so a
    subclass of a subclass of ``DDPPlugin`` is migrated too. Calls on ``self``, ``super()``,
    ``super(Cls, self)`` and other receivers known to be such a class are renamed with the
    ``def``; a class that only reuses an old name is left alone.

    Before::

        from pytorch_lightning.plugins import NativeMixedPrecisionPlugin

        class MyPrecision(NativeMixedPrecisionPlugin):
            def master_params(self, optimizer):
                return super().master_params(optimizer)

    After::

        from pytorch_lightning.plugins import NativeMixedPrecisionPlugin

        class MyPrecision(NativeMixedPrecisionPlugin):
            def main_params(self, optimizer):
                return super().main_params(optimizer)
    """

    RULE = Rule.CM003
    NEEDS = (Site.MEMBERS,)

    @staticmethod
    def owns(ctx: Context, entry: Rename) -> bool:
        """Whether ``entry`` is this rule's: a plain rename of a method, hook or property."""
        new = ctx.table.new(entry)
        return (
            entry.kind in _KINDS
            and not entry.params
            and not entry.to_property
            and ctx.table.auto(entry)
            and new is not None
            and new != entry.member
        )

    def run(self, ctx: Context) -> None:
        for site in ctx.member_sites:
            entry = choose(ctx, site, self.owns)
            if entry is None:
                continue
            new = ctx.table.new(entry)
            assert new is not None
            if not site.known:
                if distinctive(entry.member or ""):
                    ctx.edits.todo(site.node, self.RULE, unknown_hint(ctx, entry), entry)
            elif site.kind == "def":
                rename_def(ctx, site, new, self.RULE, entry)
            elif site.kind == "store":
                hint = entry.hint or f"`.{entry.member}` is now `.{new}`: check that it can be assigned"
                ctx.edits.todo(site.node, self.RULE, hint, entry)
            else:
                rename_attribute(ctx, site, new, self.RULE, entry)
