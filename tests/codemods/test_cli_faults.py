"""``python -m compat.migrate`` under faults: odd files, a bad report path, too many jobs,
Ctrl-C, ``kill -9`` and what an interrupted run leaves behind.

The signal tests run the real CLI in its own process group with the real rules and real
signals, and check that every file is either exactly as it was or fully migrated, and that no
worker process and no temporary file is left.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
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
TEMP = ".compat-migrate.tmp"


def cli(*args: str) -> int:
    return migrate.main([*args, "-q"])


def _as_from_a_terminal() -> None:
    # A shell running pytest in the background (`&`, nohup) hands down SIGINT ignored; a user
    # at a terminal has it at its default, which Python turns into KeyboardInterrupt.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _in_the_background() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def popen(*args: str, sigint_ignored: bool = False) -> subprocess.Popen[str]:
    """The CLI as a user starts it, in its own process group (a terminal's Ctrl-C reaches all of it)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-m", "compat.migrate", *args],
        env=env,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=_in_the_background if sigint_ignored else _as_from_a_terminal,
    )


def old_tree(root: Path, count: int) -> list[Path]:
    root.mkdir()
    files = [root / f"m{i:03d}.py" for i in range(count)]
    for f in files:
        f.write_text(OLD)
    return files


def migrated(files: list[Path]) -> int:
    """How many files are fully migrated; fails if one is neither the original nor migrated."""
    done = 0
    for f in files:
        text = f.read_text()
        assert text in (OLD, MIGRATED), f"{f.name} is half-migrated:\n{text}"
        done += text == MIGRATED
    return done


def temp_files(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.endswith(TEMP))


def children(pid: int) -> list[int]:
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


def alive(pids: list[int], wait: float) -> list[int]:
    """The pids still running (not zombies) after up to ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        left = []
        for pid in pids:
            try:
                state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                left.append(pid)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def wait_for(condition, timeout: float = 120, what: str = "") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


@pytest.fixture
def reap() -> Iterator[list[int]]:
    """Pids to SIGKILL after the test whatever happens (orphans are not pytest's children)."""
    pids: list[int] = []
    yield pids
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def started_workers(proc: subprocess.Popen[str], files: list[Path], reap: list[int]) -> list[int]:
    """Wait until the run is migrating (a file is done and both workers are up); their pids."""
    wait_for(lambda: migrated(files) > 0 or proc.poll() is not None, what="the first migrated file")
    assert proc.poll() is None, f"the run ended too early to be interrupted:\n{proc.communicate()[1]}"
    workers = children(proc.pid)
    reap.extend(workers)
    assert len(workers) == 2, workers
    return workers


# -- 1, 8: only regular files are read; loops and FIFOs are listed under "skipped" -------------------


def test_a_fifo_is_skipped_not_read(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    [f] = old_tree(tree, 1)
    os.mkfifo(tree / "x.py")
    proc = popen("-j", "1", str(tree), str(tree / "x.py"))
    try:
        _, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("the run hung on a FIFO named x.py")
    assert proc.returncode == 0, err
    assert f.read_text() == MIGRATED
    assert err.count("x.py: not a regular file (a FIFO); only regular files are read") == 2  # in tree, named


def test_symlink_loops_and_broken_links_are_listed_as_skipped(tmp_path: Path, capsys) -> None:
    tree = tmp_path / "tree"
    [f] = old_tree(tree, 1)
    (tree / "self.py").symlink_to("self.py")
    (tree / "a.py").symlink_to("b.py")
    (tree / "b.py").symlink_to("a.py")
    (tree / "gone.py").symlink_to("nowhere.py")
    assert cli(str(tree), str(tree / "self.py"), "--jobs", "1") == 0
    assert f.read_text() == MIGRATED
    skipped = capsys.readouterr().err.split("skipped:\n", 1)[1]
    for name in ("a.py", "b.py", "self.py"):
        assert f"tree/{name}: symlink loop" in skipped
    assert skipped.count("self.py: symlink loop") == 2
    assert "tree/gone.py: broken symlink (-> nowhere.py)" in skipped


# -- 5: a report path that cannot be written stops the run before any write ---------------------------


@pytest.mark.parametrize("where", ["missing/r.json", "."])
def test_bad_report_path_is_refused_before_anything_is_written(tmp_path: Path, capsys, where: str) -> None:
    tree = tmp_path / "tree"
    files = old_tree(tree, 2)
    with pytest.raises(SystemExit) as exit_info:
        cli(str(tree), "--report", str(tmp_path / where))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"`{tmp_path / where}`" in err and "nothing was written" in err
    assert migrated(files) == 0
    assert not (tmp_path / "missing").exists()


# -- 6: workers are capped by the files that need parsing ---------------------------------------------


def test_workers_are_capped_by_the_files_to_parse(tmp_path: Path, monkeypatch) -> None:
    sizes: list[int] = []
    real = _runner.ProcessPoolExecutor

    class Spy(real):  # the real pool, with its size written down
        def __init__(self, max_workers: int, **kwargs) -> None:
            sizes.append(max_workers)
            super().__init__(max_workers, **kwargs)

    monkeypatch.setattr(_runner, "ProcessPoolExecutor", Spy)
    files = old_tree(tmp_path / "tree", 2)
    started = time.monotonic()
    assert cli(str(tmp_path / "tree"), "--jobs", "1000") == 0
    assert sizes == [2], sizes
    assert migrated(files) == 2
    assert time.monotonic() - started < 60


# -- 7: files above --max-file-size are skipped, with the reason --------------------------------------


def test_files_above_the_size_limit_are_skipped(tmp_path: Path, capsys) -> None:
    tree = tmp_path / "tree"
    [small] = old_tree(tree, 1)
    big = tree / "generated.py"
    big.write_text(OLD + "x = 1\n" * 100_000)  # 600 kB
    before = big.read_bytes()
    assert cli(str(tree), "--jobs", "1") == 0
    assert big.read_bytes() == before and small.read_text() == MIGRATED
    assert "tree/generated.py: too large (600.2 kB > --max-file-size 524.3 kB)" in capsys.readouterr().err
    small.write_text(OLD)
    assert cli(str(small), "--max-file-size", "100", "--jobs", "1") == 0  # named files too
    assert small.read_text() == OLD
    assert f"m000.py: too large ({len(OLD)} bytes > --max-file-size 100 bytes)" in capsys.readouterr().err


def test_max_file_size_values(capsys) -> None:
    parser = migrate.build_parser()
    assert parser.parse_args([]).max_file_size == 512 * 1024
    assert parser.parse_args(["--max-file-size", "2m"]).max_file_size == 2 * 1024**2
    assert parser.parse_args(["--max-file-size", "0"]).max_file_size is None
    with pytest.raises(SystemExit):
        parser.parse_args(["--max-file-size", "big"])
    assert "`big` is not a size" in capsys.readouterr().err


# -- 3: temporary files of a killed run are cleaned up (in place) or reported ------------------------


def dead_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def test_leftover_temp_files_are_removed_once_their_writer_is_gone(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    [f] = old_tree(tree, 1)
    dead = tree / f".m000.py.{dead_pid()}.k2j4h1x0{TEMP}"
    dead.write_text(MIGRATED)
    sleeper = subprocess.Popen(["sleep", "60"])
    try:
        live = tree / f".m000.py.{sleeper.pid}.a8b7c6d5{TEMP}"  # another run writing right now
        live.write_text(MIGRATED)
        check = popen("--check", str(tree))
        _, err = check.communicate(timeout=300)
        assert check.returncode == 1, err
        assert dead.exists() and live.exists()
        assert "temporary files left by an interrupted run (a run in place removes them):" in err
        run = popen(str(tree), "-j", "1")
        _, err = run.communicate(timeout=300)
        assert run.returncode == 0, err
        assert not dead.exists() and live.exists()
        assert f"removed temporary files left by an interrupted run:\n  {tree / dead.name}\n" in err
        assert f.read_text() == MIGRATED
    finally:
        sleeper.kill()
        sleeper.wait()


# -- 2, 3: kill -9 of the CLI takes its workers with it; the next run cleans up -----------------------


def test_kill_9_of_the_cli_ends_its_workers(tmp_path: Path, reap: list[int]) -> None:
    tree = tmp_path / "tree"
    files = old_tree(tree, 300)
    proc = popen("-j", "2", "-q", str(tree))
    workers = started_workers(proc, files, reap)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()  # not communicate(): orphaned workers would hold its pipes open
    proc.stdout.close()
    proc.stderr.close()
    assert alive(workers, wait=5) == [], "workers outlived the CLI"
    done = migrated(files)
    assert done < len(files)
    time.sleep(0.5)
    assert migrated(files) == done, "files were still being rewritten after the CLI died"

    again = popen("-j", "2", str(tree))
    _, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert migrated(files) == len(files)
    assert temp_files(tree) == []


# -- 4: Ctrl-C stops the workers at once, tells the truth and exits 130 -------------------------------


@pytest.mark.parametrize(
    ("out", "group"),
    [(False, True), (True, True), (False, False)],
    ids=["in_place", "out", "in_place_cli_only"],  # cli_only: `kill -INT <pid>`, the workers not signalled
)
def test_ctrl_c_stops_the_workers_and_reports_the_truth(
    tmp_path: Path, reap: list[int], out: bool, group: bool
) -> None:
    tree = tmp_path / "tree"
    files = old_tree(tree, 300)
    written = [tmp_path / "copy" / f.name for f in files] if out else files
    proc = popen("-j", "2", str(tree), *(["--out", str(tmp_path / "copy")] if out else []))
    wait_for(lambda: all(f.exists() for f in written), what="the --out copy")
    workers = started_workers(proc, written, reap)
    at_signal = migrated(written)
    if group:
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal does: the whole foreground group
    else:
        os.kill(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 130, err
    assert alive(workers, wait=30) == []
    done = migrated(written)
    # The workers finish the file they are on; how many that is depends on how busy the machine is
    # (a CLI starved of CPU reacts late), so the bound is half of what was left: a run that goes on
    # after Ctrl-C fails it, one that stops passes on any machine.
    left = len(files) - at_signal
    after = done - at_signal
    assert after <= max(4, left // 2), f"{after} of the {left} files left were migrated after Ctrl-C"
    assert temp_files(written[0].parent) == []
    if out:
        assert migrated(files) == 0
    counts = dict(re.findall(r"^  (changed|unchanged|not reached):\s+([\d,]+)", err, re.M))
    assert int(counts["changed"]) == done, err
    assert int(counts["not reached"]) == len(files) - done, err
    assert f"Interrupted: {done:,} file{'s' if done != 1 else ''} were migrated before the stop" in err


def test_a_cli_that_ignores_sigint_keeps_its_workers_through_it(tmp_path: Path, reap: list[int]) -> None:
    """Started with SIGINT ignored (`cmd &` in a script), a group SIGINT stops neither the CLI nor a worker."""
    tree = tmp_path / "tree"
    files = old_tree(tree, 150)
    proc = popen("-j", "2", str(tree), sigint_ignored=True)
    started_workers(proc, files, reap)
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert migrated(files) == len(files)
