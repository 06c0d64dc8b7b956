"""docs/codemods.md: its generated parts (rules, CLI reference) must match the code."""

from __future__ import annotations

from pathlib import Path

import codemods
from compat import _codemods_docs

DOC = Path(__file__).resolve().parents[2] / "docs" / "codemods.md"


def test_doc_is_up_to_date() -> None:
    current = DOC.read_text(encoding="utf-8")
    assert _codemods_docs.render(current) == current, (
        "docs/codemods.md is out of date: run `python -m compat._codemods_docs`"
    )


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


def test_check_mode_of_the_generator(tmp_path: Path) -> None:
    stale = tmp_path / "codemods.md"
    begin = _codemods_docs._BEGIN.format(name="cli")
    stale.write_text(DOC.read_text(encoding="utf-8").replace(begin, begin + "\nstale line"))
    assert _codemods_docs.main(["--check", "--doc", str(stale)]) == 1
    assert _codemods_docs.main(["--doc", str(stale)]) == 0
    assert _codemods_docs.main(["--check", "--doc", str(stale)]) == 0
