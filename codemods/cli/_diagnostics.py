"""Diagnostics for CI: one per site, in the formats of ``--output-format`` and ``--statistics``.

A diagnostic is a site the run flags: an automatic edit that ``--check``/``--diff`` would make,
a TODO a person must resolve (added by this run or already in the file as a
``# TODO(compat.migrate)`` comment), or an edit that a ``# compat: ignore`` comment held back.
Its line and column (1-based, columns in characters) are those of the site in the file as it
was read, which for ``--check`` is the file on disk, the one CI annotates: for a TODO, the
first line of the statement (or of the bracketed argument) the comment goes above.
``docs/codemods.md`` ("Output formats") documents each format.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from codemods.cli._worker import ChangeRecord

__all__ = [
    "FORMATS",
    "Diagnostic",
    "collect",
    "escape_data",
    "escape_property",
    "rule_summaries",
    "statistics",
]

#: ``--output-format`` choices; ``full`` is the human summary on stderr (nothing on stdout).
FORMATS = ("full", "concise", "json", "github", "sarif")
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
#: Where each rule is documented, relative to the repository (its ``#cm001``... anchors). SARIF's
#: ``helpUri`` needs an absolute URL: the installed distribution's ``Documentation`` URL when its
#: metadata has one; else the rule's ``help`` text names this page.
DOCS_PAGE = "docs/codemods.md"
_TODO_COMMENT = re.compile(r"#\s*TODO\(compat\.migrate\):\s*(?P<rule>CM\d{3})?\s*(?P<hint>.*)")

# kinds of diagnostic
CHANGE, TODO, OPEN_TODO, HELD = "change", "todo", "open-todo", "held"


@dataclass(frozen=True)
class Diagnostic:
    """One site a run flags (or would, but for a ``# compat: ignore`` comment).

    Attributes:
        path: the file as shown to the user.
        line: 1-based line of the site in the file as it was read.
        column: 1-based column (characters) of the site on ``line``.
        rule: the rule id (``CM007``).
        message: what the rule does or asks for.
        kind: ``change`` (an automatic edit: made by a run without ``--check``), ``todo`` (a
            person must decide), ``open-todo`` (a ``# TODO(compat.migrate)`` comment already in
            the file) or ``held`` (an edit not made: a ``# compat: ignore`` elsewhere in the
            file covers an edit it goes with).
        suppressed: a ``# compat: ignore`` comment on ``line`` covers ``rule``.
    """

    path: str
    line: int
    column: int
    rule: str
    message: str
    kind: str
    suppressed: bool = False

    @property
    def automatic(self) -> bool:
        """Whether running the migration (without ``--check``) resolves it."""
        return self.kind == CHANGE

    def text(self) -> str:
        """The message as the text formats show it."""
        if self.kind == CHANGE:
            return f"{self.message} (automatic: run `python -m compat.migrate` without --check to apply it)"
        if self.kind == HELD:
            return f"not rewritten: {self.message} (a `# compat: ignore` on an edit of this file holds it back)"
        return f"TODO: {self.message}"


def rule_summaries() -> list[tuple[str, str]]:
    """``(rule id, one-line summary)`` for every rule, in id order (the first docstring line)."""
    import inspect

    import codemods

    return [
        (str(rule), inspect.cleandoc(codemods.RULES[rule].__doc__ or "").split("\n", 1)[0].strip())
        for rule in codemods.Rule
        if rule in codemods.RULES
    ]


def _not_code(row: str) -> bool:
    return not row.strip() or row.lstrip().startswith("#")


def _cell_hint(hint: str) -> str:
    """A hint read from a notebook's JSON line: up to the end of the cell line, unescaped."""
    import json

    text = re.split(r'\\n|(?<!\\)"', hint, maxsplit=1)[0]
    try:
        value = json.loads(f'"{text}"')
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def _open_todos(path: str, lines: list[int]) -> list[Diagnostic]:
    """The ``# TODO(compat.migrate)`` comments at ``lines`` of ``path``, located at their site:
    the first line of code below each comment (the line a new run would report); in a notebook,
    whose lines are the JSON's, the comment's own line."""
    from codemods._suppress import parse_suppressions, suppresses
    from codemods.cli._safety import Unprocessable, decode, read_snapshot

    try:
        text = decode(read_snapshot(path).data).text
    except (Unprocessable, OSError):
        text = ""
    rows = text.splitlines()
    suppressions = parse_suppressions(text)
    found = []
    notebook = path.endswith(".ipynb")
    for line in lines:
        comment = rows[line - 1] if 0 < line <= len(rows) else ""
        match = _TODO_COMMENT.search(comment)
        rule = (match.group("rule") if match else None) or "CM000"
        hint = match.group("hint").strip() if match else "a TODO(compat.migrate) comment"
        if notebook:
            hint = _cell_hint(hint)
        site = line
        while (
            not notebook
            and site < len(rows)
            and (not rows[site - 1].strip() or rows[site - 1].lstrip().startswith("#"))
        ):
            site += 1
        if site == line or site > len(rows):
            site = line
        code = rows[site - 1] if 0 < site <= len(rows) else ""
        # the first token of the code below; in a notebook (JSON lines) the comment itself
        column = max(code.find("#"), 0) + 1 if notebook else len(code) - len(code.lstrip()) + 1
        suppressed = suppresses(suppressions, site, rule) or suppresses(suppressions, line, rule)
        found.append(Diagnostic(path, site, column, rule, hint, OPEN_TODO, suppressed))
    return found


def _hint(item: Diagnostic | ChangeRecord, path: str = "") -> str | None:
    """A notebook TODO's hint without its ``cell N:`` prefix (``None`` for other files)."""
    path = path or getattr(item, "path", "")
    return item.message.rpartition(": ")[2] if path.endswith(".ipynb") else None


def collect(
    files: Iterable[tuple[str, Sequence[ChangeRecord], bool]], pending: Iterable[tuple[str, int]], checking: bool
) -> list[Diagnostic]:
    """Every diagnostic of a run, suppressed ones included, sorted by file and position.

    Args:
        files: ``(display path, changes, held)`` per file.
        pending: ``(display path, line)`` of the ``# TODO(compat.migrate)`` comments found.
        checking: ``--check``/``--diff``, which flag the edits they would make; a run that
            writes flags what is left: the TODOs, and the edits a ``# compat: ignore`` held back.
    """
    by_file: dict[str, list[int]] = {}
    for display, line in pending:
        by_file.setdefault(display, []).append(line)
    found = [d for display, lines in by_file.items() for d in _open_todos(display, lines)]
    # A TODO a rule reports again for a comment already in the file is that open TODO, once.
    # In a notebook a record's line is its cell's, so there the rule and hint identify it.
    opened: set[tuple[str, object, str]] = {(d.path, d.line, d.rule) for d in found}
    opened |= {(d.path, _hint(d), d.rule) for d in found if d.path.endswith(".ipynb")}
    for display, changes, held in files:
        for c in changes:
            if c.todo:
                kind = TODO
                if (display, c.line, c.rule) in opened or (display, _hint(c, display), c.rule) in opened:
                    continue
            elif held and not c.suppressed:
                kind = HELD
            elif checking or c.suppressed:
                kind = CHANGE
            else:
                continue  # made by this run
            found.append(Diagnostic(display, c.line, c.column, c.rule, c.message, kind, c.suppressed))
    return sorted(found, key=lambda d: (d.path, d.line, d.column, d.rule))


# -- concise -----------------------------------------------------------------------------------


def concise(diagnostics: list[Diagnostic]) -> str:
    """``path:line:col: CM0xx message``, one per line (suppressed sites left out); ``[*]``
    marks an edit that the migration makes by itself, ``TODO`` one that needs a person."""
    out = []
    for d in diagnostics:
        if d.suppressed:
            continue
        mark = "[*]" if d.kind == CHANGE else "TODO" if d.kind in (TODO, OPEN_TODO) else "HELD"
        out.append(f"{d.path}:{d.line}:{d.column}: {d.rule} {mark} {_one_line(d.message)}\n")
    return "".join(out)


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- GitHub workflow commands -----------------------------------------------------------------


def relative(path: str) -> str:
    """``path`` relative to the working folder (POSIX separators) when inside it: the form
    GitHub and code scanning resolve against the repository root."""
    from pathlib import Path

    absolute = os.path.abspath(path)
    cwd = os.getcwd()
    if os.path.commonpath([absolute, cwd]) != cwd:
        return path
    return Path(os.path.relpath(absolute, cwd)).as_posix()


def escape_data(text: str) -> str:
    """A workflow command's message, escaped as GitHub's runner reads it (``%``, CR, LF)."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text: str) -> str:
    """A workflow command's property value: the message escapes, and ``:`` and ``,``."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(diagnostics: list[Diagnostic], failures: list[tuple[str, str]]) -> str:
    """``::error``/``::warning`` workflow commands: GitHub Actions shows each as an annotation
    on the file and line (TODOs and held edits are errors, automatic edits warnings)."""
    out = []
    for path, reason in failures:
        out.append(f"::error file={escape_property(relative(path))},title=compat.migrate::{escape_data(reason)}\n")
    for d in diagnostics:
        if d.suppressed:
            continue
        level = "warning" if d.kind == CHANGE else "error"
        props = f"file={escape_property(relative(d.path))},line={d.line},col={d.column},title={escape_property(d.rule)}"
        out.append(f"::{level} {props}::{escape_data(d.text())}\n")
    return "".join(out)


# -- SARIF 2.1.0 ------------------------------------------------------------------------------


def _uri(path: str) -> tuple[str, bool]:
    """``(uri, relative)``: relative to the working folder (``%SRCROOT%``) when inside it."""
    from pathlib import Path
    from urllib.parse import quote

    rel = relative(path)
    if not os.path.isabs(rel):
        return quote(rel), True
    return Path(rel).as_uri(), False


def _docs_url() -> str | None:
    """The documentation page: the installed distribution's ``Documentation`` URL, if any."""
    from importlib import metadata

    try:
        urls: list[str] = metadata.metadata("strategy-compat").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        urls = []
    for entry in urls:
        label, _, url = str(entry).partition(",")
        if label.strip().lower() == "documentation" and url.strip():
            return str(url).strip()
    return None


def _version() -> str:
    from importlib import metadata

    try:
        return str(metadata.version("strategy-compat"))
    except metadata.PackageNotFoundError:
        return "0+unknown"


def sarif(
    diagnostics: list[Diagnostic],
    rules: list[tuple[str, str]],
    failures: list[tuple[str, str]],
    interrupted: bool = False,
) -> dict[str, object]:
    """A SARIF 2.1.0 log (GitHub code scanning's format): every rule, every diagnostic (a
    suppressed one with an ``inSource`` suppression), ``failures`` (``(path, reason)``) as
    notifications."""
    docs = _docs_url()
    index = {rule: i for i, (rule, _) in enumerate(rules)}
    results = []
    for d in diagnostics:
        uri, relative = _uri(d.path)
        artifact: dict[str, object] = {"uri": uri}
        if relative:
            artifact["uriBaseId"] = "%SRCROOT%"
        result: dict[str, object] = {
            "ruleId": d.rule,
            "level": "warning" if d.kind == CHANGE else "error",
            "message": {"text": d.text()},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": artifact,
                        "region": {"startLine": d.line, "startColumn": d.column},
                    }
                }
            ],
            "properties": {"kind": d.kind},
        }
        if d.rule in index:
            result["ruleIndex"] = index[d.rule]
        if d.suppressed:
            result["suppressions"] = [{"kind": "inSource", "justification": "# compat: ignore"}]
        results.append(result)
    notifications = []
    for path, reason in failures:
        uri, relative = _uri(path)
        artifact = {"uri": uri, **({"uriBaseId": "%SRCROOT%"} if relative else {})}
        notifications.append(
            {
                "level": "error",
                "message": {"text": reason},
                "locations": [{"physicalLocation": {"artifactLocation": artifact}}],
            }
        )
    from pathlib import Path

    run: dict[str, object] = {
        "tool": {
            "driver": {
                "name": "compat.migrate",
                **({"informationUri": docs} if docs else {}),
                "version": _version(),
                "rules": [
                    {
                        "id": rule,
                        "shortDescription": {"text": summary},
                        "help": {"text": f"{summary} See {DOCS_PAGE}#{rule.lower()}."},
                        **({"helpUri": f"{docs}#{rule.lower()}"} if docs else {}),
                        "defaultConfiguration": {"level": "error"},
                    }
                    for rule, summary in rules
                ],
            }
        },
        "originalUriBaseIds": {"%SRCROOT%": {"uri": Path(os.getcwd()).as_uri().rstrip("/") + "/"}},
        "columnKind": "unicodeCodePoints",
        "invocations": [
            {
                "executionSuccessful": not interrupted and not notifications,
                "toolExecutionNotifications": notifications,
            }
        ],
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


# -- statistics -------------------------------------------------------------------------------


def statistics(diagnostics: list[Diagnostic], applied: Iterable[str] = ()) -> list[dict[str, object]]:
    """Per rule with anything to count: edits (made: the rule ids in ``applied``, or to be made
    with ``--check``), TODOs (new and open, unsuppressed; held edits count here) and
    suppressed sites."""
    changes: Counter[str] = Counter()
    todos: Counter[str] = Counter()
    suppressed: Counter[str] = Counter()
    for d in diagnostics:
        if d.suppressed:
            suppressed[d.rule] += 1
        elif d.kind == CHANGE:
            changes[d.rule] += 1
        else:
            todos[d.rule] += 1
    changes.update(applied)  # the edits this run made are not diagnostics
    rules = sorted(set(changes) | set(todos) | set(suppressed))
    return [{"rule": r, "changes": changes[r], "todos": todos[r], "suppressed": suppressed[r]} for r in rules]


def statistics_table(rows: list[dict[str, object]], summaries: dict[str, str]) -> str:
    """``--statistics`` as text: one row per rule, like ruff's."""
    if not rows:
        return "no changes, TODOs or suppressed sites\n"
    header = f"{'rule':<6} {'changes':>7} {'TODOs':>6} {'suppressed':>10}  summary"
    lines = [header]
    for row in rows:
        rule = str(row["rule"])
        lines.append(
            f"{rule:<6} {row['changes']:>7} {row['todos']:>6} {row['suppressed']:>10}  {summaries.get(rule, '')}"
        )
    return "\n".join(lines) + "\n"
