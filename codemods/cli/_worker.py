"""What happens to one file, in a pool worker or in the main process.

Workers import this module, ``codemods`` and libcst, never torch nor the user's code; libcst
only once a file is parsed, so the main process of a run answered by the cache never loads it.
``codemods`` functions are looked up at call time (``codemods.migrate_source``), so a test can
replace them.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import faulthandler
import hashlib
import io
import os
import re
import signal
import sys
import threading
import time
import tokenize
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import codemods
from codemods.cli._safety import (
    TODO_PREFIX,
    Decoded,
    Snapshot,
    Unprocessable,
    check_output,
    decode,
    encode,
    is_read_only,
    read_snapshot,
    write_atomic,
)

if TYPE_CHECKING:
    import libcst

_SUBCLASS = re.compile(r"^[ \t]*class[ \t]+\w+[ \t]*\(", re.MULTILINE)
_PR_SET_PDEATHSIG = 1  # linux/prctl.h

CHECK, DIFF, WRITE, OUT = "check", "diff", "write", "out"


@dataclass(frozen=True)
class Settings:
    """How to migrate, the same for every file of a run.

    Attributes:
        mode: ``check`` (nothing written, no safety checks), ``diff`` (a diff, nothing written),
            ``write`` (in place) or ``out`` (a copy under ``out_root``).
        target: ``strategies`` or ``lightning``.
        select: rule ids to run (``None``: all).
        ignore: rule ids not to run.
        user_classes: user class -> old class it derives from, over the whole tree.
        out_root: the folder of the migrated copy (``out`` mode).
        lightning_namespace: ``lightning.pytorch`` or ``pytorch_lightning`` (``--target lightning``).
    """

    mode: str
    target: str
    select: tuple[str, ...] | None
    ignore: tuple[str, ...]
    user_classes: Mapping[str, str] = field(default_factory=dict)
    out_root: str | None = None
    lightning_namespace: str | None = None


@dataclass(frozen=True)
class ChangeRecord:
    """One change or TODO in a file (a picklable copy of ``codemods.Change``).

    ``line``/``column`` (1-based, columns in characters) are the site's in the file as it was
    read; ``suppressed``: a ``# compat: ignore`` comment on that line covers the rule.
    """

    rule: str
    line: int
    message: str
    todo: bool
    column: int = 1
    suppressed: bool = False


@dataclass(frozen=True)
class FileResult:
    """What happened to one file.

    Attributes:
        path: the real path.
        status: ``changed``, ``unchanged``, ``failed`` or ``interrupted`` (not reached: Ctrl-C).
        reason: why it failed.
        changes: the changes and TODOs (also for ``check``/``diff`` runs, where they would be made).
        diff: the unified diff (``diff`` mode).
        digest: the content hash of the file as read (the results cache's key).
        held: lines whose ``# compat: ignore`` covers an automatic edit, which kept the whole
            file as it was (``codemods.Result.held``).
    """

    path: str
    status: str
    reason: str = ""
    changes: tuple[ChangeRecord, ...] = ()
    diff: str = ""
    digest: str = ""
    held: tuple[int, ...] = ()


@dataclass(frozen=True)
class ScanResult:
    """The first pass over one file.

    Attributes:
        path: the real path.
        needs_work: whether the pre-scan found an old name.
        subclasses: whether it has a ``class X(...)`` statement (files that need work).
        reason: why it cannot be processed (then it is reported as failed).
        todos: the lines holding a ``# TODO(compat.migrate)`` comment already (left for a person).
        digest: the content hash of the file as read (the results cache's key).
    """

    path: str
    needs_work: bool
    subclasses: bool = False
    reason: str = ""
    todos: tuple[int, ...] = ()
    digest: str = ""


SLOT_FIELDS = 3  # a worker's slot in the shared task table: task id, pid, start (monotonic ns)
_slots: Any = None
_slot = -1


def init_worker(parent: int, lifeline_read: int, lifeline_write: int, slots: Any = None, counter: Any = None) -> None:
    """Set up a pool worker so that it never outlives the CLI.

    On Linux the kernel kills the worker when its parent dies (``PR_SET_PDEATHSIG``), even by
    ``kill -9``; everywhere a thread also watches the pipe whose only write end the parent
    holds, and ends the worker when it closes. Ctrl-C reaches the whole process group: a worker
    ends at once (the default action, not a ``KeyboardInterrupt`` that the pool would catch and
    carry on after), and the parent stops the rest (``codemods.cli._runner._Pool.terminate``)
    and removes any temporary file a worker leaves. A file is replaced atomically, so it is
    either as it was or fully migrated. Where the CLI ignores SIGINT (started with ``&`` by a
    script, ``nohup``), its workers keep ignoring it too.
    """
    os.close(lifeline_write)  # the parent's copy must be the last one
    # A worker that the parser crashes (SIGSEGV on a hostile file) is reported by the parent, with
    # the file and the signal; a traceback dump inherited from a parent with faulthandler on
    # (pytest, PYTHONFAULTHANDLER) would only print libcst's frames over the summary.
    faulthandler.disable()
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
    if sys.platform.startswith("linux"):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)

    def watch() -> None:
        while os.read(lifeline_read, 1):
            pass
        os._exit(1)

    threading.Thread(target=watch, name="compat-migrate-lifeline", daemon=True).start()
    global _slots, _slot
    if slots is not None and counter is not None:
        with counter.get_lock():
            index, counter.value = counter.value, counter.value + 1
        if index < len(slots) // SLOT_FIELDS:
            _slots, _slot = slots, index * SLOT_FIELDS


def run_task(task: int, fn: Callable[..., list[Any]], chunk: list[Any], *extra: Any) -> list[Any]:
    """``fn(chunk, *extra)``, with ``task`` written in this worker's slot while it runs.

    The parent reads the slots when a worker dies or runs too long, to know which task it held
    (``codemods.cli._runner._Pool``).
    """
    if _slots is None:
        return fn(chunk, *extra)
    _slots[_slot + 1] = os.getpid()
    _slots[_slot + 2] = time.monotonic_ns()
    _slots[_slot] = task
    try:
        return fn(chunk, *extra)
    finally:
        _slots[_slot] = 0


def item_started() -> None:
    """Restart this worker's clock in its slot: a task of several files is timed per file.

    ``--timeout`` limits one file, so a task of eight small files may take eight times as long;
    the parent sees the start of the file in hand (``codemods.cli._runner._Pool._stop_overdue``).
    """
    if _slots is not None:
        _slots[_slot + 2] = time.monotonic_ns()


def digest(data: bytes) -> str:
    """The content hash of a file's bytes (the results cache's key)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def _todo_lines(text: str) -> tuple[int, ...]:
    """The lines of ``# TODO(compat.migrate)`` comments (not strings that merely contain it)."""
    if TODO_PREFIX not in text:
        return ()
    try:
        return tuple(
            tok.start[0]
            for tok in tokenize.generate_tokens(io.StringIO(text).readline)
            if tok.type == tokenize.COMMENT and tok.string.startswith(TODO_PREFIX)
        )
    except (tokenize.TokenError, SyntaxError):
        return tuple(i for i, line in enumerate(text.splitlines(), 1) if line.lstrip().startswith(TODO_PREFIX))


def _rule_id(rule: object) -> str:
    return str(getattr(rule, "value", rule))


def _record(change: codemods.Change) -> ChangeRecord:
    """A picklable copy of a change (``column``/``suppressed``: absent from a stand-in's changes)."""
    return ChangeRecord(
        _rule_id(change.rule),
        change.line,
        change.message,
        change.todo,
        getattr(change, "column", 1),
        getattr(change, "suppressed", False),
    )


def _syntax_reason(text: str, err: libcst.ParserSyntaxError) -> str:
    try:
        ast.parse(text)
    except SyntaxError as syntax:  # CPython's message is the one users know
        return f"does not parse: line {syntax.lineno}: {syntax.msg}"
    except ValueError:
        pass
    message = (err.message or "syntax error").strip().splitlines()[0].removeprefix("parser error: ")
    if len(message) > 100:
        message = message[:97] + "..."
    return f"does not parse: line {err.editor_line}: {message}"


def _read(path: str) -> Decoded:
    return decode(read_snapshot(path).data)


# The text of files the pre-scan passed over, kept from ``scan`` for ``mentions`` (which
# searches exactly those files, often all of a tree) so that they are not read and decoded
# twice; at most _KEEP_CHARS characters in all, the rest is read again.
_KEEP_CHARS = 64 << 20
_kept: dict[str, str] = {}
_kept_chars = 0


def forget_texts() -> None:
    """Drop the texts ``scan`` kept (a run calls it first: files may have changed since)."""
    global _kept_chars
    _kept.clear()
    _kept_chars = 0


def _keep(path: str, text: str) -> None:
    global _kept_chars
    old = _kept.pop(path, None)
    if old is not None:
        _kept_chars -= len(old)
    if _kept_chars + len(text) <= _KEEP_CHARS:
        _kept[path] = text
        _kept_chars += len(text)


def scan(items: Iterable[tuple[str, str]]) -> list[ScanResult]:
    """Read and pre-scan Python files. ``items``: ``(path, module)``.

    Notebooks and YAML configs go through ``codemods.cli._formats``, which dispatches by kind.
    """
    results = []
    for path, _ in items:
        try:
            data = read_snapshot(path).data
            text = decode(data).text
        except Unprocessable as err:
            results.append(ScanResult(path, False, reason=str(err)))
            continue
        todos = _todo_lines(text)
        key = digest(data)
        if codemods.prescan(text):
            _kept.pop(path, None)
            results.append(ScanResult(path, True, _SUBCLASS.search(text) is not None, todos=todos, digest=key))
        else:
            _keep(path, text)
            results.append(ScanResult(path, False, todos=todos, digest=key))
    return results


def mentions(items: Iterable[tuple[str, str]], names: re.Pattern[str]) -> list[tuple[str, frozenset[str]]]:
    """``(path, names found)`` for the files among ``items`` that mention ``names`` as whole words.

    ``names`` checks the word boundary after a name, not before (see ``_names_pattern``).
    """
    results = []
    for path, _ in items:
        text = _kept.get(path)
        if text is None:
            try:
                text = _read(path).text
            except Unprocessable:
                continue  # already reported by the first pass
        found = frozenset(m.group() for m in names.finditer(text) if not _is_word_char(text, m.start() - 1))
        if found:
            results.append((path, found))
    return results


def _is_word_char(text: str, index: int) -> bool:
    return index >= 0 and (text[index].isalnum() or text[index] == "_")


def bases(items: Iterable[tuple[str, str]]) -> list[tuple[str, dict[str, tuple[str, ...]], str]]:
    """``(path, codemods.class_bases(...), content hash)`` for each ``(path, module)``.

    The hash is empty when ``class_bases`` failed: nothing worth caching.
    """
    results = []
    for path, module in items:
        try:
            data = read_snapshot(path).data
            results.append((path, dict(codemods.class_bases(decode(data).text, module)), digest(data)))
        except Unprocessable:
            continue  # already reported by the first pass
        except Exception:  # noqa: BLE001 - a file that breaks here is reported by migrate()
            results.append((path, {}, ""))
    return results


def rerun_changes(code: str, module: str, settings: Settings) -> bool:
    """Whether running the rules again on their own output changes it (or it no longer parses)."""
    import libcst

    try:
        return _run_rules(code, module, settings).code != code
    except libcst.ParserSyntaxError:
        return True


def _run_rules(text: str, module: str, settings: Settings) -> codemods.Result:
    return codemods.migrate_source(
        text,
        module=module,
        target=settings.target,
        select=settings.select,
        ignore=settings.ignore,
        user_classes=settings.user_classes,
        lightning_namespace=settings.lightning_namespace,
    )


_C_ESCAPES = {0x07: "\\a", 0x08: "\\b", 0x09: "\\t", 0x0A: "\\n", 0x0B: "\\v", 0x0C: "\\f", 0x0D: "\\r"}
_C_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\"})


def quote_path(name: str) -> str:
    """``name`` for a diff header, quoted as git quotes it (``core.quotePath``).

    A name holding a control character, a double quote, a backslash or a non-ASCII byte is put
    in double quotes with C escapes (``"a\\nb.py"``, ``"\\303\\274.py"``), which GNU ``patch``
    and ``git apply`` both read; a name holding a space gets a trailing tab, as git writes it,
    so that ``patch`` does not take the rest of the line for a date.
    """
    raw = os.fsencode(name)
    if all(0x20 <= b < 0x7F and b not in (0x22, 0x5C) for b in raw):
        return name + ("\t" if " " in name else "")
    body = "".join(_C_ESCAPES.get(b) or (chr(b) if 0x20 <= b < 0x7F else f"\\{b:03o}") for b in raw)
    return f'"{body}"'


def unified_diff(display: str, before: str, after: str) -> str:
    """A unified diff of two versions of a file, with ``\\ No newline at end of file`` marks.

    The file name in the ``---``/``+++`` headers is quoted as git quotes it (``quote_path``).
    """
    lines = []
    for line in difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), "a", "b"):
        if not line.endswith(("\n", "\r")):
            line += "\n\\ No newline at end of file\n"
        lines.append(line)
    if lines:
        name = quote_path(display)
        lines[0], lines[1] = f"--- {name}\n", f"+++ {name}\n"
    return "".join(lines)


def migrate(path: str, module: str, display: str, rel: str, settings: Settings) -> FileResult:
    """Run the rules on one Python file and, depending on the mode, diff, check or write the result."""
    try:
        snap = read_snapshot(path)
        return dataclasses.replace(_migrate(snap, path, module, display, rel, settings), digest=digest(snap.data))
    except Unprocessable as err:
        return FileResult(path, "failed", str(err))


def _migrate(snap: Snapshot, path: str, module: str, display: str, rel: str, settings: Settings) -> FileResult:
    import libcst  # here, not at the top: a run that parses nothing (all cached) never loads it

    try:
        before = decode(snap.data)
        try:
            result = _run_rules(before.text, module, settings)
        except libcst.ParserSyntaxError as err:
            return FileResult(path, "failed", _syntax_reason(before.text, err))
        changes = tuple(_record(c) for c in result.changes)
        if result.code == before.text:
            return FileResult(path, "unchanged", changes=changes, held=tuple(getattr(result, "held", ())))
        after = encode(result.code, before)
        if settings.mode == CHECK:
            return FileResult(path, "changed", changes=changes)
        reason = check_output(before, result.code, after, rerun_changes(result.code, module, settings))
        if reason is not None:
            return FileResult(path, "failed", reason, changes)
        if settings.mode == DIFF:
            return FileResult(path, "changed", changes=changes, diff=unified_diff(display, before.text, result.code))
        if settings.mode == OUT:
            assert settings.out_root is not None
            write_atomic(os.path.join(settings.out_root, rel), after, snap, guard=False)
        elif is_read_only(snap):
            return FileResult(path, "failed", "read-only file; not written (make it writable or use --out)", changes)
        else:
            write_atomic(path, after, snap)
        return FileResult(path, "changed", changes=changes)
    except Unprocessable as err:
        return FileResult(path, "failed", str(err))
    except Exception as err:  # a codemod bug must not stop the other files
        return FileResult(path, "failed", f"internal error in the codemods: {type(err).__name__}: {err}")


def write(path: str, rel: str, data: bytes, snap: object, settings: Settings) -> FileResult | None:
    """Write ``data`` in place or under ``--out``; a failed result for a read-only file."""
    assert isinstance(snap, Snapshot)
    if settings.mode == OUT:
        assert settings.out_root is not None
        write_atomic(os.path.join(settings.out_root, *rel.split("/")), data, snap, guard=False)
    elif is_read_only(snap):
        return FileResult(path, "failed", "read-only file; not written (make it writable or use --out)")
    else:
        write_atomic(path, data, snap)
    return None
