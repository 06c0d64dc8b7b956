"""How CM006 rewrites the arguments of one call: keyword expansions, renames and moves,
laid out like the call was (one argument per line stays one per line; comments stay)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import libcst as cst

from compat.renames import Kind, Rename

from ._calls import literal
from ._edits import TodoLine, before_item, with_before_item
from ._ids import TODO_PREFIX
from ._layout import add_lines, todo_lines, uncommented, with_lines, without

__all__ = [
    "ArgOp", "apply_ops", "branches", "conditional", "conflict", "falsy", "message", "named", "quote_of", "template",
]  # fmt: skip


@dataclass(frozen=True)
class ArgOp:
    """What becomes of one keyword argument."""

    kind: str  # expand | rename | move
    entry: Rename
    keyword: str = ""
    template: tuple[cst.Arg, ...] = ()
    element: int | None = None  # move: index in a list value; None: the whole value
    comment: cst.TrailingWhitespace | None = None  # move: the moved element's end-of-line comment
    superseded: bool = False  # expand: keywords dropped in favour of a moved plugin
    template_dropped: str = ""
    fallback: str = ""  # expand: the TODO to leave instead when the expansion would clash


@functools.lru_cache(maxsize=256)
def template(text: str) -> tuple[cst.Arg, ...]:
    call = cst.parse_expression(f"f({text})")
    assert isinstance(call, cst.Call)
    return tuple(call.args)


def conditional(new: str, falsy_new: str, default: dict[str, str]) -> tuple[cst.Arg, ...]:
    """The template of ``new`` (``accelerator='cuda', devices=...``) for a value known only at run
    time whose falsy values mean ``falsy_new`` (``accelerator='cpu'``): each keyword is
    ``<new value> if ... else <falsy value>`` (``default[keyword]``, the new Trainer's default,
    where ``falsy_new`` does not name it), ``...`` standing for the value."""
    truthy = {a.keyword.value: a.value for a in template(new) if a.keyword is not None}
    otherwise = {a.keyword.value: a.value for a in template(falsy_new) if a.keyword is not None}
    args = []
    for key in dict.fromkeys([*truthy, *otherwise]):
        yes = truthy.get(key) or cst.parse_expression(default[key])
        no = otherwise.get(key) or cst.parse_expression(default[key])
        value = cst.IfExp(test=cst.Ellipsis(), body=yes, orelse=no)
        args.append(
            cst.Arg(
                value=value,
                keyword=cst.Name(key),
                equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace("")),
            )
        )
    return tuple(args)


def branches(new: str, falsy_new: str, default: dict[str, str], value: cst.IfExp) -> tuple[cst.Arg, ...]:
    """``gpus=1 if C else 0``: each keyword of the rewrite of either literal branch (``new``
    filled with it, or ``falsy_new`` for a falsy one), chosen by ``C`` where the branches differ:
    ``accelerator="cuda" if C else "cpu", devices=1 if C else "auto"``."""

    def keywords(branch: cst.BaseExpression) -> dict[str, cst.BaseExpression]:
        chosen = falsy_new if falsy(branch) else new
        return {a.keyword.value: _filled(a.value, branch, None) for a in template(chosen) if a.keyword is not None}

    yes, no = keywords(value.body), keywords(value.orelse)
    args = []
    for key in dict.fromkeys([*yes, *no]):
        a = yes.get(key) or cst.parse_expression(default[key])
        b = no.get(key) or cst.parse_expression(default[key])
        chosen = a if a.deep_equals(b) else cst.IfExp(test=value.test, body=a, orelse=b)
        equal = cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
        args.append(cst.Arg(value=chosen, keyword=cst.Name(key), equal=equal))
    return tuple(args)


class _Fill(cst.CSTTransformer):
    """``...`` inside a template's value -> the argument's value."""

    def __init__(self, value: cst.BaseExpression) -> None:
        self.value = value

    def leave_Ellipsis(self, original: cst.Ellipsis, updated: cst.Ellipsis) -> cst.BaseExpression:  # noqa: N802
        return self.value


def _filled(template_value: cst.BaseExpression, value: cst.BaseExpression, quote: str | None) -> cst.BaseExpression:
    if isinstance(template_value, cst.Ellipsis):
        return value
    if isinstance(template_value, cst.IfExp):
        parts = {k: _filled(getattr(template_value, k), value, quote) for k in ("test", "body", "orelse")}
        return template_value.with_changes(**parts)
    return _requote(template_value, quote)


def falsy(value: cst.BaseExpression) -> bool:
    if isinstance(value, cst.Integer):
        return value.evaluated_value == 0
    if isinstance(value, cst.Name):
        return value.value in ("None", "False")
    if isinstance(value, (cst.List, cst.Tuple, cst.Dict)):
        return not value.elements
    text = literal(value)
    return text is not None and text.strip() in ("", "0")


def _code(module: cst.Module, node: cst.CSTNode) -> str:
    value = literal(node) if isinstance(node, cst.BaseExpression) else None
    return repr(value) if value is not None else module.code_for_node(node).strip()


def _keywords(module: cst.Module, call: cst.Call, ops: dict[int, ArgOp]) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for index, arg in enumerate(call.args):
        op = ops.get(index)
        if arg.keyword is None:
            continue
        if op is None:
            out.append((arg.keyword.value, _code(module, arg.value)))
        elif op.kind == "expand":
            for new in op.template:
                value = _filled(new.value, arg.value, None)
                out.append((new.keyword.value, _code(module, value)))  # type: ignore[union-attr]
        elif op.kind == "rename":
            out.append((op.keyword, _code(module, arg.value)))
        else:
            value = arg.value
            moved = value if op.element is None else value.elements[op.element].value  # type: ignore[attr-defined]
            out.append((op.keyword, _code(module, moved)))
            if op.element is not None and len(value.elements) > 1:  # type: ignore[attr-defined]
                out.append((arg.keyword.value, "<rest>"))
    return out


def named(call: cst.Call, names: dict[int, str]) -> cst.Call:
    """``call`` with the positional arguments at ``names`` passed by keyword instead."""
    if not names:
        return call
    args = [
        a.with_changes(
            keyword=cst.Name(names[i]), equal=cst.AssignEqual(cst.SimpleWhitespace(""), cst.SimpleWhitespace(""))
        )
        if i in names
        else a
        for i, a in enumerate(call.args)
    ]
    return call.with_changes(args=args)


def conflict(module: cst.Module, call: cst.Call, ops: dict[int, ArgOp], names: dict[int, str]) -> str:
    call = named(call, names)
    seen: dict[str, str] = {}
    for key, code in _keywords(module, call, ops):
        if key in seen and seen[key] != code:
            return f"`{key}={seen[key]}` and `{key}={code}`"
        seen.setdefault(key, code)
    return ""


def quote_of(call: cst.Call) -> str | None:
    for arg in call.args:
        if isinstance(arg.value, cst.SimpleString) and arg.value.prefix == "" and len(arg.value.quote) == 1:
            return arg.value.quote
    return None


def _requote(value: cst.BaseExpression, quote: str | None) -> cst.BaseExpression:
    if quote and isinstance(value, cst.SimpleString) and value.quote != quote and quote not in value.value[1:-1]:
        return value.with_changes(value=f"{quote}{value.value[1:-1]}{quote}")
    return value


def _separator(comma: cst.Comma | cst.MaybeSentinel) -> cst.Comma:
    """A comma laid out like ``comma`` but without its comment (comments are never copied)."""
    plain = uncommented(comma)
    return plain if isinstance(plain, cst.Comma) else cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))


def _spread(original: cst.Arg, new: list[cst.Arg]) -> list[cst.Arg]:
    sep = _separator(original.comma)
    return [a.with_changes(comma=original.comma if i == len(new) - 1 else sep) for i, a in enumerate(new)]


def _kwarg(original: cst.Arg, keyword: str, value: cst.BaseExpression) -> cst.Arg:
    return cst.Arg(value=value, keyword=cst.Name(keyword), equal=original.equal)


def apply_ops(node: cst.CSTNode, ops: dict[int, ArgOp], quote: str | None, names: dict[int, str]) -> cst.CSTNode:
    assert isinstance(node, cst.Call)
    node = named(node, names)
    out: list[cst.Arg] = []
    seen: set[str] = set()
    last_dropped = False
    for index, arg in enumerate(node.args):
        op = ops.get(index)
        new: list[cst.Arg]
        if op is None:
            new = [arg]
        elif op.kind == "expand":
            made = [
                _kwarg(
                    arg,
                    # an "expand" template holds keyword arguments only (AttributeError otherwise, as before)
                    t.keyword.value,  # type: ignore[union-attr]
                    _filled(t.value, arg.value, quote),
                )
                for t in op.template
            ]
            new = _spread(arg, made)
        elif op.kind == "rename":
            new = [arg.with_changes(keyword=cst.Name(op.keyword))]
        else:
            lines, arg = _todo_lines_of_moved(arg, op)
            node, out = _keep_lines(node, out, lines)
            new = _move(arg, op)
            if len(new) == 2:  # TODOs about the elements that stay go above the rest of the list
                node, out, new = _todos_to_rest(node, out, new, op)
        if len(new) > 1:
            new = _indented_like(node, out, new)
        kept = [a for a in new if a.keyword is None or a.keyword.value not in seen]
        seen.update(a.keyword.value for a in kept if a.keyword is not None)
        last_dropped = not kept and index == len(node.args) - 1
        if not kept:  # the comment lines above the next argument live in this one's comma
            ws = arg.comma.whitespace_after if isinstance(arg.comma, cst.Comma) else None
            node, out = _keep_lines(node, out, _comment_lines(ws))
        out.extend(kept)
    if out and last_dropped:
        out[-1] = out[-1].with_changes(comma=node.args[-1].comma)
    return node.with_changes(args=out)


def _comment_lines(ws: object) -> list[cst.EmptyLine]:
    if not isinstance(ws, cst.ParenthesizedWhitespace):
        return []
    return [line for line in ws.empty_lines if line.comment is not None]


def _todo_lines_of_moved(arg: cst.Arg, op: ArgOp) -> tuple[list[cst.EmptyLine], cst.Arg]:
    """The TODO lines above a list element that moves to its own keyword, and ``arg`` without them."""
    value = arg.value
    if op.element is None or not isinstance(value, (cst.List, cst.Tuple)):
        return [], arg
    ws = before_item(value, op.element)
    todos = [line for line in _comment_lines(ws) if line.comment.value.startswith(TODO_PREFIX)]  # type: ignore[union-attr]
    if not todos:
        return [], arg
    assert isinstance(ws, cst.ParenthesizedWhitespace)
    ws = ws.with_changes(empty_lines=[line for line in ws.empty_lines if line not in todos])
    return todos, arg.with_changes(value=with_before_item(value, op.element, ws))


def _next_line(node: cst.Call, out: list[cst.Arg]) -> cst.BaseParenthesizableWhitespace | None:
    """The whitespace before the next argument of the call being rebuilt (after those in ``out``)."""
    if not out:
        return node.whitespace_before_args
    comma = out[-1].comma
    return comma.whitespace_after if isinstance(comma, cst.Comma) else None


def _set_next_line(
    node: cst.Call, out: list[cst.Arg], ws: cst.BaseParenthesizableWhitespace
) -> tuple[cst.Call, list[cst.Arg]]:
    """Put ``ws`` back where ``_next_line`` found it."""
    if not out:
        return node.with_changes(whitespace_before_args=ws), out
    last = out[-1]
    out[-1] = last.with_changes(comma=last.comma.with_changes(whitespace_after=ws))  # type: ignore[union-attr]
    return node, out


def _indented_like(node: cst.Call, out: list[cst.Arg], new: list[cst.Arg]) -> list[cst.Arg]:
    """Arguments that one became, each on its own line indented like that one's line.

    Their separators were copies of its comma, which after a call's last argument holds the
    indentation of the closing bracket instead.
    """
    before = _next_line(node, out)
    if not isinstance(before, cst.ParenthesizedWhitespace):
        return new
    fixed = []
    for arg in new[:-1]:
        comma = arg.comma
        ws = comma.whitespace_after if isinstance(comma, cst.Comma) else None
        if isinstance(ws, cst.ParenthesizedWhitespace):
            comma = comma.with_changes(  # type: ignore[union-attr]
                whitespace_after=ws.with_changes(indent=before.indent, last_line=before.last_line)
            )
        fixed.append(arg.with_changes(comma=comma))
    return [*fixed, new[-1]]


def _todos_to_rest(
    node: cst.Call, out: list[cst.Arg], new: list[cst.Arg], op: ArgOp
) -> tuple[cst.Call, list[cst.Arg], list[cst.Arg]]:
    before = _next_line(node, out)
    if not isinstance(before, cst.ParenthesizedWhitespace):
        return node, out, new
    stay = [
        line
        for line in before.empty_lines
        if isinstance(line, TodoLine) and line.element is not None and line.element != op.element
    ]
    if not stay:
        return node, out, new
    before = before.with_changes(empty_lines=[line for line in before.empty_lines if line not in stay])
    node, out = _set_next_line(node, out, before)
    new = [new[0].with_changes(comma=with_lines(new[0].comma, stay)), new[1]]
    return node, out, new


def _keep_lines(node: cst.Call, out: list[cst.Arg], lines: list[cst.EmptyLine]) -> tuple[cst.Call, list[cst.Arg]]:
    """Add comment lines to the whitespace before the next argument (after the last in ``out``)."""
    if not lines:
        return node, out
    before = _next_line(node, out)
    if not isinstance(before, cst.ParenthesizedWhitespace):
        return node, out
    return _set_next_line(node, out, add_lines(before, lines))


def _move(arg: cst.Arg, op: ArgOp) -> list[cst.Arg]:
    value = arg.value
    if op.element is None:
        return [arg.with_changes(keyword=cst.Name(op.keyword))]
    assert isinstance(value, (cst.List, cst.Tuple))
    moved = value.elements[op.element].value
    elements = without(value.elements, {op.element})
    if op.element == 0 and elements and (todos := todo_lines(value.elements[0].comma)):
        if isinstance(value, cst.List):  # the first element goes: its TODO lines go after "["
            value = value.with_changes(lbracket=with_lines(value.lbracket, todos))
        elif value.lpar:
            value = value.with_changes(lpar=[with_lines(value.lpar[0], todos), *value.lpar[1:]])
    if not elements:
        return [_kwarg(arg, op.keyword, moved).with_changes(comma=arg.comma)]
    rest = arg.with_changes(value=value.with_changes(elements=elements))
    spread = _spread(arg, [_kwarg(arg, op.keyword, moved), rest])
    if op.comment is not None:
        sep = spread[0].comma
        assert isinstance(sep, cst.Comma) and isinstance(sep.whitespace_after, cst.ParenthesizedWhitespace)
        spread[0] = spread[0].with_changes(
            comma=sep.with_changes(whitespace_after=sep.whitespace_after.with_changes(first_line=op.comment))
        )
    return spread


def message(module: cst.Module, arg: cst.Arg, op: ArgOp) -> str:
    kw = arg.keyword.value if arg.keyword is not None else "?"
    if op.kind == "move":
        return f"move the {op.keyword} out of `{kw}=` into `{op.keyword}=`"
    value = _code(module, arg.value) if "\n" not in module.code_for_node(arg.value) else "..."
    if op.kind == "rename":
        return f"{kw}= -> {op.keyword}="
    before = f"{kw}={value}" if op.entry.kind is not Kind.ARGUMENT_VALUE else f"{kw}={op.entry.value!r}"
    after = ", ".join(
        f"{t.keyword.value}={value if isinstance(t.value, cst.Ellipsis) else _code(module, t.value)}"  # type: ignore[union-attr]
        for t in op.template
    )
    if op.superseded:
        after = (after + "; " if after else "") + f"the plugin moved to `{op.template_dropped}=` decides"
    text = f"{before} -> {after}"
    return f"{text} ({op.entry.hint})" if op.entry.hint and op.entry.kind is Kind.ARGUMENT_VALUE else text
