"""Every name a Lightning migration writes into an import resolves, and no file mixes namespaces.

The core tests check the fixtures' Lightning outputs against the Lightning 2.6 catalog; the
extras tests import each written name from the installed ``lightning`` (fixtures and the corpus
of ``benchmarks/corpus.py``). By hand, on any tree:

    python tests/codemods/test_lightning_imports.py FILE_OR_DIR...
"""

from __future__ import annotations

import ast
import importlib
import pathlib
import sys
import warnings
from collections.abc import Iterable
from pathlib import Path

import pytest

import codemods
from compat import _catalog

#: The top-level packages a Lightning migration writes imports of.
LIGHTNING_ROOTS = ("lightning", "pytorch_lightning", "lightning_fabric", "lightning_utilities")


def imports(code: str) -> set[tuple[str, str | None]]:
    """Absolute imports of Lightning packages: ``(module, name)``, or ``(module, None)`` for ``import module``."""
    found: set[tuple[str, str | None]] = set()
    for node in ast.walk(ast.parse(code)):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.partition(".")[0] in LIGHTNING_ROOTS:
                found |= {(node.module, alias.name) for alias in node.names if alias.name != "*"}
        elif isinstance(node, ast.Import):
            found |= {(a.name, None) for a in node.names if a.name.partition(".")[0] in LIGHTNING_ROOTS}
    return found


def written(before: str, after: str) -> set[tuple[str, str | None]]:
    """The imports ``after`` has that ``before`` did not: what the migration wrote."""
    return imports(after) - imports(before)


def resolves(module: str, name: str | None) -> bool:
    """Whether ``from module import name`` (or ``import module``) works with what is installed."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            loaded = importlib.import_module(module)
        except ImportError:
            return False
        if name is None or hasattr(loaded, name):
            return True
        try:
            importlib.import_module(f"{module}.{name}")
        except ImportError:
            return False
        return True


def mixed_without_todo(code: str, todo: str) -> list[int]:
    """Lines of ``pytorch_lightning`` imports in a file that also imports ``lightning.*``, with
    no TODO in the comment lines right above them."""
    tree = ast.parse(code)
    lines = code.splitlines()
    old, new = [], False
    for node in ast.walk(tree):
        module = node.module if isinstance(node, ast.ImportFrom) and not node.level else None
        names = [module] if module else [a.name for a in node.names] if isinstance(node, ast.Import) else []
        for name in names:
            root = (name or "").partition(".")[0]
            if root == "pytorch_lightning":
                old.append(getattr(node, "lineno", 0))
            elif root == "lightning":
                new = True
    if not new:
        return []
    bad = []
    for line in old:
        above = line - 2
        covered = False
        while above >= 0 and lines[above].lstrip().startswith("#"):
            covered = covered or todo in lines[above]
            above -= 1
        if not covered:
            bad.append(line)
    return bad


FIXTURES = pathlib.Path(__file__).parent / "fixtures"
CASES = sorted([*FIXTURES.glob("CM*/*.in.py"), *FIXTURES.glob("all/*.in.py")])


def _lightning_output(path: pathlib.Path) -> str:
    stem = path.name[: -len(".in.py")]
    light = path.with_name(f"{stem}.lightning.out.py")
    return (light if light.exists() else path.with_name(f"{stem}.out.py")).read_text()


def _fixture_imports() -> list[tuple[str, str, str | None]]:
    return sorted(
        {(p.parent.name + "/" + p.name, m, n) for p in CASES for m, n in written(p.read_text(), _lightning_output(p))},
        key=str,
    )


def _catalog_has(module: str, name: str | None) -> bool:
    catalog = _catalog.target("lightning")
    canonical = module
    for spelled, real in (("pytorch_lightning", "lightning.pytorch"), ("lightning_fabric", "lightning.fabric")):
        if module == spelled or module.startswith(spelled + "."):
            canonical = real + module[len(spelled) :]
    return canonical in catalog.modules if name is None else catalog.binds(f"{canonical}.{name}")


def test_fixture_outputs_write_only_names_lightning_has() -> None:
    written_names = _fixture_imports()
    assert len(written_names) > 20, "the fixtures should exercise the Lightning imports"
    missing = [case for case in written_names if not _catalog_has(case[1], case[2])]
    assert not missing, f"imports Lightning 2.6's catalog does not have: {missing}"


@pytest.mark.parametrize("path", [p for p in CASES if p.parent.name == "all"], ids=lambda p: p.name[: -len(".in.py")])
def test_no_fixture_output_mixes_namespaces_without_a_todo(path: pathlib.Path) -> None:
    """Whole files, every rule (a rule folder runs one rule: the TODO on an old-only class's
    import is CM007's)."""
    assert mixed_without_todo(_lightning_output(path), codemods.TODO_PREFIX.strip()) == []


def test_mixing_is_detected() -> None:
    code = "import lightning.pytorch as pl\nfrom pytorch_lightning.utilities import x\n"
    assert mixed_without_todo(code, "# TODO(compat.migrate)") == [2]
    assert mixed_without_todo("# TODO(compat.migrate): why\n" + code.split("\n", 1)[1], "# TODO(compat.migrate)") == []


@pytest.mark.extras
def test_fixture_imports_import_from_installed_lightning() -> None:
    pytest.importorskip("lightning", reason="needs the lightning extra: pip install 'lightning==2.6.*'")
    bad = [case for case in _fixture_imports() if not resolves(case[1], case[2])]
    assert not bad, f"written imports that fail with the installed Lightning: {bad}"


@pytest.mark.extras
@pytest.mark.timeout(900)
def test_corpus_imports_import_from_installed_lightning(tmp_path: pathlib.Path) -> None:
    import importlib.util

    pytest.importorskip("lightning", reason="needs the lightning extra: pip install 'lightning==2.6.*'")
    spec = importlib.util.spec_from_file_location("corpus", FIXTURES.parents[2] / "benchmarks" / "corpus.py")
    assert spec is not None and spec.loader is not None
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    files, missing = corpus.extract(tmp_path / "src")
    if not files:
        pytest.skip(f"no corpus package could be fetched (offline?): {'; '.join(missing)}")
    bad, mixed, total = [], [], 0
    for path in files:
        before = path.read_text("utf-8")
        after = codemods.migrate_source(before, target="lightning").code
        for module, name in written(before, after):
            total += 1
            if not resolves(module, name):
                bad.append(f"{path.name}: {module} {name}")
        mixed += [f"{path.name}:{line}" for line in mixed_without_todo(after, codemods.TODO_PREFIX.strip())]
    print(f"corpus: {total} written names, {len(bad)} unresolved, {len(mixed)} mixed-namespace imports")
    assert total > 50
    assert not bad and not mixed, (bad, mixed)


def _sources(paths: Iterable[str]) -> list[Path]:
    out: list[Path] = []
    for arg in paths:
        path = Path(arg)
        out += sorted(path.rglob("*.py")) if path.is_dir() else [path]
    return out


def main(argv: list[str]) -> int:
    total, bad = 0, []
    for path in _sources(argv):
        before = path.read_text("utf-8", errors="replace")
        try:
            after = codemods.migrate_source(before, target="lightning").code
        except Exception as error:  # noqa: BLE001 (a report, not a test)
            print(f"{path}: {type(error).__name__}: {error}")
            continue
        for module, name in sorted(written(before, after), key=str):
            total += 1
            if not resolves(module, name):
                bad.append(f"{path}: {module}" + (f" import {name}" if name else ""))
        for line in mixed_without_todo(after, codemods.TODO_PREFIX.strip()):
            print(f"{path}:{line}: a pytorch_lightning import next to lightning.* ones, no TODO")
    print(*bad, sep="\n")
    print(f"{len(bad)} of {total} written names do not resolve")
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
