"""Docstrings of the documented packages are Markdown (mkdocstrings renders them), not reST.

A Sphinx role such as ``:attr:`x``` reaches the API reference as raw text; write ``x`` in
backticks, or a mkdocstrings cross-reference, instead.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("strategies", "compat", "codemods")
#: A Sphinx/reST role: ``:class:`x```, ``:py:meth:`y```, ``:func:`~a.b```.
SPHINX_ROLE = re.compile(r":(?:py:)?(?:attr|class|meth|func|mod|data|exc|obj|const|ref|term):`[^`]*`")


def _docstrings(path: Path):
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            text = ast.get_docstring(node, clean=False)
            if text:
                yield getattr(node, "lineno", 1), text


def test_no_sphinx_role_in_the_docstrings_of_the_documented_packages():
    found = [
        f"{path.relative_to(ROOT)}:{line}: {match.group(0)}"
        for package in PACKAGES
        for path in sorted((ROOT / package).rglob("*.py"))
        for line, text in _docstrings(path)
        for match in SPHINX_ROLE.finditer(text)
    ]
    assert not found, "Sphinx roles in docstrings (write `name` or [`name`][path.name]):\n" + "\n".join(found)


def test_the_pattern_finds_roles():
    assert SPHINX_ROLE.search("set :attr:`_monitors`: their") and SPHINX_ROLE.search(":py:meth:`~a.b`")
    assert not SPHINX_ROLE.search("``_monitors`` and `x` and [`Trainer`][strategies.Trainer]")
