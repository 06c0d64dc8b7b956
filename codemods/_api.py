"""The rules, and the public entry point for one file: the migration (the pre-scan is ``_prescan``)."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from ._edits import Change
from ._engine import order_rules, run_rules
from ._ids import Rule
from ._parse import parse_module
from ._prescan import prescan
from ._rule import RuleCommand
from ._suppress import parse_suppressions
from ._table import index
from .cm001_imports import RewriteImportsCommand
from .cm002_class_references import RenameClassReferencesCommand
from .cm003_overridden_members import RenameOverriddenMembersCommand
from .cm004_signatures import ChangeMemberSignaturesCommand
from .cm005_attributes import RenameAttributesCommand
from .cm006_trainer_arguments import RewriteTrainerArgumentsCommand
from .cm007_manual_todos import MarkManualMigrationsCommand
from .cm008_new_signatures import CheckNewSignaturesCommand
from .cm009_type_checks import KeepTypeChecksCommand
from .cm010_dotted_paths import RewriteDottedPathsCommand
from .cm011_uncalled_hooks import MarkUncalledHooksCommand
from .cm012_renamed_members import CheckRenamedMembersCommand
from .cm013_safety_net import FlagOldOnlyNamesCommand

if TYPE_CHECKING:
    from libcst.codemod import Codemod, CodemodContext

__all__ = ["RULES", "Result", "as_codemod", "migrate_source", "prescan", "select_rules"]

#: Rule id -> rule class.
RULES: dict[Rule, type[RuleCommand]] = {
    cls.RULE: cls
    for cls in (
        RewriteImportsCommand,
        RenameClassReferencesCommand,
        RenameOverriddenMembersCommand,
        ChangeMemberSignaturesCommand,
        RenameAttributesCommand,
        RewriteTrainerArgumentsCommand,
        MarkManualMigrationsCommand,
        CheckNewSignaturesCommand,
        KeepTypeChecksCommand,
        RewriteDottedPathsCommand,
        MarkUncalledHooksCommand,
        CheckRenamedMembersCommand,
        FlagOldOnlyNamesCommand,
    )
}


def select_rules(select: Collection[str] | None = None, ignore: Collection[str] = ()) -> list[type[RuleCommand]]:
    """The rule classes of ``RULES`` to run, in order (see ``codemods._engine.order_rules``).

    Raises:
        ValueError: an id or prefix that names no rule.
    """
    return order_rules(RULES, select, ignore)


@dataclass(frozen=True)
class Result:
    """What ``migrate_source`` did to one file.

    Attributes:
        code: the migrated source (the input itself when nothing changed).
        changes: every edit made and every TODO site (also TODOs already present from an
            earlier run, so a report lists what still needs a person), in source order.
    """

    code: str
    changes: tuple[Change, ...]
    _changed: bool = field(default=False, repr=False)

    @property
    def changed(self) -> bool:
        """Whether ``code`` differs from the input."""
        return self._changed

    @property
    def held(self) -> tuple[int, ...]:
        """The lines whose ``# compat: ignore`` covers an edit, which held the file back
        (``code`` is then the input: edits of one file go together, so none was made)."""
        return tuple(sorted({c.line for c in self.changes if c.suppressed and not c.todo}))


def migrate_source(
    source: str,
    *,
    module: str = "",
    target: str = "strategies",
    select: Collection[str] | None = None,
    ignore: Collection[str] = (),
    user_classes: Mapping[str, str] | None = None,
    lightning_namespace: str | None = None,
) -> Result:
    """Run the selected rules over one file.

    Args:
        source: the file's text.
        module: its dotted module name, for relative imports (``pkg.__init__`` for a package).
        target: ``"strategies"`` (default) or ``"lightning"`` (Lightning 2.x names).
        select: rule ids or prefixes to run (default: all); ``ignore``: ids or prefixes to skip.
        user_classes: user class qualname -> old class it derives from, across the tree
            (``resolve_user_classes``), so subclasses of subclasses are migrated too.
        lightning_namespace: for ``target="lightning"``, the package every Lightning name of the
            file is imported from: ``"lightning.pytorch"`` (the default) or ``"pytorch_lightning"``
            (see ``codemods._lightning``).

    ``# compat: ignore[CM0xx]`` comments in ``source`` are honoured (``codemods._suppress``):
    a suppressed TODO is not added and is reported with ``suppressed=True``; a suppressed edit
    holds the whole file back (``Result.held``): edits of one file go together (an import and
    its uses), so none is made and the file is returned as it was.

    Returns:
        The migrated code and its changes; running it again changes nothing.

    Raises:
        libcst.ParserSyntaxError: the source does not parse.
        ValueError: an unknown target or rule id.
    """
    index(target)
    rules = select_rules(select, ignore)
    tree = parse_module(source)
    _, code, changes, _ = run_rules(
        tree,
        rules,
        module=module,
        target=target,
        user_classes=user_classes,
        source=source,
        lightning_namespace=lightning_namespace,
        suppressions=parse_suppressions(source),
    )
    assert code is not None
    return Result(code, tuple(changes), code != source)


def as_codemod(
    rule: Rule, context: CodemodContext, target: str = "strategies", user_classes: Mapping[str, str] | None = None
) -> Codemod:
    """One rule (with the rules it requires) as a ``libcst.codemod.Codemod``, for libcst's own tools.

    TODOs are also reported through ``context.warnings`` (not the ones a ``# compat: ignore``
    comment suppresses, see ``migrate_source``); the module name for relative imports comes
    from ``context.full_module_name``.
    """
    from libcst.codemod import Codemod

    rules = select_rules([rule])
    cls = RULES[rule]

    class _Adapter(Codemod):
        DESCRIPTION = cls.DESCRIPTION

        def transform_module_impl(self, tree: cst.Module) -> cst.Module:
            module, _, changes, _ = run_rules(
                tree,
                rules,
                module=self.context.full_module_name or "",
                target=target,
                user_classes=user_classes,
                suppressions=parse_suppressions(tree.code),
            )
            for change in changes:
                if change.todo and not change.suppressed:
                    self.warn(f"line {change.line}: {change.rule} {change.message}")
            return module

    _Adapter.__name__ = _Adapter.__qualname__ = f"{cls.__name__}Codemod"
    return _Adapter(context)
