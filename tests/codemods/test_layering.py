"""The codemods package has no import cycle: every module can be read (and imported) bottom-up.

Imports are read with ``ast``, all of them: module level, inside functions (lazy imports) and
under ``if TYPE_CHECKING:`` (a type-only cycle is still a circle a reader has to untangle).
"""

from __future__ import annotations

import ast
import pathlib

import codemods

PACKAGE = pathlib.Path(codemods.__file__).parent
ROOT = PACKAGE.parent


def _modules() -> dict[str, pathlib.Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name: str, path: pathlib.Path, modules: dict[str, pathlib.Path]) -> set[str]:
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name in modules}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{node.module}" if node.module else anchor
            submodules = {f"{base}.{alias.name}" for alias in node.names} & modules.keys()
            found |= submodules
            if base in modules and len(submodules) < len(node.names):
                found.add(base)  # a name defined in the module itself (not a submodule)
    found.discard(name)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, modules) for name, path in modules.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    order: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        order[node] = low[node] = len(order)
        stack.append(node)
        on_stack.add(node)
        for dep in sorted(graph[node]):
            if dep not in order:
                visit(dep)
                low[node] = min(low[node], low[dep])
            elif dep in on_stack:
                low[node] = min(low[node], order[dep])
        if low[node] == order[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in order:
            visit(node)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_graph_sees_lazy_and_type_checking_imports() -> None:
    graph = _graph()
    assert "codemods._engine" in graph["codemods._api"]
    assert "codemods._ids" in graph["codemods._edits"]


def test_codemods_modules_import_no_cycle() -> None:
    cycles = _cycles(_graph())
    assert not cycles, f"import cycles among codemods modules: {cycles}"


def test_rule_ids_are_a_leaf() -> None:
    """``_ids`` (rule ids, the TODO prefix) imports nothing from the package, so anything may use it."""
    assert _graph()["codemods._ids"] == set()


def test_a_site_a_rule_did_not_declare_is_a_clear_error() -> None:
    """The engine computes only the sites the selected rules list in ``NEEDS``; reading another fails loudly."""
    import libcst as cst

    from codemods import _engine
    from codemods._context import Context, Site
    from codemods._rule import RuleCommand

    seen: list[int] = []

    class Reads(RuleCommand):
        RULE = codemods.Rule.CM010
        NEEDS = (Site.CALLS,)

        def run(self, ctx: Context) -> None:
            seen.append(len(ctx.call_sites))
            ctx.member_sites  # noqa: B018 (not declared)

    tree = cst.parse_module("from pytorch_lightning import Trainer\nTrainer(gpus=1)\n")
    try:
        _engine.run_rules(tree, [Reads])
    except RuntimeError as error:
        assert "Site.MEMBERS" in str(error) and "NEEDS" in str(error)
    else:
        raise AssertionError("reading an undeclared site did not fail")
    assert seen == [1]
