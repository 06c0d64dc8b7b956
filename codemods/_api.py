"""The rules, and the public entry points for one file: the pre-scan and the migration."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import libcst as cst

from ._edits import Change
from ._engine import order_rules, run_rules
from ._ids import Rule
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


#: A pre-scan group: substrings one of which the text must hold, and the regex that decides.
_Group = tuple[tuple[str, ...], tuple[bytes, ...], "re.Pattern[str]", "re.Pattern[bytes]"]
_PATTERNS: dict[tuple[object, frozenset[str]], tuple[_Group, ...]] = {}
_ANCHOR_LENGTH = 6  # long enough to be rare in ordinary code, short enough to be shared by names


def anchors(names: Iterable[str]) -> tuple[str, ...]:
    """Few substrings such that each of ``names`` contains one (a greedy set cover).

    Candidates are the names' substrings of ``_ANCHOR_LENGTH`` characters (a shorter name
    is its own candidate); each step takes the one found in the most names not yet covered.
    ``"Plugin"`` covers every ``*Plugin`` class, so about 40 class names need 7 anchors.
    """
    left = {
        name: {name[i : i + _ANCHOR_LENGTH] for i in range(max(1, len(name) - _ANCHOR_LENGTH + 1))} for name in names
    }
    chosen: list[str] = []
    while left:
        counts: dict[str, int] = {}
        for parts in left.values():
            for part in parts:
                counts[part] = counts.get(part, 0) + 1
        best = max(sorted(counts), key=lambda part: counts[part])
        chosen.append(best)
        left = {name: parts for name, parts in left.items() if best not in name}
    return tuple(chosen)


def _patterns(extra: frozenset[str]) -> tuple[_Group, ...]:
    table = index("strategies")
    key = (table, extra)
    cached = _PATTERNS.get(key)
    if cached is None:
        groups = table.pattern_groups()
        if extra:
            groups.append((extra, r"\b(?:{})\b".format("|".join(sorted(map(re.escape, extra))))))
        built = []
        for names, source in groups:
            found = anchors(names)
            built.append((found, tuple(a.encode() for a in found), re.compile(source), re.compile(source.encode())))
        cached = tuple(built)
        if len(_PATTERNS) > 32:
            _PATTERNS.clear()
        _PATTERNS[key] = cached
    return cached


def prescan(source: str | bytes, extra_names: Iterable[str] = ()) -> bool:
    """Cheap text test: ``False`` means the file surely needs nothing.

    Patterns built from the table: every old class, function and module name (and their
    owners', such as ``Trainer``), imports from ``pytorch_lightning``/``compat``, and member
    accesses through receivers spelled like an old class (``trainer.training_type_plugin``).
    Any rule change or TODO needs one of these in the text (or one of ``extra_names``: pass the
    short names of user classes found by ``resolve_user_classes``, so files that only
    subclass them are scanned too).

    Each pattern needs one of a few literal substrings (``anchors``, e.g. ``Plugin``,
    ``Trainer``, ``pytorch_lightning``); the pattern runs only on a text holding one, so an
    ordinary file costs a handful of substring searches, about what reading it costs.

    Args:
        source: the file's text (``str``) or its raw bytes.
        extra_names: more identifiers to look for; dotted names count by their last part.
    """
    extra = frozenset(name.rpartition(".")[2] for name in extra_names)
    if isinstance(source, bytes):
        return any(
            any(a in source for a in raw) and pattern.search(source) is not None
            for _, raw, _, pattern in _patterns(extra)
        )
    return any(
        any(a in source for a in text) and pattern.search(source) is not None
        for text, _, pattern, _ in _patterns(extra)
    )


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
    tree = cst.parse_module(source)
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
