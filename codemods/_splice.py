"""Where nodes are in the original text, and the new code of edited nodes spliced into it.

The text of a parsed module is exactly its code generation, so a code generation of the
original that notes offsets gives each reported site's line and each edited node's span; only
the edited nodes are then generated anew, and the rest of the file is kept byte for byte.
"""

from __future__ import annotations

import contextlib

import libcst as cst
from libcst._nodes.internal import CodegenState

__all__ = ["code_for", "track"]


class _Done(Exception):
    """Stops the tracking pass once every wanted node has been seen."""


class _TrackingState(CodegenState):
    """Code generation of the original module that notes where wanted nodes start and end.

    The text of a parsed module is exactly its code generation, so offsets here are offsets
    in the source: the line of each reported site, and the span and indentation of each edited
    node, whose new code is spliced into the source instead of regenerating the whole module.
    """

    def __init__(self, module: cst.Module, sites: set[int], units: set[int]) -> None:
        super().__init__(default_indent=module.default_indent, default_newline=module.default_newline)
        self.sites = sites
        self.units = units
        self.pending = len(sites | units)
        self.lines: dict[int, int] = {}
        #: 1-based column (in characters) of each site's first character; a statement's is
        #: that of its first token (after its indentation), as its line is after its comments.
        self.columns: dict[int, int] = {}
        self.spans: dict[int, tuple[int, int, list[str]]] = {}
        self._starts: dict[int, tuple[int, list[str]]] = {}
        self._line = 1
        self._column = 0
        self._offset = 0
        self._counted = 0
        self._newline = "\r" if module.default_newline == "\r" else "\n"

    def _advance(self) -> None:
        tokens = self.tokens
        for token in tokens[self._counted :]:
            newlines = token.count(self._newline)
            self._line += newlines
            self._column = len(token) - token.rfind(self._newline) - 1 if newlines else self._column + len(token)
            self._offset += len(token)
        self._counted = len(tokens)

    def before_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self.sites or key in self.units:
            self._advance()
            if key in self.sites and key not in self.lines:
                self.lines[key] = self._line
                if hasattr(node, "leading_lines"):  # its comments and indentation come next
                    self.columns[key] = len("".join(self.indent_tokens)) + 1
                else:
                    self.columns[key] = self._column + 1
                if key not in self.units:
                    self._seen()
            if key in self.units:
                self._starts[key] = (self._offset, list(self.indent_tokens))

    def after_codegen(self, node: cst.CSTNode) -> None:
        key = id(node)
        if key in self._starts:
            self._advance()
            start, indent = self._starts.pop(key)
            self.spans[key] = (start, self._offset, indent)
            self._seen()

    def _seen(self) -> None:
        self.pending -= 1
        if self.pending <= 0:
            raise _Done


def track(module: cst.Module, sites: set[int], units: set[int]) -> _TrackingState:
    state = _TrackingState(module, sites, units)
    if state.pending:
        with contextlib.suppress(_Done):
            module._codegen(state)
    return state


def code_for(
    module: cst.Module,
    result: cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode],
    indent: list[str],
) -> str:
    state = CodegenState(default_indent=module.default_indent, default_newline=module.default_newline)
    state.indent_tokens = list(indent)
    nodes = (
        result.nodes
        if isinstance(result, cst.FlattenSentinel)
        else ()
        if isinstance(result, cst.RemovalSentinel)
        else (result,)
    )
    for node in nodes:
        node._codegen(state)
    return "".join(state.tokens)
