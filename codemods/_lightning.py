"""What the Lightning 2.x target needs after the rules: one namespace per file, complete environments.

Two passes over a file migrated with ``--target lightning``:

- **One namespace.** ``lightning.pytorch`` and the ``pytorch_lightning`` 2.x package hold
  distinct classes (a ``lightning.pytorch`` strategy is rejected by a ``pytorch_lightning``
  Trainer), so a file must not import from both. The rules write ``lightning.pytorch`` names;
  this pass moves every Lightning import of the file to the project's namespace
  (``declared_namespace``, or ``--lightning-namespace``), rewriting references through a
  bare ``import pytorch_lightning`` too. Imports of old-only classes (no such class in Lightning
  2.6; a rule left a TODO on them) stay where they are, so that the TODO and the old name still
  match and the next run still finds them.
- **Complete cluster environments.** Lightning 2.x declares ``detect()`` abstract on
  ``ClusterEnvironment``; a 1.x subclass has none and cannot be instantiated. 2.x asks
  ``detect()`` only of its own environments when it picks one, never of one passed to the
  Trainer, so the added ``detect()`` returns ``True`` and keeps 1.x behaviour. Any other abstract
  member still missing gets a TODO on the class.

Both read Lightning 2.6's classes and abstract members from the API catalog (``compat._catalog``).
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Collection, Iterable
from typing import cast

import libcst as cst

from compat import _catalog

from ._edits import Change
from ._ids import Rule
from ._scopes import dotted as get_full_name_for_node

__all__ = ["DEFAULT_NAMESPACE", "NAMESPACES", "declared_namespace", "finish_lightning"]

#: The two spellings of Lightning 2.x's trainer package, as ``--lightning-namespace`` takes them.
NAMESPACES: tuple[str, ...] = ("lightning.pytorch", _catalog.OLD_PACKAGE)
#: When the project's dependency files name neither distribution.
DEFAULT_NAMESPACE = "lightning.pytorch"

_CANONICAL = "lightning.pytorch"  # how the catalog and the rename table spell Lightning names
#: Fabric's package as each namespace spells it: ``lightning.fabric`` goes with ``lightning.pytorch``,
#: the ``lightning_fabric`` distribution with the ``pytorch_lightning`` 2.x one.
_FABRIC = {"lightning.pytorch": "lightning.fabric", _catalog.OLD_PACKAGE: "lightning_fabric"}
_ENVIRONMENT = "lightning.pytorch.plugins.environments.ClusterEnvironment"
_DEPENDENCY_FILES = ("pyproject.toml", "setup.cfg", "setup.py")
# A requirement naming a distribution: start of a quoted string or of a line, then the name.
_REQUIREMENT = re.compile(r"""(?:^|["'\s,\[])(pytorch[-_]lightning|lightning)\s*(?=[<>=!~;\[\s"',]|$)""", re.MULTILINE)

_DETECT = '''\
@staticmethod
def detect() -> bool:
    """Always: Lightning 2.x asks only its own environments; a custom one is passed in."""
    return True
'''


def declared_namespace(paths: Iterable[str]) -> str | None:
    """The namespace the project around ``paths`` declares, or ``None`` if it names neither.

    From each path upwards, the first folder with a ``pyproject.toml``, ``setup.cfg``,
    ``setup.py`` or ``requirements*.txt`` is the project root; its files are read as text. A
    requirement on ``lightning`` gives ``lightning.pytorch``; one on ``pytorch-lightning`` only
    gives ``pytorch_lightning`` (the 2.x release of the same package the project used).
    """
    for path in paths:
        folder = os.path.abspath(path if os.path.isdir(path) else os.path.dirname(path) or ".")
        while True:
            try:
                names = os.listdir(folder)
            except OSError:
                names = []
            files = [
                n for n in names if n in _DEPENDENCY_FILES or (n.startswith("requirements") and n.endswith(".txt"))
            ]
            if files:
                found = set()
                for name in sorted(files):
                    found |= _requirements(os.path.join(folder, name))
                if "lightning" in found:
                    return "lightning.pytorch"
                if found:
                    return _catalog.OLD_PACKAGE
                break
            parent = os.path.dirname(folder)
            if parent == folder:
                break
            folder = parent
    return None


def _requirements(path: str) -> set[str]:
    """The Lightning distributions a dependency file names (normalised: ``lightning``/``pytorch_lightning``)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return set()
    if path.endswith("setup.cfg"):
        parser = configparser.ConfigParser()
        try:
            parser.read_string(text)
        except configparser.Error:
            return set()
        text = "\n".join(
            parser.get(s, k)
            for s in parser.sections()
            for k in parser[s]
            if k in {"install_requires"} or s == "options.extras_require"
        )
    elif path.endswith(".txt"):
        text = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    return {m.group(1).lower().replace("-", "_") for m in _REQUIREMENT.finditer(text)}


def finish_lightning(
    module: cst.Module, code: str | None, namespace: str | None, rules: Collection[str], source: str
) -> tuple[cst.Module, str | None, list[Change]]:
    """Apply both passes to a file the rules migrated to Lightning; the changes carry lines of
    the returned code.

    Args:
        module: the migrated module; ``code``: its text when the caller splices (else ``None``).
        namespace: one of ``NAMESPACES`` (``None``: ``DEFAULT_NAMESPACE``).
        rules: the rule ids that ran: the namespace pass belongs to CM001 (imports), the
            environment pass to CM003 (overridden members); each runs only with its rule.
        source: the code before the rules ran (a 1.x ``creates_children`` there means the
            ``creates_processes_externally`` property in ``code`` was converted from it).

    Raises:
        ValueError: an unknown namespace.
    """
    namespace = namespace or DEFAULT_NAMESPACE
    if namespace not in NAMESPACES:
        raise ValueError(f"unknown Lightning namespace `{namespace}`; expected one of {', '.join(NAMESPACES)}")
    other = NAMESPACES[1 - NAMESPACES.index(namespace)]
    text = code if code is not None else module.code
    wanted = Rule.CM001 in rules and (other in text or _FABRIC[other] in text)
    wanted_env = Rule.CM003 in rules and _ENVIRONMENT.rpartition(".")[2] in text
    if not (wanted or wanted_env):
        return module, code, []
    if code is not None:
        module = cst.parse_module(code)  # the spliced text, so that untouched lines stay as they are
    changes: list[Change] = []
    if wanted:
        mover = _Namespace(namespace, other)
        module = module.visit(mover)
        changes += _with_lines(module, mover.changes)
    if wanted_env:
        completer = _Environments(_bindings(module), converted="def creates_children(" in source)
        module = module.visit(completer)
        if completer.needs_os:
            module = _with_os_import(module)
        changes += _with_lines(module, completer.changes)
    if not changes:
        return module, code, []
    return module, (module.code if code is not None else None), changes


def _with_lines(module: cst.Module, changes: list[tuple[cst.CSTNode, Change]]) -> list[Change]:
    """Give each change the line of its top-level statement in ``module``'s code."""
    lines: dict[int, int] = {}
    line = 1 + len(module.header)
    for statement in module.body:
        lines[id(statement)] = line + len(statement.leading_lines)
        line += module.code_for_node(statement).count("\n")
    out = []
    for site, change in changes:
        out.append(Change(change.rule, lines.get(id(site), 1), change.message, change.todo))
    return sorted(out, key=lambda c: c.line)


def _dotted(text: str) -> cst.Attribute | cst.Name:
    expression = cst.parse_expression(text)
    assert isinstance(expression, (cst.Attribute, cst.Name))
    return expression


def _moved(dotted: str, source: str, target: str) -> str | None:
    if dotted == source or dotted.startswith(source + "."):
        return target + dotted[len(source) :]
    return None


class _Pass(cst.CSTTransformer):
    """A transformer that files each change under the top-level statement it happened in."""

    def __init__(self) -> None:
        super().__init__()
        self.changes: list[tuple[cst.CSTNode, Change]] = []
        self._top: set[int] = set()
        self._statement: cst.CSTNode | None = None

    def on_visit(self, node: cst.CSTNode) -> bool:
        if isinstance(node, cst.Module):
            self._top = {id(s) for s in node.body}
        elif id(node) in self._top:
            self._statement = node
        return super().on_visit(node)

    def _change(self, rule: Rule, message: str, todo: bool = False) -> None:
        assert self._statement is not None
        self.changes.append((self._statement, Change(str(rule), 1, message, todo)))

    def leave_Module(self, original: cst.Module, updated: cst.Module) -> cst.Module:
        now = {id(o): u for o, u in zip(original.body, updated.body, strict=False)}
        self.changes = [(now.get(id(s), s), c) for s, c in self.changes]
        return updated


class _Namespace(_Pass):
    """Moves imports (and references through a bare ``import``) from ``other`` to ``namespace``."""

    def __init__(self, namespace: str, other: str) -> None:
        super().__init__()
        self.namespace = namespace
        self.other = other
        self._pairs = ((other, namespace), (_FABRIC[other], _FABRIC[namespace]))
        self.catalog = _catalog.target("lightning")
        self.rebound = False  # a bare ``import other[.x]`` became ``import namespace[.x]``
        self._in_import = 0

    def visit_Import(self, node: cst.Import) -> None:
        self._in_import += 1

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        self._in_import += 1

    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        self._in_import -= 1
        names = []
        for alias in updated.names:
            dotted = get_full_name_for_node(alias.name) or ""
            new = self._move(dotted)
            if new is None or self._canonical(new) not in self.catalog.modules:
                names.append(alias)  # not a module of Lightning 2.6 (CM001 left a TODO)
                continue
            if alias.asname is None and new.startswith(self.namespace):
                self.rebound = True
            names.append(alias.with_changes(name=_dotted(new)))
            self._change(Rule.CM001, f"import {dotted} -> {new} (one Lightning namespace per file)")
        return updated.with_changes(names=names)

    def leave_ImportFrom(self, original: cst.ImportFrom, updated: cst.ImportFrom) -> cst.ImportFrom:
        self._in_import -= 1
        if updated.relative or updated.module is None:
            return updated
        dotted = get_full_name_for_node(updated.module) or ""
        new = self._move(dotted)
        if new is None or isinstance(updated.names, cst.ImportStar):
            return updated
        canonical = self._canonical(new)
        for alias in updated.names:
            name = get_full_name_for_node(alias.name) or ""
            if not self.catalog.binds(f"{canonical}.{name}"):
                return updated  # not in Lightning 2.6 (CM001 or CM007 left a TODO): leave it to the person
        self._change(Rule.CM001, f"from {dotted} -> from {new} (one Lightning namespace per file)")
        return updated.with_changes(module=_dotted(new))

    def _move(self, dotted: str) -> str | None:
        """``dotted`` in this file's namespace, if it is in the other one."""
        for old, new in self._pairs:
            moved = _moved(dotted, old, new)
            if moved is not None:
                return moved
        return None

    def _canonical(self, dotted: str) -> str:
        """How the catalog spells ``dotted`` (``lightning.pytorch``, ``lightning.fabric``)."""
        for spelled in (self.namespace, _FABRIC[self.namespace]):
            canonical = _moved(dotted, spelled, _CANONICAL if spelled == self.namespace else "lightning.fabric")
            if canonical is not None:
                return canonical
        return dotted

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if self._in_import or not self.rebound:
            return updated
        if self.other == _catalog.OLD_PACKAGE:
            if isinstance(updated.value, cst.Name) and updated.value.value == _catalog.OLD_PACKAGE:
                return updated.with_changes(value=_dotted(self.namespace))
        elif (
            isinstance(updated.value, cst.Name)
            and updated.value.value == "lightning"
            and updated.attr.value == "pytorch"
        ):
            return _dotted(self.namespace)
        return updated


def _bindings(module: cst.Module) -> dict[str, str]:
    """Top-level import bindings: local name -> qualified name (canonical Lightning spelling)."""
    found: dict[str, str] = {}
    for statement in module.body:
        if not isinstance(statement, cst.SimpleStatementLine):
            continue
        for small in statement.body:
            if isinstance(small, cst.ImportFrom) and small.module is not None and not small.relative:
                source = get_full_name_for_node(small.module) or ""
                source = _moved(source, _catalog.OLD_PACKAGE, _CANONICAL) or source
                if isinstance(small.names, cst.ImportStar):
                    continue
                for alias in small.names:
                    name = get_full_name_for_node(alias.name) or ""
                    local = (
                        alias.asname.name.value if alias.asname and isinstance(alias.asname.name, cst.Name) else name
                    )
                    found[local] = f"{source}.{name}"
            elif isinstance(small, cst.Import):
                for alias in small.names:
                    name = get_full_name_for_node(alias.name) or ""
                    canonical = _moved(name, _catalog.OLD_PACKAGE, _CANONICAL) or name
                    if alias.asname and isinstance(alias.asname.name, cst.Name):
                        found[alias.asname.name.value] = canonical
    return found


class _Environments(_Pass):
    """Adds ``detect()`` to ``ClusterEnvironment`` subclasses and TODOs what else 2.x requires."""

    def __init__(self, bindings: dict[str, str], converted: bool = False) -> None:
        super().__init__()
        self.bindings = bindings
        self.converted = converted
        self.needs_os = False
        self.catalog = _catalog.target("lightning")
        self._depth = 0
        self._local: dict[str, tuple[set[str], list[str]]] = {}  # class -> (members, catalog bases)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._depth += 1

    def _qualified(self, expression: cst.BaseExpression) -> str | None:
        dotted = get_full_name_for_node(expression)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        if head in self.bindings:
            return self.bindings[head] + (f".{rest}" if rest else "")
        return _moved(dotted, _catalog.OLD_PACKAGE, _CANONICAL) or dotted

    def leave_ClassDef(self, original: cst.ClassDef, updated: cst.ClassDef) -> cst.ClassDef:
        self._depth -= 1
        members = _members(updated)
        bases: list[str] = []
        inherited: set[str] = set()
        for arg in updated.bases:
            name = get_full_name_for_node(arg.value)
            if name in self._local:  # a subclass of a class of this file
                local_members, local_bases = self._local[name]
                inherited |= local_members
                bases += local_bases
                continue
            qualified = self._qualified(arg.value)
            if qualified is not None and self.catalog.resolve(qualified) is not None:
                bases.append(qualified)
        self._local[updated.name.value] = (members | inherited, bases)
        if self._depth or not any(self.catalog.is_subclass(b, _ENVIRONMENT) for b in bases):
            return updated
        if self.converted and "creates_processes_externally" in members:
            updated = self._launched_by_lightning(updated)
        missing = sorted(self._abstract(bases) - members - inherited)
        if not missing:
            return updated
        if "detect" in missing:
            updated = self._add_detect(updated)
            missing.remove("detect")
            self._change(Rule.CM003, f"{updated.name.value}: added detect() (abstract in Lightning 2.x)")
        if missing and not _declares_abstract(updated):  # an abstract base leaves them to its subclasses
            hint = (
                f"Lightning 2.x requires {', '.join(f'`{m}`' for m in missing)} on "
                f"{updated.name.value}: implement them (see ClusterEnvironment)"
            )
            todo = Rule.CM003.todo(hint)
            if not any(line.comment and line.comment.value == todo for line in updated.leading_lines):
                comment = cst.EmptyLine(comment=cst.Comment(todo))
                updated = updated.with_changes(leading_lines=[*updated.leading_lines, comment])
            self._change(Rule.CM003, hint, todo=True)
        return updated

    def _abstract(self, bases: list[str]) -> set[str]:
        required = {name for base in bases for name in self.catalog.abstract(base)}
        for base in bases:  # a concrete 2.x environment among the bases implements its part
            for path in self.catalog.mro(base):
                info = self.catalog.cls(path)
                assert info is not None
                required -= (set(info.methods) | info.properties) - info.abstract
        return required

    def _launched_by_lightning(self, node: cst.ClassDef) -> cst.ClassDef:
        """Keep 1.x's meaning of ``creates_children() == False``: "Lightning starts the processes once".

        1.x launched the other ranks unless ``PL_IN_DDP_SUBPROCESS`` was set (the launcher set it
        for itself and its children); 2.x launches whenever ``creates_processes_externally`` is
        false, so a plain ``False`` makes every child launch again. 2.x's launcher sets
        ``LOCAL_RANK`` for itself and its children, as 1.x did ``PL_IN_DDP_SUBPROCESS``.
        """
        body = node.body
        assert isinstance(body, cst.IndentedBlock)
        statements = list(body.body)
        for index, statement in enumerate(statements):
            if isinstance(statement, cst.FunctionDef) and statement.name.value == "creates_processes_externally":
                rewriter = _LaunchedReturns()
                # _LaunchedReturns.leave_FunctionDef returns the (updated) def: never removed or flattened.
                new = cast(cst.FunctionDef, statement.visit(rewriter))
                if rewriter.changed:
                    statements[index] = new
                    self.needs_os = True
                    self._change(
                        Rule.CM003,
                        f"{node.name.value}.creates_processes_externally: true in the "
                        "processes Lightning started (LOCAL_RANK set), as 1.x's creates_children()",
                    )
        return node.with_changes(body=body.with_changes(body=statements))

    def _add_detect(self, node: cst.ClassDef) -> cst.ClassDef:
        body = node.body
        assert isinstance(body, cst.IndentedBlock)
        method = cst.parse_statement(_DETECT)
        method = method.with_changes(leading_lines=[cst.EmptyLine(indent=False)])
        return node.with_changes(body=body.with_changes(body=[*body.body, method]))


def _members(node: cst.ClassDef) -> set[str]:
    found: set[str] = set()
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    for statement in body:
        if isinstance(statement, cst.FunctionDef):
            found.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                targets = (
                    small.targets
                    if isinstance(small, cst.Assign)
                    else ([small] if isinstance(small, cst.AnnAssign) else [])
                )
                for target in targets:
                    if isinstance(target.target, cst.Name):
                        found.add(target.target.value)
    return found


_LAUNCHED = '"LOCAL_RANK" in os.environ'


class _LaunchedReturns(cst.CSTTransformer):
    """``return X`` -> ``return X or "LOCAL_RANK" in os.environ`` (not in nested functions)."""

    def __init__(self) -> None:
        super().__init__()
        self.changed = False
        self._depth = 0

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self._depth += 1

    def leave_FunctionDef(self, original: cst.FunctionDef, updated: cst.FunctionDef) -> cst.FunctionDef:
        self._depth -= 1
        return updated

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def leave_Return(self, original: cst.Return, updated: cst.Return) -> cst.Return:
        if self._depth != 1 or updated.value is None:
            return updated
        value = updated.value
        text = cst.Module([]).code_for_node(value)
        if _LAUNCHED in text or (isinstance(value, cst.Name) and value.value == "True"):
            return updated
        self.changed = True
        if isinstance(value, cst.Name) and value.value == "False":
            return updated.with_changes(value=cst.parse_expression(_LAUNCHED))
        simple = isinstance(value, (cst.Name, cst.Attribute, cst.Call, cst.Subscript)) or value.lpar
        wrapped = text if simple else f"({text})"
        return updated.with_changes(value=cst.parse_expression(f"{wrapped} or {_LAUNCHED}"))


def _with_os_import(module: cst.Module) -> cst.Module:
    """``module`` with a top-level ``import os`` (before its first import) unless ``os`` is bound."""
    body = list(module.body)
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                if isinstance(small, cst.Import) and any(
                    (get_full_name_for_node(a.name) == "os" and a.asname is None) for a in small.names
                ):
                    return module
    at = 0
    for index, statement in enumerate(body):
        first = statement.body[0] if isinstance(statement, cst.SimpleStatementLine) else None
        if isinstance(first, (cst.Import, cst.ImportFrom)):
            if isinstance(first, cst.ImportFrom) and get_full_name_for_node(first.module) == "__future__":
                at = index + 1
                continue
            at = index
            break
        if index == 0 and isinstance(first, cst.Expr) and isinstance(first.value, cst.SimpleString):
            at = 1  # after the module docstring
    body.insert(at, cst.parse_statement("import os\n"))
    return module.with_changes(body=body)


def _declares_abstract(node: cst.ClassDef) -> bool:
    body = node.body.body if isinstance(node.body, cst.IndentedBlock) else ()
    return any(
        isinstance(statement, cst.FunctionDef)
        and any(
            (get_full_name_for_node(d.decorator) or "").rpartition(".")[2] == "abstractmethod"
            for d in statement.decorators
        )
        for statement in body
    )
