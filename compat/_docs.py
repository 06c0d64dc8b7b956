"""Generate ``docs/migration.md`` from the rename table (:mod:`compat.renames`).

``python -m compat._docs`` rewrites the page; ``python -m compat._docs --check`` exits with
status 1 when the page on disk differs from what the table generates (for CI). Standard library
only: this never imports torch.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from compat import _catalog
from compat.renames import NOT_RENAMED, OLD_VALUE, PACKAGE_REMOVAL, RENAMES, Kind, Rename

__all__ = ["DOCS_PATH", "main", "render_migration_md"]

DOCS_PATH = Path(__file__).resolve().parent.parent / "docs" / "migration.md"

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
<!-- Generated from compat/renames.py by `python -m compat._docs`: do not edit by hand. -->

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


def _cell(text: str) -> str:
    """Escape a table cell (pipes would split it, newlines would end the row)."""
    return text.replace("|", "\\|").replace("\n", " ")


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


def _anchor(title: str) -> str:
    return title.lower().replace(" ", "-")


def render_migration_md() -> str:
    """Render ``docs/migration.md`` from :data:`compat.renames.RENAMES`.

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


def main(argv: Sequence[str] | None = None) -> int:
    """Write ``docs/migration.md``, or with ``--check`` report whether it is up to date.

    Args:
        argv: command-line arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0, or 1 when ``--check`` finds the page out of date.
    """
    parser = argparse.ArgumentParser(
        prog="python -m compat._docs",
        description="Generate docs/migration.md from compat.renames.",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is out of date; write nothing")
    parser.add_argument("--output", type=Path, default=DOCS_PATH, help=f"page to write (default: {DOCS_PATH})")
    args = parser.parse_args(argv)
    expected = render_migration_md()
    output: Path = args.output
    if args.check:
        current = output.read_text(encoding="utf-8") if output.exists() else None
        if current != expected:
            print(f"{output} is out of date: run `python -m compat._docs`", file=sys.stderr)
            return 1
        print(f"{output} is up to date")
        return 0
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(expected, encoding="utf-8", newline="\n")
    print(f"wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
