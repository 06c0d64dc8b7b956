"""Gitignore-style patterns: ``.gitignore`` files, ``--exclude`` and the config's ``exclude``.

Matching is ``pathspec``'s ``GitIgnoreSpec`` (what black and mypy use), which follows git's
rules, including its edge cases; this module only ties a spec to the folder its patterns are
relative to and names the pattern that decided, for the "skipped" lines of the report.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath

import pathspec


@dataclass(frozen=True)
class Verdict:
    """The pattern that decided a path: ``negate`` for a ``!`` pattern (the path is kept)."""

    negate: bool
    text: str


class IgnoreSpec:
    """Patterns read relative to one folder (a ``.gitignore``'s folder or a scan root).

    Args:
        base: the folder the patterns are relative to (absolute, resolved).
        lines: the pattern lines.
        source: where the patterns come from, for skip reasons (``.gitignore``, ``--exclude``).
    """

    def __init__(self, base: str, lines: list[str], source: str) -> None:
        self.base = base.rstrip("/") or "/"
        self.source = source
        self.lines = list(lines)
        self._spec = pathspec.GitIgnoreSpec.from_lines(self.lines)

    @classmethod
    def from_file(cls, path: str, source: str) -> IgnoreSpec | None:
        """The spec of a ``.gitignore``-style file, ``None`` if it cannot be read."""
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return None
        return cls(str(PurePosixPath(path).parent), lines, source)

    def match(self, path: str, is_dir: bool) -> Verdict | None:
        """The last pattern deciding ``path`` (absolute), if any."""
        prefix = self.base.rstrip("/") + "/"
        if not path.startswith(prefix):
            return None
        rel = path[len(prefix) :] + ("/" if is_dir else "")
        result = self._spec.check_file(rel)
        if result.include is None or result.index is None:
            return None
        pattern = self._spec.patterns[result.index]
        return Verdict(not result.include, str(getattr(pattern, "pattern", pattern)))


def ignored_by(specs: list[IgnoreSpec], path: str, is_dir: bool) -> str | None:
    """Why ``path`` is ignored by the deepest spec with an opinion, or ``None``.

    Specs are ordered shallow to deep: a deeper ``.gitignore`` overrides a shallower one.
    """
    for spec in reversed(specs):
        verdict = spec.match(path, is_dir)
        if verdict is not None:
            return None if verdict.negate else f"{spec.source}: {verdict.text}"
    return None
