"""Whole-tree runs of ``python -m compat.migrate`` with the real rules.

One legacy project (a DDPPlugin subclass overriding ``init_ddp_connection``, a subclass of it
in another file, a syntax error, a latin-1 file with a coding cookie, a BOM + CRLF file, a
read-only file, an outward symlink, a gitignored folder and a virtualenv) goes through
``--check``, ``--diff``, ``--out`` and an in-place run with ``--report``.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest

import codemods
from compat import migrate

PLUGINS = """\
from pytorch_lightning.plugins import DDPPlugin


class MyDDP(DDPPlugin):  # our cluster's quirks
    def init_ddp_connection(self, global_rank, world_size):
        # keep this comment
        super().init_ddp_connection(global_rank, world_size)
"""

SUB = """\
from pkg.plugins import MyDDP


class Deeper(MyDDP):
    def init_ddp_connection(self, global_rank, world_size):
        print("rank", global_rank)
"""

PLAIN = """\
def add(a, b):
    # nothing to migrate here
    return a + b
"""

LAUNCH = """\
from pytorch_lightning.plugins import DDPPlugin


class Launch(DDPPlugin):
    def start_training(self, trainer):
        return super().start_training(trainer)
"""

OLD_USE = "from pytorch_lightning.plugins import DDPPlugin\n\nplugin = DDPPlugin()\n"


def make_tree(base: Path) -> Path:
    tree = base / "tree"
    pkg = tree / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "plugins.py").write_text(PLUGINS)
    (pkg / "sub.py").write_text(SUB)
    (pkg / "plain.py").write_text(PLAIN)
    (pkg / "launch.py").write_text(LAUNCH)
    (pkg / "broken.py").write_text("from pytorch_lightning.plugins import DDPPlugin\nclass X(DDPPlugin:\n")
    (pkg / "latin.py").write_bytes(("# -*- coding: latin-1 -*-\n# r\xe9seau\n" + OLD_USE).encode("latin-1"))
    (pkg / "crlf.py").write_bytes(b"\xef\xbb\xbf" + OLD_USE.replace("\n", "\r\n").encode())
    readonly = pkg / "readonly.py"
    readonly.write_text(OLD_USE)
    readonly.chmod(0o444)
    outside = base / "outside.py"
    outside.write_text(OLD_USE)
    (tree / "link.py").symlink_to(outside)
    (tree / ".gitignore").write_text("build/\n")
    (tree / "build").mkdir()
    (tree / "build" / "gen.py").write_text(OLD_USE)
    venv = tree / "env"
    (venv / "lib").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr\n")
    (venv / "lib" / "vendored.py").write_text(OLD_USE)
    return tree


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file() and not p.is_symlink()
    }


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return make_tree(tmp_path)


def cli(*args: str) -> int:
    return migrate.main([*args, "-q"])


def test_check_and_diff_write_nothing_and_exit_1(tree: Path, tmp_path: Path, capsys) -> None:
    before = snapshot(tmp_path)
    assert cli("--check", "--exclude", "broken.py", "tree", "--jobs", "2") == 1
    assert "would change: 6" in capsys.readouterr().err
    assert cli("--diff", "--exclude", "broken.py", "tree", "--jobs", "1") == 1
    out = capsys.readouterr().out
    assert "--- tree/pkg/plugins.py\n+++ tree/pkg/plugins.py\n" in out
    assert "-class MyDDP(DDPPlugin):  # our cluster's quirks" in out
    assert "+    def setup_distributed(self):" in out
    assert "tree/pkg/plain.py" not in out
    assert "vendored" not in out and "gen.py" not in out and "link.py" not in out
    assert cli("--check", "tree") == 2  # the syntax error
    assert snapshot(tmp_path) == before


def test_in_place_run_with_report(tree: Path, tmp_path: Path, capsys) -> None:
    outside = (tmp_path / "outside.py").read_bytes()
    assert cli("tree", "--report", "report.json", "--jobs", "2") == 2
    err = capsys.readouterr().err
    assert "failed: tree/pkg/broken.py: does not parse" in err
    assert "failed: tree/pkg/readonly.py: read-only" in err
    assert re.search(r"TODOs \(need a person\):\n  tree/pkg/launch\.py:5:\d+: CM007 ", err)

    plugins = (tree / "pkg" / "plugins.py").read_text()
    assert "DDPPlugin" not in plugins and "DDPStrategy" in plugins
    assert "def setup_distributed(self):" in plugins
    assert "super().setup_distributed()" in plugins
    assert "# our cluster's quirks" in plugins and "# keep this comment" in plugins
    sub = (tree / "pkg" / "sub.py").read_text()  # cross-file: no old name in this file
    assert "def setup_distributed(self):" in sub and "self.global_rank" in sub
    assert (tree / "pkg" / "plain.py").read_text() == PLAIN

    latin = (tree / "pkg" / "latin.py").read_bytes()
    assert latin.startswith("# -*- coding: latin-1 -*-\n# r\xe9seau\n".encode("latin-1"))
    assert b"DDPStrategy" in latin
    crlf = (tree / "pkg" / "crlf.py").read_bytes()
    assert crlf.startswith(b"\xef\xbb\xbf") and b"DDPStrategy" in crlf
    assert crlf.count(b"\n") == crlf.count(b"\r\n")
    readonly = tree / "pkg" / "readonly.py"
    assert readonly.read_text() == OLD_USE and stat.S_IMODE(readonly.stat().st_mode) == 0o444
    assert (tree / "build" / "gen.py").read_text() == OLD_USE
    assert (tree / "env" / "lib" / "vendored.py").read_text() == OLD_USE
    assert (tmp_path / "outside.py").read_bytes() == outside
    assert os.path.islink(tree / "link.py")

    report = json.loads((tmp_path / "report.json").read_text())
    assert report["summary"] == {
        "scanned": 9,
        "changed": 5,
        "unchanged": 2,
        "skipped": 3,
        "failed": 2,
        "todos": 3,
        "pending_todos": 0,
        "suppressed": 0,
        "held": 0,
        "interrupted": False,
        "seconds": report["summary"]["seconds"],
    }
    assert {f["file"] for f in report["failed"]} == {"tree/pkg/broken.py", "tree/pkg/readonly.py"}
    assert {s["path"] for s in report["skipped"]} == {"tree/build/", "tree/env/", "tree/link.py"}
    files = {c["file"] for c in report["changes"]}
    assert {"tree/pkg/plugins.py", "tree/pkg/sub.py", "tree/pkg/latin.py", "tree/pkg/crlf.py"} <= files
    todo, call, deeper = sorted(report["todos"], key=lambda t: t["location"])
    assert (todo["location"], todo["rule"], todo["todo"]) == ("tree/pkg/launch.py:5", "CM007", True)
    # and the call to the base's start_training inside it, which the new base does not have
    assert (call["location"], call["rule"]) == ("tree/pkg/launch.py:6", "CM007")
    # Deeper.init_ddp_connection skips super(): setup_distributed would not set the ranks
    assert (deeper["location"], deeper["rule"]) == ("tree/pkg/sub.py:5", "CM004")
    launch = (tree / "pkg" / "launch.py").read_text()
    assert launch.count("# TODO(compat.migrate): CM007 ") == 2
    for change in report["changes"] + report["todos"]:
        assert change["rule"].startswith("CM") and change["location"] == f"{change['file']}:{change['line']}"

    # A second run finds nothing more to do (the tree-level fixed point), but --check stays red
    # while the TODOs left in launch.py and sub.py wait for a person; resolving them turns it green.
    gate = ("--check", "tree", "--exclude", "broken.py", "--exclude", "readonly.py")
    capsys.readouterr()
    assert cli(*gate) == 1
    err = capsys.readouterr().err
    assert "would change: 0" in err and "open TODOs:   3" in err
    # each open TODO is located at its site, the code line below its comment
    assert "  tree/pkg/launch.py:6:5: CM007 no dispatch step" in err
    assert "  tree/pkg/launch.py:8:9: CM007 `super().start_training(...)`" in err
    assert "  tree/pkg/sub.py:6:5: CM004 `setup_distributed`" in err
    assert "3 TODO(compat.migrate) comments in 2 files still need a person" in err
    for name in ("launch.py", "sub.py"):
        lines = (tree / "pkg" / name).read_text().splitlines(keepends=True)
        (tree / "pkg" / name).write_text("".join(line for line in lines if "TODO(compat.migrate)" not in line))
    assert cli(*gate) == 0


def test_out_writes_a_migrated_copy(tree: Path, tmp_path: Path, capsys) -> None:
    before = snapshot(tree)
    assert cli("tree", "--out", "migrated", "--jobs", "1") == 2  # broken.py is copied as it was
    assert snapshot(tree) == before
    out = tmp_path / "migrated"
    assert "DDPStrategy" in (out / "pkg" / "plugins.py").read_text()
    assert "def setup_distributed(self):" in (out / "pkg" / "sub.py").read_text()
    assert (out / "pkg" / "broken.py").read_bytes() == before["pkg/broken.py"]
    assert "DDPStrategy" in (out / "pkg" / "readonly.py").read_text()
    assert stat.S_IMODE((out / "pkg" / "readonly.py").stat().st_mode) == 0o444
    assert (out / ".gitignore").exists() and not (out / "build").exists() and not (out / "env").exists()
    assert not (out / "link.py").exists()


@pytest.mark.parametrize("where", ["migrated", "tree/inside"])
def test_out_refuses_an_existing_or_nested_folder(tree: Path, tmp_path: Path, capsys, where: str) -> None:
    (tmp_path / "migrated").mkdir()
    with pytest.raises(SystemExit) as exit_info:
        cli("tree", "--out", where)
    assert exit_info.value.code == 2
    assert "--out" in capsys.readouterr().err
    assert not (tmp_path / "tree" / "inside").exists()


def test_subclass_chains_across_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``c.C`` -> ``b.B`` -> ``a.A`` -> DDPPlugin, with only ``a.py`` naming an old class."""
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "src" / "proj"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "a.py").write_text("from pytorch_lightning.plugins import DDPPlugin\n\n\nclass A(DDPPlugin):\n    pass\n")
    (src / "b.py").write_text("from .a import A\n\n\nclass B(A):\n    pass\n")
    hook = "    def init_ddp_connection(self, global_rank, world_size):\n        return world_size\n"
    (src / "c.py").write_text("from proj import b\n\n\nclass C(b.B):\n" + hook)
    (src / "d.py").write_text("class C:\n" + hook)  # same name, unrelated class: left alone
    assert cli("src", "--jobs", "1") == 0
    assert "def setup_distributed(self):\n        return self.world_size\n" in (src / "c.py").read_text()
    assert (src / "d.py").read_text() == "class C:\n" + hook


def test_class_bases_runs_only_on_files_another_file_may_import(tmp_path: Path, monkeypatch) -> None:
    """The cross-file pass parses a subclassing file only when another file spells its module
    (or, for a package's ``__init__``, imports from ``..``); the classes are still followed
    through every import form: ``from .a import``, ``from proj import b``, ``from .. import``."""
    monkeypatch.chdir(tmp_path)
    src = tmp_path / "src" / "proj"
    (src / "sub").mkdir(parents=True)
    hook = "    def init_ddp_connection(self, global_rank, world_size):\n        return world_size\n"
    old = "from pytorch_lightning.plugins import DDPPlugin\n\n\n"
    (src / "__init__.py").write_text(old + "class Base(DDPPlugin):\n    pass\n")
    (src / "a.py").write_text(old + "class A(DDPPlugin):\n    pass\n")
    (src / "b.py").write_text("from .a import A\n\n\nclass B(A):\n    pass\n")
    (src / "c.py").write_text("from proj import b\n\n\nclass C(b.B):\n" + hook)
    (src / "sub" / "__init__.py").write_text("")
    (src / "sub" / "d.py").write_text("from .. import Base\n\n\nclass D(Base):\n" + hook)
    # scripts nobody imports, one of them naming a module only in its own text
    (src / "train.py").write_text(old + "class Launch(DDPPlugin):\n" + hook + "\nprint(__name__ == 'train')\n")
    (src / "solo.py").write_text(old + "class Solo(DDPPlugin):\n" + hook)
    calls = tmp_path / "calls.txt"
    real = codemods.class_bases

    def recording(source: str, module: str) -> dict[str, tuple[str, ...]]:
        with open(calls, "a") as fh:  # the workers are forked: a file, not a list
            fh.write(module + "\n")
        return real(source, module)

    monkeypatch.setattr(codemods, "class_bases", recording)
    assert cli("src", "--jobs", "1", "--no-cache") == 0
    for name in ("c.py", "sub/d.py", "train.py", "solo.py"):
        assert "def setup_distributed(self):\n        return self.world_size\n" in (src / name).read_text(), name
    parsed = set(calls.read_text().split())
    assert {"proj.a", "proj.b", "proj.__init__"} <= parsed, parsed
    assert not parsed & {"proj.train", "proj.solo"}, parsed


def test_files_the_prescan_passes_are_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The search for user classes in files without old names reuses the text the pre-scan
    read (it covers most of a tree), and still finds a subclass there."""
    from codemods.cli import _worker

    monkeypatch.chdir(tmp_path)
    src = tmp_path / "src" / "proj"
    src.mkdir(parents=True)
    (src / "__init__.py").write_text("")
    (src / "a.py").write_text("from pytorch_lightning.plugins import DDPPlugin\n\n\nclass A(DDPPlugin):\n    pass\n")
    hook = "    def init_ddp_connection(self, global_rank, world_size):\n        return world_size\n"
    (src / "b.py").write_text("from .a import A\n\n\nclass B(A):\n" + hook)
    reads: list[str] = []
    real = _worker.read_snapshot

    def counting(path: str) -> object:
        reads.append(os.path.basename(path))
        return real(path)

    monkeypatch.setattr(_worker, "read_snapshot", counting)
    assert cli("src", "--jobs", "1", "--no-cache") == 0
    assert "def setup_distributed(self):\n        return self.world_size\n" in (src / "b.py").read_text()
    assert reads.count("b.py") == 1, reads  # this process; class_bases and the migration run in a worker
    assert not _worker._kept  # nothing held after the scan
