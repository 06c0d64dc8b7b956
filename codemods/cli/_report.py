"""What a run tells the user: a progress bar on a terminal, per-file lines, the summary, JSON."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TextIO

from codemods.cli import _diagnostics
from codemods.cli._diagnostics import CHANGE, OPEN_TODO, Diagnostic, collect
from codemods.cli._files import Skipped
from codemods.cli._safety import open_no_follow
from codemods.cli._worker import CHECK, DIFF, ChangeRecord

_LIST_LIMIT = 8
REPORT_VERSION = 1


class Progress:
    """A one-line progress bar, drawn only when ``stream`` is a terminal.

    Args:
        stream: where to draw (stderr).
        enabled: draw at all (``False`` when not a terminal or ``--quiet``).
    """

    def __init__(self, stream: TextIO, enabled: bool) -> None:
        self.stream = stream
        self.enabled = enabled
        self._last = 0.0
        self._drawn = False

    def update(self, label: str, done: int, total: int) -> None:
        """Redraw the bar (at most ten times a second, and always at the end)."""
        if not self.enabled or total <= 0:
            return
        now = time.monotonic()
        if done < total and now - self._last < 0.1:
            return
        self._last = now
        width = 30
        filled = width * done // total
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r{label:<10} [{bar}] {done}/{total}")
        self.stream.flush()
        self._drawn = True

    def clear(self) -> None:
        """Erase the bar so that the next line starts clean."""
        if self._drawn:
            self.stream.write("\r\033[K")
            self.stream.flush()
            self._drawn = False


@dataclass(frozen=True)
class FileOutcome:
    """A file's result, as reported (display path instead of real path)."""

    display: str
    status: str
    reason: str = ""
    changes: tuple[ChangeRecord, ...] = ()
    held: tuple[int, ...] = ()  # lines whose ``# compat: ignore`` kept the whole file as it was


@dataclass
class Outcome:
    """Everything a run did, for the summary, the report and the exit code.

    ``max_todos``: list at most that many TODOs in the summary (``None``: all);
    ``listed``: whether the summary lists the sites (not when ``--output-format`` puts them
    on standard output).
    """

    mode: str
    target: str
    rules: tuple[str, ...]
    files: list[FileOutcome] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    seconds: float = 0.0
    interrupted: bool = False
    pending: list[tuple[str, int]] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    leftovers: list[str] = field(default_factory=list)
    max_todos: int | None = None
    listed: bool = True
    _diagnostics: list[Diagnostic] | None = field(default=None, repr=False)

    def diagnostics(self) -> list[Diagnostic]:
        """Every site this run flags, suppressed ones included (``codemods.cli._diagnostics.collect``)."""
        if self._diagnostics is None:
            files = [(f.display, f.changes, bool(f.held)) for f in self.files]
            self._diagnostics = collect(files, self.pending, self.mode in (CHECK, DIFF))
        return self._diagnostics

    def applied(self) -> list[str]:
        """The rule id of each edit this run made (none for ``--check``/``--diff``)."""
        if self.mode in (CHECK, DIFF):
            return []
        return [c.rule for f in self.files if f.status == "changed" for c in f.changes if not c.todo]

    def failures(self) -> list[tuple[str, str]]:
        """``(display path, reason)`` of the files that could not be processed."""
        return [(f.display, f.reason) for f in self.files if f.status == "failed"]

    def count(self, status: str) -> int:
        """How many files ended with ``status``."""
        return sum(1 for f in self.files if f.status == status)

    def todos(self) -> list[tuple[str, ChangeRecord]]:
        """``(display, change)`` for every TODO left for a person (not the suppressed ones)."""
        return [(f.display, c) for f in self.files for c in f.changes if c.todo and not c.suppressed]

    def open_todos(self) -> list[Diagnostic]:
        """The ``# TODO(compat.migrate)`` comments already in the files, not suppressed."""
        return [d for d in self.diagnostics() if d.kind == OPEN_TODO and not d.suppressed]

    def held(self) -> list[FileOutcome]:
        """Files kept as they were because a ``# compat: ignore`` covers one of their edits."""
        return [f for f in self.files if f.held]

    def exit_code(self) -> int:
        """130 after Ctrl-C; 2 if a file failed; 1 if ``--check``/``--diff`` found changes, or
        ``--check`` found unsuppressed ``# TODO(compat.migrate)`` comments in the tree or edits
        that a ``# compat: ignore`` held back; else 0."""
        if self.interrupted:
            return 130
        if self.count("failed"):
            return 2
        if self.mode in (CHECK, DIFF) and self.count("changed"):
            return 1
        if self.mode == CHECK and any(not d.suppressed and d.kind != CHANGE for d in self.diagnostics()):
            return 1
        return 0


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def file_line(outcome: Outcome, f: FileOutcome) -> str | None:
    """The line printed for one file as it finishes (``None`` for nothing to say)."""
    if f.status == "failed":
        return f"failed: {f.display}: {f.reason}"
    if f.status != "changed":
        return None
    todos = sum(1 for c in f.changes if c.todo and not c.suppressed)
    edits = sum(1 for c in f.changes if not c.todo and not c.suppressed)
    detail = _plural(edits, "change") + (f", {_plural(todos, 'TODO')}" if todos else "")
    verb = "would change" if outcome.mode in (CHECK, DIFF) else "migrated"
    return f"{verb}: {f.display} ({detail})"


def _listing(title: str, lines: list[str], out: list[str], limit: int | None = _LIST_LIMIT, why: str = "") -> None:
    if not lines:
        return
    out.append(title)
    out.extend(f"  {line}" for line in lines[:limit])
    if limit is not None and len(lines) > limit:
        out.append(f"  ... and {len(lines) - limit:,} more ({why or 'all in --report FILE.json'})")


def _closing(outcome: Outcome) -> list[str]:
    """The summary's last lines: what the run amounts to and what to do next."""
    checking = outcome.mode in (CHECK, DIFF)
    changed, failed, interrupted = outcome.count("changed"), outcome.count("failed"), outcome.count("interrupted")
    if outcome.interrupted:
        verb = "would change" if checking else "were migrated"
        return [
            f"Interrupted: {_plural(changed, 'file')} {verb} before the stop, "
            f"{_plural(interrupted, 'file')} left untouched; every file is either as it was or fully migrated."
        ]
    out = []
    pending = outcome.open_todos()
    if not changed and not failed and not pending and not outcome.held():
        out.append("Nothing to migrate: no file uses an old name that the selected rules handle.")
    elif checking and changed:
        out.append("Run `python -m compat.migrate PATH...` without --check/--diff to apply the changes.")
    if outcome.mode == CHECK and pending:
        count, files = len(pending), len({d.path for d in pending})
        out.append(
            f"{_plural(count, 'TODO(compat.migrate) comment')} in {_plural(files, 'file')} "
            f"still {'needs' if count == 1 else 'need'} a person: --check fails until each "
            "is resolved and its comment removed."
        )
    held = outcome.held()
    if held:
        out.append(
            f"{_plural(len(held), 'file')} kept as {'it was' if len(held) == 1 else 'they were'}: "
            "a `# compat: ignore` covers one of its automatic edits, and the edits of a file go together "
            "(an import and its uses). Remove the comment to migrate the file, or suppress its other sites too."
        )
    return out


def summary(outcome: Outcome) -> str:
    """The end-of-run summary: counts, then the failures, TODOs and skips that need a look."""
    checking = outcome.mode in (CHECK, DIFF)
    changed = outcome.count("changed")
    todos = outcome.todos()
    failed = outcome.count("failed")
    interrupted = outcome.count("interrupted")
    rows = [
        ("would change" if checking else "changed", f"{changed:,}"),
        ("unchanged", f"{outcome.count('unchanged'):,}"),
        ("skipped", f"{len(outcome.skipped):,}"),
        ("failed", f"{failed:,}" + ("  (listed above, left exactly as they were)" if failed else "")),
        ("TODOs", f"{len(todos):,}"),
    ]
    pending = outcome.open_todos()
    if pending:
        rows.append(("open TODOs", f"{len(pending):,}  (comments already in the files, need a person)"))
    suppressed = [d for d in outcome.diagnostics() if d.suppressed]
    if suppressed:
        rows.append(("suppressed", f"{len(suppressed):,}  (sites under a `# compat: ignore` comment)"))
    if outcome.held():
        rows.append(("kept", f"{len(outcome.held()):,}  (a `# compat: ignore` holds back an automatic edit)"))
    if outcome.interrupted:
        rows.append(("not reached", f"{interrupted:,}  (stopped by Ctrl-C; left untouched)"))
    out = [
        f"compat.migrate: {_plural(len(outcome.files), 'file')} scanned in {outcome.seconds:.1f} s"
        f" (target: {outcome.target})",
        *(f"  {label + ':':<14}{value}" for label, value in rows),
    ]
    if outcome.listed:
        limit = outcome.max_todos
        why = "--max-todos; all of them with --output-format concise or in --report FILE.json"
        _listing(
            "TODOs (need a person):",
            [f"{display}:{c.line}:{c.column}: {c.rule} {c.message}" for display, c in todos],
            out,
            limit,
            why,
        )
        _listing(
            "open TODOs (# TODO(compat.migrate) comments in the files):",
            [f"{d.path}:{d.line}:{d.column}: {d.rule} {d.message}" for d in pending],
            out,
            limit,
            why,
        )
        _listing(
            "kept as they were (a `# compat: ignore` on an automatic edit):",
            [f"{f.display}:{line}" for f in outcome.held() for line in f.held],
            out,
            None,
        )
    elif todos or pending:
        out.append("TODOs: listed on standard output (--output-format)")
    _listing("skipped:", [f"{s.display}: {s.reason}" for s in outcome.skipped], out)
    _listing("removed temporary files left by an interrupted run:", outcome.removed, out)
    _listing("temporary files left by an interrupted run (a run in place removes them):", outcome.leftovers, out)
    out.extend(_closing(outcome))
    return "\n".join(out)


def to_json(outcome: Outcome) -> dict[str, object]:
    """The ``--report`` (and ``--output-format json``) document: summary counts, every change
    and TODO, the diagnostics, failures and skips; its schema is ``report.schema.json`` beside
    this module (``version`` changes only when a field changes meaning or goes away)."""
    from codemods.cli._diagnostics import statistics

    diagnostics = outcome.diagnostics()
    changes = [
        {
            "file": f.display,
            "line": c.line,
            "column": c.column,
            "location": f"{f.display}:{c.line}",
            "rule": c.rule,
            "message": c.message,
            "todo": c.todo,
            "suppressed": c.suppressed,
        }
        for f in outcome.files
        for c in f.changes
    ]
    return {
        "version": REPORT_VERSION,
        "mode": outcome.mode,
        "target": outcome.target,
        "rules": list(outcome.rules),
        "summary": {
            "scanned": len(outcome.files),
            "changed": outcome.count("changed"),
            "unchanged": outcome.count("unchanged"),
            "skipped": len(outcome.skipped),
            "failed": outcome.count("failed"),
            "todos": len(outcome.todos()),
            "pending_todos": len(outcome.pending),
            "suppressed": sum(1 for d in diagnostics if d.suppressed),
            "held": len(outcome.held()),
            "interrupted": outcome.interrupted,
            "seconds": round(outcome.seconds, 3),
        },
        "changes": [c for c in changes if not c["todo"]],
        "todos": [c for c in changes if c["todo"]],
        "failed": [{"file": f.display, "reason": f.reason} for f in outcome.files if f.status == "failed"],
        "skipped": [{"path": s.display, "reason": s.reason} for s in outcome.skipped],
        "pending_todos": [{"file": d, "line": line, "location": f"{d}:{line}"} for d, line in outcome.pending],
        "held": [{"file": f.display, "lines": list(f.held)} for f in outcome.held()],
        "diagnostics": [
            {
                "file": d.path,
                "line": d.line,
                "column": d.column,
                "rule": d.rule,
                "kind": d.kind,
                "message": d.message,
                "automatic": d.automatic,
                "suppressed": d.suppressed,
            }
            for d in diagnostics
        ],
        "statistics": statistics(diagnostics, outcome.applied()),
        "exit_code": outcome.exit_code(),
        "leftover_temp_files": {"removed": outcome.removed, "kept": outcome.leftovers},
        "files": {f.display: f.status for f in outcome.files},
    }


def write_report(path: str, outcome: Outcome) -> None:
    """Write the JSON ``--report`` file."""
    with open_no_follow(path) as fh:
        json.dump(to_json(outcome), fh, indent=2)
        fh.write("\n")


def render(outcome: Outcome, output_format: str, show_statistics: bool, stream: TextIO) -> None:
    """Write ``--output-format``/``--statistics`` output to ``stream`` (standard output)."""
    diagnostics = outcome.diagnostics()
    if show_statistics:
        rows = _diagnostics.statistics(diagnostics, outcome.applied())
        if output_format == "json":
            stream.write(json.dumps(rows, indent=2) + "\n")
        else:
            stream.write(_diagnostics.statistics_table(rows, dict(_rule_summaries())))
        return
    if output_format == "concise":
        stream.write(_diagnostics.concise(diagnostics))
    elif output_format == "github":
        stream.write(_diagnostics.github(diagnostics, outcome.failures()))
    elif output_format == "sarif":
        stream.write(
            json.dumps(
                _diagnostics.sarif(diagnostics, _rule_summaries(), outcome.failures(), outcome.interrupted), indent=2
            )
            + "\n"
        )
    elif output_format == "json":
        stream.write(json.dumps(to_json(outcome), indent=2) + "\n")
    stream.flush()


def _rule_summaries() -> list[tuple[str, str]]:
    """The rules' one-line summaries, as Markdown code spans: only the formats that show them
    ask, since reading them imports every rule module (and libcst)."""
    return [(rule, summary.replace("``", "`")) for rule, summary in _diagnostics.rule_summaries()]
