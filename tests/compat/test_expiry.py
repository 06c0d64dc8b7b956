"""Every shim expires: a test fails once the package version reaches an entry's ``removed_in``."""

from __future__ import annotations

import importlib.metadata
import tomllib
from pathlib import Path

import pytest
from packaging.version import Version

from compat.renames import RENAMES, Rename

PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


def package_version() -> str:
    """The version of strategy-compat: pyproject.toml of this checkout, else the installed one."""
    if PYPROJECT.exists():
        with PYPROJECT.open("rb") as file:
            return tomllib.load(file)["project"]["version"]
    return importlib.metadata.version("strategy-compat")


def reached(current: str, removed_in: str) -> bool:
    """Whether ``current`` has reached ``removed_in``, counting pre-releases of it as reached.

    ``Version("1.0.0rc1") >= Version("1.0")`` is false, so compare the base version: a shim must
    be gone before the first dev/rc build of its removal release, not only the final one.
    """
    return Version(Version(current).base_version) >= Version(removed_in)


VERSION = package_version()


@pytest.mark.parametrize(
    ("current", "removed_in", "expected"),
    [
        ("0.1.0", "1.0", False),
        ("0.9.9", "1.0", False),
        ("1.0.0rc1", "1.0", True),
        ("1.0.0.dev0", "1.0", True),
        ("1.0.0a2", "1.0.0", True),
        ("1.0", "1.0", True),
        ("1.0.1", "1.0", True),
        ("1.1.0.post1", "1.0", True),
        ("0.10.0", "0.9", True),
        ("0.9.0rc1", "0.10", False),
    ],
)
def test_reached(current: str, removed_in: str, expected: bool) -> None:
    assert reached(current, removed_in) is expected


def test_package_version_comes_from_the_checkout() -> None:
    with PYPROJECT.open("rb") as file:
        assert VERSION == tomllib.load(file)["project"]["version"]
    Version(VERSION)


def _entry_id(entry: Rename) -> str:
    return f"{entry.kind.value}:{entry.old_name}"


@pytest.mark.parametrize("entry", RENAMES, ids=_entry_id)
def test_shim_has_not_expired(entry: Rename) -> None:
    assert not reached(VERSION, entry.removed_in), (
        f"strategy-compat {VERSION} has reached the removal of `{entry.old_name}`"
        f" (removed_in={entry.removed_in}): delete its shim and table entry, or move removed_in"
    )
