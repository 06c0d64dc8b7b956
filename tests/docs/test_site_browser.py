"""The built site, opened in headless Chromium with no network: diagrams drawn, no raw reST role.

The site is built with ``mkdocs build --strict`` and served from 127.0.0.1; Chromium resolves no
other host (``--host-resolver-rules``), as for a reader offline or behind a proxy, so a diagram
that needs a CDN stays raw ``sequenceDiagram`` text and fails the test. Screenshots of the
lifecycle diagrams and of the rename table go to ``$DOCS_SCREENSHOTS`` when it is set (to look
at), else to the test's temporary folder.
"""

from __future__ import annotations

import functools
import http.server
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from html import unescape
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_docstrings import SPHINX_ROLE  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.extras

CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
    # No network but the local server: a CDN script cannot load, as on a reader's offline machine.
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--virtual-time-budget=20000",  # let the scripts (Mermaid's rendering) finish before the dump
]


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium: apt-get install -y chromium (CI's extras step installs it)")


def _mermaid() -> None:
    spec = importlib.util.spec_from_file_location("_docs_mermaid", ROOT / "docs" / "_gen" / "mermaid.py")
    assert spec is not None and spec.loader is not None
    mermaid = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mermaid)
    if not mermaid.TARGET.is_file() and shutil.which("npm") is None:
        pytest.skip("Mermaid is not fetched and npm is missing: run `python docs/_gen/mermaid.py` where npm is")
    mermaid.fetch()


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("mkdocs", reason="the docs extra is not installed: pip install -e '.[docs]'")
    pytest.importorskip("material", reason="mkdocs-material is not installed (docs extra)")
    pytest.importorskip("mkdocstrings_handlers.python", reason="mkdocstrings[python] is not installed (docs extra)")
    _mermaid()
    out = tmp_path_factory.mktemp("site") / "site"
    env = {
        **os.environ,
        "NO_MKDOCS_2_WARNING": "1",
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=30)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002  (the base's name)
        pass


def _browser(*args: str) -> subprocess.CompletedProcess[str]:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={profile}", *args],
            capture_output=True,
            text=True,
            timeout=300,
        )


def _dom(url: str) -> str:
    result = _browser("--dump-dom", url)
    assert result.returncode == 0 and "<body" in result.stdout, result.stderr[-2000:]
    return result.stdout


def _text(html: str) -> str:
    """The text a reader sees: no script, style or tag."""
    visible = re.sub(r"<(script|style)\b.*?</\1\s*>", " ", html, flags=re.S | re.I)
    return unescape(re.sub(r"<[^>]+>", " ", visible))


def _screenshot(url: str, name: str, tmp_path: Path, height: int) -> Path:
    folder = Path(os.environ.get("DOCS_SCREENSHOTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    result = _browser(f"--screenshot={path}", f"--window-size=1280,{height}", url)
    assert result.returncode == 0 and path.is_file() and path.stat().st_size > 10_000, result.stderr[-2000:]
    return path


def test_diagrams_are_drawn_without_network(served: str, tmp_path: Path):
    dom = _dom(f"{served}/lifecycle-diagrams/")
    # Material replaces each `pre.mermaid` by a `div.mermaid` holding the drawing (in a closed
    # shadow root); a diagram it could not draw keeps its source text in the page.
    assert "sequenceDiagram" not in _text(dom), "a diagram was left as text: Mermaid did not load"
    assert len(re.findall(r'<div class="mermaid"', dom)) == 6, "expected the page's six diagrams, drawn"
    _screenshot(f"{served}/lifecycle-diagrams/", "lifecycle-diagrams.png", tmp_path, 2400)


def test_the_rename_table_keeps_dotted_names_whole(served: str, tmp_path: Path):
    dom = _dom(f"{served}/migration/")
    assert "stylesheets/extra.css" in dom
    assert "pytorch_lightning.accelerators.GPUAccelerator" in _text(dom)
    # Tall enough to reach the first tables (a URL fragment leaves headless Chromium's shot blank).
    _screenshot(f"{served}/migration/", "migration.png", tmp_path, 4000)


@pytest.mark.parametrize("page", ["reference/strategies/", "reference/compat/", "reference/migrate/", "compat/"])
def test_no_raw_role_in_the_rendered_reference(served: str, page: str):
    dom = _dom(f"{served}/{page}")
    assert 'class="doc doc-' in dom or "md-content" in dom, "the page did not render"
    text = _text(dom)
    roles = sorted(set(SPHINX_ROLE.findall(text)))
    assert not roles, f"raw Sphinx roles on {page}: {roles}"


def test_no_raw_role_anywhere_in_the_built_site(site: Path):
    found = {
        str(page.relative_to(site)): sorted(set(SPHINX_ROLE.findall(_text(page.read_text(encoding="utf-8")))))
        for page in site.rglob("*.html")
    }
    assert not {page: roles for page, roles in found.items() if roles}


def test_mermaid_is_served_from_the_site_itself(site: Path):
    page = (site / "lifecycle-diagrams" / "index.html").read_text(encoding="utf-8")
    assert re.search(r'<script src="\.\./javascripts/mermaid\.min\.js"', page)
    assert (site / "javascripts" / "mermaid.min.js").stat().st_size > 1_000_000
