"""Safety of ``python -m compat.migrate``: what is checked before a write, and how it writes.

These tests replace the codemods by a small fake engine whose misbehaviour they control (a rule
that drops a comment, one that is not idempotent, one that emits invalid code, one that
crashes), so the checks are exercised whatever the real rules do.
"""

from __future__ import annotations

import dataclasses
import enum
import os
import re
import stat

import libcst
import pytest

import codemods
from codemods.cli import _safety, _worker
from compat import migrate


class FakeRule(enum.StrEnum):  # as codemods.Rule
    CM001 = "CM001"
    CM002 = "CM002"


class RenamePluginCommand:
    """Rename `DDPPlugin` to `DDPStrategy`.

    Before::

        class P(DDPPlugin): ...

    After::

        class P(DDPStrategy): ...
    """


class FlagStartTrainingCommand:
    """Flag `start_training` overrides with a TODO."""


@dataclasses.dataclass(frozen=True)
class FakeChange:
    rule: str
    line: int
    message: str
    todo: bool = False


@dataclasses.dataclass(frozen=True)
class FakeResult:
    code: str
    changes: tuple[FakeChange, ...]

    @property
    def changed(self) -> bool:
        return bool(self.changes)


class FakeEngine:
    """Text-level stand-in for ``codemods``; ``behaviour`` selects a misbehaviour."""

    def __init__(self) -> None:
        self.behaviour = "ok"
        self.calls: list[str] = []

    def prescan(self, source: str) -> bool:
        return "DDPPlugin" in source or "start_training" in source

    def class_bases(self, source: str, module: str) -> dict[str, tuple[str, ...]]:
        libcst.parse_module(source)
        found = re.findall(r"^class (\w+)\((\w+)\)", source, re.M)
        return {f"{module}.{name}": (base,) for name, base in found}

    def resolve_user_classes(self, bases: dict[str, tuple[str, ...]]) -> dict[str, str]:
        return {name: "DDPPlugin" for name, b in bases.items() if "DDPPlugin" in b}

    def migrate_source(
        self,
        source: str,
        *,
        module: str = "",
        target: str = "strategies",
        select=None,
        ignore=(),
        user_classes=None,
        lightning_namespace=None,
    ) -> FakeResult:
        self.calls.append(module)
        libcst.parse_module(source)
        changes = []
        code = source
        if (select is None or "CM001" in select) and "DDPPlugin" in code:
            line = code[: code.index("DDPPlugin")].count("\n") + 1
            code = code.replace("DDPPlugin", "DDPStrategy")
            changes.append(FakeChange("CM001", line, "DDPPlugin -> DDPStrategy"))
            if self.behaviour == "drop_comment":
                code = re.sub(r"#.*", "", code, count=1)
            elif self.behaviour == "bad_syntax":
                code += "\ndef (:\n"
            elif self.behaviour == "crash":
                raise RuntimeError("boom")
            elif self.behaviour == "die" and "die" in module:
                os._exit(3)
            elif self.behaviour == "non_latin1":
                code = code.replace("DDPStrategy", "DDPStrat\u0113gy")
        if self.behaviour == "unstable" and "DDPStrategy" in code:
            code = code.replace("DDPStrategy", "DDPStrategy ", 1)
            changes.append(FakeChange("CM001", 1, "again"))
        marker = "# TODO(compat.migrate): CM002 start_training is gone"
        if "def start_training" in code and marker not in code:
            code = re.sub(r"^(\s*)(def start_training)", rf"\1{marker}\n\1\2", code, count=1, flags=re.M)
            changes.append(FakeChange("CM002", 1, "start_training is gone", todo=True))
        return FakeResult(code, tuple(changes))


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> FakeEngine:
    fake = FakeEngine()
    for name in ("prescan", "class_bases", "resolve_user_classes", "migrate_source"):
        monkeypatch.setattr(codemods, name, getattr(fake, name), raising=False)
    monkeypatch.setattr(codemods, "Rule", FakeRule, raising=False)
    monkeypatch.setattr(
        codemods, "RULES", {"CM001": RenamePluginCommand, "CM002": FlagStartTrainingCommand}, raising=False
    )
    return fake


def run(*args: str) -> int:
    return migrate.main([*args, "--jobs", "1", "-q"])


def test_migrates_in_place_and_keeps_mode(engine: FakeEngine, tmp_path) -> None:
    f = tmp_path / "plug.py"
    f.write_text("class P(DDPPlugin):  # keep me\n    pass\n")
    os.chmod(f, 0o751)
    assert run(str(tmp_path)) == 0
    assert f.read_text() == "class P(DDPStrategy):  # keep me\n    pass\n"
    assert stat.S_IMODE(f.stat().st_mode) == 0o751
    assert [p.name for p in tmp_path.iterdir()] == ["plug.py"]  # no temp file left


@pytest.mark.parametrize(
    ("behaviour", "reason"),
    [
        ("drop_comment", "a comment would disappear"),
        ("unstable", "running the rules again changes the result"),
        ("bad_syntax", "does not parse"),
        ("crash", "internal error in the codemods: RuntimeError: boom"),
    ],
)
def test_a_file_failing_a_check_is_left_exactly_as_it_was(
    engine: FakeEngine, tmp_path, capsys, behaviour: str, reason: str
) -> None:
    engine.behaviour = behaviour
    bad = tmp_path / "bad.py"
    original = b"# header\nclass P(DDPPlugin):  # why\n    pass\n"
    bad.write_bytes(original)
    good = tmp_path / "good.py"
    good.write_text("def start_training(self):\n    pass\n")
    assert run(str(tmp_path)) == 2
    assert bad.read_bytes() == original
    assert "TODO(compat.migrate)" in good.read_text()
    assert reason in capsys.readouterr().err


def test_a_dying_worker_fails_its_files_only(engine: FakeEngine, tmp_path, capsys) -> None:
    engine.behaviour = "die"
    (tmp_path / "die.py").write_text("class P(DDPPlugin): pass\n")
    (tmp_path / "live.py").write_text("def start_training(self):\n    pass\n")
    assert migrate.main([str(tmp_path), "--jobs", "2", "-q"]) == 2
    assert "DDPPlugin" in (tmp_path / "die.py").read_text()
    assert "worker process died" in capsys.readouterr().err


def test_diff_runs_the_checks_and_check_does_not(engine: FakeEngine, tmp_path) -> None:
    engine.behaviour = "drop_comment"
    (tmp_path / "bad.py").write_text("class P(DDPPlugin):  # why\n    pass\n")
    assert run("--diff", str(tmp_path)) == 2
    assert run("--check", str(tmp_path)) == 1


def test_crlf_bom_and_latin1_cookie_are_kept(engine: FakeEngine, tmp_path) -> None:
    crlf = tmp_path / "crlf.py"
    crlf.write_bytes(b"\xef\xbb\xbf# x\r\nclass P(DDPPlugin):\r\n    def start_training(self):\r\n        pass\r\n")
    latin = tmp_path / "latin.py"
    latin.write_bytes("# -*- coding: latin-1 -*-\n# caf\xe9\nclass P(DDPPlugin):\n    pass\n".encode("latin-1"))
    assert run(str(tmp_path)) == 0
    data = crlf.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf") and b"DDPStrategy" in data
    assert data.count(b"\r\n") == data.count(b"\n") == 5  # the added TODO line too
    expected = "# -*- coding: latin-1 -*-\n# caf\xe9\nclass P(DDPStrategy):\n    pass\n"
    assert latin.read_bytes() == expected.encode("latin-1")


def test_text_the_encoding_cannot_hold_is_refused(engine: FakeEngine, tmp_path, capsys) -> None:
    engine.behaviour = "non_latin1"
    latin = tmp_path / "latin.py"
    original = "# coding: latin-1\nclass P(DDPPlugin): pass  # \xe9\n".encode("latin-1")
    latin.write_bytes(original)
    assert run(str(tmp_path)) == 2
    assert latin.read_bytes() == original
    assert "iso-8859-1 cannot hold" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"class P(DDPPlugin): pass\n\0\0", "not a text file"),
        (b"# caf\xe9\nclass P(DDPPlugin): pass\n", "cannot decode it as utf-8"),
        (b"# coding: nope-42\nclass P(DDPPlugin): pass\n", "bad encoding declaration"),
        (b"class P(DDPPlugin:\n", "does not parse: line 1"),
    ],
)
def test_unreadable_files_are_reported_and_untouched(
    engine: FakeEngine, tmp_path, capsys, content: bytes, reason: str
) -> None:
    f = tmp_path / "f.py"
    f.write_bytes(content)
    assert run(str(tmp_path)) == 2
    assert f.read_bytes() == content
    assert reason in capsys.readouterr().err


def test_read_only_file_is_not_written(engine: FakeEngine, tmp_path, capsys) -> None:
    f = tmp_path / "ro.py"
    f.write_text("class P(DDPPlugin): pass\n")
    f.chmod(0o444)
    assert run(str(tmp_path)) == 2
    assert "DDPPlugin" in f.read_text()
    assert "read-only" in capsys.readouterr().err


def test_a_file_changed_since_it_was_read_is_not_overwritten(tmp_path) -> None:
    f = tmp_path / "f.py"
    f.write_text("old\n")
    snap = _safety.read_snapshot(str(f))
    f.write_text("someone else's edit\n")
    with pytest.raises(_safety.Unprocessable, match="changed on disk"):
        _safety.write_atomic(str(f), b"ours\n", snap)
    assert f.read_text() == "someone else's edit\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.py"]


def test_write_changed_between_rules_and_replace(engine: FakeEngine, tmp_path, monkeypatch) -> None:
    f = tmp_path / "f.py"
    f.write_text("class P(DDPPlugin): pass\n")
    real = _worker.check_output

    def edit_meanwhile(*args, **kwargs):
        f.write_text("class P(DDPPlugin): pass  # edited meanwhile\n")
        return real(*args, **kwargs)

    monkeypatch.setattr(_worker, "check_output", edit_meanwhile)
    assert run(str(tmp_path)) == 2
    assert f.read_text() == "class P(DDPPlugin): pass  # edited meanwhile\n"


def test_comment_check_allows_added_todos_only() -> None:
    before = _safety.decode(b"x = 1  # a\n")
    ok = "# TODO(compat.migrate): CM002 look\nx = 1  # a\n"
    assert _safety.check_output(before, ok, ok.encode(), rerun_changes=False) is None
    changed = "x = 1  # b\n"
    assert "a comment would disappear" in _safety.check_output(before, changed, changed.encode(), False)
    added = "x = 1  # a\n# mine\n"
    assert "a comment would be changed" in _safety.check_output(before, added, added.encode(), False)


def test_encode_keeps_crlf_for_new_lines() -> None:
    decoded = _safety.decode(b"a = 1\r\nb = 2\r\n")
    assert decoded.newline == "\r\n"
    assert _safety.encode("# new\na = 1\r\nb = 2\r\n", decoded) == b"# new\r\na = 1\r\nb = 2\r\n"
