"""Generate the documentation pages that come from the code, and check them: one table, one command.

Run from the repository root::

    python tools/gen_docs.py            # rewrite every page of PAGES that is out of date
    python tools/gen_docs.py --check    # write nothing; exit 1 naming each stale page (tests run this)

PAGES lists each page with the function that renders it from its current text. Whole pages
(``docs/migration.md`` and ``docs/deprecations.md`` from the rename table ``compat.renames``)
ignore the current text; ``docs/codemods.md`` has generated sections between ``BEGIN GENERATED``
and ``END GENERATED`` markers (the rules from the rule classes' docstrings, the CLI reference from
the argparse parser), the rest of it written by hand; ``docs/lifecycle-diagrams.md`` is drawn from
the committed recording of ``docs/_gen/lifecycle.py`` (which also re-records it). A repository
script, not part of the installed packages; it never imports torch.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import re
import sys
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # the checkout this script belongs to, not another installed copy
    sys.path.insert(0, str(ROOT))

from compat import _catalog  # noqa: E402
from compat.renames import NOT_RENAMED, OLD_VALUE, PACKAGE_REMOVAL, RENAMES, Kind, Rename  # noqa: E402

__all__ = ["PAGES", "Page", "main", "render_codemods", "render_deprecations", "render_migration", "stale_pages"]

COMMAND = "python tools/gen_docs.py"


def _anchor(title: str) -> str:
    return title.lower().replace(" ", "-")


# -- docs/migration.md: the rename table ----------------------------------------------------------------

_TITLES = {
    Kind.MODULE: "Modules",
    Kind.CLASS: "Classes",
    Kind.FUNCTION: "Functions",
    Kind.METHOD: "Methods",
    Kind.PROPERTY: "Properties",
    Kind.ATTRIBUTE: "Attributes",
    Kind.ARGUMENT: "Arguments",
    Kind.ARGUMENT_VALUE: "Argument values",
    Kind.HOOK: "Hooks",
}

_TARGETS = ("strategies", "lightning")

_INTRO = f"""\
<!-- Generated from compat/renames.py by `python tools/gen_docs.py`: do not edit by hand. -->

# Migrating from the PyTorch Lightning 1.2-era accelerator and plugin API

Custom accelerators, training-type plugins, precision plugins and cluster environments written
against PyTorch Lightning 1.2 (and the Trainer arguments and hooks around them) have new names:
in `strategies`, and in Lightning 2.x. Until strategy-compat {PACKAGE_REMOVAL}, `import compat`
keeps every old name below working on top of `strategies` (`compat.plugins.DDPPlugin` stands for
`pytorch_lightning.plugins.DDPPlugin`), each warning once with a `CompatDeprecationWarning` that
names the replacement.

## Migrate automatically

```bash
python -m compat.migrate <path>                     # rewrite to `strategies` (in place)
python -m compat.migrate --target lightning <path>  # rewrite to Lightning 2.x instead
python -m compat.migrate --diff <path>              # show the changes, write nothing
python -m compat.migrate --check <path>             # exit 1 when changes are needed (CI)
```

With `--target lightning`, every Lightning import of a migrated file is written in one package
(the classes of `lightning.pytorch` and of the `pytorch_lightning` 2.x package are distinct, so a
file mixing them fails): `pytorch_lightning` when the project's dependency files
(`pyproject.toml`, `setup.cfg`, `setup.py`, `requirements*.txt`) name `pytorch-lightning` and not
`lightning`, else `lightning.pytorch`; `--lightning-namespace` overrides. A `ClusterEnvironment`
subclass gets the `detect()` that Lightning 2.x requires, and its `creates_children()` becomes a
`creates_processes_externally` that is also true in the processes Lightning started (1.x looked at
`PL_IN_DDP_SUBPROCESS` itself; 2.x relaunches whenever it is false); any other member 2.x requires
gets a TODO. One difference no rule rewrites: under DDP, Lightning 1.x shuffled the training data
even when the `DataLoader` did not; Lightning 2.x keeps the loader's order (pass `shuffle=True`
to keep 1.x's).

The codemods rewrite every row marked **yes** under "Automatic". A row marked **no** needs a
person: the codemod leaves a `# TODO(compat.migrate): ...` comment with the note from the last
column and lists it in its report. Use version control and review the diff either way.

How to read the tables:

- "Lightning" is the Lightning version that deprecated or renamed the old name;
  "{NOT_RENAMED}" means Lightning kept the name and only `strategies` renames it.
- "—" in a new-name column: nothing replaces the old name there; the note says what to do.
- In a new argument, `{OLD_VALUE}` stands for the old argument's value
  (`Trainer(gpus=2)` becomes `Trainer(accelerator='cuda', devices=2)`).
- A member's new name lives on its class's replacement (`DDPPlugin.init_ddp_connection` becomes
  `DDPStrategy.setup_distributed`), in your subclasses too.
"""


def _cell(text: str, *, newlines: bool = True) -> str:
    """Escape a table cell: pipes would split it, newlines (unless kept) would end the row."""
    text = text.replace("|", "\\|")
    return text.replace("\n", " ") if newlines else text


def _short(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def _objects() -> dict[str, Rename]:
    return {entry.old: entry for entry in RENAMES if entry.member is None}


def _new_name(entry: Rename, target: str, objects: dict[str, Rename]) -> str:
    """How the new name of ``entry`` reads in a table cell for ``target``."""
    new = entry.target(target)
    if new is None:
        return "—"
    if entry.member is None:
        return f"`{new}`"
    owner_entry = objects.get(entry.old)
    owner = owner_entry.target(target) if owner_entry is not None else None
    owner_name = _short(owner) if owner is not None else _short(entry.old)
    if entry.kind in (Kind.ARGUMENT, Kind.ARGUMENT_VALUE):
        arguments = new if "=" in new else f"{new}={OLD_VALUE}"
        return f"`{owner_name}({arguments})`"
    suffix = " (property)" if entry.to_property else ""
    catalog = _catalog.target(target)
    if owner is not None and not catalog.has_member(owner, new):
        # Not on the base's replacement: name the subclasses that have it.
        holders = catalog.subclasses_defining(owner, new)
        if holders:
            return ", ".join(f"`{_short(holder)}.{new}`" for holder in holders) + suffix
    return f"`{owner_name}.{new}`{suffix}"


def _old_name(entry: Rename) -> str:
    if entry.member is not None:
        return f"`{entry.old_name}`"
    also = "".join(f"<br>`{alias}`" for alias in entry.aliases)
    return f"`{entry.old}`{also}"


def _automatic(entry: Rename) -> str:
    strategies = "yes" if entry.automatic_for("strategies") else "no"
    lightning = "yes" if entry.automatic_for("lightning") else "no"
    if strategies == lightning:
        return strategies
    return f"{strategies} (Lightning: {lightning})"


def _sentence(text: str) -> str:
    # Hints start with identifiers as often as not (``local_rank is read-only``): no capitals.
    return text if text.endswith(".") else text + "."


def _notes(entry: Rename) -> str:
    notes = [_sentence(entry.hint)] if entry.hint else []
    if entry.to_property:
        notes.append("Now a property: drop the call parentheses and add `@property` to overrides.")
    if entry.params:
        replaced = ", ".join(f"`{old}` → `{new}`" for old, new in entry.params)
        notes.append(f"Parameters become attributes: {replaced}.")
    if entry.removed_in != PACKAGE_REMOVAL:
        notes.append(f"Shim removed in strategy-compat {entry.removed_in}.")
    return " ".join(notes)


def _table(entries: Sequence[Rename], objects: dict[str, Rename]) -> list[str]:
    lines = [
        "| Old name | `strategies` | Lightning 2.x | Lightning | Automatic | Notes |",
        "|---|---|---|---|---|---|",
    ]
    for entry in entries:
        cells = (
            _old_name(entry),
            _new_name(entry, "strategies", objects),
            _new_name(entry, "lightning", objects),
            entry.renamed_in,
            _automatic(entry),
            _notes(entry),
        )
        lines.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return lines


def render_migration(current: str = "") -> str:
    """``docs/migration.md``, from ``compat.renames.RENAMES``.

    Returns:
        The whole page: an introduction on migrating automatically, a summary of the entries
        per kind, then one table per kind (old name, new name for ``strategies`` and for
        Lightning 2.x, the Lightning version, whether the codemod rewrites it, notes).
    """
    objects = _objects()
    by_kind = {kind: [entry for entry in RENAMES if entry.kind is kind] for kind in Kind}
    lines = [_INTRO, "## Summary", ""]
    lines += ["| Kind | Entries | Automatic (`strategies`) |", "|---|---|---|"]
    for kind, entries in by_kind.items():
        if entries:
            automatic = sum(entry.automatic for entry in entries)
            title = _TITLES[kind]
            lines.append(f"| [{title}](#{_anchor(title)}) | {len(entries)} | {automatic} |")
    total_automatic = sum(entry.automatic for entry in RENAMES)
    lines.append(f"| **Total** | {len(RENAMES)} | {total_automatic} |")
    for kind, entries in by_kind.items():
        if entries:
            lines += ["", f"## {_TITLES[kind]}", "", *_table(entries, objects)]
    return "\n".join(lines) + "\n"


# -- docs/deprecations.md: the deprecation schedule ------------------------------------------------------

_SCHEDULE_INTRO = f"""\
<!-- Generated from compat/renames.py by `python tools/gen_docs.py`: do not edit by hand. -->

# Deprecation schedule

Every old name that `import compat` keeps working warns with a `CompatDeprecationWarning` that
names its replacement, the release that removes it, and this page. In that release the shim is
gone: importing the old class fails, an old method or argument is an `AttributeError` or
`TypeError`. A test fails once the package version reaches an entry's removal release, so no
release can ship a shim past its date.

Until then:

- run `STRATEGY_COMPAT_DEPRECATION=error python train.py` (or your test suite) to turn every
  warning into an error and find each old name still in use;
- run `python -m compat.migrate <path>` to rewrite them (see [Upgrade a Lightning 1.2
  project](upgrade.md)); the [rename table](migration.md) lists each name and its replacement.

Unless an entry of the table says otherwise, a shim is removed in strategy-compat
{PACKAGE_REMOVAL}.
"""


def _releases() -> list[str]:
    def key(version: str) -> tuple[int, ...]:
        return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))

    return sorted({entry.removed_in for entry in RENAMES}, key=key)


def _names(entries: Sequence[Rename]) -> str:
    names = sorted({entry.old_name for entry in entries}, key=str.lower)
    return ", ".join(f"`{name}`" for name in names)


def render_deprecations(current: str = "") -> str:
    """``docs/deprecations.md``, the deprecation schedule, from each entry's ``removed_in``.

    Returns:
        The page: how the schedule works, a summary table (release, shims removed, how many the
        codemods rewrite automatically), then per release the old names it removes, per kind.
    """
    releases = _releases()
    lines = [
        _SCHEDULE_INTRO,
        "## Summary",
        "",
        "| Release | Shims removed | Rewritten automatically |",
        "|---|---|---|",
    ]
    for release in releases:
        entries = [entry for entry in RENAMES if entry.removed_in == release]
        automatic = sum(entry.automatic for entry in entries)
        lines.append(f"| [{release}](#strategy-compat-{release.replace('.', '')}) | {len(entries)} | {automatic} |")
    for release in releases:
        lines += ["", f"## strategy-compat {release}", "", "| Kind | Removed | Old names |", "|---|---|---|"]
        for kind in Kind:
            entries = [entry for entry in RENAMES if entry.removed_in == release and entry.kind is kind]
            if entries:
                title = _TITLES[kind]
                link = f"[{title}](migration.md#{_anchor(title)})"
                lines.append(f"| {link} | {len(entries)} | {_names(entries)} |")
    return "\n".join(lines) + "\n"


# -- docs/codemods.md: the generated sections -------------------------------------------------------------

_BEGIN = "<!-- BEGIN GENERATED {name}: python tools/gen_docs.py -->"
_END = "<!-- END GENERATED {name} -->"


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
    import codemods
    from codemods.cli import rule_summaries

    parts = []
    for rule_id, summary in rule_summaries():
        body = inspect.cleandoc(codemods.RULES[codemods.Rule(rule_id)].__doc__ or "").partition("\n")[2]
        anchor = f'<a id="{rule_id.lower()}"></a>\n\n'
        parts.append(f"{anchor}### {rule_id}: {summary}\n\n{_markdown(body.strip())}")
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
        parts.extend(f"| {_flags(a)} | {_cell(a.help or '', newlines=False)} |" for a in actions)
        parts.append("")
    parts.append(f"```text\n{parser.epilog}\n```\n")
    return "\n".join(parts)


def render_codemods(current: str) -> str:
    """``current`` with its generated sections replaced by fresh ones.

    Raises:
        ValueError: a section's markers are missing.
    """
    for name, content in (("rules", render_rules()), ("cli", render_cli())):
        begin, end = _BEGIN.format(name=name), _END.format(name=name)
        found = re.search(re.escape(begin) + r"\n.*?" + re.escape(end), current, re.DOTALL)
        if found is None:
            raise ValueError(f"docs/codemods.md: the markers `{begin}` ... `{end}` are missing")
        current = f"{current[: found.start()]}{begin}\n{content}{end}{current[found.end() :]}"
    return current


# -- docs/lifecycle-diagrams.md: from the committed recording ---------------------------------------------


def render_lifecycle(current: str = "") -> str:
    """``docs/lifecycle-diagrams.md``, from the recording committed under ``docs/_data``."""
    spec = importlib.util.spec_from_file_location("_lifecycle_gen", ROOT / "docs" / "_gen" / "lifecycle.py")
    assert spec is not None and spec.loader is not None
    lifecycle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lifecycle)
    return str(lifecycle.render(lifecycle._load(lifecycle.RECORDING), lifecycle._load(lifecycle.OLD)))


# -- the table and the command ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Page:
    """One generated page: where it is, and how its text is rendered from its current text."""

    path: str
    render: Callable[[str], str]


PAGES = (
    Page("docs/migration.md", render_migration),
    Page("docs/deprecations.md", render_deprecations),
    Page("docs/codemods.md", render_codemods),
    Page("docs/lifecycle-diagrams.md", render_lifecycle),
)


def stale_pages(root: Path = ROOT, pages: Sequence[Page] = PAGES) -> list[tuple[Path, str]]:
    """Each page under ``root`` whose text differs from what it renders to, with the fresh text."""
    out = []
    for page in pages:
        path = root / page.path
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        fresh = page.render(current)
        if fresh != current or not path.exists():
            out.append((path, fresh))
    return out


def main(argv: Sequence[str] | None = None, *, root: Path = ROOT) -> int:
    """Rewrite the stale pages, or with ``--check`` only name them.

    Args:
        argv: command-line arguments (default: ``sys.argv[1:]``).
        root: the repository the pages are under (tests pass a copy).

    Returns:
        The exit status: 0, or 1 when ``--check`` finds a page out of date.
    """
    parser = argparse.ArgumentParser(prog=COMMAND, description="Generate the pages listed in PAGES from the code.")
    parser.add_argument("--check", action="store_true", help="exit 1 if a page is out of date; write nothing")
    args = parser.parse_args(argv)
    stale = stale_pages(root)
    for path, fresh in stale:
        name = path.relative_to(root)
        if args.check:
            print(f"{name} is out of date: run `{COMMAND}`", file=sys.stderr)
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(fresh, encoding="utf-8", newline="\n")
            print(f"wrote {name}")
    if args.check and not stale:
        print(f"{len(PAGES)} generated pages are up to date")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
