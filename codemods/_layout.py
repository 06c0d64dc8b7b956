"""Keeping layout and comments when a rule drops an item from a list of aliases, parameters,
arguments or elements."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from typing import Any

import libcst as cst

__all__ = ["comments", "uncommented", "without"]


def without(items: Sequence[Any], drop: Collection[int]) -> list[Any]:
    """``items`` (aliases, parameters, arguments, elements) minus the ``drop`` indexes.

    Commas stay with their items (they carry line breaks and comments); only when the last
    item goes does the new last one take its comma, unless its own ends a line.
    """
    kept = [item for i, item in enumerate(items) if i not in drop]
    if kept and items and len(items) - 1 in drop:
        own, last = kept[-1].comma, items[-1].comma
        if not _breaks_line(own):
            kept[-1] = kept[-1].with_changes(comma=uncommented(last))
        elif _breaks_line(last):
            # Keep this item's own comment, but close the brackets where the old last one did.
            after = own.whitespace_after.with_changes(
                indent=last.whitespace_after.indent, last_line=last.whitespace_after.last_line
            )
            kept[-1] = kept[-1].with_changes(comma=own.with_changes(whitespace_after=after))
    return kept


def _breaks_line(comma: object) -> bool:
    return isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)


def uncommented(comma: cst.Comma | cst.MaybeSentinel) -> cst.Comma | cst.MaybeSentinel:
    """``comma`` with the same line breaks but without comments (those are moved, not copied)."""
    if isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace):
        after = comma.whitespace_after.with_changes(first_line=cst.TrailingWhitespace(), empty_lines=())
        return comma.with_changes(whitespace_after=after)
    return comma


def comments(node: cst.CSTNode) -> list[str]:
    """The comments inside ``node`` (whitespace included), in order."""
    found: list[str] = []
    stack: list[object] = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, cst.Comment):
            found.append(item.value)
        elif isinstance(item, cst.CSTNode):
            stack.extend(reversed([getattr(item, f.name) for f in dataclasses.fields(item)]))
        elif isinstance(item, (tuple, list)):
            stack.extend(reversed(item))
    return found
