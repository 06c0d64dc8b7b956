"""The edits of CM004: parameters dropped from a def and its calls, ``@property`` added, a call
that became an attribute read, and assignments that keep a reassigned parameter working."""

from __future__ import annotations

import libcst as cst

from ._layout import without

__all__ = [
    "add_property", "call_to_attribute", "drop_args", "drop_params", "dropped_args",
    "prepend_assignments", "replacement",
]  # fmt: skip


def replacement(text: str, self_name: str) -> str:
    return f"{self_name}.{text[5:]}" if text.startswith("self.") and self_name != "self" else text


def add_property(node: cst.CSTNode) -> cst.CSTNode:
    assert isinstance(node, cst.FunctionDef)
    return node.with_changes(decorators=[cst.Decorator(cst.Name("property")), *node.decorators])


def drop_params(node: cst.CSTNode, names: set[str]) -> cst.CSTNode:
    assert isinstance(node, cst.Parameters)
    changes: dict[str, list[cst.Param]] = {}
    for field in ("posonly_params", "params", "kwonly_params"):
        params = list(getattr(node, field))
        drop = {i for i, p in enumerate(params) if p.name.value in names}
        if drop:
            changes[field] = without(params, drop)
    return node.with_changes(**changes)


def drop_args(node: cst.CSTNode, names: list[str]) -> cst.CSTNode:
    assert isinstance(node, cst.Call)
    return node.with_changes(args=without(node.args, dropped_args(node, names)))


def dropped_args(call: cst.Call, names: list[str]) -> set[int]:
    # Positional arguments come first: those standing for dropped parameters are the first ones.
    return {
        i
        for i, a in enumerate(call.args)
        if (a.keyword is None and i < len(names)) or (a.keyword is not None and a.keyword.value in names)
    }


def call_to_attribute(node: cst.CSTNode, new: str) -> cst.CSTNode:
    assert isinstance(node, cst.Call) and isinstance(node.func, cst.Attribute)
    return node.func.with_changes(attr=node.func.attr.with_changes(value=new), lpar=node.lpar, rpar=node.rpar)


def prepend_assignments(node: cst.CSTNode, assignments: list[str]) -> cst.CSTNode:
    assert isinstance(node, cst.IndentedBlock)
    body = list(node.body)
    at = 1 if body and _is_docstring(body[0]) else 0
    new = [cst.parse_statement(a + "\n") for a in assignments]
    return node.with_changes(body=[*body[:at], *new, *body[at:]])


def _is_docstring(statement: cst.BaseStatement) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, (cst.SimpleString, cst.ConcatenatedString))
    )
