"""The pre-scan: a cheap text test of whether a file may need any rule (``codemods.prescan``).

It imports no libcst (only the rename table, ``codemods._table``), so a run whose files are all
ruled out here or answered by the results cache never loads the parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from ._table import index

__all__ = ["anchors", "prescan"]


#: A pre-scan group: substrings one of which the text must hold, and the regex that decides.
_Group = tuple[tuple[str, ...], tuple[bytes, ...], "re.Pattern[str]", "re.Pattern[bytes]"]
_PATTERNS: dict[tuple[object, frozenset[str]], tuple[_Group, ...]] = {}
_ANCHOR_LENGTH = 6  # long enough to be rare in ordinary code, short enough to be shared by names


def anchors(names: Iterable[str]) -> tuple[str, ...]:
    """Few substrings such that each of ``names`` contains one (a greedy set cover).

    Candidates are the names' substrings of ``_ANCHOR_LENGTH`` characters (a shorter name
    is its own candidate); each step takes the one found in the most names not yet covered.
    ``"Plugin"`` covers every ``*Plugin`` class, so about 40 class names need 7 anchors.
    """
    left = {
        name: {name[i : i + _ANCHOR_LENGTH] for i in range(max(1, len(name) - _ANCHOR_LENGTH + 1))} for name in names
    }
    chosen: list[str] = []
    while left:
        counts: dict[str, int] = {}
        for parts in left.values():
            for part in parts:
                counts[part] = counts.get(part, 0) + 1
        best = max(sorted(counts), key=lambda part: counts[part])
        chosen.append(best)
        left = {name: parts for name, parts in left.items() if best not in name}
    return tuple(chosen)


def _patterns(extra: frozenset[str]) -> tuple[_Group, ...]:
    table = index("strategies")
    key = (table, extra)
    cached = _PATTERNS.get(key)
    if cached is None:
        groups = table.pattern_groups()
        if extra:
            groups.append((extra, r"\b(?:{})\b".format("|".join(sorted(map(re.escape, extra))))))
        built = []
        for names, source in groups:
            found = anchors(names)
            built.append((found, tuple(a.encode() for a in found), re.compile(source), re.compile(source.encode())))
        cached = tuple(built)
        if len(_PATTERNS) > 32:
            _PATTERNS.clear()
        _PATTERNS[key] = cached
    return cached


def prescan(source: str | bytes, extra_names: Iterable[str] = ()) -> bool:
    """Cheap text test: ``False`` means the file surely needs nothing.

    Patterns built from the table: every old class, function and module name (and their
    owners', such as ``Trainer``), imports from ``pytorch_lightning``/``compat``, and member
    accesses through receivers spelled like an old class (``trainer.training_type_plugin``).
    Any rule change or TODO needs one of these in the text (or one of ``extra_names``: pass the
    short names of user classes found by ``resolve_user_classes``, so files that only
    subclass them are scanned too).

    Each pattern needs one of a few literal substrings (``anchors``, e.g. ``Plugin``,
    ``Trainer``, ``pytorch_lightning``); the pattern runs only on a text holding one, so an
    ordinary file costs a handful of substring searches, about what reading it costs.

    Args:
        source: the file's text (``str``) or its raw bytes.
        extra_names: more identifiers to look for; dotted names count by their last part.
    """
    extra = frozenset(name.rpartition(".")[2] for name in extra_names)
    if isinstance(source, bytes):
        return any(
            any(a in source for a in raw) and pattern.search(source) is not None
            for _, raw, _, pattern in _patterns(extra)
        )
    return any(
        any(a in source for a in text) and pattern.search(source) is not None
        for text, _, pattern, _ in _patterns(extra)
    )
