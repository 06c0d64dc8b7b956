"""What the walk of one module records: scopes, bindings, classes, defs, and the nodes rules
look at (see ``codemods._scan``)."""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

__all__ = ["Analysis", "Binding", "ClassInfo", "FunctionInfo", "Scope", "dotted"]


def dotted(node: cst.BaseExpression | None) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else ``None``."""
    parts = []
    while isinstance(node, cst.Attribute):
        parts.append(node.attr.value)
        node = node.value
    if not isinstance(node, cst.Name):
        return None
    parts.append(node.value)
    return ".".join(reversed(parts))


@dataclass(eq=False)
class Scope:
    """A module, class or function scope (comprehensions and lambdas count as functions)."""

    kind: str
    parent: Scope | None
    node: cst.CSTNode
    bindings: dict[str, list[Binding]] = field(default_factory=dict)
    globals: set[str] = field(default_factory=set)
    nonlocals: set[str] = field(default_factory=set)
    cls: ClassInfo | None = None

    def lookup(self, name: str) -> tuple[Scope | None, list[Binding]]:
        """Python's name resolution from this scope: the scope that binds ``name`` and how."""
        scope: Scope | None = self
        first = True
        while scope is not None:
            if name in scope.globals:
                while scope.parent is not None:
                    scope = scope.parent
                return (scope, scope.bindings[name]) if name in scope.bindings else (None, [])
            visible = first or scope.kind != "class"
            if visible and name in scope.bindings and name not in scope.nonlocals:
                return scope, scope.bindings[name]
            first = False
            scope = scope.parent
        return None, []


@dataclass(eq=False)
class Binding:
    """One place that binds a name: an import, a def/class, a parameter or an assignment."""

    name: str
    kind: str  # import | class | def | param | assign | other
    scope: Scope
    node: cst.CSTNode
    qualname: str | None = None
    value: cst.BaseExpression | None = None
    annotation: cst.BaseExpression | None = None
    stmt: cst.CSTNode | None = None
    owner: ClassInfo | None = None  # set on the `self` parameter of a method
    aliased: bool = False


@dataclass(eq=False)
class ClassInfo:
    """A class statement and the scope of its body."""

    node: cst.ClassDef
    scope: Scope
    body: Scope
    qualname: str


@dataclass(eq=False)
class FunctionInfo:
    """A def statement, the scope around it and its own scope."""

    node: cst.FunctionDef
    scope: Scope
    body: Scope
    cls: ClassInfo | None  # the class whose body holds the def
    self_name: str | None


@dataclass(eq=False)
class Analysis:
    """Everything the rules need to know about one module, from one walk."""

    module: cst.Module
    name: str
    root: Scope
    parents: dict[int, cst.CSTNode] = field(default_factory=dict)
    names: list[tuple[cst.Name, Scope]] = field(default_factory=list)
    attributes: list[tuple[cst.Attribute, Scope, bool]] = field(default_factory=list)
    calls: list[tuple[cst.Call, Scope]] = field(default_factory=list)
    classes: list[ClassInfo] = field(default_factory=list)
    functions: list[FunctionInfo] = field(default_factory=list)
    imports: list[tuple[cst.Import | cst.ImportFrom, Scope]] = field(default_factory=list)
    strings: list[tuple[cst.SimpleString, Scope]] = field(default_factory=list)
    #: plain string literals that look like dotted paths (``"pkg.mod.Class"``), outside annotations.
    dotted_strings: list[cst.SimpleString] = field(default_factory=list)
    #: Strings that are one bare identifier (``"pytorch_lightning"`` in ``find_spec(...)``).
    name_strings: list[cst.SimpleString] = field(default_factory=list)
    by_name: dict[str, list[Binding]] = field(default_factory=dict)
    star_imports: list[tuple[str, cst.ImportFrom]] = field(default_factory=list)
    import_bindings: list[Binding] = field(default_factory=list)
    #: the quote of the file's first plain string literal, for strings the rules write.
    quote: str | None = None

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        """The node that holds ``node`` (``None`` for the module)."""
        return self.parents.get(id(node))

    def statement(self, node: cst.CSTNode) -> cst.CSTNode:
        """The innermost statement (or clause) around ``node`` that carries ``leading_lines``.

        The first decorator of a def or class is not one: the parser gives the comment lines
        above it to the def, so a TODO put there would not be found there on the next run.
        """
        current: cst.CSTNode | None = node
        while current is not None and not hasattr(current, "leading_lines"):
            current = self.parents.get(id(current))
        if isinstance(current, cst.Decorator):
            owner = self.parents.get(id(current))
            if isinstance(owner, (cst.FunctionDef, cst.ClassDef)) and owner.decorators[0] is current:
                return owner
        return current if current is not None else node
