"""The rules, and the public entry points for one file: the pre-scan and the migration."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from ._edits import Change
from ._rule import Rule, RuleCommand, order_rules, run_rules
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
    """The rule classes of :data:`RULES` to run, in order (see :func:`codemods._rule.order_rules`).

    Raises:
        ValueError: an id or prefix that names no rule.
    """
    return order_rules(RULES, select, ignore)


@dataclass(frozen=True)
class Result:
    """What :func:`migrate_source` did to one file.

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


_PATTERNS: dict[tuple[object, frozenset[str]], tuple[re.Pattern[str], re.Pattern[bytes]]] = {}


def _patterns(extra: frozenset[str]) -> tuple[re.Pattern[str], re.Pattern[bytes]]:
    table = index("strategies")
    key = (table, extra)
    cached = _PATTERNS.get(key)
    if cached is None:
        source = table.pattern_source()
        if extra:
            source += r"|\b(?:{})\b".format("|".join(sorted(map(re.escape, extra))))
        cached = (re.compile(source), re.compile(source.encode()))
        if len(_PATTERNS) > 32:
            _PATTERNS.clear()
        _PATTERNS[key] = cached
    return cached


def prescan(source: str | bytes, extra_names: Iterable[str] = ()) -> bool:
    """Cheap text test: ``False`` means the file surely needs nothing.

    One compiled pattern built from the table: every old class, function and module name
    (and their owners', such as ``Trainer``), imports from ``pytorch_lightning``/``compat``,
    and member accesses through receivers spelled like an old class
    (``trainer.training_type_plugin``). Any rule change or TODO needs one of these in the text
    (or one of ``extra_names``: pass the short names of user classes found by
    :func:`resolve_user_classes`, so files that only subclass them are scanned too).

    Args:
        source: the file's text (``str``) or its raw bytes.
        extra_names: more identifiers to look for; dotted names count by their last part.
    """
    extra = frozenset(name.rpartition(".")[2] for name in extra_names)
    text_pattern, bytes_pattern = _patterns(extra)
    pattern = bytes_pattern if isinstance(source, bytes) else text_pattern
    return pattern.search(source) is not None  # type: ignore[arg-type]


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
            (:func:`resolve_user_classes`), so subclasses of subclasses are migrated too.
        lightning_namespace: for ``target="lightning"``, the package every Lightning name of the
            file is imported from: ``"lightning.pytorch"`` (the default) or ``"pytorch_lightning"``
            (see :mod:`codemods._lightning`).

    Returns:
        The migrated code and its changes; running it again changes nothing.

    Raises:
        libcst.ParserSyntaxError: the source does not parse.
        ValueError: an unknown target or rule id.
    """
    index(target)
    rules = select_rules(select, ignore)
    tree = cst.parse_module(source)
    _, code, changes, _ = run_rules(
        tree,
        rules,
        module=module,
        target=target,
        user_classes=user_classes,
        source=source,
        lightning_namespace=lightning_namespace,
    )
    assert code is not None
    return Result(code, tuple(changes), code != source)


def as_codemod(
    rule: Rule, context: CodemodContext, target: str = "strategies", user_classes: Mapping[str, str] | None = None
) -> Codemod:
    """One rule (with the rules it requires) as a ``libcst.codemod.Codemod``, for libcst's own tools.

    TODOs are also reported through ``context.warnings``; the module name for relative
    imports comes from ``context.full_module_name``.
    """
    from libcst.codemod import Codemod

    rules = select_rules([rule])
    cls = RULES[rule]

    class _Adapter(Codemod):
        DESCRIPTION = cls.DESCRIPTION

        def transform_module_impl(self, tree: cst.Module) -> cst.Module:
            module, _, changes, _ = run_rules(
                tree, rules, module=self.context.full_module_name or "", target=target, user_classes=user_classes
            )
            for change in changes:
                if change.todo:
                    self.warn(f"line {change.line}: {change.rule} {change.message}")
            return module

    _Adapter.__name__ = _Adapter.__qualname__ = f"{cls.__name__}Codemod"
    return _Adapter(context)
