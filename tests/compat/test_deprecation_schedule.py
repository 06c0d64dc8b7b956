"""docs/deprecations.md is generated from the table's removed_in, and every warning links to it."""

from __future__ import annotations

import re
import sys
import warnings
from pathlib import Path

import pytest

import compat
from compat import _warnings
from compat.renames import RENAMES

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "docs"))
from _gen_docs import gen_docs  # noqa: E402

SCHEDULE_PATH = gen_docs.ROOT / "docs" / "deprecations.md"


def test_schedule_is_up_to_date():
    current = SCHEDULE_PATH.read_text(encoding="utf-8")
    assert current == gen_docs.render_deprecations(), (
        "docs/deprecations.md is out of date with compat/renames.py: run `python tools/gen_docs.py`"
    )


def test_every_entry_is_listed_under_its_removal_release():
    page = gen_docs.render_deprecations()
    sections = dict(re.findall(r"^## strategy-compat (\S+)\n(.*?)(?=^## |\Z)", page, re.S | re.M))
    for entry in RENAMES:
        assert f"`{entry.old_name}`" in sections[entry.removed_in], entry.old_name
    total = sum(int(n) for n in re.findall(r"^\| \[[\d.]+\]\(#[^)]*\) \| (\d+) \|", page, re.M))
    assert total == len(RENAMES)


def test_warnings_link_the_schedule():
    assert (SCHEDULE_PATH.parent.parent / _warnings.SCHEDULE) == SCHEDULE_PATH
    with pytest.deprecated_call() as record:
        compat.plugins.DDPPlugin()
    messages = [str(w.message) for w in record if issubclass(w.category, compat.CompatDeprecationWarning)]
    assert messages and all(_warnings.SCHEDULE in m for m in messages), messages


def test_error_mode_carries_the_link_too(monkeypatch):
    monkeypatch.setenv(_warnings.ENV_VAR, "error")
    with warnings.catch_warnings(), pytest.raises(compat.CompatDeprecationWarning, match="deprecations.md"):
        compat.plugins.DDPPlugin()
