"""The base class of every rule; all rules of a file share one parse, one walk, one rebuild."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import libcst as cst

from ._context import Context
from ._ids import Rule

if TYPE_CHECKING:
    from libcst.codemod import Codemod, CodemodContext

__all__ = ["RuleCommand"]


class RuleCommand:
    """One migration rule.

    The engine parses a file once, walks it once (:mod:`codemods._scan`) and hands the same
    :class:`~codemods._context.Context` to every selected rule's :meth:`run`, in the order their
    ``RUNS_AFTER`` declare; rules only ask for edits, which are applied together at the end.
    Rules are not ``libcst`` visitors (a visitor pass per rule costs about a parse each, and
    ``libcst.codemod`` alone takes 0.6 s to import); :meth:`as_codemod` adapts one to libcst's
    ``Codemod`` API for use with libcst's own tools.

    Args:
        target: ``"strategies"`` (default) or ``"lightning"``.
        user_classes: user class qualname -> old class, from :func:`codemods.resolve_user_classes`.
    """

    #: The rule id.
    RULE: ClassVar[Rule]
    #: Rules that must run too for this one to leave valid code (selecting it brings them).
    REQUIRES: ClassVar[tuple[Rule, ...]] = ()
    #: Rules whose edits this one reads, so they run first when selected.
    RUNS_AFTER: ClassVar[tuple[Rule, ...]] = ()
    #: The first line of the class docstring (generated; the docstring is the documentation).
    DESCRIPTION: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        doc = (inspect.getdoc(cls) or "").strip()
        cls.DESCRIPTION = doc.splitlines()[0] if doc else ""

    def __init__(self, target: str = "strategies", user_classes: Mapping[str, str] | None = None) -> None:
        self.target = target
        self.user_classes: Mapping[str, str] = user_classes or {}

    def run(self, ctx: Context) -> None:
        """Look at the file through ``ctx`` and ask ``ctx.edits`` for this rule's edits."""
        raise NotImplementedError

    @classmethod
    def as_codemod(
        cls,
        context: CodemodContext,
        target: str = "strategies",
        user_classes: Mapping[str, str] | None = None,
    ) -> Codemod:
        """This rule (with the rules it requires) as a ``libcst.codemod.Codemod``.

        TODOs are also reported through ``context.warnings``; the module name for relative
        imports comes from ``context.full_module_name``.
        """
        from libcst.codemod import Codemod

        rule = cls

        class _Adapter(Codemod):
            DESCRIPTION = rule.DESCRIPTION

            def transform_module_impl(self, tree: cst.Module) -> cst.Module:
                from ._engine import run_rules
                from ._registry import select_rules

                module, _, changes, _ = run_rules(
                    tree,
                    select_rules([rule.RULE.value]),
                    module=self.context.full_module_name or "",
                    target=target,
                    user_classes=user_classes,
                )
                for change in changes:
                    if change.todo:
                        self.warn(f"line {change.line}: {change.rule} {change.message}")
                return module

        _Adapter.__name__ = _Adapter.__qualname__ = f"{cls.__name__}Codemod"
        return _Adapter(context)
