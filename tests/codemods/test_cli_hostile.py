"""``python -m compat.migrate`` on hostile or odd input: real processes, real files, real signals.

A file that crashes or hangs libcst's native parser fails alone, named, with the rest migrated
and the summary printed; a worker killed from outside (as the OOM killer does) fails only the
file it held; ``--report``/``--out`` never write through a symlink; diff headers quote odd file
names as git does, so ``patch -p0`` and ``git apply`` take them; every bad option value is a
usage error (exit 2); ``--jobs`` is capped at the CPUs available.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import codemods
from codemods.cli import _runner
from compat import migrate

REPO = Path(__file__).resolve().parents[2]
OLD = """\
from pytorch_lightning.plugins import DDPPlugin


class MyDDP(DDPPlugin):  # our cluster's quirks
    def init_ddp_connection(self, global_rank, world_size):
        super().init_ddp_connection(global_rank, world_size)
"""
MIGRATED = codemods.migrate_source(OLD, module="m").code
# Each of these kills libcst's native parser (a stack overflow: SIGSEGV) in a few milliseconds.
NESTED = "from pytorch_lightning import Trainer\n\nx = " + "(" * 2000 + "1" + ")" * 2000 + "\n"
UNARY = "from pytorch_lightning import Trainer\n\nx = " + "-" * 50_000 + "1\n"
# libcst's parser needs minutes for this one (CPython: milliseconds).
SLOW = "from pytorch_lightning import Trainer\n\nx = " + "1 + " * 5000 + "1\n"


def cli(*args: str, timeout: float = 240, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "compat.migrate", *args],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=timeout,
        **kwargs,
    )


def run(*args: str, capsys) -> tuple[int, str, str]:
    """The CLI in this process (its workers are real processes): exit code, stdout, stderr."""
    try:
        code = migrate.main(list(args))
    except SystemExit as stop:  # usage errors
        code = stop.code if isinstance(stop.code, int) else 2
    out, err = capsys.readouterr()
    return code, out, err


def good_files(root: Path, count: int) -> list[Path]:
    root.mkdir(exist_ok=True)
    files = [root / f"m{i:03d}.py" for i in range(count)]
    for f in files:
        f.write_text(OLD)
    return files


def summary_counts(err: str) -> dict[str, int]:
    return {
        k: int(v.replace(",", "")) for k, v in re.findall(r"^  (changed|would change|failed):\s+([\d,]+)", err, re.M)
    }


# -- a file that crashes or hangs the parser fails alone -----------------------------------------------


def test_a_file_that_crashes_the_parser_fails_alone(tmp_path: Path) -> None:
    """``--jobs 1`` too: the parsing runs in a worker process, never in the CLI's own."""
    tree = tmp_path / "tree"
    files = good_files(tree, 10)
    bad = tree / "deep.py"
    bad.write_text(NESTED)
    proc = cli("--jobs", "1", "-q", str(tree))
    assert proc.returncode == 2, proc.stderr
    assert re.search(r"failed: .*deep\.py: the worker process died while handling this file \(SIGSEGV\)", proc.stderr)
    assert summary_counts(proc.stderr) == {"changed": 10, "failed": 1}, proc.stderr
    assert all(f.read_text() == MIGRATED for f in files)
    assert bad.read_text() == NESTED


def test_check_names_each_crashing_file_and_checks_the_rest(tmp_path: Path, capsys) -> None:
    tree = tmp_path / "tree"
    good_files(tree, 3)
    (tree / "deep.py").write_text(NESTED)
    (tree / "unary.py").write_text(UNARY)
    code, _, err = run("--check", "--jobs", "2", str(tree), capsys=capsys)
    assert code == 2, err
    failed = sorted(re.findall(r"^failed: .*?(\w+\.py): the worker process died", err, re.M))
    assert failed == ["deep.py", "unary.py"], err
    assert summary_counts(err) == {"would change": 3, "failed": 2}, err


def test_a_file_that_hangs_the_parser_is_stopped_at_the_timeout(tmp_path: Path, capsys) -> None:
    tree = tmp_path / "tree"
    files = good_files(tree, 4)
    (tree / "slow.py").write_text(SLOW)
    code, _, err = run("--jobs", "1", "-q", "--timeout", "3", str(tree), capsys=capsys)
    assert code == 2, err
    assert re.search(r"failed: .*slow\.py: still running after 3 s \(--timeout\)", err), err
    assert all(f.read_text() == MIGRATED for f in files)


def test_a_crash_or_hang_in_a_task_of_several_files_fails_that_file_alone(tmp_path: Path, capsys) -> None:
    """Many files go several to a task; the task that dies is split, and each file has its timeout.

    Forty good files around one that crashes the parser and one that hangs it: only those two fail,
    and the good files sharing their tasks are migrated when retried alone.
    """
    tree = tmp_path / "tree"
    files = good_files(tree, 40)
    assert max(map(len, _runner._chunks(list(range(42)), 1, _runner._FILES_PER_TASK))) > 1  # batched
    # the biggest files go first: the first task holds these two and four good files
    (tree / "m019_deep.py").write_text(NESTED)
    (tree / "m020_slow.py").write_text(SLOW)
    code, _, err = run("--jobs", "1", "-q", "--timeout", "3", str(tree), capsys=capsys)
    assert code == 2, err
    assert re.search(r"failed: .*m019_deep\.py: the worker process died while handling this file \(SIGSEGV\)", err)
    assert re.search(r"failed: .*m020_slow\.py: still running after 3 s \(--timeout\)", err), err
    assert summary_counts(err) == {"changed": 40, "failed": 2}, err
    assert all(f.read_text() == MIGRATED for f in files)


def test_each_file_of_a_task_restarts_the_worker_clock(monkeypatch) -> None:
    """``--timeout`` is per file: the slot's start time is the start of the file in hand."""
    from codemods.cli import _formats, _worker

    slots = [7, os.getpid(), 0]  # task, pid, start
    monkeypatch.setattr(_worker, "_slots", slots)
    monkeypatch.setattr(_worker, "_slot", 0)
    seen = []

    def one(path, module, display, rel, settings):
        seen.append(slots[2])
        time.sleep(0.01)
        return path

    monkeypatch.setattr(_formats, "migrate_one", one)
    assert _formats.migrate_many([("a", "a", "a", "a"), ("b", "b", "b", "b")], None) == ["a", "b"]
    assert 0 < seen[0] < seen[1] <= time.monotonic_ns()
    assert seen[1] - seen[0] >= 10_000_000  # the second file's clock started after the first file


# -- a worker's death fails only the file it held -------------------------------------------------------


def _workers(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry))
    return found


def test_sigkill_of_one_worker_fails_at_most_the_file_it_held(tmp_path: Path) -> None:
    """What the OOM killer does: one worker gets SIGKILL in the middle of the run."""
    tree = tmp_path / "tree"
    files = good_files(tree, 16)
    for f in files:  # big enough that the run is still going when the worker is killed
        f.write_text(OLD + "".join(f"\n\ndef helper_{i}(x):\n    return x + {i}\n" for i in range(150)))
    originals = {f: f.read_text() for f in files}
    proc = subprocess.Popen(
        [sys.executable, "-m", "compat.migrate", "--jobs", "2", "-q", str(tree)],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not any(f.read_text() != originals[f] for f in files):
            assert proc.poll() is None and time.monotonic() < deadline, "the run ended before a file was migrated"
            time.sleep(0.02)
        workers = _workers(proc.pid)
        if workers:
            os.kill(workers[0], signal.SIGKILL)
        _, err = proc.communicate(timeout=240)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    counts = summary_counts(err)
    assert counts["failed"] <= 1, err
    failed = re.findall(r"^failed: .*?(m\d+\.py): ", err, re.M)
    assert all((f.read_text() != originals[f]) == (f.name not in failed) for f in files), err
    assert counts["changed"] == 16 - counts["failed"], err
    assert proc.returncode == (2 if counts["failed"] else 0), err
    if counts["failed"]:
        assert "the worker process died while handling this file (SIGKILL): the system may have run out" in err


# -- --report / --out never write through a symlink --------------------------------------------------


def test_report_never_writes_through_a_symlink(tmp_path: Path, capsys) -> None:
    tree = tmp_path / "tree"
    files = good_files(tree, 2)
    precious = tmp_path / "precious.txt"
    precious.write_text("keep me\n")
    link = tmp_path / "report.json"
    link.symlink_to(precious)
    code, _, err = run("--report", str(link), str(tree), capsys=capsys)
    assert code == 2
    assert "is a symlink; it is never written through" in err
    assert precious.read_text() == "keep me\n"
    assert all(f.read_text() == OLD for f in files)  # refused before anything was written
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "created-by-the-link.json")
    assert run("--report", str(dangling), str(tree), capsys=capsys)[0] == 2
    assert not (tmp_path / "created-by-the-link.json").exists()


def test_report_write_refuses_a_link_planted_after_the_check(tmp_path: Path) -> None:
    from codemods.cli._safety import open_no_follow

    target = tmp_path / "target"
    target.write_text("keep\n")
    (tmp_path / "link").symlink_to(target)
    with pytest.raises(OSError):
        open_no_follow(str(tmp_path / "link"))
    assert target.read_text() == "keep\n"


def test_out_never_writes_through_a_symlink(tmp_path: Path, capsys) -> None:
    tree = tmp_path / "tree"
    good_files(tree, 1)
    elsewhere = tmp_path / "elsewhere"
    (tmp_path / "copy").symlink_to(elsewhere)  # dangling: os.makedirs would follow it
    code, _, err = run("--out", str(tmp_path / "copy"), str(tree), capsys=capsys)
    assert code == 2 and "is a symlink; it is never written through" in err, err
    assert not elsewhere.exists()


# -- diff headers quote odd names as git does ------------------------------------------------------------


ODD_NAMES = ["new\nline.py", "with space.py", 'quote".py', "tab\tname.py", "caf\u00e9.py", "back\\slash.py"]


@pytest.mark.parametrize("tool", ["patch", "git"])
def test_diff_with_odd_file_names_applies_with_patch_and_git(tmp_path: Path, capsys, monkeypatch, tool: str) -> None:
    if shutil.which(tool) is None:
        pytest.skip(f"{tool} is not installed")
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ODD_NAMES:
        (tree / name).write_text(OLD)
    monkeypatch.chdir(tree)
    code, out, err = run("--diff", "--jobs", "1", ".", capsys=capsys)
    assert code == 1, err
    assert '--- "new\\nline.py"' in out and '--- "caf\\303\\251.py"' in out
    patch = tmp_path / "changes.diff"
    patch.write_text(out)
    if tool == "patch":
        applied = subprocess.run(["patch", "-p0", "-i", str(patch)], cwd=tree, capture_output=True, text=True)
    else:
        applied = subprocess.run(
            ["git", "apply", "-p0", "--unsafe-paths", str(patch)], cwd=tree, capture_output=True, text=True
        )
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert sorted(p.name for p in tree.iterdir() if not p.name.endswith(".orig")) == sorted(ODD_NAMES)
    for name in ODD_NAMES:
        assert (tree / name).read_text() == MIGRATED, name


# -- every bad option value is a usage error --------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["--jobs", "0"],
        ["--jobs", "-1"],
        ["--jobs", "abc"],
        ["--jobs", "1.5"],
        ["--max-file-size", "inf"],
        ["--max-file-size", "nan"],
        ["--max-file-size", "-1"],
        ["--max-file-size", "1e400"],
        ["--max-file-size", "1e30g"],
        ["--max-file-size", ""],
        ["--timeout", "-1"],
        ["--timeout", "nan"],
        ["--timeout", "inf"],
        ["--timeout", "soon"],
        ["--select", "garbage"],
        ["--select", "CM999"],
        ["--ignore", "nope"],
        ["--target", "tensorflow"],
        ["--lightning-namespace", "lightning.fabric"],
        ["--out", "x", "--check"],
    ],
)
def test_bad_option_values_are_usage_errors(tmp_path: Path, capsys, args: list[str]) -> None:
    good_files(tmp_path / "tree", 1)
    code, _, err = run(*args, str(tmp_path / "tree"), capsys=capsys)  # any other exception fails the test
    assert code == 2, err
    assert "error:" in err, err
    assert (tmp_path / "tree" / "m000.py").read_text() == OLD


# -- --jobs is capped at the CPUs available --------------------------------------------------------------


def test_jobs_are_capped_at_the_cpus_available(tmp_path: Path, monkeypatch, capsys) -> None:
    sizes: list[int] = []
    real = _runner.ProcessPoolExecutor

    class Spy(real):  # the real pool, with its size written down
        def __init__(self, max_workers: int, **kwargs) -> None:
            sizes.append(max_workers)
            super().__init__(max_workers, **kwargs)

    monkeypatch.setattr(_runner, "ProcessPoolExecutor", Spy)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    files = good_files(tmp_path / "tree", 4)
    assert migrate.main([str(tmp_path / "tree"), "--jobs", "64", "-q"]) == 0
    assert sizes and max(sizes) == 1, sizes
    assert all(f.read_text() == MIGRATED for f in files)
    err = capsys.readouterr().err
    assert err.count("--jobs 64 capped at 1, the CPUs available to this process") == 1, err


def test_jobs_cap_follows_the_real_affinity(tmp_path: Path, capsys) -> None:
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this platform")
    files = good_files(tmp_path / "tree", 2)
    before = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(before)})  # as `taskset -c N` would start the CLI
    try:
        code, _, err = run("--jobs", "64", "-q", str(tmp_path / "tree"), capsys=capsys)
    finally:
        os.sched_setaffinity(0, before)
    assert code == 0, err
    assert "--jobs 64 capped at 1" in err
    assert all(f.read_text() == MIGRATED for f in files)
