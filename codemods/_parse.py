"""``parse_module``: libcst's parser, without re-checking the nodes it has just built.

Every libcst node checks itself when it is built: ``CSTNode.__post_init__`` calls ``_validate``
(balanced parentheses, whitespace that fits its grammar, a non-empty name, ...). That guards
trees a program builds by hand. A tree the parser builds from source text meets those checks by
construction, and checking it costs about a sixth of the parse (libcst says as much in a comment
on ``__post_init__``: validation could move out of node construction "which would allow us to
avoid validating the tree when parsing a file").

``parse_module`` skips the check for the nodes the parser builds, on the calling thread only,
and turns it back on before it returns. Nodes the rules build (``with_changes``,
``parse_expression`` of a replacement) are still checked, and so is every other use of libcst
in the process. The hook is installed only where ``CSTNode.__post_init__`` does exactly that
one call; on a libcst whose ``__post_init__`` does more, ``parse_module`` is libcst's own.
"""

from __future__ import annotations

import threading

import libcst as cst
from libcst._nodes.base import CSTNode

__all__ = ["parse_module", "skips_validation"]

_skipping: int | None = None  # the thread whose parse is running without node checks
_get_ident = threading.get_ident


def _post_init(self: CSTNode) -> None:
    if _skipping is None or _skipping != _get_ident():
        self._validate()


#: libcst's own ``CSTNode.__post_init__`` (the benchmark's floor puts it back, to time libcst's parse).
ORIGINAL_POST_INIT = CSTNode.__dict__.get("__post_init__")


def _install() -> bool:
    original = ORIGINAL_POST_INIT
    if original is _post_init:
        return True
    code = getattr(original, "__code__", None)
    if code is None or code.co_names != ("_validate",) or not callable(getattr(CSTNode, "_validate", None)):
        return False  # a libcst whose check does something else: leave it alone
    if any("__post_init__" in vars(cls) for cls in _subclasses(CSTNode)):
        return False  # a node class with its own hook would not go through ours
    CSTNode.__post_init__ = _post_init  # type: ignore[method-assign]
    return True


def _subclasses(cls: type) -> list[type]:
    found: list[type] = []
    todo = [cls]
    while todo:
        sub: type
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


_INSTALLED = _install()


def skips_validation() -> bool:
    """Whether ``parse_module`` skips libcst's node checks (this libcst allows it)."""
    return _INSTALLED


def parse_module(source: str) -> cst.Module:
    """``libcst.parse_module(source)``, without re-checking each node the parser builds.

    Raises:
        libcst.ParserSyntaxError: as ``libcst.parse_module``.
    """
    global _skipping
    if not _INSTALLED or _skipping is not None:  # another thread is parsing: check as usual
        return cst.parse_module(source)
    _skipping = _get_ident()
    try:
        return cst.parse_module(source)
    finally:
        _skipping = None
