"""Generate the rule list and the CLI reference of ``docs/codemods.md``.

The rule section comes from the rule classes' docstrings (``codemods.RULES``: summary line,
then a before/after example), the CLI reference from the argparse parser, so neither can drift.
``python -m compat._codemods_docs`` rewrites the generated sections in place;
``--check`` only exits 1 when they are stale (a test runs it).
"""

from __future__ import annotations

import argparse
import inspect
import re
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "codemods.md"
_BEGIN = "<!-- BEGIN GENERATED {name}: python -m compat._codemods_docs -->"
_END = "<!-- END GENERATED {name} -->"


def _rules() -> list[tuple[str, type]]:
    import codemods

    return [(str(rule), codemods.RULES[rule]) for rule in codemods.Rule if rule in codemods.RULES]


def _doc(cls: type) -> str:
    return inspect.cleandoc(cls.__doc__ or "")


def _markdown(body: str) -> str:
    """Docstring text as Markdown: indented blocks become fenced Python code."""
    out: list[str] = []
    block: list[str] = []

    def flush() -> None:
        if block:
            while block and not block[-1].strip():
                block.pop()
            # dedent, not cleandoc: cleandoc strips the first line alone and loses the nesting.
            out.extend(["```python", *textwrap.dedent("\n".join(block)).strip("\n").splitlines(), "```", ""])
            block.clear()

    for line in body.splitlines():
        indented = line.startswith((" ", "\t"))
        if indented or (block and not line.strip()):
            block.append(line)
            continue
        flush()
        out.append(re.sub(r"::$", ":", line))
    flush()
    return "\n".join(out).strip() + "\n"


def render_rules() -> str:
    """The rule section: one heading per rule id with its docstring, and an ``#cm001`` anchor
    (the ``helpUri`` of SARIF output links there)."""
    parts = []
    for rule_id, cls in _rules():
        summary, _, body = _doc(cls).partition("\n")
        anchor = f'<a id="{rule_id.lower()}"></a>\n\n'
        parts.append(f"{anchor}### {rule_id}: {summary.strip()}\n\n{_markdown(body.strip())}")
    return "\n".join(parts) if parts else "_No rules are registered yet._\n"


def _flags(action: argparse.Action) -> str:
    if not action.option_strings:
        return f"`{action.metavar or action.dest} ...`" if action.nargs in ("*", "+") else f"`{action.metavar}`"
    if action.nargs == 0:
        value = ""
    elif action.choices:
        value = " {" + ",".join(map(str, action.choices)) + "}"
    else:
        value = f" {action.metavar or action.dest.upper()}"
    return ", ".join(f"`{flag}{value}`" for flag in action.option_strings)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_cli() -> str:
    """The CLI reference, from the argparse parser (tables, the same on every Python version)."""
    from codemods.cli import build_parser

    parser = build_parser()
    parts = [f"```text\nusage: {parser.prog} [options] PATH...\n```\n", f"{parser.description}\n"]
    groups = sorted(parser._action_groups, key=lambda g: g.title in ("options", "optional arguments"))
    for group in groups:  # argparse has no public accessor for the groups
        actions = [a for a in group._group_actions if a.help is not argparse.SUPPRESS]
        if not actions:
            continue
        title = "arguments" if group.title == "positional arguments" else group.title
        if title is None:
            raise TypeError(f"an argument group of the migrate parser has no title: {actions}")
        if title in ("options", "optional arguments"):
            title = "other options"
        parts.append(f"**{title[0].upper()}{title[1:]}**\n\n| option | what it does |\n| --- | --- |")
        parts.extend(f"| {_flags(a)} | {_cell(a.help or '')} |" for a in actions)
        parts.append("")
    parts.append(f"```text\n{parser.epilog}\n```\n")
    return "\n".join(parts)


def render(current: str) -> str:
    """``current`` with its generated sections replaced by fresh ones.

    Raises:
        ValueError: a section's markers are missing.
    """
    for name, content in (("rules", render_rules()), ("cli", render_cli())):
        begin, end = _BEGIN.format(name=name), _END.format(name=name)
        found = re.search(re.escape(begin) + r"\n.*?" + re.escape(end), current, re.DOTALL)
        if found is None:
            raise ValueError(f"{DOC}: the markers `{begin}` ... `{end}` are missing")
        current = f"{current[: found.start()]}{begin}\n{content}{end}{current[found.end() :]}"
    return current


def main(argv: Sequence[str] | None = None) -> int:
    """Rewrite (or with ``--check`` only verify) the generated parts of the doc."""
    parser = argparse.ArgumentParser(prog="python -m compat._codemods_docs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if the doc is out of date")
    parser.add_argument("--doc", type=Path, default=DOC, help=f"the file (default {DOC})")
    args = parser.parse_args(argv)
    current = args.doc.read_text(encoding="utf-8")
    fresh = render(current)
    if fresh == current:
        return 0
    if args.check:
        print(f"{args.doc} is out of date: run `python -m compat._codemods_docs`", file=sys.stderr)
        return 1
    args.doc.write_text(fresh, encoding="utf-8")
    print(f"rewrote {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
