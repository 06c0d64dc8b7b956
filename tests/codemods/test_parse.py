"""``codemods._parse.parse_module``: libcst's parse without re-checking the parser's own nodes.

The tree must be libcst's tree (same nodes, same code) for every fixture the rules are tested
on; nodes built by hand, on this thread after the parse or on another thread during it, are
still checked.
"""

from __future__ import annotations

import threading
from pathlib import Path

import libcst as cst
import pytest

from codemods import _parse

FIXTURES = sorted((Path(__file__).parent / "fixtures").rglob("*.py"))


def test_the_check_is_skipped_on_this_libcst() -> None:
    # If this fails, libcst changed ``CSTNode.__post_init__``: the parse is libcst's own again
    # (correct, about a tenth slower); look at ``codemods._parse`` before pinning anything.
    assert _parse.skips_validation()


@pytest.mark.parametrize("path", FIXTURES[::3], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_tree_is_libcsts_tree(path: Path) -> None:
    source = path.read_text(encoding="utf-8")
    ours, theirs = _parse.parse_module(source), cst.parse_module(source)
    assert ours.code == source
    assert ours.deep_equals(theirs)


def test_parser_nodes_are_not_checked_but_hand_built_ones_are(monkeypatch) -> None:
    calls = []
    original = cst.Name._validate

    def counting(self):
        calls.append(self.value)
        return original(self)

    monkeypatch.setattr(cst.Name, "_validate", counting)
    tree = _parse.parse_module("alpha = beta(gamma)\n")
    assert calls == [] and tree.code == "alpha = beta(gamma)\n"
    cst.parse_module("alpha = beta\n")
    assert calls == ["alpha", "beta"]  # libcst's own parse still checks
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # after our parse, a bad hand-built node is refused as before
    with pytest.raises(cst.ParserSyntaxError):
        _parse.parse_module("def (:\n")
    with pytest.raises(cst.CSTValidationError):
        cst.Name("")  # and after a parse that failed


def test_another_thread_building_nodes_during_a_parse_is_checked() -> None:
    big = "".join(f"value_{i} = compute_{i}(argument_{i})\n" for i in range(3000))
    unchecked, during = [], []
    started, done = threading.Event(), threading.Event()

    def build() -> None:
        started.set()
        while not done.is_set():
            overlapping = _parse._skipping is not None  # the main thread is inside its parse
            try:
                cst.Name("")
                unchecked.append(overlapping)
            except cst.CSTValidationError:
                during.append(overlapping)

    thread = threading.Thread(target=build)
    thread.start()
    started.wait(10)
    try:
        for _ in range(5):
            _parse.parse_module(big)
    finally:
        done.set()
        thread.join(30)
    assert not unchecked, "an invalid node was built without its check"
    assert any(during), "no node was built while the parse ran: the test did not test"
