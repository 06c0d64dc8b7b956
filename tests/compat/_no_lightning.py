"""An interpreter that cannot import `pytorch_lightning` but has everything else of this one.

`python -S` (no site-packages) with a folder of links to this site-packages' entries, less
`pytorch_lightning`, on `PYTHONPATH`: where Lightning 2.x is installed (it installs a
`pytorch_lightning` package), this is the "no real pytorch_lightning" of `python -m compat.run`.
"""

from __future__ import annotations

import site
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def python_without_lightning(folder: Path) -> tuple[list[str], list[str]]:
    """``(interpreter command, PYTHONPATH entries)``; the links are made in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    for entry in Path(site.getsitepackages()[0]).iterdir():
        if entry.name == "pytorch_lightning" or entry.name.startswith("pytorch_lightning-"):
            continue
        link = folder / entry.name
        if not link.exists():
            link.symlink_to(entry)
    return [sys.executable, "-S"], [str(REPO), str(folder)]
