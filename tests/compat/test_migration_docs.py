"""docs/migration.md is generated from the rename table and must match it."""

from __future__ import annotations

from pathlib import Path

import pytest

from compat import _docs
from compat.renames import RENAMES, Kind

DOCS = Path(__file__).resolve().parents[2] / "docs" / "migration.md"


def test_docs_path_is_the_repository_page() -> None:
    assert _docs.DOCS_PATH == DOCS


def test_migration_md_is_up_to_date() -> None:
    current = DOCS.read_text(encoding="utf-8") if DOCS.exists() else ""
    assert current == _docs.render_migration_md(), (
        "docs/migration.md is out of date with compat/renames.py: run `python -m compat._docs`"
    )


def test_page_explains_automatic_migration() -> None:
    page = _docs.render_migration_md()
    assert "python -m compat.migrate <path>" in page
    assert "--target lightning" in page
    assert "TODO(compat.migrate)" in page


def test_every_entry_has_a_row() -> None:
    page = _docs.render_migration_md()
    for entry in RENAMES:
        old = entry.old if entry.member is None else entry.old_name
        assert f"| `{old}`" in page, f"{entry.old_name} is missing from the page"


def test_one_section_per_kind_in_use() -> None:
    page = _docs.render_migration_md()
    titles = [line[3:] for line in page.splitlines() if line.startswith("## ")]
    kinds = [kind for kind in Kind if any(entry.kind is kind for entry in RENAMES)]
    assert titles == ["Migrate automatically", "Summary", *(_docs._TITLES[k] for k in kinds)]


def test_table_rows_have_six_cells() -> None:
    for line in _docs.render_migration_md().splitlines():
        if line.startswith("| `"):
            cells = line.replace("\\|", "").split("|")[1:-1]
            assert len(cells) == 6, line


def test_notes_show_hints_and_parameters() -> None:
    page = _docs.render_migration_md()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    row = next(line for line in rows if line.startswith("| `DDPPlugin.init_ddp_connection`"))
    assert "`DDPStrategy.setup_distributed`" in row
    assert "`global_rank` → `self.global_rank`" in row
    row = next(line for line in rows if line.startswith("| `ClusterEnvironment.master_port`"))
    assert "`ClusterEnvironment.main_port` (property)" in row


def test_rendering_is_deterministic() -> None:
    assert _docs.render_migration_md() == _docs.render_migration_md()


def test_check_fails_on_a_stale_page(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    page = tmp_path / "migration.md"
    page.write_text("stale\n", encoding="utf-8")
    assert _docs.main(["--check", "--output", str(page)]) == 1
    assert "python -m compat._docs" in capsys.readouterr().err
    assert page.read_text(encoding="utf-8") == "stale\n", "--check must not write"


def test_check_fails_on_a_missing_page(tmp_path: Path) -> None:
    assert _docs.main(["--check", "--output", str(tmp_path / "missing.md")]) == 1


def test_write_then_check_passes(tmp_path: Path) -> None:
    page = tmp_path / "docs" / "migration.md"
    assert _docs.main(["--output", str(page)]) == 0
    assert page.read_text(encoding="utf-8") == _docs.render_migration_md()
    assert _docs.main(["--check", "--output", str(page)]) == 0
