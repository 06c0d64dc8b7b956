"""The cross-file class graph: which user classes derive from old classes, through other files.

Uses the standard library's ``ast`` (about a tenth of a libcst parse), since only class
statements and imports matter here; the CLI can afford to run it on every file of a tree.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping

from ._table import index

__all__ = ["class_bases", "resolve_relative", "resolve_user_classes"]


def resolve_relative(module: str, level: int, name: str | None, is_package: bool) -> str:
    """The absolute module of ``from <level dots><name> import ...`` inside ``module``."""
    parts = module.split(".") if module else []
    keep = len(parts) - level + (1 if is_package else 0)
    base = parts[: max(keep, 0)]
    return ".".join([*base, name] if name else base)


def _dotted(node: ast.expr) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def _module_level(body: list[ast.stmt]) -> list[ast.stmt]:
    """Statements run at import time: the module body and its ``if``/``try`` blocks."""
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If):
            out.extend(_module_level(node.body) + _module_level(node.orelse))
        elif isinstance(node, ast.Try):
            out.extend(_module_level(node.body) + _module_level(node.orelse) + _module_level(node.finalbody))
            for handler in node.handlers:
                out.extend(_module_level(handler.body))
    return out


def class_bases(source: str | bytes, module: str) -> dict[str, tuple[str, ...]]:
    """The bases of every module-level class, as qualified names resolved through the imports.

    Args:
        source: the file's text or bytes.
        module: its dotted module name; relative imports are resolved against it (pass
            ``pkg.__init__`` for a package's ``__init__.py``).

    Returns:
        ``{"module.ClassName": ("qualified.Base", ...)}``. Names a module imports at module
        level count as re-exports: ``from .custom import CustomDDP`` in ``pkg/sub/__init__.py``
        gives ``{"pkg.sub.CustomDDP": ("pkg.sub.custom.CustomDDP",)}``, so a class reached
        through a package is followed too. Bases neither imported nor defined in the file are
        kept as written. A file that does not parse gives ``{}`` (``migrate_source``
        reports it).
    """
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return {}
    is_package = module == "__init__" or module.endswith(".__init__")
    name = module[: -len("__init__")].rstrip(".") if is_package else module
    prefix = f"{name}." if name else ""
    names: dict[str, str] = {}
    result: dict[str, tuple[str, ...]] = {}
    statements = _module_level(tree.body)
    for node in statements:
        if isinstance(node, ast.Import):
            for alias in node.names:
                names[alias.asname or alias.name.partition(".")[0]] = (
                    alias.name if alias.asname else alias.name.partition(".")[0]
                )
        elif isinstance(node, ast.ImportFrom):
            base = resolve_relative(name, node.level, node.module, is_package) if node.level else node.module or ""
            for alias in node.names:
                if alias.name != "*":
                    target = f"{base}.{alias.name}" if base else alias.name
                    names[alias.asname or alias.name] = target
                    result[prefix + (alias.asname or alias.name)] = (target,)
    classes = [node for node in statements if isinstance(node, ast.ClassDef)]
    for node in classes:
        names[node.name] = prefix + node.name
    for node in classes:
        bases = []
        for base_expr in node.bases:
            text = _dotted(base_expr.value if isinstance(base_expr, ast.Subscript) else base_expr)
            if text is None:
                continue
            head, _, rest = text.partition(".")
            resolved = names.get(head, head)
            bases.append(f"{resolved}.{rest}" if rest else resolved)
        result[prefix + node.name] = tuple(bases)
    return result


def resolve_user_classes(bases: Mapping[str, tuple[str, ...]]) -> dict[str, str]:
    """Follow bases transitively: user class qualname -> the old class it derives from.

    Args:
        bases: the merged ``class_bases`` of every file of the tree.

    Returns:
        For each class that derives (directly or through other user classes, in any file) from
        an old ``pytorch_lightning.``/``compat.`` class of the table, that old class's name as
        the base was written (first one found, depth-first, left to right).
    """
    table = index("strategies")
    found: dict[str, str | None] = {}

    def visit(cls: str, trail: frozenset[str]) -> str | None:
        if cls in found:
            return found[cls]
        result = None
        for base in bases.get(cls, ()):
            if table.canonical(base) is not None:
                result = base
            elif base in bases and base not in trail:
                result = visit(base, trail | {cls})
            if result is not None:
                break
        if not trail or result is not None:
            found[cls] = result
        return result

    for cls in bases:
        visit(cls, frozenset())
    return {cls: old for cls, old in found.items() if old is not None}
