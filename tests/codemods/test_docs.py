"""docs/codemods.md: its generated parts (rules, CLI reference) must match the code."""

from __future__ import annotations

import sys
from pathlib import Path

import codemods

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
from _gen_docs import gen_docs  # noqa: E402

DOC = Path(__file__).resolve().parents[2] / "docs" / "codemods.md"


def test_doc_is_up_to_date() -> None:
    current = DOC.read_text(encoding="utf-8")
    assert gen_docs.render_codemods(current) == current, "docs/codemods.md is stale: run `python tools/gen_docs.py`"


def test_every_rule_is_documented_with_an_example() -> None:
    text = DOC.read_text(encoding="utf-8")
    for rule in codemods.RULES:
        rule_id = str(getattr(rule, "value", rule))
        assert f"### {rule_id}: " in text
    assert text.count("```python") >= 2 * len(codemods.RULES)


def test_doc_covers_the_cli() -> None:
    text = DOC.read_text(encoding="utf-8")
    for needle in ("--check", "--diff", "--out", "--report", ".pre-commit-hooks.yaml", "exit code"):
        assert needle in text
