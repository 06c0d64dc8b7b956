"""One cheap pass over a parsed module: scopes, bindings and the nodes the rules look at.

libcst's ``QualifiedNameProvider`` costs ~10 parses per file (codemod-tools.md §3); this walker
follows only the fields that can hold code (no whitespace), records each node's parent, and
tracks Python's scoping rules itself, so the rules can resolve names for about a tenth of a parse.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import libcst as cst

from ._classes import resolve_relative
from ._scopes import (
    Analysis,
    Binding,
    ClassInfo,
    FunctionInfo,
    Scope,
    dotted,
)

__all__ = ["analyze"]

_SKIP = {
    "lpar", "rpar", "comma", "semicolon", "leading_lines", "lines_after_decorators", "header",
    "footer", "trailing_whitespace", "newline", "dot", "colon", "first_colon", "second_colon",
    "equal", "operator", "lbrace", "rbrace", "lbracket", "rbracket", "asynchronous", "relative",
    "star", "posonly_ind", "separator", "empty_lines", "comment", "indent", "trailing_comma",
    "leading_whitespace", "first_line", "last_line",
}  # fmt: skip
_FIELDS: dict[type, tuple[str, ...]] = {}
#: type of a field's value -> 1 for a node, 2 for a sequence, 0 for anything else. A dict
#: lookup, not ``isinstance(value, cst.CSTNode)``: ``CSTNode`` is an ABC, whose instance check
#: costs several times a plain one, and the walk makes it for every field of every node.
_KINDS: dict[type, int] = {}


def _fields(tp: type) -> tuple[str, ...]:
    names = _FIELDS.get(tp)
    if names is None:
        names = tuple(
            f.name for f in dataclasses.fields(tp) if f.name not in _SKIP and not f.name.startswith("whitespace")
        )
        _FIELDS[tp] = names
    return names


def _kind(tp: type) -> int:
    kind = 1 if issubclass(tp, cst.CSTNode) else 2 if issubclass(tp, (tuple, list)) else 0
    _KINDS[tp] = kind
    return kind


class _Walker:
    def __init__(self, analysis: Analysis, is_package: bool) -> None:
        self.a = analysis
        self.is_package = is_package
        # Dispatched on ``type(node)``: each handler gets exactly the node class it is keyed by.
        self.handlers: dict[type, Callable[[Any, Scope], None]] = {
            cst.Name: self._name,
            cst.Attribute: self._attribute,
            cst.Call: self._call,
            cst.Import: self._import,
            cst.ImportFrom: self._import_from,
            cst.ClassDef: self._class,
            cst.FunctionDef: self._function,
            cst.Lambda: self._lambda,
            cst.Assign: self._assign,
            cst.AnnAssign: self._ann_assign,
            cst.AugAssign: self._aug_assign,
            cst.For: self._for,
            cst.WithItem: self._with_item,
            cst.ExceptHandler: self._except,
            cst.NamedExpr: self._named_expr,
            cst.Global: self._global,
            cst.Nonlocal: self._nonlocal,
            cst.Del: self._del,
            cst.Arg: self._arg,
            cst.Annotation: self._annotation,
            cst.ListComp: self._comprehension,
            cst.SetComp: self._comprehension,
            cst.GeneratorExp: self._comprehension,
            cst.DictComp: self._comprehension,
            cst.MatchAs: self._match_capture,
            cst.MatchStar: self._match_capture,
            cst.SimpleString: self._string,
        }

    # -- traversal ---------------------------------------------------------------------------

    def visit(self, node: cst.CSTNode, parent: cst.CSTNode, scope: Scope) -> None:
        self.a.parents[id(node)] = parent
        handler = self.handlers.get(type(node))
        if handler is None:
            self.children(node, scope)
        else:
            handler(node, scope)

    def children(self, node: cst.CSTNode, scope: Scope) -> None:
        # ``visit`` inlined: this loop runs for most nodes of the file.
        kinds, parents, handlers = _KINDS, self.a.parents, self.handlers
        for name in _FIELDS.get(type(node)) or _fields(type(node)):
            value = getattr(node, name)
            kind = kinds.get(type(value))
            if kind is None:
                kind = _kind(type(value))
            if not kind:
                continue
            for child in (value,) if kind == 1 else value:
                if kind == 2 and (kinds.get(type(child)) or _kind(type(child))) != 1:
                    continue
                parents[id(child)] = node
                handler = handlers.get(type(child))
                if handler is None:
                    self.children(child, scope)
                else:
                    handler(child, scope)

    def bind(self, scope: Scope, name: str, kind: str, node: cst.CSTNode, **extra: object) -> Binding:
        binding = Binding(name, kind, scope, node, **extra)  # type: ignore[arg-type]
        scope.bindings.setdefault(name, []).append(binding)
        self.a.by_name.setdefault(name, []).append(binding)
        if kind == "import":
            self.a.import_bindings.append(binding)
        return binding

    def store(self, target: cst.CSTNode, parent: cst.CSTNode, scope: Scope, value: cst.BaseExpression | None) -> None:
        self.a.parents[id(target)] = parent
        if isinstance(target, cst.Name):
            self.bind(scope, target.value, "assign", target, value=value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self.a.parents[id(element)] = target
                self.store(element.value, element, scope, None)
        elif isinstance(target, cst.StarredElement):
            self.store(target.value, target, scope, None)
        elif isinstance(target, cst.Attribute):
            self.visit(target.value, target, scope)
            self.a.parents[id(target.attr)] = target
            self.a.attributes.append((target, scope, True))
        else:
            self.visit(target, parent, scope)

    # -- expressions -------------------------------------------------------------------------

    def _name(self, node: cst.Name, scope: Scope) -> None:
        self.a.names.append((node, scope))

    def _attribute(self, node: cst.Attribute, scope: Scope) -> None:
        self.visit(node.value, node, scope)
        self.a.parents[id(node.attr)] = node
        self.a.attributes.append((node, scope, False))

    def _call(self, node: cst.Call, scope: Scope) -> None:
        self.a.calls.append((node, scope))
        self.children(node, scope)

    def _string(self, node: cst.SimpleString, scope: Scope) -> None:
        if self.a.quote is None and not node.prefix and len(node.quote) == 1:
            self.a.quote = node.quote
        if "." in node.value and len(node.value) < 300 and "b" not in node.prefix.lower():
            self.a.dotted_strings.append(node)
        elif len(node.value) < 40 and "_" in node.value and node.value[len(node.prefix) + 1 : -1].isidentifier():
            self.a.name_strings.append(node)

    def _arg(self, node: cst.Arg, scope: Scope) -> None:
        self.visit(node.value, node, scope)

    def _annotation(self, node: cst.Annotation, scope: Scope) -> None:
        if isinstance(node.annotation, cst.SimpleString):
            self.a.parents[id(node.annotation)] = node
            self.a.strings.append((node.annotation, scope))
        else:
            self.visit(node.annotation, node, scope)

    def _lambda(self, node: cst.Lambda, scope: Scope) -> None:
        inner = Scope("function", scope, node)
        self._parameters(node.params, node, scope, inner, None)
        self.visit(node.body, node, inner)

    def _comprehension(self, node: cst.CSTNode, scope: Scope) -> None:
        inner = Scope("function", scope, node)
        for_in: cst.CompFor | None = node.for_in  # type: ignore[attr-defined]
        owner: cst.CSTNode = node
        while for_in is not None:
            self.a.parents[id(for_in)] = owner
            self.visit(for_in.iter, for_in, scope if owner is node else inner)
            self.store(for_in.target, for_in, inner, None)
            for cond in for_in.ifs:
                self.a.parents[id(cond)] = for_in
                self.visit(cond.test, cond, inner)
            owner, for_in = for_in, for_in.inner_for_in
        for name in ("elt", "key", "value"):
            child = getattr(node, name, None)
            if isinstance(child, cst.CSTNode):
                self.visit(child, node, inner)

    def _named_expr(self, node: cst.NamedExpr, scope: Scope) -> None:
        self.visit(node.value, node, scope)
        target = scope
        while target.kind == "function" and not isinstance(target.node, (cst.FunctionDef, cst.Lambda)):
            target = target.parent or target
        self.store(node.target, node, target, node.value)

    def _match_capture(self, node: cst.MatchAs | cst.MatchStar, scope: Scope) -> None:
        if isinstance(node, cst.MatchAs) and node.pattern is not None:
            self.visit(node.pattern, node, scope)
        if node.name is not None:
            self.a.parents[id(node.name)] = node
            self.bind(scope, node.name.value, "other", node.name)

    # -- statements --------------------------------------------------------------------------

    def _import(self, node: cst.Import, scope: Scope) -> None:
        self.a.imports.append((node, scope))
        for alias in node.names:
            self.a.parents[id(alias)] = node
            full = dotted(alias.name) or ""
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.bind(scope, alias.asname.name.value, "import", alias, qualname=full, stmt=node, aliased=True)
            else:
                root = full.partition(".")[0]
                self.bind(scope, root, "import", alias, qualname=root, stmt=node)

    def _import_from(self, node: cst.ImportFrom, scope: Scope) -> None:
        self.a.imports.append((node, scope))
        module = dotted(node.module) if node.module is not None else None
        if node.relative:
            module = resolve_relative(self.a.name, len(node.relative), module, self.is_package)
        if isinstance(node.names, cst.ImportStar):
            self.a.star_imports.append((module or "", node))
            return
        for alias in node.names:
            self.a.parents[id(alias)] = node
            name = alias.name.value if isinstance(alias.name, cst.Name) else dotted(alias.name) or ""
            qualname = f"{module}.{name}" if module else name
            if alias.asname is not None and isinstance(alias.asname.name, cst.Name):
                self.bind(
                    scope,
                    alias.asname.name.value,
                    "import",
                    alias,
                    qualname=qualname,
                    stmt=node,
                    aliased=True,
                )
            else:
                self.bind(scope, name, "import", alias, qualname=qualname, stmt=node)

    def _class(self, node: cst.ClassDef, scope: Scope) -> None:
        for decorator in node.decorators:
            self.visit(decorator, node, scope)
        for arg in (*node.bases, *node.keywords):
            self.visit(arg, node, scope)
        prefix = self.a.name if scope.kind == "module" else (scope.cls.qualname if scope.cls else None)
        qualname = f"{prefix}.{node.name.value}" if prefix is not None else f"<local>.{node.name.value}"
        self.a.parents[id(node.name)] = node
        body = Scope("class", scope, node)
        info = ClassInfo(node, scope, body, qualname)
        body.cls = info
        self.a.classes.append(info)
        self.bind(scope, node.name.value, "class", node, qualname=qualname)
        self.visit(node.body, node, body)

    def _function(self, node: cst.FunctionDef, scope: Scope) -> None:
        for decorator in node.decorators:
            self.visit(decorator, node, scope)
        if node.returns is not None:
            self.visit(node.returns, node, scope)
        self.a.parents[id(node.name)] = node
        self.bind(scope, node.name.value, "def", node)
        inner = Scope("function", scope, node)
        cls = scope.cls if scope.kind == "class" else None
        self_name = None
        if cls is not None and not any(dotted(d.decorator) == "staticmethod" for d in node.decorators):
            params = [*node.params.posonly_params, *node.params.params]
            if params:
                self_name = params[0].name.value
        self._parameters(node.params, node, scope, inner, cls if self_name else None)
        self.a.functions.append(FunctionInfo(node, scope, inner, cls, self_name))
        self.visit(node.body, node, inner)

    def _parameters(
        self, params: cst.Parameters, owner: cst.CSTNode, outer: Scope, inner: Scope, cls: ClassInfo | None
    ) -> None:
        self.a.parents[id(params)] = owner
        first = True
        for param in (
            *params.posonly_params,
            *params.params,
            params.star_arg,
            *params.kwonly_params,
            params.star_kwarg,
        ):
            if not isinstance(param, cst.Param):
                continue
            self.a.parents[id(param)] = params
            self.a.parents[id(param.name)] = param
            if param.default is not None:
                self.visit(param.default, param, outer)
            annotation = param.annotation.annotation if param.annotation is not None else None
            if param.annotation is not None:
                self.a.parents[id(param.annotation)] = param
                self._annotation(param.annotation, outer)
            is_self = first and cls is not None and param.star == ""
            self.bind(inner, param.name.value, "param", param, annotation=annotation, owner=cls if is_self else None)
            first = False

    def _assign(self, node: cst.Assign, scope: Scope) -> None:
        self.visit(node.value, node, scope)
        for target in node.targets:
            self.a.parents[id(target)] = node
            self.store(target.target, target, scope, node.value)

    def _ann_assign(self, node: cst.AnnAssign, scope: Scope) -> None:
        self.visit(node.annotation, node, scope)
        if node.value is not None:
            self.visit(node.value, node, scope)
        self.store(node.target, node, scope, node.value)
        if isinstance(node.target, cst.Name):
            scope.bindings[node.target.value][-1].annotation = node.annotation.annotation

    def _aug_assign(self, node: cst.AugAssign, scope: Scope) -> None:
        self.visit(node.value, node, scope)
        if isinstance(node.target, cst.Name):
            self.a.names.append((node.target, scope))
        self.store(node.target, node, scope, None)

    def _for(self, node: cst.For, scope: Scope) -> None:
        self.visit(node.iter, node, scope)
        self.store(node.target, node, scope, None)
        self.visit(node.body, node, scope)
        if node.orelse is not None:
            self.visit(node.orelse, node, scope)

    def _with_item(self, node: cst.WithItem, scope: Scope) -> None:
        self.visit(node.item, node, scope)
        if node.asname is not None:
            self.a.parents[id(node.asname)] = node
            self.store(node.asname.name, node.asname, scope, None)

    def _except(self, node: cst.ExceptHandler, scope: Scope) -> None:
        if node.type is not None:
            self.visit(node.type, node, scope)
        if node.name is not None:
            self.a.parents[id(node.name)] = node
            self.store(node.name.name, node.name, scope, None)
        self.visit(node.body, node, scope)

    def _global(self, node: cst.Global, scope: Scope) -> None:
        scope.globals.update(item.name.value for item in node.names)

    def _nonlocal(self, node: cst.Nonlocal, scope: Scope) -> None:
        scope.nonlocals.update(item.name.value for item in node.names)

    def _del(self, node: cst.Del, scope: Scope) -> None:
        self.store(node.target, node, scope, None)


def analyze(module: cst.Module, name: str = "") -> Analysis:
    """Walk ``module`` once (``name`` is its dotted module name, ``pkg.__init__`` for packages)."""
    is_package = name == "__init__" or name.endswith(".__init__")
    if is_package:
        name = name[: -len("__init__")].rstrip(".")
    root = Scope("module", None, module)
    analysis = Analysis(module, name, root)
    walker = _Walker(analysis, is_package)
    for statement in module.body:
        walker.visit(statement, module, root)
    return analysis
