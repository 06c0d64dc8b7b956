"""Rewrite ``*_epoch_end(self, outputs)`` to the 2.x pattern of Lightning's upgrade guide (CM011).

The step appends what 1.x kept of each of its outputs to a list on ``self``; the new
``on_*_epoch_end(self)`` binds ``outputs`` to that list, runs the old body and starts a new list.
What is kept mirrors ``compat/_steps.py`` (what 1.x passed): ``None`` is skipped; for training a
returned dict is kept with its ``"loss"`` detached (1.x required a tensor there under automatic
optimization). A new list is bound rather than the old one cleared, so a body that stored
``outputs`` keeps it, as in 1.x. Anything this cannot follow gets CM011's TODO with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import libcst as cst

from ._facts import EPOCH_END_HOOKS
from ._scopes import ClassInfo

__all__ = ["EPOCH_END_HOOKS", "plan_epoch_end", "returns"]

Fn = Callable[[cst.CSTNode], cst.CSTNode]


class _Returns(cst.CSTVisitor):
    """The returns (and yields) of one function body, not those of nested functions or classes."""

    def __init__(self) -> None:
        self.returns: list[cst.Return] = []
        self.in_suite = False
        self.yields = False
        self.nested = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_SimpleStatementSuite(self, node: cst.SimpleStatementSuite) -> None:
        if any(isinstance(s, cst.Return) for s in node.body):
            self.in_suite = True

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        if len(node.body) > 1 and any(isinstance(s, cst.Return) for s in node.body):
            self.in_suite = True

    def visit_Return(self, node: cst.Return) -> None:
        self.returns.append(node)

    def visit_Yield(self, node: cst.Yield) -> None:
        self.yields = True


def returns(body: cst.BaseSuite) -> _Returns:
    """The returns (and whether it yields) of one function body, nested functions left out."""
    found = _Returns()
    body.visit(found)
    return found


def _is_none(value: cst.BaseExpression | None) -> bool:
    return value is None or (isinstance(value, cst.Name) and value.value == "None")


def _is_docstring(statement: cst.CSTNode) -> bool:
    """``statement`` is a plain string alone on its line (not concatenated, not an f-string).

    Plain ``isinstance`` checks, not ``libcst.matchers``: importing that costs 0.6 s, about a
    fifth of a whole ``--check`` of a tree where a few files use the old API.
    """
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString)
    )


def _kept(value: cst.BaseExpression, training: bool) -> tuple[str, bool] | str:
    """The code 1.x kept for ``return value`` and whether ``None`` must be guarded, or why not."""
    code = cst.Module([]).code_for_node(value)
    if isinstance(value, cst.Name) and not training:
        return code, True
    if isinstance(value, cst.Dict):
        parts: list[str] = []
        keys: set[str] = set()
        for element in value.elements:
            if not isinstance(element, cst.DictElement) or not isinstance(element.key, cst.SimpleString):
                return f"the step returns `{code}`, a dict whose keys are not all plain strings"
            if not isinstance(element.value, cst.Name | cst.Integer | cst.Float | cst.SimpleString):
                return f"the step returns `{code}`, a dict with values other than names and constants"
            key = element.key.evaluated_value
            if not isinstance(key, str) or key in keys or key == "hiddens":
                return f"the step returns `{code}`, a dict this rewrite does not follow"
            keys.add(key)
            item = cst.Module([]).code_for_node(element.value)
            if training and key == "loss":
                if not isinstance(element.value, cst.Name):
                    return f"the step returns `{code}`, whose `loss` is not a name"
                item += ".detach()"
            parts.append(f"{element.key.value}: {item}")
        if training and "loss" not in keys:
            return f"the step returns `{code}` without a `loss` key"
        return "{" + ", ".join(parts) + "}", False
    if training:
        return (
            f"the step returns `{code}`: 1.x kept `{{'loss': {code}.detach()}}` for a tensor and the dict "
            "itself for a dict, and which one this is cannot be told here; return a dict literal"
        )
    return f"the step returns `{code}`, which this rewrite cannot evaluate twice"


def _params(func: cst.FunctionDef) -> list[str] | None:
    p = func.params
    if p.star_arg is not cst.MaybeSentinel.DEFAULT or p.kwonly_params or p.star_kwarg or p.posonly_params:
        return None
    if any(param.default is not None for param in p.params):
        return None
    return [param.name.value for param in p.params]


def _is_super_init(statement: cst.CSTNode) -> bool:
    """``statement`` is ``super(...).__init__(...)`` alone on its line."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    expr = statement.body[0]
    if not isinstance(expr, cst.Expr) or not isinstance(expr.value, cst.Call):
        return False
    func = expr.value.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value == "__init__"
        and isinstance(func.value, cst.Call)
        and isinstance(func.value.func, cst.Name)
        and func.value.func.value == "super"
    )


def plan_epoch_end(info: ClassInfo, hook: cst.FunctionDef, source: str) -> str | list[tuple[cst.CSTNode, Fn, str]]:
    """The edits that rewrite ``hook`` of ``info`` (node, fn, message), or why it stays a TODO."""
    name = hook.name.value
    step_name, step_end, new_hook, store, training = EPOCH_END_HOOKS[name]
    defs = {s.name.value: s for s in info.node.body.body if isinstance(s, cst.FunctionDef)}
    step = defs.get(step_name)
    if step is None:
        return f"`{step_name}` is not defined in this class"
    for other in (new_hook, step_end):
        if other in defs:
            return f"the class defines `{other}`"
    if info.node.decorators or info.node.keywords:
        return "the class has decorators or a metaclass"
    if hook.decorators or step.decorators or hook.asynchronous or step.asynchronous:
        return "the hook or the step is decorated or async"
    if f".{name}" in source:
        return f"`{name}` is called in this file"
    if f".{store}" in source:
        return f"`{store}` is already used in this file"
    if "automatic_optimization" in source:
        return "the file may turn off automatic optimization (1.x kept other outputs then)"
    hook_params = _params(hook)
    if hook_params is None or len(hook_params) != 2:
        return f"`{name}` does not take exactly `(self, outputs)`"
    step_params = _params(step)
    if step_params is None or len(step_params) != 3:
        return f"`{step_name}` takes more than `(self, batch, batch_idx)` (several optimizers or dataloaders)"
    self_name, outputs = hook_params
    found = returns(step.body)
    if found.yields or found.in_suite:
        return f"`{step_name}` yields, or returns on a line with other statements"
    kept: dict[int, tuple[str, bool]] = {}
    for ret in found.returns:
        if _is_none(ret.value):
            continue
        assert ret.value is not None
        result = _kept(ret.value, training)
        if isinstance(result, str):
            return result
        kept[id(ret)] = result
    init = defs.get("__init__")
    if init is not None and not any(_is_super_init(s) for s in init.body.body):
        return "`__init__` does not call `super().__init__(...)` as a statement"

    step_self = step_params[0]
    init_line = cst.parse_statement(f"self.{store} = []\n")

    def edit_step(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef)
        return node.with_changes(body=node.body.visit(_AppendBeforeReturn(step_self, store, kept, step)))

    early_return = bool(returns(hook.body).returns)

    def edit_hook(node: cst.CSTNode) -> cst.CSTNode:
        assert isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock)
        head = cst.parse_statement(f"{outputs} = {self_name}.{store}\n")
        reset = cst.parse_statement(f"{self_name}.{store} = []\n")
        old = list(node.body.body)
        doc = old[:1] if old and _is_docstring(old[0]) else []
        old = old[len(doc) :]
        if early_return:  # every way out starts the new list
            finally_ = cst.Finally(body=cst.IndentedBlock(body=[reset]))
            body: tuple[cst.BaseStatement, ...] = (
                *doc,
                head,
                cst.Try(body=cst.IndentedBlock(body=old), finalbody=finally_),
            )
        else:
            body = (*doc, head, *old, reset)
        first = node.params.params[0].with_changes(comma=cst.MaybeSentinel.DEFAULT)
        return node.with_changes(
            name=cst.Name(new_hook), params=node.params.with_changes(params=(first,)),
            body=node.body.with_changes(body=body))  # fmt: skip

    if not isinstance(hook.body, cst.IndentedBlock) or not isinstance(step.body, cst.IndentedBlock):
        return f"`{name}` or `{step_name}` is written on one line"
    edits: list[tuple[cst.CSTNode, Fn, str]] = [
        (step, edit_step, f"{step_name} appends its output to self.{store}"),
        (hook, edit_hook, f"{name}(outputs) -> {new_hook}() reading self.{store}"),
    ]
    if init is not None:

        def edit_init(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.FunctionDef) and isinstance(node.body, cst.IndentedBlock)
            body = list(node.body.body)
            at = max(i for i, s in enumerate(body) if _is_super_init(s))
            body.insert(at + 1, init_line)
            return node.with_changes(body=node.body.with_changes(body=body))

        edits.append((init, edit_init, f"__init__ starts self.{store}"))
    else:
        block = info.node.body
        if not isinstance(block, cst.IndentedBlock):
            return "the class body is on one line"

        def edit_block(node: cst.CSTNode) -> cst.CSTNode:
            assert isinstance(node, cst.IndentedBlock)
            body = list(node.body)
            at = 1 if _is_docstring(body[0]) else 0
            existing = body[at] if at < len(body) else None
            if isinstance(existing, cst.FunctionDef) and existing.name.value == "__init__":
                lines = list(existing.body.body)
                lines.append(init_line)
                body[at] = existing.with_changes(body=existing.body.with_changes(body=lines))
            else:
                new_init = cst.parse_statement(
                    "def __init__(self, *args, **kwargs):\n"
                    "    super().__init__(*args, **kwargs)\n"
                    f"    self.{store} = []\n"
                )
                if at < len(body):
                    following = cast(cst.FunctionDef, body[at])
                    new_init = new_init.with_changes(leading_lines=following.leading_lines)
                    body[at] = following.with_changes(leading_lines=(cst.EmptyLine(indent=False),))
                body.insert(at, new_init)
            return node.with_changes(body=body)

        edits.append((block, edit_block, f"a new __init__ starts self.{store}"))
    return edits


class _AppendBeforeReturn(cst.CSTTransformer):
    """Insert the append before every ``return`` that 1.x kept (matched on the original returns)."""

    def __init__(
        self, self_name: str, store: str, kept: dict[int, tuple[str, bool]], original: cst.FunctionDef
    ) -> None:
        super().__init__()
        self.self_name = self_name
        self.store = store
        # Returns are matched by order: the updated tree has the same returns in the same order.
        self.order = [kept.get(id(r)) for r in returns(original.body).returns]
        self.seen = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if not any(isinstance(s, cst.Return) for s in updated_node.body):
            return updated_node
        plan = self.order[self.seen]
        self.seen += 1
        if plan is None:
            return updated_node
        code, guard = plan
        append = f"{self.self_name}.{self.store}.append({code})\n"
        if guard:
            value = updated_node.body[-1]
            assert isinstance(value, cst.Return) and value.value is not None
            name = cst.Module([]).code_for_node(value.value)
            statement = cst.parse_statement(f"if {name} is not None:\n    {append}")
        else:
            statement = cst.parse_statement(append)
        statement = statement.with_changes(leading_lines=updated_node.leading_lines)
        return cst.FlattenSentinel([statement, updated_node.with_changes(leading_lines=())])
