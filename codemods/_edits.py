"""Edits collected by the rules, applied in one path-copying rebuild of the touched nodes.

A rule never mutates the tree: it asks for ``node -> fn(updated node)`` (TorchFix's model).
Only the nodes on the paths from the module to the edited nodes are rebuilt, so applying edits
costs a few microseconds per edit instead of a full ``CSTTransformer`` pass.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import libcst as cst

from compat.renames import Rename

from ._ids import Rule
from ._layout import add_lines, comments
from ._scopes import Analysis
from ._splice import code_for, track
from ._suppress import Suppressions, suppresses

__all__ = ["Change", "Edits", "TodoLine", "before_item", "set_value", "with_before_item"]

# Nodes whose code does not depend on their parent (see ``Edits._standalone``).
_STANDALONE = (
    cst.Name, cst.Attribute, cst.Call, cst.SimpleString, cst.Parameters, cst.IndentedBlock,
    cst.SimpleStatementLine, cst.SimpleStatementSuite, cst.Decorator, cst.Else, cst.ExceptHandler,
    cst.Finally, cst.BaseCompoundStatement, cst.List, cst.Set,
)  # fmt: skip
# Bracketed sequences whose items can carry a TODO line above them (see ``Edits.todo``).
_CONTAINERS = (cst.Call, cst.Tuple, cst.List, cst.Set)
#: Operations whose right operand can start a line inside parentheses (``(a\n or b)``): a TODO
#: about a site in that operand goes on the line above it, as for a container's items.
_OPERATIONS = (cst.BooleanOperation, cst.BinaryOperation)

_Entry = TypeVar("_Entry")
Fn = Callable[[cst.CSTNode], "cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]"]


@dataclass(frozen=True)
class Change:
    """One edit or one TODO made by a rule.

    Attributes:
        rule: the rule id, e.g. ``"CM002"``.
        line: the 1-based line of the site in the original source.
        message: ``"DDPPlugin -> DDPStrategy"``, or the TODO hint.
        todo: whether this is a TODO left for a person rather than an edit.
        column: the 1-based column (in characters) of the site on ``line``; a statement's is
            that of its first token.
        suppressed: a ``# compat: ignore`` comment on ``line`` covers this rule
            (``codemods._suppress``): the TODO was not added; an edit was not made (nor any
            other edit of the file, see ``Result.held``).
    """

    rule: str
    line: int
    message: str
    todo: bool = False
    column: int = 1
    suppressed: bool = False


@dataclass
class _Record:
    site: cst.CSTNode
    rule: str
    message: str
    todo: bool
    order: int
    text: str = ""  # the TODO comment, for a TODO already in the source
    undo: Callable[[], None] | None = None  # takes back the TODO comment this record added


class Edits:
    """The edits and TODOs of one run, and the table entries they exercised."""

    def __init__(self, analysis: Analysis) -> None:
        self.analysis = analysis
        self._fns: dict[int, list[Fn]] = {}
        self._todos: dict[int, list[tuple[str, bool]]] = {}
        self._records: list[_Record] = []
        self._results: dict[int, cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]] = {}
        self._originals: dict[int, cst.CSTNode] = {}
        self._units: set[int] = set()
        self._structural = False
        self._seen_todos: set[tuple[int, str]] = set()
        #: TODOs inside brackets: container id -> item index -> (comment text, list element).
        self._inline: dict[int, dict[int, list[tuple[str, int | None]]]] = {}
        #: how many times each TODO text was added, to check that none went missing.
        self._added: dict[str, int] = {}
        #: entries rewritten by an edit; ``flagged``: entries that got a TODO.
        self.used: set[Rename] = set()
        self.flagged: set[Rename] = set()

    def __bool__(self) -> bool:
        return bool(self._fns or self._todos or self._inline)

    def replace(
        self,
        node: cst.CSTNode,
        fn: Fn,
        rule: Rule,
        message: str | None,
        site: cst.CSTNode | None = None,
        entry: Rename | None = None,
    ) -> None:
        """Replace ``node`` by ``fn(node-with-updated-children)``; ``message`` is reported if given."""
        self._fns.setdefault(id(node), []).append(fn)
        if message is not None:
            self._record(site or node, rule, message, False)
        if entry is not None:
            self.used.add(entry)

    def recorded(self) -> list[tuple[cst.CSTNode, str, bool]]:
        """``(site, message, todo)`` of every edit and TODO recorded so far, for a rule that runs last."""
        return [(r.site, r.message, r.todo) for r in self._records]

    def report(self, site: cst.CSTNode, rule: Rule, message: str, entry: Rename | None = None) -> None:
        """Report an edit made through another node's ``replace`` at ``site``'s line."""
        self._record(site, rule, message, False)
        if entry is not None:
            self.used.add(entry)

    def keep_comments(self, site: cst.CSTNode, dropped: cst.CSTNode | None) -> None:
        """Move the comments of a part that an edit drops above the statement holding ``site``."""
        texts = comments(dropped) if dropped is not None else []
        if texts:
            statement = self.analysis.statement(site)
            self._todos.setdefault(id(statement), []).extend((text, False) for text in texts)

    def todo(self, site: cst.CSTNode, rule: Rule, hint: str, entry: Rename | None = None) -> None:
        """Leave ``# TODO(compat.migrate): <rule> <hint>`` on its own line right above ``site``.

        That is above the statement holding ``site``, or, when ``site`` is inside an argument or
        an element that starts a line of a call, tuple, list or set spread over several lines,
        inside the brackets just above that line: a TODO about the eighth keyword of a
        twelve-line ``Trainer(...)`` sits next to that keyword.
        """
        statement = self.analysis.statement(site)
        text = rule.todo(hint)
        if entry is not None:
            self.flagged.add(entry)
        slot = self._slot(site, statement)
        if slot is not None:
            self._inline_todo(slot, rule, hint, text)
            return
        if (id(statement), text) in self._seen_todos:
            return
        self._seen_todos.add((id(statement), text))
        leading = self._leading(statement)
        present = any(line.comment is not None and line.comment.value == text for line in leading)
        undo = None
        if not present:
            entries = self._todos.setdefault(id(statement), [])
            entries.append((text, True))
            self._added[text] = self._added.get(text, 0) + 1
            undo = self._undo(entries, (text, True), text)
        # A TODO's line is the statement's own first line (after its leading comments).
        self._record(statement, rule, hint, True, text if present else "", undo)

    def _slot(
        self, site: cst.CSTNode, statement: cst.CSTNode
    ) -> tuple[cst.CSTNode, int, cst.CSTNode, int | None] | None:
        """``(container, index, item, element)``: the innermost item around ``site`` that starts
        a line; ``element``: when that item is an argument whose value is a list or tuple, the
        index of the element ``site`` is in (an edit that moves that element out takes the TODO
        with it)."""
        node: cst.CSTNode | None = site
        path: list[cst.CSTNode] = []
        while node is not None and node is not statement:
            parent = self.analysis.parent(node)
            if isinstance(parent, _OPERATIONS) and parent.right is node:
                if isinstance(before_item(parent, 1), cst.ParenthesizedWhitespace):
                    return parent, 1, node, None
            elif isinstance(parent, _CONTAINERS):
                items = parent.args if isinstance(parent, cst.Call) else parent.elements
                index = next((i for i, item in enumerate(items) if item is node), None)
                if index is not None and isinstance(before_item(parent, index), cst.ParenthesizedWhitespace):
                    element = None
                    if isinstance(node, cst.Arg) and isinstance(node.value, (cst.List, cst.Tuple)):
                        element = next(
                            (i for i, e in enumerate(node.value.elements) if any(e is n for n in path)), None
                        )
                    return parent, index, node, element
            path.append(node)
            node = parent
        return None

    def _inline_todo(
        self, slot: tuple[cst.CSTNode, int, cst.CSTNode, int | None], rule: Rule, hint: str, text: str
    ) -> None:
        container, index, item, element = slot
        if (id(item), text) in self._seen_todos:
            return
        self._seen_todos.add((id(item), text))
        before = before_item(container, index)
        assert isinstance(before, cst.ParenthesizedWhitespace)
        undo = None
        if not any(line.comment is not None and line.comment.value == text for line in before.empty_lines):
            entries = self._inline.setdefault(id(container), {}).setdefault(index, [])
            entries.append((text, element))
            self._added[text] = self._added.get(text, 0) + 1
            undo = self._undo(entries, (text, element), text)
        self._record(item, rule, hint, True, undo=undo)

    def _undo(self, entries: list[_Entry], entry: _Entry, text: str) -> Callable[[], None]:
        def undo() -> None:
            entries.remove(entry)
            self._added[text] -= 1

        return undo

    def _record(
        self,
        site: cst.CSTNode,
        rule: Rule,
        message: str,
        todo: bool,
        text: str = "",
        undo: Callable[[], None] | None = None,
    ) -> None:
        self._records.append(_Record(site, str(rule), message, todo, len(self._records), text, undo))

    def _present_lines(self, source: str | None) -> dict[int, int] | None:
        """Lines of TODOs already in ``source``, found as text (no code generation needed)."""
        present = [r for r in self._records if r.text]
        if not present:
            return {}
        if source is None:
            return None
        order = {key: i for i, key in enumerate(self.analysis.parents)}
        lines: dict[int, int] = {}
        for text in {r.text for r in present}:
            statements = sorted(
                {id(r.site): r.site for r in present if r.text == text}.values(),
                key=lambda n: order.get(id(n), -1),
            )
            found, start = [], 0
            while (at := source.find(text, start)) >= 0:
                found.append(at)
                start = at + len(text)
            if len(found) != len(statements):
                return None
            for at, statement in zip(found, statements, strict=True):
                leading = self._leading(statement)
                following = len(leading) - 1 - self._index(leading, text)
                lines[id(statement)] = source.count("\n", 0, at) + 2 + following
        return lines

    def _leading(self, statement: cst.CSTNode) -> Sequence[cst.EmptyLine]:
        """The comment lines above a statement (the parser gives a file's first ones to the module)."""
        leading = tuple(getattr(statement, "leading_lines", ()))
        module = self.analysis.module
        if module.body and module.body[0] is statement:
            leading = (*module.header, *leading)
        return leading

    @staticmethod
    def _index(leading: Sequence[cst.EmptyLine], text: str) -> int:
        return max(i for i, line in enumerate(leading) if line.comment is not None and line.comment.value == text)

    def _positions(
        self, source: str | None, units: set[int]
    ) -> tuple[dict[int, int], dict[int, int], dict[int, tuple[int, int, list[str]]]]:
        """Each record site's line and column in the original, and the spans of ``units``."""
        module = self.analysis.module
        known = self._present_lines(source)
        sites = {id(r.site) for r in self._records}
        state = track(module, sites, units)
        lines = {**state.lines, **(known or {})}
        for r in self._records:
            # A statement's line is its own first line (after its leading comments).
            if not r.text and id(r.site) in state.lines:
                lines[id(r.site)] = state.lines[id(r.site)] + len(getattr(r.site, "leading_lines", ()))
        return lines, state.columns, state.spans

    def finish(
        self, source: str | None = None, suppressions: Suppressions | None = None
    ) -> tuple[cst.Module, str | None, list[Change]]:
        """Apply everything.

        Args:
            source: the original text of the module, to splice the new code into (else only
                the new module is built).
            suppressions: line -> rules suppressed there (``codemods._suppress.parse_suppressions``).
                A suppressed TODO is not added; a suppressed edit holds the whole file back:
                edits of one file go together (an import and its uses), so none is made.

        Returns:
            The new module, its code (``source`` itself when nothing changed; ``None`` when no
            source was given), and the reported changes in source order (a suppressed edit
            among them means that it held the file back).
        """
        module = self.analysis.module
        suppressed: set[int] = set()
        held = False
        if suppressions and self._records:
            lines, _, _ = self._positions(source, set())
            for r in self._records:
                if suppresses(suppressions, lines.get(id(r.site), 1), r.rule):
                    suppressed.add(r.order)
                    held = held or not r.todo
                    if r.undo is not None:
                        r.undo()
        if held:
            self._fns, self._todos, self._inline, self._added = {}, {}, {}, {}
        new = self.apply()
        units = self._units if new is not module else set()
        lines, columns, spans = self._positions(source, units)
        records = sorted(self._records, key=lambda r: (lines.get(id(r.site), 0), r.order))
        changes = [
            Change(
                r.rule, lines.get(id(r.site), 1), r.message, r.todo, columns.get(id(r.site), 1), r.order in suppressed
            )
            for r in records
        ]
        if source is None:
            return new, None, changes
        if new is module:
            return new, source, changes
        code = self._spliced(module, new, spans, units, source)
        for text, added in self._added.items():  # never lose a TODO in silence
            if code.count(text) < source.count(text) + added:
                raise RuntimeError(f"an edit dropped the place of a TODO it was given: {text!r}")
        return new, code, changes

    def _spliced(
        self,
        module: cst.Module,
        new: cst.Module,
        spans: dict[int, tuple[int, int, list[str]]],
        units: set[int],
        source: str,
    ) -> str:
        """The new code: the edited units' code spliced into ``source``, else the whole module's."""
        if (
            self._structural
            or not module.has_trailing_newline
            or len(spans) != len(units)
            or not all(self._standalone(key) for key in units)
        ):
            return new.code
        pieces, last = [], 0
        for key, (start, end, indent) in sorted(spans.items(), key=lambda kv: kv[1][0]):
            pieces.append(source[last:start])
            pieces.append(code_for(module, self._results[key], indent))
            last = end
        pieces.append(source[last:])
        return "".join(pieces)

    def _standalone(self, key: int) -> bool:
        """Whether an edited node's code is the same alone as in place (no comma, ``elif``...).

        Items of lists and small statements get their separators from their parent, and an
        ``elif`` is an ``If`` told so by its parent: those are never spliced alone.
        """
        node = self._originals[key]
        if isinstance(node, cst.Tuple):
            return bool(node.lpar)
        if isinstance(node, cst.If):
            parent = self.analysis.parent(node)
            return not (isinstance(parent, cst.If) and parent.orelse is node)
        return isinstance(node, _STANDALONE)

    # -- applying ----------------------------------------------------------------------------

    def apply(self) -> cst.Module:
        """The module with every edit and TODO applied (the same object when there are none)."""
        module = self.analysis.module
        for key, texts in self._todos.items():
            if texts:
                self._fns.setdefault(key, []).append(_todo_fn(texts))
        self._todos = {}
        for key, by_index in self._inline.items():
            # First, while the items are still those of the original (a rule's own edit of the
            # container, such as CM006's argument rewrite, runs after and keeps the comments).
            self._fns.setdefault(key, []).insert(0, _inline_todo_fn(by_index))
        self._inline = {}
        if not self._fns:
            return module
        parents = self.analysis.parents
        touched: set[int] = set()
        for key in self._fns:
            while key not in touched:
                touched.add(key)
                parent = parents.get(key)
                if parent is None:
                    break
                key = id(parent)
        self._units = {key for key in self._fns if not self._has_edited_ancestor(key)}
        result = self._rebuild(module, touched)
        return result if isinstance(result, cst.Module) else module

    def _has_edited_ancestor(self, key: int) -> bool:
        parents = self.analysis.parents
        parent = parents.get(key)
        while parent is not None:
            if id(parent) in self._fns:
                return True
            parent = parents.get(id(parent))
        return False

    def _rebuild(
        self, node: cst.CSTNode, touched: set[int]
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        key = id(node)
        changes: dict[str, object] = {}
        for name in _field_names(type(node)):
            value = getattr(node, name)
            if isinstance(value, cst.CSTNode):
                if id(value) in touched:
                    new = self._rebuild(value, touched)
                    if new is not value:
                        changes[name] = new
            elif isinstance(value, (tuple, list)) and any(id(c) in touched for c in value):
                changes[name], orphans = self._rebuild_sequence(node, value, touched)
                if orphans:  # comments of a removed last statement: the block keeps them
                    footer = changes.get("footer", getattr(node, "footer", ()))
                    changes["footer"] = [*orphans, *footer]  # type: ignore[misc]
        updated: cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode] = (
            node.with_changes(**changes) if changes else node
        )
        for fn in self._fns.get(key, ()):
            if isinstance(updated, cst.FlattenSentinel):
                first, *rest = updated.nodes
                head = fn(first)
                heads = list(head.nodes) if isinstance(head, cst.FlattenSentinel) else [head]
                updated = cst.FlattenSentinel([*heads, *rest])
            elif isinstance(updated, cst.CSTNode):
                updated = fn(updated)
        if key in self._units:
            self._results[key] = updated
            self._originals[key] = node
        return updated

    def _rebuild_sequence(
        self, parent: cst.CSTNode, values: Sequence[cst.CSTNode], touched: set[int]
    ) -> tuple[list[cst.CSTNode], list[cst.EmptyLine]]:
        """The rebuilt items, and the comment lines of removed statements with no item after."""
        out: list[cst.CSTNode] = []
        orphans: list[cst.EmptyLine] = []
        for child in values:
            new = self._rebuild(child, touched) if id(child) in touched else child
            if isinstance(new, cst.RemovalSentinel):
                orphans.extend(line for line in getattr(child, "leading_lines", ()) if line.comment is not None)
                self._structural = self._structural or bool(orphans)
                continue
            for item in new.nodes if isinstance(new, cst.FlattenSentinel) else (new,):
                if orphans and hasattr(item, "leading_lines"):
                    item = item.with_changes(leading_lines=[*orphans, *item.leading_lines])
                    orphans = []
                out.append(item)
        if isinstance(parent, cst.IndentedBlock) and not out:
            out.append(cst.SimpleStatementLine([cst.Pass()], leading_lines=orphans))
            self._structural = True
            orphans = []
        return out, orphans


@functools.cache
def _field_names(tp: type) -> tuple[str, ...]:
    """The field names of a node class (``dataclasses.fields`` rebuilds the list on every call)."""
    return tuple(f.name for f in dataclasses.fields(tp))


def _todo_fn(texts: list[tuple[str, bool]]) -> Fn:
    """Add comment lines above a statement: TODOs once (``True``), kept comments always."""

    def add(node: cst.CSTNode) -> cst.CSTNode:
        leading = list(getattr(node, "leading_lines", ()))
        present = {line.comment.value for line in leading if line.comment is not None}
        new = [cst.EmptyLine(comment=cst.Comment(t)) for t, once in texts if not (once and t in present)]
        return node.with_changes(leading_lines=[*leading, *new]) if new else node

    return add


def before_item(container: cst.CSTNode, index: int) -> cst.BaseParenthesizableWhitespace | None:
    """The whitespace in front of item ``index`` of a call, tuple, list or set, or of the right
    operand (``index`` 1) of a boolean or binary operation: the operator's whitespace before it
    when the operator starts the line (``\n or b``), else the whitespace after it."""
    if isinstance(container, _OPERATIONS):
        op: Any = container.operator  # every operator of these has both whitespaces (stubs say not)
        return (
            op.whitespace_before
            if isinstance(op.whitespace_before, cst.ParenthesizedWhitespace)
            else op.whitespace_after
        )
    items = container.args if isinstance(container, cst.Call) else container.elements  # type: ignore[attr-defined]
    if index > 0:
        comma = items[index - 1].comma
        return comma.whitespace_after if isinstance(comma, cst.Comma) else None
    if isinstance(container, cst.Call):
        return container.whitespace_before_args
    if isinstance(container, cst.Tuple):
        return container.lpar[0].whitespace_after if container.lpar else None
    opening = container.lbracket if isinstance(container, cst.List) else container.lbrace  # type: ignore[attr-defined]
    return opening.whitespace_after


def with_before_item(container: cst.CSTNode, index: int, ws: cst.BaseParenthesizableWhitespace) -> cst.CSTNode:
    if isinstance(container, _OPERATIONS):
        op: Any = container.operator  # every operator of these has both whitespaces (stubs say not)
        field = (
            "whitespace_before" if isinstance(op.whitespace_before, cst.ParenthesizedWhitespace) else "whitespace_after"
        )
        return container.with_changes(operator=op.with_changes(**{field: ws}))
    if index > 0:
        field = "args" if isinstance(container, cst.Call) else "elements"
        items = list(getattr(container, field))
        items[index - 1] = items[index - 1].with_changes(comma=items[index - 1].comma.with_changes(whitespace_after=ws))
        return container.with_changes(**{field: items})
    if isinstance(container, cst.Call):
        return container.with_changes(whitespace_before_args=ws)
    if isinstance(container, cst.Tuple):
        return container.with_changes(lpar=[container.lpar[0].with_changes(whitespace_after=ws), *container.lpar[1:]])
    field = "lbracket" if isinstance(container, cst.List) else "lbrace"
    return container.with_changes(**{field: getattr(container, field).with_changes(whitespace_after=ws)})


@dataclass(frozen=True)
class TodoLine(cst.EmptyLine):
    """A TODO line placed inside brackets; ``element``: the list element its site is in."""

    element: int | None = None


def _inline_todo_fn(by_index: dict[int, list[tuple[str, int | None]]]) -> Fn:
    """Add TODO lines inside a container's brackets, above the items that start a line."""

    def add(node: cst.CSTNode) -> cst.CSTNode:
        for index, texts in by_index.items():
            ws = before_item(node, index)
            assert isinstance(ws, cst.ParenthesizedWhitespace)
            present = {line.comment.value for line in ws.empty_lines if line.comment is not None}
            new = [
                TodoLine(comment=cst.Comment(t), element=element)
                for t, element in dict.fromkeys(texts)
                if t not in present
            ]
            if new:
                node = with_before_item(node, index, add_lines(ws, new))
        return node

    return add


def set_value(value: str) -> Fn:
    """``node -> node.with_changes(value=value)``: a renamed ``Name``, a rewritten string literal."""

    def fn(node: cst.CSTNode) -> cst.CSTNode:
        return node.with_changes(value=value)

    return fn
