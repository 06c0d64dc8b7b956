"""Fetch Mermaid for the documentation site, so its diagrams render with no network.

The Material theme draws ``mermaid`` blocks with the global ``mermaid`` when a page has one, and
otherwise loads it from unpkg, which a reader offline (or behind a proxy) cannot reach: the
diagrams then stay raw ``sequenceDiagram`` text. The site ships its own copy instead:
``docs/_gen/hooks.py`` copies the file fetched here into the built site, and ``mkdocs.yml`` loads
it (``extra_javascript``).

Run from the repository root (needs npm and the npm registry; CI's extras step runs it)::

    python docs/_gen/mermaid.py

It takes ``dist/mermaid.min.js`` of the pinned npm package (``npm pack`` checks the registry's
integrity hash), checks its SHA-256 against the pin below, and keeps it in ``.cache/docs/``
(not committed: 3.5 MB). Nothing happens when the right file is already there.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VERSION = "11.17.2"  # Material 9.x loads mermaid@11
SHA256 = "581ed7d74bd9048d0e3a91363927d72ef22942d7722546b27f7cc29e35390eb8"  # of dist/mermaid.min.js
TARGET = ROOT / ".cache" / "docs" / f"mermaid-{VERSION}.min.js"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def fetch(target: Path = TARGET) -> Path:
    """Put the pinned ``mermaid.min.js`` at ``target`` (unless it is there) and return it.

    Raises:
        RuntimeError: npm is missing or fails, or the file does not match the pinned hash.
    """
    if target.is_file() and _sha256(target) == SHA256:
        return target
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is not installed: install Node.js/npm (Debian: apt-get install npm), then run again")
    with tempfile.TemporaryDirectory() as tmp:
        done = subprocess.run(
            [npm, "pack", f"mermaid@{VERSION}", "--pack-destination", tmp, "--silent"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        if done.returncode != 0:
            raise RuntimeError(f"`npm pack mermaid@{VERSION}` failed:\n{done.stderr.strip()}")
        with tarfile.open(Path(tmp) / f"mermaid-{VERSION}.tgz") as archive:
            member = archive.extractfile("package/dist/mermaid.min.js")
            if member is None:
                raise RuntimeError(f"mermaid@{VERSION} has no dist/mermaid.min.js")
            data = member.read()
    if hashlib.sha256(data).hexdigest() != SHA256:
        raise RuntimeError(f"mermaid@{VERSION}'s dist/mermaid.min.js does not match the pinned SHA-256 {SHA256}")
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(".part")
    partial.write_bytes(data)
    partial.replace(target)
    return target


def main() -> int:
    try:
        path = fetch()
    except RuntimeError as err:
        print(f"docs/_gen/mermaid.py: {err}", file=sys.stderr)
        return 1
    print(f"mermaid {VERSION}: {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
