"""``tools/gen_docs.py`` (a repository script, not in the package), imported for the tests."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "tools" / "gen_docs.py")
assert _spec is not None and _spec.loader is not None
gen_docs = sys.modules.setdefault("gen_docs", importlib.util.module_from_spec(_spec))
if not hasattr(gen_docs, "PAGES"):  # once per session: the dataclasses look their module up
    _spec.loader.exec_module(gen_docs)
