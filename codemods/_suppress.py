"""``# compat: ignore[CM007]`` comments: the sites a person has looked at.

A comment ``# compat: ignore`` (every rule) or ``# compat: ignore[CM007,CM012]`` (those rules)
on a line, after the code, suppresses the rules' sites on that line, the line that
``--output-format concise`` names (the semantics of ruff's ``# noqa`` and mypy's
``# type: ignore``): no TODO comment is added there and nothing is reported for it. See
``docs/codemods.md`` ("Suppressing a site") for what happens to an automatic rewrite on such a line.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Mapping

__all__ = ["MARKER", "Suppressions", "parse_suppressions", "suppresses"]

#: The text every suppression comment contains (a cheap test before tokenizing).
MARKER = "compat: ignore"
_COMMENT = re.compile(r"#\s*compat:\s*ignore(?!\w)(?:\[(?P<rules>[^\]]*)\])?")

#: line -> the rule ids suppressed there (``None``: every rule).
Suppressions = Mapping[int, "frozenset[str] | None"]


def _rules(match: re.Match[str]) -> frozenset[str] | None:
    text = match.group("rules")
    if text is None:
        return None
    return frozenset(part.strip().upper() for part in text.split(",") if part.strip())


def parse_suppressions(source: str) -> dict[int, frozenset[str] | None]:
    """The suppression comments of ``source``: line -> rule ids (``None``: all rules).

    Only real comments count (a string that contains the text does not). Several comments
    on one line add up; a bare ``# compat: ignore`` wins over a list.
    """
    if "compat:" not in source:
        return {}
    found: dict[int, frozenset[str] | None] = {}

    def add(line: int, rules: frozenset[str] | None) -> None:
        if line in found:
            before = found[line]
            rules = None if before is None or rules is None else before | rules
        found[line] = rules

    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                for match in _COMMENT.finditer(tok.string):
                    add(tok.start[0], _rules(match))
    except (tokenize.TokenError, SyntaxError):  # not Python after all: read the lines as text
        found.clear()
        for number, line in enumerate(source.splitlines(), 1):
            for match in _COMMENT.finditer(line):
                add(number, _rules(match))
    return found


def suppresses(suppressions: Suppressions, line: int, rule: str) -> bool:
    """Whether a comment on ``line`` suppresses ``rule``."""
    if line not in suppressions:
        return False
    rules = suppressions[line]
    return rules is None or str(rule) in rules
