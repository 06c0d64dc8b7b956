"""Keeping layout and comments when a rule drops an item from a list of aliases, parameters,
arguments or elements."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Sequence
from typing import Any

import libcst as cst

from ._ids import TODO_PREFIX

__all__ = ["add_lines", "comments", "todo_lines", "uncommented", "with_lines", "without"]


def without(items: Sequence[Any], drop: Collection[int]) -> list[Any]:
    """``items`` (aliases, parameters, arguments, elements) minus the ``drop`` indexes.

    Commas stay with their items (they carry line breaks and comments); only when the last
    item goes does the new last one take its comma, unless its own ends a line.
    """
    kept: list[Any] = []
    for i, item in enumerate(items):
        if i not in drop:
            kept.append(item)
        elif kept and i < len(items) - 1 and (todos := todo_lines(item.comma)):
            # The TODO lines above the next item live in this one's comma: keep them there.
            kept[-1] = kept[-1].with_changes(comma=with_lines(kept[-1].comma, todos))
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


def todo_lines(comma: object) -> list[cst.EmptyLine]:
    """The ``# TODO(compat.migrate)`` lines after ``comma`` (above the item that follows it)."""
    if not (isinstance(comma, cst.Comma) and isinstance(comma.whitespace_after, cst.ParenthesizedWhitespace)):
        return []
    return [
        line
        for line in comma.whitespace_after.empty_lines
        if line.comment is not None and line.comment.value.startswith(TODO_PREFIX)
    ]


def add_lines(ws: cst.ParenthesizedWhitespace, lines: Sequence[cst.EmptyLine]) -> cst.ParenthesizedWhitespace:
    """``ws`` with ``lines`` added at its end, indented like the line it leads to."""
    new = [line.with_changes(indent=ws.indent, whitespace=ws.last_line) for line in lines]
    return ws.with_changes(empty_lines=[*ws.empty_lines, *new])


def with_lines(comma: Any, lines: Sequence[cst.EmptyLine]) -> Any:
    """``comma`` (or an opening bracket) with ``lines`` added after it, indented like its next line."""
    ws = comma.whitespace_after if isinstance(comma, (cst.Comma, cst.LeftSquareBracket, cst.LeftParen)) else None
    if not isinstance(ws, cst.ParenthesizedWhitespace):
        return comma
    return comma.with_changes(whitespace_after=add_lines(ws, lines))


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
