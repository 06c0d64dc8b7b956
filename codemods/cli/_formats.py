"""Files other than Python modules: Jupyter notebooks and YAML configs.

The hooks the rest of the CLI calls (each marked ``# hook: notebooks and YAML`` at its call
site): ``wanted`` in discovery (which non-Python files are looked at), and ``scan``,
``bases`` and ``migrate`` in the worker (``None`` for a Python file, which then takes
the usual path). Notebooks: ``codemods.cli._notebook``; YAML: ``codemods.cli._yaml``.
"""

from __future__ import annotations

import os
import re

import codemods
from codemods.cli import _notebook, _yaml
from codemods.cli._safety import Unprocessable, check_output, decode, encode, is_read_only, read_snapshot, write_atomic
from codemods.cli._worker import (
    _SUBCLASS,
    CHECK,
    DIFF,
    OUT,
    ChangeRecord,
    FileResult,
    ScanResult,
    Settings,
    _rule_id,
    _run_rules,
    _syntax_reason,
    unified_diff,
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


def write(path: str, rel: str, data: bytes, snap: object, settings: Settings) -> FileResult | None:
    """Write ``data`` in place or under ``--out``; a failed result for a read-only file."""
    from codemods.cli._safety import Snapshot

    assert isinstance(snap, Snapshot)
    if settings.mode == OUT:
        assert settings.out_root is not None
        write_atomic(os.path.join(settings.out_root, *rel.split("/")), data, snap, guard=False)
    elif is_read_only(snap):
        return FileResult(path, "failed", "read-only file; not written (make it writable or use --out)")
    else:
        write_atomic(path, data, snap)
    return None


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
    try:
        rerun = _run_rules(result.code, module, settings).code != result.code
    except libcst.ParserSyntaxError:
        rerun = True
    masked = decode(notebook.code.encode("utf-8"))
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
