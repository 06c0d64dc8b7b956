"""Generate ``docs/deprecations.md``, the deprecation schedule, from the rename table.

Which release of strategy-compat removes which shim comes from each entry's ``removed_in``
(:mod:`compat.renames`); every deprecation warning links to this page. ``python -m
compat._deprecations_docs`` rewrites the page; ``--check`` exits 1 when it is stale (a test runs
it). Standard library only: this never imports torch.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from compat._docs import _TITLES  # the headings of docs/migration.md, whose anchors the lists link to
from compat.renames import PACKAGE_REMOVAL, RENAMES, Kind, Rename

__all__ = ["SCHEDULE_PATH", "render_deprecations_md", "main"]

SCHEDULE_PATH = Path(__file__).resolve().parent.parent / "docs" / "deprecations.md"

_INTRO = f"""\
<!-- Generated from compat/renames.py by `python -m compat._deprecations_docs`: do not edit by hand. -->

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


def _anchor(title: str) -> str:
    return title.lower().replace(" ", "-")


def _releases() -> list[str]:
    def key(version: str) -> tuple[int, ...]:
        return tuple(int(part) if part.isdigit() else 0 for part in version.split("."))

    return sorted({entry.removed_in for entry in RENAMES}, key=key)


def _names(entries: Sequence[Rename]) -> str:
    names = sorted({entry.old_name for entry in entries}, key=str.lower)
    return ", ".join(f"`{name}`" for name in names)


def render_deprecations_md() -> str:
    """Render ``docs/deprecations.md`` from :data:`compat.renames.RENAMES`.

    Returns:
        The page: how the schedule works, a summary table (release, shims removed, how many the
        codemods rewrite automatically), then per release the old names it removes, per kind.
    """
    releases = _releases()
    lines = [_INTRO, "## Summary", "", "| Release | Shims removed | Rewritten automatically |", "|---|---|---|"]
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


def main(argv: Sequence[str] | None = None) -> int:
    """Write ``docs/deprecations.md``, or with ``--check`` report whether it is up to date.

    Args:
        argv: command-line arguments (default: ``sys.argv[1:]``).

    Returns:
        The exit status: 0, or 1 when ``--check`` finds the page out of date.
    """
    parser = argparse.ArgumentParser(
        prog="python -m compat._deprecations_docs",
        description="Generate docs/deprecations.md (the deprecation schedule) from compat.renames.",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if the page is out of date; write nothing")
    args = parser.parse_args(argv)
    expected = render_deprecations_md()
    if args.check:
        current = SCHEDULE_PATH.read_text(encoding="utf-8") if SCHEDULE_PATH.exists() else None
        if current != expected:
            print(f"{SCHEDULE_PATH} is out of date: run `python -m compat._deprecations_docs`", file=sys.stderr)
            return 1
        print(f"{SCHEDULE_PATH} is up to date")
        return 0
    SCHEDULE_PATH.write_text(expected, encoding="utf-8", newline="\n")
    print(f"wrote {SCHEDULE_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
