"""The codemod rules, checked against before/after fixture files.

Layout (one folder per rule id, plus ``all/`` for whole files run with every rule):

    fixtures/<rule id>/<case>.in.py             the input
    fixtures/<rule id>/<case>.out.py            the expected output for ``--target strategies``
    fixtures/<rule id>/<case>.lightning.out.py  the expected output for ``--target lightning``,
                                                only where it differs from ``<case>.out.py``
    fixtures/cross_file/{in,out}/...            a package whose subclasses span files

A fixture in a rule folder runs with that rule selected (plus the rules it requires); cases
whose output equals their input are the no-op cases and are named for why nothing changes.
``CODEMODS_UPDATE_FIXTURES=1 pytest tests/codemods`` rewrites the expected files from the
current output (review the diff before committing it).
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import pathlib
import re
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import libcst as cst
import pytest
from libcst.codemod import CodemodContext

import codemods
from codemods import _api, _engine
from compat.renames import RENAMES, Kind, Rename

FIXTURES = pathlib.Path(__file__).parent / "fixtures"
TARGETS = codemods.TARGETS
UPDATE = os.environ.get("CODEMODS_UPDATE_FIXTURES") == "1"
CASES = sorted([*FIXTURES.glob("CM*/*.in.py"), *FIXTURES.glob("all/*.in.py")])


@dataclass(frozen=True)
class _Run:
    code: str
    changes: tuple[codemods.Change, ...]
    used: frozenset[Rename]


def _select(path: pathlib.Path) -> list[str] | None:
    return None if path.parent.name == "all" else [path.parent.name]


@functools.cache
def _run(path: pathlib.Path, target: str) -> _Run:
    source = path.read_text()
    rules = _api.select_rules(_select(path))
    module, code, changes, used = _engine.run_rules(cst.parse_module(source), rules, target=target, source=source)
    assert code == module.code, "the spliced code differs from the new module's code"
    return _Run(code, tuple(changes), frozenset(used))


def _expected(path: pathlib.Path, target: str) -> pathlib.Path:
    stem = path.name[: -len(".in.py")]
    lightning = path.with_name(f"{stem}.lightning.out.py")
    return lightning if target == "lightning" and lightning.exists() else path.with_name(f"{stem}.out.py")


def _update(path: pathlib.Path) -> None:
    stem = path.name[: -len(".in.py")]
    strategies, lightning = _run(path, "strategies").code, _run(path, "lightning").code
    path.with_name(f"{stem}.out.py").write_text(strategies)
    light = path.with_name(f"{stem}.lightning.out.py")
    if lightning != strategies:
        light.write_text(lightning)
    elif light.exists():
        light.unlink()


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.name}/{p.name[: -len('.in.py')]}")
def test_fixture(path: pathlib.Path, target: str) -> None:
    if UPDATE:
        _update(path)
    expected = _expected(path, target).read_text()
    result = _run(path, target)
    assert result.code == expected
    ast.parse(result.code)
    public = codemods.migrate_source(path.read_text(), target=target, select=_select(path))
    assert public.code == result.code and public.changed == (expected != path.read_text())
    again = codemods.migrate_source(expected, target=target, select=_select(path))
    assert again.code == expected, "running on the expected output changed it again"
    assert not again.changed
    assert not [c for c in again.changes if not c.todo], "edits reported on migrated code"


def test_every_rule_has_changing_and_noop_fixtures() -> None:
    for rule in codemods.Rule:
        cases = [p for p in CASES if p.parent.name == rule.value]
        outputs = [(p.read_text(), _expected(p, "strategies").read_text()) for p in cases]
        assert any(before != after for before, after in outputs), f"{rule.value} has no fixture that changes code"
        assert any(before == after for before, after in outputs), f"{rule.value} has no no-op fixture"


def _needs_edit(entry: Rename, target: str) -> bool:
    """Automatic for ``target`` and really renamed there (not kept under the same name)."""
    if not entry.automatic_for(target):
        return False
    new = entry.target(target)
    return not (entry.member is not None and entry.kind is not Kind.ARGUMENT_VALUE and new == entry.member)


@pytest.mark.parametrize("target", TARGETS)
def test_every_automatic_entry_is_exercised(target: str) -> None:
    """An entry counts as exercised when some fixture run rewrote code because of it."""
    used: set[Rename] = set()
    for path in CASES:
        used |= _run(path, target).used
    used |= _cross_file_used(target)
    missing = [e.old_name for e in RENAMES if _needs_edit(e, target) and e not in used]
    assert not missing, f"automatic entries without a fixture that rewrites them ({target}): {missing}"


# -- cross-file subclasses ----------------------------------------------------------------------


def _module_name(root: pathlib.Path, path: pathlib.Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def _tree(root: pathlib.Path) -> dict[str, tuple[pathlib.Path, str]]:
    return {_module_name(root, p): (p, p.read_text()) for p in sorted(root.rglob("*.py"))}


@functools.cache
def _cross_file(target: str) -> tuple[dict[str, str], dict[str, str], frozenset[Rename]]:
    files = _tree(FIXTURES / "cross_file" / "in")
    bases: dict[str, tuple[str, ...]] = {}
    for module, (_, source) in files.items():
        bases.update(codemods.class_bases(source, module))
    user_classes = codemods.resolve_user_classes(bases)
    out, used = {}, set()
    for module, (_, source) in files.items():
        rules = _api.select_rules()
        tree = cst.parse_module(source)
        _, code, _, exercised = _engine.run_rules(
            tree, rules, module=module, target=target, user_classes=user_classes, source=source
        )
        assert code is not None
        out[module] = code
        used |= exercised
    return user_classes, out, frozenset(used)


def _cross_file_used(target: str) -> frozenset[Rename]:
    return _cross_file(target)[2]


def test_cross_file_user_classes() -> None:
    user_classes, _, _ = _cross_file("strategies")
    ddp = "pytorch_lightning.plugins.DDPPlugin"
    assert user_classes["pkg.base.BaseDDP"] == ddp
    assert user_classes["pkg.sub.custom.CustomDDP"] == ddp
    assert user_classes["pkg.sub.CustomDDP"] == ddp  # re-exported by the package
    assert user_classes["pkg.leaf.LeafDDP"] == ddp  # a subclass of a subclass, two files away
    assert "pkg.unrelated.Other" not in user_classes  # derives from a local class named like the old one


def test_cross_file_migration() -> None:
    root = FIXTURES / "cross_file"
    _, out, _ = _cross_file("strategies")
    for module, code in out.items():
        path = root / "out" / pathlib.Path(*module.split(".")).with_suffix(".py")
        if UPDATE:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(code)
        assert code == path.read_text(), module


def test_class_bases_resolves_imports() -> None:
    source = (
        "import pytorch_lightning as pl\n"
        "from compat.plugins import DDPPlugin as Base\n"
        "from . import sibling\n"
        "class A(pl.plugins.DDPPlugin): ...\n"
        "class B(Base, sibling.Mixin): ...\n"
        "class C(A, Generic[T]): ...\n"
    )
    bases = codemods.class_bases(source, "pkg.mod")
    assert bases["pkg.mod.A"] == ("pytorch_lightning.plugins.DDPPlugin",)
    assert bases["pkg.mod.B"] == ("compat.plugins.DDPPlugin", "pkg.sibling.Mixin")
    assert bases["pkg.mod.C"] == ("pkg.mod.A", "Generic")
    assert codemods.class_bases("from . import x\nclass D(x.Y): ...\n", "pkg.__init__")["pkg.D"] == ("pkg.x.Y",)
    assert codemods.class_bases("class (:\n", "bad") == {}


def test_resolve_user_classes_is_transitive_and_cycle_safe() -> None:
    bases = {
        "a.A": ("compat.plugins.DDPPlugin",),
        "b.B": ("a.A",),
        "c.C": ("b.B", "c.C"),
        "d.D": ("d.E",),
        "d.E": ("d.D",),
    }
    assert codemods.resolve_user_classes(bases) == {
        "a.A": "compat.plugins.DDPPlugin",
        "b.B": "compat.plugins.DDPPlugin",
        "c.C": "compat.plugins.DDPPlugin",
    }


# -- the public API -----------------------------------------------------------------------------


def test_prescan_passes_every_fixture_that_needs_work() -> None:
    for path in CASES:
        for target in TARGETS:
            if _run(path, target).changes:
                assert codemods.prescan(path.read_text()), path
                assert codemods.prescan(path.read_bytes()), path


def test_prescan_skips_ordinary_code() -> None:
    ordinary = "import torch\n\nclass Net(torch.nn.Module):\n    def forward(self, x):\n        return x\n"
    assert not codemods.prescan(ordinary)
    assert not codemods.prescan(ordinary.encode())
    assert codemods.prescan("from mypkg import MyDDP\nclass X(MyDDP): ...\n", extra_names=["mypkg.plugins.MyDDP"])


def test_migrate_source_result() -> None:
    source = "from pytorch_lightning.plugins import DDPPlugin\n\nplugin = DDPPlugin()\n"
    result = codemods.migrate_source(source)
    assert result.changed
    assert result.code == "from strategies import DDPStrategy\n\nplugin = DDPStrategy()\n"
    assert [(c.rule, c.line, c.todo) for c in result.changes] == [("CM001", 1, False), ("CM002", 3, False)]
    assert result.changes[1].message == "DDPPlugin -> DDPStrategy"
    untouched = codemods.migrate_source("x = 1\n")
    assert not untouched.changed and untouched.changes == () and untouched.code == "x = 1\n"


def test_migrate_source_select_ignore_and_errors() -> None:
    source = "from pytorch_lightning import Trainer\nTrainer(gpus=2)\n"
    assert codemods.migrate_source(source, ignore=["CM006"]).code.endswith("Trainer(gpus=2)\n")
    assert codemods.migrate_source(source, select=["CM006"]).code.endswith("Trainer(accelerator='cuda', devices=2)\n")
    assert codemods.migrate_source(source, select=["CM00"]).changed
    assert not codemods.migrate_source("from pytorch_lightning.plugins import DDPPlugin\n", ignore=["CM002"]).changed
    with pytest.raises(ValueError, match="CM999"):
        codemods.migrate_source(source, select=["CM999"])
    with pytest.raises(ValueError, match="target"):
        codemods.migrate_source(source, target="keras")
    with pytest.raises(cst.ParserSyntaxError):
        codemods.migrate_source("def broken(:\n")


def test_todo_is_inserted_once_with_prefix_rule_and_hint() -> None:
    source = "from pytorch_lightning.plugins import RPCPlugin\n"
    once = codemods.migrate_source(source).code
    assert once.splitlines()[0].startswith(f"{codemods.TODO_PREFIX}CM007 removed in Lightning 1.4")
    twice = codemods.migrate_source(once)
    assert twice.code == once and not twice.changed
    assert [c.todo for c in twice.changes] == [True]  # still reported: it still needs a person


def test_rules_are_documented_and_registered() -> None:
    assert set(codemods.RULES) == set(codemods.Rule)
    for rule, cls in codemods.RULES.items():
        assert cls.RULE is rule
        assert cls.__module__ == f"codemods.{rule.value.lower()}_{cls.__module__.split('_', 1)[1]}"
        assert cls.__name__.endswith("Command") and cls.DESCRIPTION
        assert "Before::" in (cls.__doc__ or "") and "After::" in (cls.__doc__ or "")


def test_a_rule_runs_through_the_libcst_codemod_api() -> None:
    context = CodemodContext()
    tree = cst.parse_module("from pytorch_lightning.plugins import RPCPlugin\n")
    new = codemods.as_codemod(codemods.Rule.CM007, context).transform_module(tree)
    assert new.code.startswith(codemods.TODO_PREFIX)
    assert context.warnings and "CM007" in context.warnings[0]


def test_rule_code_knows_no_old_name() -> None:
    """Old names come from compat.renames: none appears in rule code (docstrings aside)."""
    old = {e.old.rpartition(".")[2] for e in RENAMES} | {e.member for e in RENAMES if e.member}
    old |= {e.old.partition(".")[0] for e in RENAMES}
    for path in sorted((pathlib.Path(codemods.__file__).parent).glob("*.py")):
        if path.name == "_facts.py":
            continue  # the old and new signatures: data (the catalog's), not rule code
        tree = ast.parse(path.read_text())
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) and ast.get_docstring(node) is not None
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                assert node.value not in old, f"{path.name}:{node.lineno} hard-codes {node.value!r}"


def test_codemods_import_neither_torch_nor_strategies() -> None:
    code = (
        "import sys, codemods\n"
        "codemods.migrate_source('from pytorch_lightning.plugins import DDPPlugin\\nDDPPlugin()\\n')\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'strategies'))\n"
        "assert not bad, bad\n"
    )
    root = pathlib.Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, timeout=300)


def test_the_rules_leave_libcsts_slow_modules_unimported() -> None:
    """``libcst.matchers`` (0.6 s to import, a fifth of a ``--check`` of a tree where a few
    files use the old API) and ``libcst.codemod`` stay out of a migration, epoch-end rewrite
    (the last user of matchers) included."""
    fixture = pathlib.Path(__file__).parent / "fixtures" / "CM011" / "epoch_end_rewritten.in.py"
    code = (
        "import sys, codemods\n"
        f"source = open({str(fixture)!r}, encoding='utf-8').read()\n"
        "assert codemods.migrate_source(source).changed\n"
        "slow = sorted(m for m in sys.modules if m.startswith(('libcst.matchers', 'libcst.codemod')))\n"
        "assert not slow, slow\n"
    )
    root = pathlib.Path(__file__).resolve().parents[2]
    subprocess.run([sys.executable, "-c", code], check=True, cwd=root, timeout=120)


def _example(doc: str, name: str) -> str:
    match = re.search(name + r"::\n\n((?:(?: {4}.*)?\n)+)", doc + "\n")
    assert match, f"no {name}:: block"
    return textwrap.dedent(match.group(1)).strip("\n") + "\n"


@pytest.mark.parametrize("rule", list(codemods.Rule), ids=lambda r: r.value)
def test_docstring_example_is_what_the_rule_does(rule: codemods.Rule) -> None:
    """The docs are generated from the docstrings: their Before/After must be true.

    An ``After`` line ending in ``...`` matches any line that starts the same way.
    """
    doc = inspect.getdoc(codemods.RULES[rule]) or ""
    got = codemods.migrate_source(_example(doc, "Before"), select=[rule.value]).code.splitlines()
    want = _example(doc, "After").splitlines()
    assert len(got) == len(want), "\n".join(got)
    for have, line in zip(got, want, strict=True):
        assert have.startswith(line[:-3]) if line.endswith("...") else have == line, (have, line)


def test_generated_rule_docs_keep_the_examples_indentation() -> None:
    """Every Python block of the generated rule docs parses (a lost indent would not)."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "docs"))
    from _gen_docs import gen_docs

    blocks = re.findall(r"```python\n(.*?)```", gen_docs.render_rules(), re.DOTALL)
    assert len(blocks) >= 2 * len(codemods.RULES)
    for block in blocks:
        ast.parse(block)


def test_hand_written_parallel_keywords_match_strategies() -> None:
    """The codemods' list of ParallelStrategy keywords (torch-free data) follows the real class."""
    from codemods import _facts
    from strategies.parallel import PARALLEL_ARGS

    assert set(_facts._S_PARALLEL) == set(PARALLEL_ARGS)
