"""The results cache: a second run over an unchanged tree parses nothing, and a change anywhere
a file's result depends on (its content, the rules, a user class in another file) is seen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import codemods
from compat import migrate

OLD = """\
from pytorch_lightning.plugins import DDPPlugin


class MyDDP(DDPPlugin):  # our cluster's quirks
    def init_ddp_connection(self, global_rank, world_size):
        super().init_ddp_connection(global_rank, world_size)
"""
SUB = """\
from base import MyDDP


class Sub(MyDDP):
    def init_ddp_connection(self, global_rank, world_size):
        super().init_ddp_connection(global_rank, world_size)
"""


def check(tree: Path, capsys, *args: str) -> tuple[int, str]:
    code = migrate.main(["--check", "--jobs", "1", *args, str(tree)])
    return code, capsys.readouterr().err


def lines(err: str) -> list[str]:
    """The run's report without its timing."""
    return [line for line in err.splitlines() if " scanned in " not in line]


def no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on any parse fails the test (the workers are forked: they inherit this)."""

    def refuse(*args, **kwargs):
        raise AssertionError("parsed although the cache knew the answer")

    monkeypatch.setattr(codemods, "migrate_source", refuse)
    monkeypatch.setattr(codemods, "class_bases", refuse)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    root.mkdir()
    (root / "base.py").write_text(OLD)
    (root / "sub.py").write_text(SUB)
    (root / "todo.py").write_text(
        "from pytorch_lightning import Trainer\n\ntrainer = Trainer(gpus=2, accelerator='ddp')\n"
    )
    return root


def test_a_second_check_on_an_unchanged_tree_parses_nothing(tree: Path, capsys, monkeypatch, own_results_cache) -> None:
    first = check(tree, capsys)
    assert first[0] == 1 and "would change: " in first[1]
    tag = own_results_cache / "CACHEDIR.TAG"
    assert tag.read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    assert (own_results_cache / ".gitignore").read_text().splitlines()[-1] == "*"
    no_parsing(monkeypatch)
    second = check(tree, capsys)
    assert second[0] == first[0] and lines(second[1]) == lines(first[1])


def test_a_changed_file_is_parsed_again(tree: Path, capsys, monkeypatch) -> None:
    check(tree, capsys)
    (tree / "todo.py").write_text("x = 1\n")
    code, err = check(tree, capsys)
    assert code == 1 and "todo.py" not in err  # the new content has nothing to change


def test_a_user_class_changed_in_another_file_is_seen(tree: Path, capsys) -> None:
    _, err = check(tree, capsys)
    assert "would change: " in err and "sub.py" in err
    (tree / "base.py").write_text("class MyDDP:  # no longer built on the old API\n    pass\n")
    _, err = check(tree, capsys)
    assert "sub.py" not in err, err  # sub.py's own text is the same; its result is not


def test_a_script_nobody_imported_is_followed_once_another_file_imports_it(
    tree: Path, capsys, monkeypatch, own_results_cache
) -> None:
    """A subclassing file no other file imports gets no ``class_bases`` (``unimported`` in the
    cache says so for this exact tree, so the re-run neither parses nor searches again); once
    another file imports it, its classes are followed."""
    (tree / "script.py").write_text(OLD.replace("MyDDP", "ScriptDDP"))
    check(tree, capsys)
    [entries] = own_results_cache.glob("results-*.json")
    data = json.loads(entries.read_text())
    tree_key, unimported = data["unimported"]
    assert [key.rsplit(":", 1)[1] for key in unimported] == ["script"]
    assert not any(key.endswith(":script") for key in data["bases"])

    def refuse(*args, **kwargs):
        raise AssertionError("searched again although the tree is unchanged")

    with monkeypatch.context() as patched:
        no_parsing(patched)
        from codemods.cli import _worker

        real = _worker.mentions
        searched: list[str] = []
        patched.setattr(_worker, "mentions", lambda items, names: searched.append(names.pattern) or real(items, names))
        assert check(tree, capsys)[0] == 1
    assert not any("script" in pattern for pattern in searched), searched

    (tree / "user.py").write_text(SUB.replace("from base import MyDDP", "from script import ScriptDDP as MyDDP"))
    _, err = check(tree, capsys)
    assert "user.py" in err  # a subclass of the script's class, found through its import
    data = json.loads(entries.read_text())
    assert data["unimported"][0] != tree_key and any(key.endswith(":script") for key in data["bases"])


def test_the_rules_selected_are_part_of_the_key(tree: Path, capsys) -> None:
    _, everything = check(tree, capsys)
    _, only_imports = check(tree, capsys, "--select", "CM001")
    assert lines(everything) != lines(only_imports)
    assert lines(check(tree, capsys)[1]) == lines(everything)


def test_a_corrupted_cache_is_ignored_and_replaced(tree: Path, capsys, own_results_cache) -> None:
    first = check(tree, capsys)
    [entries] = own_results_cache.glob("results-*.json")
    data = json.loads(entries.read_text())
    for key in data["results"]:
        data["results"][key] = ["changed", [["CM001", "not a line", 3, None]]]  # wrong types
    entries.write_text(json.dumps(data))
    assert lines(check(tree, capsys)[1]) == lines(first[1])
    entries.write_bytes(b"\x00garbage{")
    assert lines(check(tree, capsys)[1]) == lines(first[1])
    json.loads(entries.read_text())  # rewritten whole


def test_a_run_in_place_never_writes_on_the_caches_word(tree: Path, capsys, own_results_cache) -> None:
    check(tree, capsys)
    [entries] = own_results_cache.glob("results-*.json")
    data = json.loads(entries.read_text())
    for key in data["results"]:  # a planted cache saying every file changes
        data["results"][key] = ["changed", [["CM001", 1, "planted", False]]]
    entries.write_text(json.dumps(data))
    (tree / "plain.py").write_text("trainer = make_trainer()  # a Trainer, but nothing to migrate\n")
    before = (tree / "plain.py").read_text()
    assert migrate.main(["--jobs", "1", "-q", str(tree)]) == 0
    assert (tree / "plain.py").read_text() == before
    assert (tree / "base.py").read_text() == codemods.migrate_source(OLD, module="base").code
    assert "planted" not in capsys.readouterr().err


def test_no_cache_reads_and_writes_nothing(tree: Path, capsys, monkeypatch, own_results_cache) -> None:
    check(tree, capsys, "--no-cache")
    assert list(own_results_cache.iterdir()) == []
    monkeypatch.setenv("COMPAT_MIGRATE_NO_CACHE", "1")
    check(tree, capsys)
    assert list(own_results_cache.iterdir()) == []
    monkeypatch.delenv("COMPAT_MIGRATE_NO_CACHE")
    other = tree.parent / "elsewhere"
    check(tree, capsys, "--cache-dir", str(other))
    assert (other / "CACHEDIR.TAG").exists() and list(own_results_cache.iterdir()) == []


def test_a_cache_dir_that_is_a_symlink_is_refused(tree: Path, capsys) -> None:
    (tree.parent / "target").mkdir()
    os.symlink(tree.parent / "target", tree.parent / "link")
    with pytest.raises(SystemExit) as stop:
        check(tree, capsys, "--cache-dir", str(tree.parent / "link"))
    assert stop.value.code == 2
    assert "is a symlink" in capsys.readouterr().err


def test_a_cached_run_reports_what_the_first_did_columns_suppressions_and_held_edits(
    tree: Path, capsys, monkeypatch, own_results_cache
) -> None:
    # A suppressed TODO, a TODO at a column > 1, and an edit a `# compat: ignore` holds back: the
    # cache must give back every field the output formats print, not just the rule and the line.
    (tree / "todo.py").write_text(
        "from pytorch_lightning import Trainer\n\n"
        "trainer = Trainer(gpus=2, accelerator='ddp')  # compat: ignore[CM006]\n"
        "other = dict(a=1, b=Trainer(progress_bar_refresh_rate=2))\n"
    )
    (tree / "held.py").write_text("from pytorch_lightning.plugins import DDPPlugin  # compat: ignore\n\nDDPPlugin()\n")

    def run() -> tuple[int, object]:
        code = migrate.main(["--check", "--jobs", "1", "--output-format", "json", str(tree)])
        out = json.loads(capsys.readouterr().out)
        del out["summary"]["seconds"]
        return code, out

    first = run()
    assert first[1]["summary"]["suppressed"] and first[1]["summary"]["held"]  # the case is really there
    assert any(c["column"] > 1 for c in first[1]["changes"])
    no_parsing(monkeypatch)
    assert run() == first


# Runs the CLI as ``python -m compat.migrate`` does and prints, once it is done, which heavy
# modules the process imported and whether it forked (a worker pool's workers are forked).
_WATCHED_RUN = """\
import os, runpy, sys
forks = []
os.register_at_fork(before=lambda: forks.append(1))
sys.argv = ['compat.migrate', *sys.argv[1:]]
try:
    runpy.run_module('compat.migrate', run_name='__main__')
except SystemExit as e:
    code = e.code
heavy = sorted(m for m in ('libcst', 'codemods._api', 'codemods._rule') if m in sys.modules)
print('EXIT', code, 'HEAVY', heavy, 'FORKED', bool(forks))
"""


def test_a_fully_cached_check_imports_no_libcst_and_starts_no_worker(tree: Path, own_results_cache) -> None:
    """A second ``--check`` of an unchanged tree reads the files, pre-scans them and takes every
    parse result (``class_bases`` and the migration) from the cache: nothing is left that needs
    libcst, so neither the process nor a worker pool pays for importing it (issue 16, item 3)."""
    (tree / "plain.py").write_text("def f(x):\n    return x + 1\n")
    repo = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(repo)}
    runs = []
    for _ in range(2):
        proc = subprocess.run(
            [sys.executable, "-c", _WATCHED_RUN, "--check", "--jobs", "1", str(tree)],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        runs.append(proc)
    first, second = runs
    assert "EXIT 1 HEAVY ['codemods._api', 'codemods._rule', 'libcst'] FORKED True" in first.stdout, first.stderr
    assert "EXIT 1 HEAVY [] FORKED False" in second.stdout, second.stderr
    assert lines(second.stderr) == lines(first.stderr)  # the same answer, from the cache
    assert "would change: " in second.stderr and "sub.py" in second.stderr  # the cross-file class, cached too


_POOL_PROBE = """\
import os, sys
from codemods.cli._runner import _Pool

def probe(chunk):
    return [('codemods._api' in sys.modules, os.getpid()) for _ in chunk]

pool = _Pool(2)
seen = {'scan': [], 'parse': []}
try:
    pool.run(probe, [[1], [2]], (), lambda chunk, got: seen['scan'].extend(got), parallel=True)
    pool.run(probe, [[3], [4]], (), lambda chunk, got: seen['parse'].extend(got), isolate=True)
finally:
    pool.close()
print('SCAN', sorted({loaded for loaded, _ in seen['scan']}), 'PARSE', sorted({loaded for loaded, _ in seen['parse']}))
print('SAME WORKERS', bool({pid for _, pid in seen['scan']} & {pid for _, pid in seen['parse']}))
"""


def test_parse_work_runs_in_workers_forked_with_libcst_loaded() -> None:
    """Workers of a parallel scan are forked before libcst is imported (the scan needs none);
    parse work gets workers forked after the main process imported it, so they share it
    rather than each importing its own."""
    repo = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", _POOL_PROBE],
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "SCAN [False] PARSE [True]" in proc.stdout, proc.stdout
    assert "SAME WORKERS False" in proc.stdout
