"""The import plan shared by CM001 (import statements) and CM002 (references).

For every ``from old.module import OldName [as alias]`` the plan decides the new import and
whether references to the bound name are renamed (``OldName`` -> ``NewName``) or keep working
through an alias (``from strategies import NewName as OldName``): an alias is kept when the user
wrote one, when the new name is already taken in the file, when the old name is bound some other
way in the same scope (``try``/``except`` or ``if`` branches importing something else), or when
the module re-exports it through ``__all__``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from compat import _catalog
from compat.renames import Rename

from ._homes import find_home, lightning_path, module_resolves
from ._resolve import Resolver
from ._scopes import Analysis, Binding, Scope, dotted
from ._table import NewName, split_qualname

__all__ = [
    "FromImport",
    "ImportPlan",
    "ImportRequest",
    "ModuleMove",
    "manual_module",
    "moved_module",
    "plan_imports",
]


@dataclass(eq=False)
class FromImport:
    """What becomes of one ``OldName [as alias]`` in a ``from ... import`` statement.

    ``entry`` is the table row, or ``None`` for a name the table does not know that the target's
    catalog has a home for (``codemods._homes.find_home``).
    """

    alias: cst.ImportAlias
    binding: Binding
    entry: Rename | None
    new: NewName
    asname: str | None
    rename: bool


@dataclass(eq=False)
class ModuleMove:
    """``import old.module as m`` -> ``import new.module as m`` (a module entry)."""

    alias: cst.ImportAlias
    entry: Rename
    new: str


@dataclass(frozen=True)
class ImportRequest:
    """CM002 asks CM001 to add ``from module import name`` next to the import ``statement``."""

    statement: cst.Import | cst.ImportFrom
    module: str
    name: str


@dataclass
class ImportPlan:
    """The decisions for every old import of one file, and what CM002 asks of CM001.

    Computed once per file by ``plan_imports``; rules read it as ``ctx.import_plan``.
    """

    analysis: Analysis = field(repr=False, compare=False)
    by_alias: dict[int, FromImport] = field(default_factory=dict)
    moves: dict[int, ModuleMove] = field(default_factory=dict)
    by_binding: dict[int, FromImport] = field(default_factory=dict)
    #: new qualified name -> the module-scope name that will be bound to it.
    module_names: dict[str, str] = field(default_factory=dict)
    #: new short name -> the qualified name it is promised to (by the plan or by CM002).
    claims: dict[str, str] = field(default_factory=dict)
    #: imports CM002 needs for the attribute chains it replaced by a bare name.
    requests: list[ImportRequest] = field(default_factory=list)
    #: ids of the ``Name`` roots of chains CM002 rewrote away (their import may become unused).
    consumed: set[int] = field(default_factory=set)
    #: aliases of old imports the target has no home for -> (name, why); CM001 leaves a TODO.
    unresolved: dict[int, tuple[str, str]] = field(default_factory=dict)
    #: the names the module's ``__all__`` lists (they are uses of what they name).
    exported: set[str] = field(default_factory=set)

    def request(self, request: ImportRequest) -> None:
        """Ask for an import once."""
        if request not in self.requests:
            self.requests.append(request)

    def name_free(self, name: str, qualname: str, scope: Scope | None = None) -> bool:
        """Whether ``name`` can be bound to ``qualname`` without clashing with anything in the file.

        With ``scope`` (where the name is read), names bound in the body of a class other than
        ``scope`` (a method ``def add_argparse_args``) do not clash: a class body is not an
        enclosing scope of anything else."""
        claimed = self.claims.get(name)
        if claimed is not None:
            return claimed == qualname and not self._class_binds(scope, name)
        return all(
            (b.kind == "import" and b.qualname == qualname) or (scope is not None and _other_class(b, scope))
            for b in self.analysis.by_name.get(name, ())
        )

    @staticmethod
    def _class_binds(scope: Scope | None, name: str) -> bool:
        """Whether ``name`` read in ``scope`` would be a class body's own binding."""
        if scope is None:
            return False
        found = scope.lookup(name)[0]
        return found is not None and found.kind == "class"

    def bind_new(self, qualname: str, scope: Scope, statements: list[cst.Import | cst.ImportFrom]) -> str | None:
        """The name that refers to the new object ``qualname`` from ``scope`` after migration.

        A module-level name the plan already binds to it is reused; otherwise its short name is
        claimed and CM001 asked to import it next to each of ``statements`` (the imports the old
        name came through). ``None`` when the short name is taken or there is no import to follow.
        """
        name = self.module_names.get(qualname)
        if name is not None and self.reaches_module_name(scope, name, qualname):
            return name
        new = split_qualname(qualname)
        if any(r.module == new.module and r.name == new.name for r in self.requests):
            return None if self._class_binds(scope, new.name) else new.name  # asked for by an earlier site
        if not statements or not self.name_free(new.name, qualname, scope):
            return None
        self.claims[new.name] = qualname
        for statement in statements:
            self.request(ImportRequest(statement, new.module, new.name))
        return new.name

    def reaches_module_name(self, scope: Scope, name: str, qualname: str) -> bool:
        """Whether ``name`` read in ``scope`` is the module-level name bound to ``qualname``.

        True when it resolves to the module scope, or resolves nowhere yet but the plan renames an
        import to it (``from old import DDPPlugin`` becomes ``from new import DDPStrategy``).
        """
        found = scope.lookup(name)[0]
        return found is self.analysis.root or (found is None and self.claims.get(name) == qualname)


def _other_class(binding: Binding, scope: Scope) -> bool:
    """Whether ``binding`` is in the body of a class that ``scope`` does not read names from."""
    return binding.scope.kind == "class" and binding.scope is not scope


def moved_module(ctx: Resolver, qualname: str) -> tuple[Rename, str] | None:
    """The module entry covering ``qualname`` and the new path, when it is rewritten."""
    module = qualname
    while module:
        entry = ctx.table.module(module)
        if entry is not None:
            new = ctx.table.new(entry)
            if not ctx.table.auto(entry) or not new:
                return None
            return entry, new + qualname[len(module) :]
        module = module.rpartition(".")[0]
    return None


def _exported(ctx: Resolver) -> set[str]:
    names: set[str] = set()
    for binding in ctx.analysis.root.bindings.get("__all__", ()):
        if isinstance(binding.value, (cst.List, cst.Tuple)):
            for element in binding.value.elements:
                if isinstance(element.value, cst.SimpleString):
                    value = element.value.evaluated_value
                    if isinstance(value, str):  # a bytes literal names nothing
                        names.add(value)
    return names


def manual_module(ctx: Resolver, qualname: str) -> bool:
    """Whether ``qualname`` is under a module of the rename table that has no automatic rewrite
    for the target (CM007 leaves that entry's own TODO on its imports)."""
    module = qualname
    while module:
        entry = ctx.table.module(module)
        if entry is not None:
            return not (ctx.table.auto(entry) and ctx.table.new(entry))
        module = module.rpartition(".")[0]
    return False


def _old_root(qualname: str) -> bool:
    return qualname.partition(".")[0] == _catalog.OLD_PACKAGE and not qualname.rpartition(".")[2].startswith("__")


def _imported_module(binding: Binding) -> str | None:
    """The module an ``import a.b.c [as x]`` statement names (the binding is ``a`` or ``x``)."""
    alias = binding.node
    return dotted(alias.name) if isinstance(alias, cst.ImportAlias) else None


def _plan_home(ctx: Resolver, plan: ImportPlan, binding: Binding, moved: str | None) -> None:
    """``from pytorch_lightning.X import name``, a name the table does not know: its target home."""
    alias = binding.node
    assert isinstance(alias, cst.ImportAlias) and binding.qualname is not None
    name = dotted(alias.name) or ""
    module = binding.qualname[: -len(name) - 1]
    home = find_home(ctx.table.target, module, name, moved.rpartition(".")[0] if moved else None)
    if home.module is None:
        plan.unresolved[id(alias)] = (name, home.reason)
        return
    new = NewName(home.module, name)
    decision = FromImport(alias, binding, None, new, None if binding.name == name else binding.name, False)
    plan.by_alias[id(alias)] = decision
    plan.by_binding[id(binding)] = decision
    if binding.scope is ctx.analysis.root:
        plan.module_names.setdefault(f"{new.module}.{name}", binding.name)


def plan_imports(ctx: Resolver) -> ImportPlan:
    """The plan for ``ctx``'s file (the engine computes it once, for the rules that need it)."""
    plan = ImportPlan(ctx.analysis)
    exported = plan.exported = _exported(ctx)
    candidates: list[tuple[Binding, Rename, NewName]] = []
    for binding in ctx.analysis.import_bindings:
        if binding.qualname is None:
            continue
        if not isinstance(binding.stmt, cst.ImportFrom):
            moved = moved_module(ctx, binding.qualname) if binding.aliased else None
            if moved is not None:
                assert isinstance(binding.node, cst.ImportAlias)
                plan.moves[id(binding.node)] = ModuleMove(binding.node, *moved)
            elif ctx.table.target == "lightning" and _old_root(binding.qualname):
                module = _imported_module(binding)
                if module is not None and not module_resolves("lightning", lightning_path(module)):
                    plan.unresolved[id(binding.node)] = (
                        module,
                        f"Lightning 2.6 has no module `{lightning_path(module)}`",
                    )
            continue
        entry = ctx.table.object(binding.qualname)
        if entry is None:
            moved = moved_module(ctx, binding.qualname)
            if _old_root(binding.qualname) and not binding.stmt.relative and not manual_module(ctx, binding.qualname):
                _plan_home(ctx, plan, binding, moved[1] if moved else None)
            elif moved is not None:
                new = split_qualname(moved[1])
                asname = None if binding.name == new.name else binding.name
                decision = FromImport(binding.node, binding, moved[0], new, asname, False)  # type: ignore[arg-type]
                plan.by_alias[id(binding.node)] = decision
                plan.by_binding[id(binding)] = decision
            continue
        new_name = ctx.table.new(entry) if ctx.table.auto(entry) else None
        if new_name:
            candidates.append((binding, entry, split_qualname(new_name)))
    same = {id(b): e for b, e, _ in candidates}
    for binding, entry, new in candidates:
        alias = binding.node
        assert isinstance(alias, cst.ImportAlias)
        qualname = f"{new.module}.{new.name}"
        siblings = binding.scope.bindings.get(binding.name, ())
        rename = (
            not binding.aliased
            and binding.name not in exported
            and all(same.get(id(b)) is entry for b in siblings)
            and plan.name_free(new.name, qualname)
        )
        if rename:
            plan.claims[new.name] = qualname
            asname = None
        else:
            asname = None if binding.name == new.name else binding.name
        decision = FromImport(alias, binding, entry, new, asname, rename)
        plan.by_alias[id(alias)] = decision
        plan.by_binding[id(binding)] = decision
        if binding.scope is ctx.analysis.root:
            plan.module_names.setdefault(qualname, new.name if rename else binding.name)
    for bound in ctx.analysis.root.bindings.values():
        for b in bound:
            if b.kind == "import" and b.qualname and id(b) not in plan.by_binding:
                plan.module_names.setdefault(b.qualname, b.name)
    return plan
