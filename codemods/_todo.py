"""The one place that spells the TODO comment the codemods leave for a person."""

from __future__ import annotations

__all__ = ["TODO_PREFIX", "todo_text"]

#: Every TODO left by ``python -m compat.migrate`` starts with this (greppable) prefix.
TODO_PREFIX = "# TODO(compat.migrate): "


def todo_text(rule: str, hint: str) -> str:
    """The full comment for one site: prefix, rule id, then the hint on one line."""
    hint = " ".join(hint.split())
    return f"{TODO_PREFIX}{getattr(rule, 'value', rule)} {hint}".rstrip()
