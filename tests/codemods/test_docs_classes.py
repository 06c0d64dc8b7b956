"""docs/codemods.md "Behaviour the migration keeps": every Before/After pair is what the rules do."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import codemods

DOC = Path(__file__).resolve().parents[2] / "docs" / "codemods.md"
_SECTION = re.compile(r"<!-- BEGIN CHECKED classes.*?-->\n(.*?)<!-- END CHECKED classes -->", re.DOTALL)
_PAIR = re.compile(r"Before:\n\n```python\n(.*?)```\n\nAfter:\n\n```python\n(.*?)```", re.DOTALL)


def _pairs() -> list[tuple[str, str]]:
    found = _SECTION.search(DOC.read_text(encoding="utf-8"))
    assert found, "the checked section's markers are missing"
    return _PAIR.findall(found.group(1))


def test_the_section_has_examples() -> None:
    assert len(_pairs()) >= 9


@pytest.mark.parametrize("index", range(len(_pairs())))
def test_example_is_what_the_migration_does(index: int) -> None:
    before, after = _pairs()[index]
    got = codemods.migrate_source(before, target="strategies").code.splitlines()
    want = after.splitlines()
    assert len(got) == len(want), "\n".join(got)
    for have, line in zip(got, want, strict=True):
        assert have.startswith(line[:-3]) if line.endswith("...") else have == line, (have, line)
