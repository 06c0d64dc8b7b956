"""Dicts of Trainer keywords: ``kwargs = dict(gpus=2)`` ... ``Trainer(**kwargs)``.

Programs often build the Trainer's keywords in a dict first and spread it into the call, or
return such a dict from a helper (``Trainer(**trainer_kwargs(args))``). When every use of the dict
can be seen, the calls that build it (``dict(...)`` and ``kwargs.update(...)``) are read as
parts of the Trainer call, so that CM006-CM008 rewrite and check their keywords as the call's
own. Only when that is sure to mean what the whole call meant:

- the name is bound only to ``dict(k=v, ...)`` calls, ``{"k": v, ...}`` literals (whose keys
  the table does not know) or conditionals of them, in one function or module scope;
- every other read of it is ``name.update(k=v, ...)`` (a statement, keywords only), ``**name`` in
  a call of the old Trainer (or ``Trainer.from_argparse_args``), or, inside a function of this
  file, ``return name`` where every call of that function is spread so;
- the arguments that choose how processes launch (``gpus``, ``accelerator``, ``num_processes``,
  ...) are all in one of those parts, and the Trainer calls that take the dict pass none of them
  themselves and no other ``**``: the launch 1.x chose is then decided inside that one part.
"""

from __future__ import annotations

import libcst as cst

from ._epoch_end import returns
from ._facts import LAUNCH_KEYWORDS, OLD_TRAINER, removed_classmethod
from ._resolve import Resolver
from ._scopes import Binding, Scope

__all__ = ["keyword_dict_parts"]


def keyword_dict_parts(
    ctx: Resolver, spreading: list[tuple[cst.Call, Scope]], known: set[str]
) -> tuple[list[tuple[cst.Call, Scope]], set[int]]:
    """The calls (``dict(...)``, ``kwargs.update(...)``) that build dicts spread into the
    Trainer calls ``spreading``, and the ``**`` arguments whose every key they show (by id);
    ``known``: the keywords the table has entries for."""
    found: dict[tuple[int, str], tuple[Scope, bool, list[cst.Call]]] = {}
    args_of: dict[tuple[int, str], list[cst.Arg]] = {}
    spread = {id(call) for call, _ in spreading}
    for call, scope in spreading:
        for arg in call.args:
            if arg.star != "**":
                continue
            source = _source(ctx, arg.value, scope, spread)
            if source is not None:
                name, where, returned = source
                found.setdefault((id(where.node), name), (where, returned, []))[2].append(call)
                args_of.setdefault((id(where.node), name), []).append(arg)
    parts: list[tuple[cst.Call, Scope]] = []
    shown: set[int] = set()
    for key, (scope, returned, calls) in found.items():
        pieces = _pieces(ctx, scope, key[1], calls, returned)
        if pieces is not None and _one_launch(pieces, calls, known):
            parts.extend((piece, scope) for piece in pieces if isinstance(piece, cst.Call))
            shown.update(id(arg) for arg in args_of[key])
    return parts, shown


def _source(ctx: Resolver, value: cst.BaseExpression, scope: Scope, spread: set[int]) -> tuple[str, Scope, bool] | None:
    """``(name, its scope, returned)`` of the dict ``**value`` spreads: ``kwargs``, or the dict
    that the function ``f`` of ``**f(...)`` returns (when every call of ``f`` is spread so)."""
    if isinstance(value, cst.Name):
        owner, bound = scope.lookup(value.value)
        if owner is not None and owner.kind != "class" and bound and all(b.kind == "assign" for b in bound):
            return value.value, owner, False
        return None
    if not (isinstance(value, cst.Call) and isinstance(value.func, cst.Name)):
        return None
    owner, bound = scope.lookup(value.func.value)
    if owner is None or len(bound) != 1 or bound[0].kind != "def":
        return None
    function = next((f for f in ctx.analysis.functions if f.node is bound[0].node), None)
    returned = _returned_name(function.node) if function is not None and function.cls is None else None
    if function is None or returned is None:
        return None
    for node, where in ctx.analysis.names:  # every call of the function must be a spread one
        if node.value != value.func.value or where.lookup(node.value)[0] is not owner or node is function.node.name:
            continue
        call = ctx.analysis.parent(node)
        arg = ctx.analysis.parent(call) if isinstance(call, cst.Call) and call.func is node else None
        if not (isinstance(arg, cst.Arg) and arg.star == "**" and id(ctx.analysis.parent(arg)) in spread):
            return None
    return returned, function.body, True


def _returned_name(node: cst.FunctionDef) -> str | None:
    """The one name every ``return`` of the function returns (``None``: another value or none)."""
    found = returns(node.body)
    names = {r.value.value if isinstance(r.value, cst.Name) else None for r in found.returns}
    return names.pop() if len(names) == 1 and found.returns and not found.yields else None


def _pieces(
    ctx: Resolver, scope: Scope, name: str, calls: list[cst.Call], returned: bool
) -> list[cst.BaseExpression] | None:
    """Every expression that puts keys in the dict ``name`` of ``scope`` (its ``dict(...)``
    calls, literals and ``update(...)`` calls), or ``None`` when some use of it cannot be seen;
    ``returned``: the function returns it (and all its calls are spread into the Trainer)."""
    bindings: list[Binding] = scope.bindings.get(name, [])
    if name in scope.globals or name in scope.nonlocals or not bindings:
        return None
    pieces: list[cst.BaseExpression] = []
    for binding in bindings:
        if binding.kind != "assign" or binding.value is None or not _dict_expression(binding.value, pieces):
            return None
    spread = {id(c) for c in calls}
    for node, where in ctx.analysis.names:
        if node.value != name or where.lookup(name)[0] is not scope:
            continue
        if any(node is b.node for b in bindings):
            continue  # the assignment's own target
        parent = ctx.analysis.parent(node)
        if isinstance(parent, cst.Arg) and parent.star == "**" and id(ctx.analysis.parent(parent)) in spread:
            continue
        if isinstance(parent, cst.Return) and returned:
            continue  # `return kwargs`: the function's calls are all spread (`_source`)
        update = ctx.analysis.parent(parent) if isinstance(parent, cst.Attribute) else None
        if (
            isinstance(parent, cst.Attribute)
            and parent.value is node
            and parent.attr.value == "update"
            and isinstance(update, cst.Call)
            and update.func is parent
            and isinstance(ctx.analysis.parent(update), cst.Expr)
            and update.args
            and all(a.keyword is not None and not a.star for a in update.args)
        ):
            pieces.append(update)
            continue
        return None  # read in another way: the dict may go anywhere
    return pieces


def _dict_expression(value: cst.BaseExpression, pieces: list[cst.BaseExpression]) -> bool:
    """``dict(k=v)``, ``{"k": v}`` or a conditional of them (collected into ``pieces``)."""
    if isinstance(value, cst.IfExp):
        return _dict_expression(value.body, pieces) and _dict_expression(value.orelse, pieces)
    if isinstance(value, cst.Call) and isinstance(value.func, cst.Name) and value.func.value == "dict":
        if all(a.keyword is not None and not a.star for a in value.args):
            if value.args:
                pieces.append(value)
            return True
        return False
    if isinstance(value, cst.Dict):
        if all(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) for e in value.elements):
            pieces.append(value)
            return True
    return False


def _keys(piece: cst.BaseExpression) -> set[str]:
    if isinstance(piece, cst.Call):
        return {a.keyword.value for a in piece.args if a.keyword is not None}
    assert isinstance(piece, cst.Dict)
    keys = set()
    for element in piece.elements:
        assert isinstance(element, cst.DictElement) and isinstance(element.key, cst.SimpleString)
        value = element.key.evaluated_value
        keys.add(value if isinstance(value, str) else "")
    return keys


def _one_launch(pieces: list[cst.BaseExpression], calls: list[cst.Call], known: set[str]) -> bool:
    """Whether the launch arguments are all in one piece, none in the Trainer calls, no call has
    another ``**``, a literal holds no keyword the table knows, and no key is passed twice."""
    launching = [p for p in pieces if _keys(p) & LAUNCH_KEYWORDS]
    if len(launching) > 1:
        return False
    for piece in pieces:
        if isinstance(piece, cst.Dict) and _keys(piece) & known:
            return False  # a literal's keys are not rewritten: keep the TODOs
    keys = set().union(*(_keys(p) for p in pieces)) if pieces else set()
    for call in calls:
        explicit = {a.keyword.value for a in call.args if a.keyword is not None}
        if explicit & LAUNCH_KEYWORDS and launching or explicit & keys:
            return False
        if sum(1 for a in call.args if a.star == "**") > 1:
            return False
    return True


def spreads_into_trainer(ctx: Resolver, call: cst.Call, scope: Scope, origin: str | None, direct: bool) -> bool:
    """Whether ``call`` is a Trainer call whose ``**`` a keyword dict may fill."""
    if origin != OLD_TRAINER or not any(a.star == "**" for a in call.args):
        return False
    if direct:
        return True
    func = call.func
    helper = removed_classmethod(origin, func.attr.value) if isinstance(func, cst.Attribute) else None
    return helper is not None and helper.constructs
