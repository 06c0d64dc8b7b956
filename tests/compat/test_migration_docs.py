"""docs/migration.md is generated from the rename table and must match it."""

from __future__ import annotations

import sys
from pathlib import Path

from compat.renames import RENAMES, Kind

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
from _gen_docs import gen_docs  # noqa: E402

DOCS = Path(__file__).resolve().parents[2] / "docs" / "migration.md"


def test_migration_md_is_up_to_date() -> None:
    current = DOCS.read_text(encoding="utf-8") if DOCS.exists() else ""
    assert current == gen_docs.render_migration(), (
        "docs/migration.md is out of date with compat/renames.py: run `python tools/gen_docs.py`"
    )


def test_page_explains_automatic_migration() -> None:
    page = gen_docs.render_migration()
    assert "python -m compat.migrate <path>" in page
    assert "--target lightning" in page
    assert "TODO(compat.migrate)" in page


def test_every_entry_has_a_row() -> None:
    page = gen_docs.render_migration()
    for entry in RENAMES:
        old = entry.old if entry.member is None else entry.old_name
        assert f"| `{old}`" in page, f"{entry.old_name} is missing from the page"


def test_one_section_per_kind_in_use() -> None:
    page = gen_docs.render_migration()
    titles = [line[3:] for line in page.splitlines() if line.startswith("## ")]
    kinds = [kind for kind in Kind if any(entry.kind is kind for entry in RENAMES)]
    assert titles == ["Migrate automatically", "Summary", *(gen_docs._TITLES[k] for k in kinds)]


def test_table_rows_have_six_cells() -> None:
    for line in gen_docs.render_migration().splitlines():
        if line.startswith("| `"):
            cells = line.replace("\\|", "").split("|")[1:-1]
            assert len(cells) == 6, line


def test_notes_show_hints_and_parameters() -> None:
    page = gen_docs.render_migration()
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    row = next(line for line in rows if line.startswith("| `DDPPlugin.init_ddp_connection`"))
    assert "`DDPStrategy.setup_distributed`" in row
    assert "`global_rank` → `self.global_rank`" in row
    row = next(line for line in rows if line.startswith("| `ClusterEnvironment.master_port`"))
    assert "`ClusterEnvironment.main_port` (property)" in row


def test_rendering_is_deterministic() -> None:
    assert gen_docs.render_migration() == gen_docs.render_migration()
