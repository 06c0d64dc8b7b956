"""The documentation site builds with `mkdocs build --strict` (no broken link, anchor or reference)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.extras
def test_mkdocs_build_strict(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    pytest.importorskip("mkdocstrings_handlers.python", reason="mkdocstrings[python] is not installed (docs extra)")
    pytest.importorskip("material", reason="mkdocs-material is not installed (docs extra)")
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for page in ("upgrade", "lifecycle-diagrams", "reference/strategies", "reference/compat", "reference/migrate"):
        assert (site / page / "index.html").is_file(), page
    reference = (site / "reference" / "strategies" / "index.html").read_text(encoding="utf-8")
    assert 'id="strategies.DDPStrategy"' in reference and 'id="strategies.Trainer.fit"' in reference
    assert "_connector" not in reference, "the reference shows private modules"
    diagrams = (site / "lifecycle-diagrams" / "index.html").read_text(encoding="utf-8")
    assert diagrams.count('class="mermaid"') == 6


def test_docs_links_are_relative_and_resolve():
    """Links between pages work on GitHub and in the site: relative paths to files that exist."""
    import re

    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    bad = []
    for page in pages:
        text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if target.startswith(("http://", "https://", "#", "mailto:")):
                continue
            if target.startswith("/"):
                bad.append(f"{page.name}: absolute link {target}")
                continue
            path = target.split("#", 1)[0]
            if path and not (page.parent / path).exists():
                bad.append(f"{page.relative_to(ROOT)}: {target} does not exist")
    assert not bad, bad
