"""tools/gen_docs.py: one table of generated pages, one check over all of them."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _gen_docs import ROOT, gen_docs  # noqa: E402

GENERATED = sorted(page.path for page in gen_docs.PAGES)


def _copy(tmp_path: Path) -> Path:
    for name in GENERATED:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, tmp_path / name)
    return tmp_path


def test_every_generated_page_is_up_to_date():
    assert gen_docs.stale_pages() == [], "run `python tools/gen_docs.py` and commit the pages"


def test_each_page_names_the_command_that_generates_it():
    for page in ("docs/migration.md", "docs/deprecations.md", "docs/codemods.md"):
        assert gen_docs.COMMAND in (ROOT / page).read_text(encoding="utf-8"), page
    assert not (ROOT / "compat" / "_docs.py").exists(), "the generators left the installed package"


def test_check_names_each_stale_page_and_writes_nothing(tmp_path, capsys):
    root = _copy(tmp_path)
    (root / "docs" / "migration.md").write_text("stale\n", encoding="utf-8")
    (root / "docs" / "lifecycle-diagrams.md").unlink()
    codemods = root / "docs" / "codemods.md"
    begin = gen_docs._BEGIN.format(name="cli")
    codemods.write_text(codemods.read_text(encoding="utf-8").replace(begin, begin + "\nstale line"), encoding="utf-8")
    assert gen_docs.main(["--check"], root=root) == 1
    err = capsys.readouterr().err
    for name in ("docs/migration.md", "docs/lifecycle-diagrams.md", "docs/codemods.md"):
        assert f"{name} is out of date: run `python tools/gen_docs.py`" in err
    assert "docs/deprecations.md" not in err
    assert (root / "docs" / "migration.md").read_text(encoding="utf-8") == "stale\n", "--check must not write"
    assert not (root / "docs" / "lifecycle-diagrams.md").exists()


def test_write_then_check_passes(tmp_path):
    root = _copy(tmp_path)
    (root / "docs" / "deprecations.md").write_text("stale\n", encoding="utf-8")
    assert gen_docs.main([], root=root) == 0
    for name in GENERATED:
        assert (root / name).read_bytes() == (ROOT / name).read_bytes(), name
    assert gen_docs.main(["--check"], root=root) == 0


def test_a_page_without_its_markers_is_an_error_naming_them(tmp_path):
    root = _copy(tmp_path)
    (root / "docs" / "codemods.md").write_text("# no markers\n", encoding="utf-8")
    with pytest.raises(ValueError, match="BEGIN GENERATED rules"):
        gen_docs.main(["--check"], root=root)


def test_the_script_runs_from_the_repository_root():
    result = subprocess.run(
        [sys.executable, "tools/gen_docs.py", "--check"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert f"{len(GENERATED)} generated pages are up to date" in result.stdout
