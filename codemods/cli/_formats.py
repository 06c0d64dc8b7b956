"""Files other than Python modules: Jupyter notebooks and YAML configs.

The hooks the rest of the CLI calls (each marked ``# hook: notebooks and YAML`` at its call
site): ``wanted`` in discovery (which non-Python files are looked at), and ``scan``,
``bases`` and ``migrate`` in the worker (``None`` for a Python file, which then takes
the usual path). Notebooks: ``codemods.cli._notebook``; YAML: ``codemods.cli._yaml``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import codemods
from codemods.cli import _notebook, _worker, _yaml
from codemods.cli._safety import Unprocessable, check_output, decode, encode, read_snapshot
from codemods.cli._worker import (
    _SUBCLASS,
    CHECK,
    DIFF,
    ChangeRecord,
    FileResult,
    ScanResult,
    Settings,
    _rule_id,
    _run_rules,
    _syntax_reason,
    rerun_changes,
    unified_diff,
    write,
)


def kind(path: str) -> str | None:
    """``"notebook"``, ``"yaml"``, or ``None`` for a file handled as Python."""
    if _notebook.is_notebook(path):
        return "notebook"
    if _yaml.is_yaml(path):
        return "yaml"
    return None


def wanted(path: str, rel: str, max_size: int | None) -> bool:
    """Whether discovery takes the non-Python file ``path`` (``rel``: from the folder given)."""
    if _notebook.is_notebook(path):
        return True
    return _yaml.is_yaml(path) and _yaml.wanted(path, rel, max_size)


def scan_many(items: Iterable[tuple[str, str]]) -> list[ScanResult]:
    """The first pass over ``(path, module)`` items of any kind (one pool task), in order."""
    return [scan(path) or _worker.scan([(path, module)])[0] for path, module in items]


def bases_many(items: Iterable[tuple[str, str]]) -> list[tuple[str, dict[str, tuple[str, ...]], str]]:
    """``(path, class_bases, content hash)`` of each item (one pool task); no hash, no caching,
    for notebooks and YAML configs."""
    results: list[tuple[str, dict[str, tuple[str, ...]], str]] = []
    for path, module in items:
        try:
            other = bases(path, module)
        except Unprocessable:
            continue  # already reported by the first pass
        except Exception:  # noqa: BLE001 - a file that breaks here is reported by migrate()
            other = {}
        if other is None:
            results.extend(_worker.bases([(path, module)]))
        else:
            results.append((path, other, ""))
    return results


def migrate_many(items: Iterable[tuple[str, str, str, str]], settings: Settings) -> list[FileResult]:
    """Migrate ``(path, module, display, rel)`` items of any kind (one pool task), in order.

    Each file restarts the worker's clock, so ``--timeout`` applies to each file of the task.
    """
    results = []
    for item in items:
        _worker.item_started()
        results.append(migrate_one(*item, settings))
    return results


def migrate_one(path: str, module: str, display: str, rel: str, settings: Settings) -> FileResult:
    """One file of any kind: a notebook, a YAML config or (the usual path) a Python file."""
    return migrate(path, module, display, rel, settings) or _worker.migrate(path, module, display, rel, settings)


def scan(path: str) -> ScanResult | None:
    """The first pass over a notebook or YAML file (``None``: a Python file)."""
    which = kind(path)
    if which is None:
        return None
    try:
        decoded = decode(read_snapshot(path).data)
    except Unprocessable as err:
        return ScanResult(path, False, reason=str(err))
    if which == "yaml":
        return ScanResult(path, _yaml.prescan(decoded.text), todos=_yaml.todo_lines(decoded.text))
    todos = _notebook.todo_lines(decoded.text)
    if not codemods.prescan(decoded.text):
        return ScanResult(path, False, todos=todos)
    try:
        code = _notebook.load(decoded).code
    except Unprocessable as err:
        return ScanResult(path, False, reason=str(err), todos=todos)
    return ScanResult(path, True, _SUBCLASS.search(code) is not None, todos=todos)


def bases(path: str, module: str) -> dict[str, tuple[str, ...]] | None:
    """``codemods.class_bases`` of a notebook's code; ``{}`` for YAML, ``None`` for Python."""
    which = kind(path)
    if which is None:
        return None
    if which == "yaml":
        return {}
    notebook = _notebook.load(decode(read_snapshot(path).data))
    return dict(codemods.class_bases(notebook.code, module))


def migrate(path: str, module: str, display: str, rel: str, settings: Settings) -> FileResult | None:
    """Migrate a notebook or a YAML file (``None``: a Python file, for the usual path)."""
    which = kind(path)
    if which is None:
        return None
    try:
        if which == "yaml":
            return _yaml.migrate(path, display, rel, settings)
        return _migrate_notebook(path, module, display, rel, settings)
    except Unprocessable as err:
        return FileResult(path, "failed", str(err))
    except Exception as err:  # a bug here must not stop the other files
        return FileResult(path, "failed", f"internal error in the codemods: {type(err).__name__}: {err}")


def _migrate_notebook(path: str, module: str, display: str, rel: str, settings: Settings) -> FileResult:
    import libcst

    snap = read_snapshot(path)
    decoded = decode(snap.data)
    notebook = _notebook.load(decoded)
    if not notebook.cells:
        return FileResult(path, "unchanged")
    try:
        result = _run_rules(notebook.code, module, settings)
    except libcst.ParserSyntaxError as err:
        reason = _syntax_reason(notebook.code, err)
        found = re.match(r"does not parse: line (\d+): (.*)", reason)
        if found is None:
            return FileResult(path, "failed", reason)
        cell, line = notebook.cell_line(int(found.group(1)))
        return FileResult(path, "failed", f"cell {cell} does not parse: line {line}: {found.group(2)}")
    changes = tuple(
        ChangeRecord(_rule_id(c.rule), cell_line[1], f"cell {cell_line[0]}: {c.message}", c.todo)
        for c in result.changes
        for cell_line in [notebook.cell_line(c.line)]
    )
    if result.code == notebook.code:
        return FileResult(path, "unchanged", changes=changes)
    texts = _notebook.split(notebook, result.code)
    if settings.mode == CHECK:
        return FileResult(path, "changed", changes=changes)
    masked = decode(notebook.code.encode("utf-8"))
    rerun = rerun_changes(result.code, module, settings)
    problem = check_output(masked, result.code, result.code.encode("utf-8"), rerun)
    if problem is not None:
        return FileResult(path, "failed", problem, changes)
    if settings.mode == DIFF:
        diff = "".join(
            unified_diff(f"{display}:cell_{cell.index + 1}", cell.text, text)
            for cell, text in zip(notebook.cells, texts, strict=True)
            if text != cell.text
        )
        return FileResult(path, "changed", changes=changes, diff=diff)
    data = encode(_notebook.render(notebook, texts), decoded)
    failed = write(path, rel, data, snap, settings)
    if failed is not None:
        return FileResult(path, "failed", failed.reason, changes)
    return FileResult(path, "changed", changes=changes)
