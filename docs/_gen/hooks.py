"""MkDocs hooks of the site (``hooks:`` in ``mkdocs.yml``).

``on_post_build`` puts the Mermaid fetched by ``docs/_gen/mermaid.py`` into the site as
``javascripts/mermaid.min.js`` (``extra_javascript`` loads it, so the Material theme finds a global
``mermaid`` and never reaches for a CDN). A build without it fails, saying what to run.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path
from typing import Any

from mkdocs.exceptions import PluginError

_spec = importlib.util.spec_from_file_location("_docs_mermaid", Path(__file__).with_name("mermaid.py"))
assert _spec is not None and _spec.loader is not None
_mermaid = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mermaid)

SITE_PATH = "javascripts/mermaid.min.js"


def on_post_build(config: Any, **kwargs: Any) -> None:
    source: Path = _mermaid.TARGET
    if not source.is_file():
        raise PluginError(
            f"{source} is missing: run `python docs/_gen/mermaid.py` once (it needs npm), so the site's "
            "diagrams render without a CDN"
        )
    target = Path(config["site_dir"]) / SITE_PATH
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
