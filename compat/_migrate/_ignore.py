"""Gitignore-style patterns: ``.gitignore`` files, ``--exclude`` and the config's ``exclude``.

A small matcher of our own (``pathspec`` is not a dependency) covering what ``.gitignore``
files use in practice: ``#`` comments, ``!`` negation, a trailing ``/`` for folders only, a
``/`` elsewhere anchoring the pattern to the file's folder, ``*``, ``?``, ``[...]`` and ``**``
(leading, trailing and in the middle), backslash escapes. The last matching pattern wins.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath


@dataclass(frozen=True)
class _Pattern:
    regex: re.Pattern[str]
    negate: bool
    dir_only: bool
    text: str


def _translate_glob(glob: str) -> str:
    """The regex (no anchors) for one gitignore glob, ``**`` already split off by the caller."""
    out: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        c = glob[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(glob[i + 1]))
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and glob[j] in "!^":
                j += 1
            if j < n and glob[j] == "]":
                j += 1
            while j < n and glob[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : j]
                negated = body[:1] in ("!", "^")
                body = body[1:] if negated else body
                body = body.replace("\\", "\\\\")
                out.append(f"[{'^' if negated else ''}{body}]")
                i = j
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _translate(pattern: str) -> str:
    """The full-match regex of a pattern already stripped of ``!``, trailing ``/`` and anchoring."""
    parts = pattern.split("/")
    pieces: list[str] = []
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            # ``a/**/b`` matches ``a/b``; a trailing ``/**`` matches everything inside.
            pieces.append(".*" if last else "(?:.*/)?")
        else:
            pieces.append(_translate_glob(part) + ("" if last else "/"))
    return "".join(pieces)


def parse_line(line: str) -> _Pattern | None:
    """One gitignore line as a pattern, or ``None`` for a blank line or a comment."""
    line = line.rstrip("\r\n")
    while line.endswith(" ") and not line.endswith("\\ "):
        line = line[:-1]
    if not line or line.startswith("#"):
        return None
    text = line
    negate = line.startswith("!")
    if negate:
        line = line[1:]
    elif line.startswith(("\\!", "\\#")):
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    anchored = "/" in line
    line = line.lstrip("/")
    body = _translate(line)
    if not anchored and not line.startswith("**"):
        body = "(?:.*/)?" + body
    return _Pattern(re.compile(body, re.DOTALL), negate, dir_only, text)


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
        self.patterns = [p for p in map(parse_line, lines) if p is not None]

    @classmethod
    def from_file(cls, path: str, source: str) -> IgnoreSpec | None:
        """The spec of a ``.gitignore``-style file, ``None`` if it cannot be read."""
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                lines = fh.read().splitlines()
        except OSError:
            return None
        base = str(PurePosixPath(path).parent)
        return cls(base, lines, source)

    def match(self, path: str, is_dir: bool) -> _Pattern | None:
        """The last pattern deciding ``path`` (absolute), if any; check ``negate`` for the verdict."""
        if path == self.base or not path.startswith(self.base.rstrip("/") + "/"):
            return None
        rel = path[len(self.base.rstrip("/")) + 1 :]
        for pattern in reversed(self.patterns):
            if pattern.dir_only and not is_dir:
                continue
            if pattern.regex.fullmatch(rel):
                return pattern
        return None


def ignored_by(specs: list[IgnoreSpec], path: str, is_dir: bool) -> str | None:
    """Why ``path`` is ignored by the deepest spec with an opinion, or ``None``.

    Specs are ordered shallow to deep: a deeper ``.gitignore`` overrides a shallower one.
    """
    for spec in reversed(specs):
        pattern = spec.match(path, is_dir)
        if pattern is not None:
            return None if pattern.negate else f"{spec.source}: {pattern.text}"
    return None
