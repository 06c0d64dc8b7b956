"""The import statements CM001 writes: in place where possible, else split by new module."""

from __future__ import annotations

import re
from collections.abc import Sequence

import libcst as cst

from ._imports import FromImport, ModuleMove
from ._layout import without

__all__ = ["Action", "alias_text", "fix_line", "in_place", "rewrite"]

Alias = cst.ImportAlias
#: What becomes of one alias: moved to a new module, module path rewritten, or removed (None).
Action = FromImport | ModuleMove | None
_PRAGMA = re.compile(r"#\s*(noqa|type:|pragma|pylint:|isort:|fmt:|nosec|mypy:|pyright:)")


def alias_text(alias: Alias) -> str:
    text = cst.Module([]).code_for_node(alias.name)
    return f"{text} as {alias.asname.name.value}" if alias.asname and isinstance(alias.asname.name, cst.Name) else text


def _module_expr(dotted_name: str) -> cst.Attribute | cst.Name:
    expr = cst.parse_expression(dotted_name)
    assert isinstance(expr, (cst.Attribute, cst.Name))
    return expr


def in_place(stmt: cst.Import | cst.ImportFrom, actions: dict[int, Action]) -> bool:
    """Whether every alias moves to one new module, so the statement is rewritten where it is."""
    if not isinstance(stmt, cst.ImportFrom) or isinstance(stmt.names, cst.ImportStar):
        return False
    moves = [a for a in actions.values() if isinstance(a, FromImport)]
    return len(moves) == len(stmt.names) and len({a.new.module for a in moves}) == 1


def _new_alias(alias: Alias | None, action: FromImport) -> Alias:
    if action.asname is None:
        asname = None
    elif alias is not None and alias.asname is not None:
        asname = alias.asname
    else:
        asname = cst.AsName(cst.Name(action.asname))
    if alias is None:
        return cst.ImportAlias(cst.Name(action.new.name), asname=asname)
    return alias.with_changes(name=cst.Name(action.new.name), asname=asname)


def _key(alias: Alias) -> tuple[str, str | None]:
    asname = alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else None
    return cst.Module([]).code_for_node(alias.name), asname


def _unique(aliases: Sequence[Alias]) -> list[Alias]:
    seen: set[tuple[str, str | None]] = set()
    out = []
    for alias in aliases:
        key = _key(alias)
        if key not in seen:
            seen.add(key)
            out.append(alias)
    return out


def _from(module: str, names: Sequence[Alias]) -> cst.ImportFrom:
    names = _unique(names)
    names[-1] = names[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return cst.ImportFrom(module=_module_expr(module), names=names)


def rewrite(
    stmt: cst.CSTNode, actions: dict[int, Action], inserts: list[tuple[str, str]]
) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
    assert isinstance(stmt, (cst.Import, cst.ImportFrom)) and not isinstance(stmt.names, cst.ImportStar)
    names = list(stmt.names)
    for i, action in actions.items():
        if isinstance(action, ModuleMove):
            names[i] = names[i].with_changes(name=_module_expr(action.new))
    statements: list[cst.BaseSmallStatement] = []
    if in_place(stmt, actions):
        module = next(a.new.module for a in actions.values() if isinstance(a, FromImport))
        new_names = [_new_alias(alias, actions[i]) for i, alias in enumerate(names)]  # type: ignore[arg-type]
        keys = [_key(alias) for alias in new_names]
        drop = {i for i, key in enumerate(keys) if key in keys[:i]}
        statements.append(stmt.with_changes(module=_module_expr(module), relative=(), names=without(new_names, drop)))
    else:
        # Names that stay come first (a TODO on the statement is about them), then one new
        # statement per new module.
        moved = {i for i, a in actions.items() if a is None or isinstance(a, FromImport)}
        if len(moved) < len(names):
            statements.append(stmt.with_changes(names=without(names, moved)))
        groups: dict[str, list[Alias]] = {}
        for action in actions.values():
            if isinstance(action, FromImport):
                groups.setdefault(action.new.module, []).append(_new_alias(None, action))
        statements.extend(_from(module, aliases) for module, aliases in groups.items())
    grouped: dict[str, list[Alias]] = {}
    for module, name in inserts:
        grouped.setdefault(module, []).append(cst.ImportAlias(cst.Name(name)))
    statements.extend(_from(module, aliases) for module, aliases in grouped.items())
    if not statements:
        return cst.RemovalSentinel.REMOVE
    return statements[0] if len(statements) == 1 else cst.FlattenSentinel(statements)


def _pragma(trailing: cst.TrailingWhitespace) -> cst.TrailingWhitespace:
    """A line's comment for the other lines an import was split into: only tool pragmas
    (``# noqa``, ``# type: ignore``...) apply to each line; other comments stay on the first."""
    comment = trailing.comment
    if comment is not None and _PRAGMA.match(comment.value):
        return trailing
    return cst.TrailingWhitespace()


def fix_line(line: cst.CSTNode, count: int) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
    """The line holding a rewritten import: split into one line per statement, or removed."""
    if isinstance(line, cst.SimpleStatementSuite):
        body = list(line.body) or [cst.Pass()]
        body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
        return line.with_changes(body=body)
    if not isinstance(line, cst.SimpleStatementLine):
        return line
    if not line.body:
        return cst.RemovalSentinel.REMOVE
    body = list(line.body)
    body[-1] = body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT)
    if count == 1 and len(body) > 1:
        return cst.FlattenSentinel(
            [
                cst.SimpleStatementLine(
                    [small.with_changes(semicolon=cst.MaybeSentinel.DEFAULT)],
                    leading_lines=line.leading_lines if i == 0 else (),
                    trailing_whitespace=line.trailing_whitespace if i == 0 else _pragma(line.trailing_whitespace),
                )
                for i, small in enumerate(body)
            ]
        )
    return line.with_changes(body=body)
