"""One run of ``python -m compat.migrate``: discover, scan, resolve user classes, migrate.

1. Discovery walks the paths given (``codemods.cli._files``).
2. The scan reads every file and runs ``codemods.prescan``; files that need work and define
   classes another file may import get ``codemods.class_bases``.
3. User classes deriving from old ones are resolved across files: files whose text mentions a
   user class found so far are scanned for classes too, until nothing new turns up.
4. The files that need work are migrated with those user classes (checked, diffed or written).

Steps 2 and 4 run in a process pool (``--jobs``, capped by the number of batches of files to
parse) that imports only libcst and ``codemods``. The pool is started, and libcst imported, only
when some file needs parsing: a re-run the results cache answers does neither. The workers die with the CLI (see
``codemods.cli._worker.init_worker``); on Ctrl-C they are stopped at once, the summary
says which files were migrated before the stop, and the exit code is 130.
"""

from __future__ import annotations

import functools
import gc
import importlib
import json
import math
import multiprocessing
import os
import queue
import re
import shutil
import signal
import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TextIO

import codemods
from codemods.cli import _cache, _formats, _worker
from codemods.cli._files import Discovery, SourceFile, discover, within
from codemods.cli._ignore import IgnoreSpec
from codemods.cli._report import (
    FileOutcome,
    Outcome,
    Progress,
    file_line,
    render,
    summary,
    write_report,
)
from codemods.cli._safety import remove_leftover, temp_files_of

# Below this many files a scan pass runs in the main process: reading and pre-scanning a file
# costs well under a millisecond, less than handing it to a worker that may not be started yet.
_PARALLEL_SCAN = 512
_BARE_RELATIVE = r"from[ \t]+\.+[ \t]*import\b"  # ``from . import X``: names no module
_PARSER = "codemods._api"  # the rules, and libcst with them
_WORKER_DIED = "the worker process died while handling this file"
_POLL = 0.5  # seconds between looks at the tasks' run times (--timeout)
_FILES_PER_TASK = 8  # the most files one migrate task holds (``Runner.migrate``)
_CRASH_HINT = (
    "libcst's native parser crashes on some code, e.g. thousands of nested brackets or chained "
    "unary operators; the other files were processed"
)


class UsageError(ValueError):
    """The command line asks for something impossible; the message says what to do."""


@dataclass(frozen=True)
class Options:
    """A run's settings once the command line and the config are merged."""

    paths: tuple[str, ...]
    mode: str
    target: str
    select: tuple[str, ...] | None
    ignore: tuple[str, ...]
    rules: tuple[str, ...]
    exclude: tuple[str, ...]
    config_excludes: IgnoreSpec | None
    jobs: int
    report: str | None
    out: str | None
    quiet: bool
    max_size: int | None = None
    lightning_namespace: str | None = None
    timeout: float | None = None
    cache_dir: str | None = None
    output_format: str = "full"
    statistics: bool = False
    max_todos: int | None = None


class _Died:
    """Why a chunk has no results: its worker died (a crash, the OOM killer) or ran too long."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


class _Pool:
    """Runs chunks of work serially (one job) or in a fork/spawn process pool.

    The pool has at most ``jobs`` workers and never more than the batches of the largest call
    so far (``--jobs 1000`` on two files starts two). Each worker gets the read end of a pipe
    whose only write end this process holds: a worker sees it close when the CLI dies.

    Work that parses (``isolate=True``) always runs in workers, also with one job, so that a
    file that crashes libcst's native parser (a segfault on deeply nested code), exhausts memory
    or hangs it (``timeout``) fails alone: each worker writes the task it runs into a shared
    table, so when one dies the pool knows which tasks were in flight. A lone task in flight is
    the culprit; several are each retried alone in a fresh worker; the tasks not started yet are
    retried in a fresh pool. A task of several items that dies is split into one-item tasks.
    """

    def __init__(self, jobs: int, timeout: float | None = None) -> None:
        self.jobs = jobs
        self.timeout = timeout
        self._executor: ProcessPoolExecutor | None = None
        self._workers = 0
        self._slots: Any = None
        self._frozen = False
        self._lifeline: tuple[int, int] | None = None
        self._next_task = 1
        self._with_parser = False  # whether the workers were forked with libcst already imported

    def _get(self, batches: int) -> ProcessPoolExecutor:
        workers = max(1, min(self.jobs, batches))
        if self._executor is not None and workers > self._workers:
            self._executor.shutdown()  # too small for this call: one with more workers
            self._executor = None
        if self._executor is None:
            methods = multiprocessing.get_all_start_methods()
            context = multiprocessing.get_context("fork" if "fork" in methods else None)
            if "fork" in methods and not self._frozen:
                gc.freeze()  # forked workers then share the parent's pages instead of copying them
                self._frozen = True
            if self._lifeline is None:
                self._lifeline = os.pipe()
            self._slots = context.Array("q", _worker.SLOT_FIELDS * workers, lock=False)
            counter = context.Value("i", 0)
            self._executor = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=context,
                initializer=_worker.init_worker,
                initargs=(os.getpid(), *self._lifeline, self._slots, counter),
            )
            self._workers = workers
            self._with_parser = _PARSER in sys.modules
        return self._executor

    def _in_flight(self) -> dict[int, tuple[int, int]]:
        """Task id -> (worker pid, start time in ns) of every task a worker has started."""
        found = {}
        slots = self._slots
        for base in range(0, len(slots) if slots is not None else 0, _worker.SLOT_FIELDS):
            task, pid, start = slots[base : base + _worker.SLOT_FIELDS]
            if task:
                found[task] = (pid, start)
        return found

    def run(
        self,
        fn: Callable[..., list[Any]],
        chunks: Sequence[list[Any]],
        extra: tuple[Any, ...],
        on_chunk: Callable[[list[Any], list[Any] | _Died], None],
        parallel: bool = True,
        isolate: bool = False,
    ) -> None:
        """Call ``fn(chunk, *extra)`` for every chunk; ``on_chunk(chunk, results or _Died)``.

        ``parallel=False`` (too little work to pay for starting workers) runs in this process,
        unless ``isolate`` (the work parses files: see the class).
        """
        if not chunks:
            return
        if isolate and "fork" in multiprocessing.get_all_start_methods():
            # Work that parses: import libcst and the rules here, once, so that forked workers
            # share them instead of each importing its own (workers forked before, for a
            # parallel scan, are replaced: a fork costs less than an import). Only now: a run
            # the cache answers has no such work and never imports them.
            importlib.import_module(_PARSER)
            if self._executor is not None and not self._with_parser:
                self._executor.shutdown()
                self._executor = None
        if not isolate and (self.jobs <= 1 or len(chunks) <= 1 or not parallel):
            for chunk in chunks:
                on_chunk(chunk, fn(chunk, *extra))
            return
        groups: list[tuple[list[list[Any]], int]] = [(list(chunks), self.jobs)]
        while groups:
            group, jobs = groups.pop(0)
            groups.extend(self._run_group(fn, group, jobs, extra, on_chunk))

    def _run_group(
        self,
        fn: Callable[..., list[Any]],
        chunks: list[list[Any]],
        jobs: int,
        extra: tuple[Any, ...],
        on_chunk: Callable[[list[Any], list[Any] | _Died], None],
    ) -> list[tuple[list[list[Any]], int]]:
        """Run ``chunks`` in a pool of at most ``jobs``; the groups to retry after a death."""
        if jobs < self._workers and self._executor is not None:  # a retry alone: a fresh small pool
            self._executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
        executor = self._get(min(jobs, len(chunks)))
        pending: dict[int, list[Any]] = {}
        finished: queue.SimpleQueue[tuple[int, Future[list[Any]]]] = queue.SimpleQueue()
        for chunk in chunks:
            task, self._next_task = self._next_task, self._next_task + 1
            pending[task] = chunk
            future = executor.submit(_worker.run_task, task, fn, chunk, *extra)
            future.add_done_callback(functools.partial(_put_with, finished, task))
        processes = dict(getattr(executor, "_processes", None) or {})
        timed_out: dict[int, str] = {}
        broken = False
        try:
            waiting = len(chunks)
            next_look = time.monotonic() + _POLL
            while waiting and not broken:
                if self.timeout is not None and time.monotonic() >= next_look:
                    self._stop_overdue(timed_out)
                    next_look = time.monotonic() + _POLL
                try:
                    task, future = finished.get(timeout=_POLL)
                except queue.Empty:
                    continue
                waiting -= 1
                try:
                    results = future.result()
                except BrokenProcessPool:
                    broken = True
                    continue
                on_chunk(pending.pop(task), results)
        except KeyboardInterrupt:
            raise  # the caller stops the workers and waits for them (terminate)
        except BaseException:
            executor.shutdown(wait=False, cancel_futures=True)
            self._executor = None
            raise
        if not broken:
            return []
        in_flight = {task: pid for task, (pid, _) in self._in_flight().items() if task in pending}
        processes.update(getattr(executor, "_processes", None) or {})
        executor.shutdown(wait=True, cancel_futures=True)
        self._executor = None
        retry: list[tuple[list[list[Any]], int]] = []
        culprits = [t for t in timed_out if t in pending] or (list(in_flight) if len(in_flight) == 1 else [])
        for task in culprits:
            chunk = pending.pop(task)
            if len(chunk) > 1:  # which of its items? each on its own
                retry.append(([[item] for item in chunk], jobs))
            else:
                on_chunk(chunk, _Died(timed_out.get(task) or _died_reason(processes.get(in_flight[task]))))
        retry.extend(([pending.pop(task)], 1) for task in in_flight if task in pending)  # suspects: alone
        if pending:
            retry.append((list(pending.values()), jobs))
        return retry

    def _stop_overdue(self, timed_out: dict[int, str]) -> None:
        """SIGKILL the worker of a task that runs longer than ``timeout`` (a hanging parse)."""
        assert self.timeout is not None
        now = time.monotonic_ns()
        for task, (pid, start) in self._in_flight().items():
            if task not in timed_out and now - start > self.timeout * 1e9:
                timed_out[task] = (
                    f"still running after {self.timeout:g} s (--timeout), stopped; the parser may "
                    "hang on this file (e.g. thousands of chained operators): split it or exclude it"
                )
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def terminate(self) -> None:
        """Stop the workers now (Ctrl-C): SIGTERM each one and wait for it to be gone.

        A worker stopped between writing a temporary file and renaming it leaves the
        temporary file; ``Runner.run`` removes it. The original file is whole either way.
        """
        executor, self._executor = self._executor, None
        if executor is None:
            return
        # ProcessPoolExecutor has no public way to stop running calls before Python 3.14
        # (terminate_workers); its process table is the only handle on the workers.
        processes = list(getattr(executor, "_processes", {}).values())
        for process in processes:
            process.terminate()
        for process in processes:
            process.join(5)
        executor.shutdown(wait=True, cancel_futures=True)

    def close(self) -> None:
        """Stop the workers."""
        if self._executor is not None:
            self._executor.shutdown()
            self._executor = None
        if self._lifeline is not None:
            for fd in self._lifeline:
                os.close(fd)
            self._lifeline = None
        if self._frozen:
            gc.unfreeze()
            self._frozen = False


def _put_with(into: queue.SimpleQueue[tuple[int, Future[list[Any]]]], task: int, future: Future[list[Any]]) -> None:
    into.put((task, future))


def _died_reason(process: Any) -> str:
    """Why a file failed when its worker died: the signal that ended it, and a hint."""
    code = getattr(process, "exitcode", None)
    how = ""
    if isinstance(code, int) and code < 0:
        try:
            how = f" ({signal.Signals(-code).name})"
        except ValueError:
            how = f" (signal {-code})"
    elif isinstance(code, int) and code > 0:
        how = f" (exit code {code})"
    killed = " the system may have run out of memory;" if code == -signal.SIGKILL else ""
    return f"{_WORKER_DIED}{how}:{killed} {_CRASH_HINT}"


def _chunks(items: list[Any], jobs: int, most: int) -> list[list[Any]]:
    if not items:
        return []
    size = max(1, min(most, math.ceil(len(items) / max(1, jobs * 8))))
    return [items[i : i + size] for i in range(0, len(items), size)]


def _prepare_out(out: str, paths: tuple[str, ...], found: Discovery) -> str:
    """Create ``--out DIR`` holding a copy of every file found; the migration overwrites some."""
    if len(paths) != 1:
        raise UsageError("--out takes exactly one PATH (the tree to copy)")
    target = os.path.abspath(out)
    if os.path.islink(target):
        raise UsageError(
            f"--out `{out}` is a symlink; it is never written through: give a new folder (nothing was written)"
        )
    if os.path.lexists(target):
        raise UsageError(f"--out `{out}` already exists; give a new folder (nothing was written)")
    source = os.path.realpath(paths[0] if os.path.isdir(paths[0]) else os.path.dirname(os.path.abspath(paths[0])))
    real_target = os.path.join(os.path.realpath(os.path.dirname(target)), os.path.basename(target))
    if within(real_target, source):
        raise UsageError(f"--out `{out}` is inside the tree being migrated; give a folder outside it")
    try:
        os.makedirs(target)
        for path, rel in [(f.path, f.rel) for f in found.files] + found.others:
            dest = os.path.join(target, *rel.split("/"))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            if os.path.islink(path):
                os.symlink(os.readlink(path), dest)
            else:
                shutil.copy2(path, dest)
    except OSError as err:
        raise UsageError(f"cannot copy the tree to --out `{out}`: {err}") from err
    return target


class Runner:
    """Carries one run through its phases.

    Args:
        options: the merged settings.
        stdout: where diffs go.
        stderr: where progress, per-file lines and the summary go.
    """

    def __init__(self, options: Options, stdout: TextIO, stderr: TextIO) -> None:
        self.options = options
        self.stdout = stdout
        self.stderr = stderr
        self.progress = Progress(stderr, stderr.isatty() and not options.quiet)
        self.pool = _Pool(options.jobs, options.timeout)
        self.failed: dict[str, str] = {}
        self.needs_work: set[str] = set()
        self.subclassing: set[str] = set()  # flagged files with a `class X(...)` statement
        self.pending_todos: dict[str, tuple[int, ...]] = {}  # TODO comments already in the files
        self.scanned: set[str] = set()
        self.digests: dict[str, str] = {}  # file -> content hash when scanned (the cache's key)
        self.cache = (
            _cache.Cache(
                options.cache_dir,
                (options.target, options.rules, options.select, options.lightning_namespace, *options.paths),
            )
            if options.cache_dir
            else None
        )
        self.results: dict[str, _worker.FileResult] = {}
        # file -> (the path written, its (device, inode) before migrating): see _after_interrupt
        self.identity: dict[str, tuple[str, tuple[int, int]]] = {}

    def _take_scan(self, total: int) -> Callable[[list[Any], list[Any] | _Died], None]:
        done = [0]

        def take(chunk: list[Any], results: list[_worker.ScanResult] | _Died) -> None:
            done[0] += len(chunk)
            self.progress.update("scanning", done[0], total)
            if isinstance(results, _Died):
                for path, _ in chunk:
                    self.failed[path] = results.reason
                return
            for r in results:
                self.scanned.add(r.path)
                self.digests[r.path] = r.digest
                if r.todos:
                    self.pending_todos[r.path] = r.todos
                if r.reason:
                    self.failed[r.path] = r.reason
                elif r.needs_work:
                    self.needs_work.add(r.path)
                    if r.subclasses:
                        self.subclassing.add(r.path)

        return take

    def _collect(self, fn: Callable[..., list[Any]], items: list[Any], *extra: Any, isolate: bool = False) -> list[Any]:
        """``fn`` over ``items``; with ``isolate`` (it parses) one file per task, in a worker."""
        out: list[Any] = []

        def take(chunk: list[Any], got: list[Any] | _Died) -> None:
            if isinstance(got, _Died):
                for item in chunk:
                    self.failed[item[0]] = got.reason
            else:
                out.extend(got)

        self.pool.run(
            fn,
            _chunks(items, self.pool.jobs, 1 if isolate else 256),
            extra,
            take,
            parallel=len(items) >= _PARALLEL_SCAN,
            isolate=isolate,
        )
        return out

    def scan(self, files: list[SourceFile]) -> dict[str, str]:
        """Pass 1 and the cross-file user-class fixed point; returns user class -> old class.

        ``class_bases`` runs on the flagged files that subclass something; then each round looks
        for files mentioning a user class found so far (outside the file defining it), runs
        ``class_bases`` on them, and resolves again, until no new user class turns up.
        """
        items = [(f.path, f.module) for f in files]
        modules = dict(items)
        _worker.forget_texts()  # a text kept by an earlier run in this process may be stale
        self.pool.run(
            _formats.scan_many,
            _chunks(items, self.pool.jobs, 256),
            (),
            self._take_scan(len(items)),
            parallel=len(items) >= _PARALLEL_SCAN,
        )
        bases: dict[str, dict[str, tuple[str, ...]]] = {}
        todo = self._importable(sorted(self.subclassing), items)
        searched: set[str] = set()
        mentioned: dict[str, set[str]] = {}
        while True:
            for path, found in self._bases([(p, modules[p]) for p in todo]):
                bases[path] = found
            user_classes = dict(codemods.resolve_user_classes({k: v for b in bases.values() for k, v in b.items()}))
            owners: dict[str, set[str]] = {}
            for path, found in bases.items():
                for qualname in found.keys() & user_classes.keys():
                    owners.setdefault(qualname.rsplit(".", 1)[-1], set()).add(path)
            pending = set(owners) - searched
            if not pending:
                break
            searched |= pending
            pattern = _names_pattern(pending)
            rest = [i for i in items if i[0] not in self.needs_work and i[0] not in self.failed]
            todo = []
            for path, names in self._collect(_worker.mentions, rest, pattern):
                mentioned.setdefault(path, set()).update(names)
                if path not in bases and any(owners[n] - {path} for n in names):
                    todo.append(path)
        self.needs_work.update(mentioned)
        _worker.forget_texts()
        return user_classes

    def _importable(self, subclassing: list[str], items: list[tuple[str, str]]) -> list[str]:
        """The subclassing files another file of the tree may import a class from.

        A file's user classes matter to another file only through an import of it, which
        spells the file's module name (``plugins`` in ``from .plugins import MyDDP``,
        ``import pkg.plugins``, ``from pkg import plugins``) or, for a package's
        ``__init__``, a bare relative import (``from .. import MyDDP``). Its own classes it
        resolves by itself. So ``class_bases`` (an ``ast`` parse) runs only on the
        subclassing files whose module name another file mentions: a training script that
        nobody imports is not parsed twice. The fixed point in ``scan`` then follows the
        classes found as before.
        """
        modules = dict(items)
        keys = {p: f"{self.digests.get(p)}:{modules[p]}" for p in subclassing}
        cache = self.cache
        tree = json.dumps(sorted((m, self.digests.get(p, "")) for p, m in items)) if cache else ""
        tree = _worker.digest(tree.encode())
        unimported = (cache.get_unimported(tree) if cache else None) or set()
        # What the cache knows costs no parse, and a file this same tree did not import before
        # is still not imported.
        cached = {p for p in subclassing if keys[p] not in unimported and cache and cache.get_bases(keys[p])}
        subclassing = [p for p in subclassing if p not in cached and keys[p] not in unimported]
        if not subclassing:
            if cache is not None:
                cache.put_unimported(tree, unimported)
            return sorted(cached)
        words: dict[str, set[str]] = {}  # module word -> the subclassing files it names
        always = []  # a top-level ``__init__``: no package name to look for
        for path in subclassing:
            parts = modules[path].split(".")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if not parts or not parts[-1].isidentifier():
                always.append(path)
            else:
                words.setdefault(parts[-1], set()).add(path)
        needed = cached | set(always)
        if not words:
            return sorted(needed)
        pattern = re.compile(f"{_names_pattern(set(words)).pattern}|{_BARE_RELATIVE}")
        for path, found in self._collect(_worker.mentions, items, pattern):
            for word in found:
                if word.startswith("from") and word not in words:  # ``from .. import``
                    needed.update(p for p in subclassing if modules[p].rsplit(".", 1)[-1] == "__init__")
                else:
                    needed.update(words.get(word, set()) - {path})
        if cache is not None:
            cache.put_unimported(tree, unimported | {keys[p] for p in subclassing if p not in needed})
        return sorted(needed)

    def _bases(self, items: list[tuple[str, str]]) -> list[tuple[str, dict[str, tuple[str, ...]]]]:
        """``class_bases`` of each ``(path, module)``: from the cache, else parsed in a worker."""
        found, todo = [], []
        for path, module in items:
            cached = self.cache.get_bases(f"{self.digests.get(path)}:{module}") if self.cache else None
            if cached is None:
                todo.append((path, module))
            else:
                found.append((path, cached))
        for path, classes, key in self._collect(_formats.bases_many, todo, isolate=True):
            found.append((path, classes))
            if self.cache is not None and key:
                self.cache.put_bases(f"{key}:{dict(items)[path]}", classes)
        return found

    def migrate(self, files: list[SourceFile], settings: _worker.Settings) -> None:
        """Pass 2 over the files that need work, biggest first (better balance over workers).

        Results land in ``self.results`` as they come, so an interrupted run knows what it did.
        """
        todo = [f for f in files if f.path in self.needs_work and f.path not in self.failed]
        classes_key = _cache.user_classes_key(settings.user_classes)
        if self.cache is not None:  # what the cache knows is not parsed again
            for f in todo:
                hit = self.cache.get_result(f"{self.digests.get(f.path)}:{f.module}:{classes_key}")
                if hit is not None and (hit[0] == "unchanged" or settings.mode == _worker.CHECK):
                    self.results[f.path] = _worker.FileResult(f.path, hit[0], changes=hit[1], held=hit[2])
            todo = [f for f in todo if f.path not in self.results]
        sizes = {f.path: _size(f.path) for f in todo}
        todo.sort(key=lambda f: -sizes[f.path])
        items = [(f.path, f.module, f.display, f.rel) for f in todo]
        for f in todo:
            written = os.path.join(settings.out_root, *f.rel.split("/")) if settings.out_root else f.path
            self.identity[f.path] = (written, _identity(written))
        done = [0]
        label = "checking" if settings.mode == _worker.CHECK else "migrating"

        def take(chunk: list[Any], got: list[_worker.FileResult] | _Died) -> None:
            done[0] += len(chunk)
            self.progress.update(label, done[0], len(items))
            for index, item in enumerate(chunk):
                result = _worker.FileResult(item[0], "failed", got.reason) if isinstance(got, _Died) else got[index]
                written, before = self.identity[item[0]]
                if result.status == "unchanged" and settings.mode in (_worker.WRITE, _worker.OUT):
                    if _identity(written) != before:  # a retry: the worker that died had written it
                        result = _worker.FileResult(item[0], "changed", "migrated before its worker died")
                self.results[item[0]] = result
                if self.cache is not None and result.digest:
                    if result.status == "unchanged" or settings.mode in (_worker.CHECK, _worker.DIFF):
                        self.cache.put_result(
                            f"{result.digest}:{item[1]}:{classes_key}", result.status, result.changes, result.held
                        )

        # A few files per task: a task costs the pool about a millisecond, a parse ten or more;
        # a task that dies is split into one-file tasks (``_Pool``), and each file has its own
        # ``--timeout`` (``_worker.item_started``).
        chunks = _chunks(items, self.pool.jobs, _FILES_PER_TASK)
        self.pool.run(_formats.migrate_many, chunks, (settings,), take, isolate=True)

    def _after_interrupt(self) -> None:
        """What the stopped workers did: a file replaced since the run began was migrated.

        Every write is an ``os.replace`` of a new file, so a new inode means a whole new file.
        """
        for path, (written, before) in self.identity.items():
            for leftover in temp_files_of(written):
                remove_leftover(leftover)
            known = self.results.get(path)
            if known is not None and not known.reason.startswith(_WORKER_DIED):  # a worker ended by Ctrl-C
                continue
            if self.options.mode in (_worker.WRITE, _worker.OUT) and _identity(written) != before:
                self.results[path] = _worker.FileResult(path, "changed", "migrated before the stop")
            else:
                self.results[path] = _worker.FileResult(path, "interrupted", "left untouched by the stop")

    def _leftovers(self, found: Discovery) -> tuple[list[str], list[str]]:
        """Temporary files left by an interrupted run: ``(removed, kept)`` display paths.

        Removed in place runs once their writer is gone; listed only by the other modes.
        """
        removed, kept = [], []
        for path, display in found.leftovers:
            if self.options.mode == _worker.WRITE and remove_leftover(path):
                removed.append(display)
            else:
                kept.append(display)
        return removed, kept

    def run(self) -> int:
        """Do the whole run; returns the exit code."""
        options = self.options
        started = time.perf_counter()
        missing = [p for p in options.paths if not os.path.lexists(p)]
        if missing:
            raise UsageError(f"path `{missing[0]}` does not exist")
        if options.report:
            _check_writable(options.report)
        found = discover(list(options.paths), list(options.exclude), options.config_excludes, options.max_size)
        out_root = _prepare_out(options.out, options.paths, found) if options.out else None
        outcome = Outcome(options.mode, options.target, options.rules, max_todos=options.max_todos)
        outcome.listed = options.output_format == "full"
        outcome.removed, outcome.leftovers = self._leftovers(found)
        try:
            user_classes = self.scan(found.files)
            settings = _worker.Settings(
                options.mode,
                options.target,
                options.select,
                options.ignore,
                user_classes,
                out_root,
                options.lightning_namespace,
            )
            self.migrate(found.files, settings)
            if self.cache is not None and (problem := self.cache.save()):
                self.stderr.write(f"{problem}\n")
        except KeyboardInterrupt:
            outcome.interrupted = True
            self.pool.terminate()
            self._after_interrupt()
            self.failed = {k: v for k, v in self.failed.items() if not v.startswith(_WORKER_DIED)}
        finally:
            self.pool.close()
            self.progress.clear()
        outcome.skipped = found.skipped
        diffs = []
        for f in sorted(found.files, key=lambda f: f.display):
            todos = self.pending_todos.get(f.path, ())
            outcome.pending.extend((f.display, line) for line in todos)
            if f.path in self.failed:
                outcome.files.append(FileOutcome(f.display, "failed", self.failed[f.path]))
            elif f.path in self.results:
                r = self.results[f.path]
                outcome.files.append(FileOutcome(f.display, r.status, r.reason, r.changes, r.held))
                if r.diff:
                    diffs.append(r.diff)
            elif outcome.interrupted and (f.path in self.needs_work or f.path not in self.scanned):
                outcome.files.append(FileOutcome(f.display, "interrupted", "left untouched by the stop"))
            else:
                outcome.files.append(FileOutcome(f.display, "unchanged"))
        outcome.seconds = time.perf_counter() - started
        self.stdout.write("".join(diffs))
        self.stdout.flush()
        reported = self._finish(outcome)
        return outcome.exit_code() if reported else 2

    def _finish(self, outcome: Outcome) -> bool:
        terse = self.options.quiet or self.options.mode == _worker.DIFF
        lines = [line for f in outcome.files if (f.status == "failed" or not terse) and (line := file_line(outcome, f))]
        text = "\n".join([*lines, summary(outcome)]) + "\n"
        self.stderr.write(text)
        render(outcome, self.options.output_format, self.options.statistics, self.stdout)
        if self.options.report:
            try:
                write_report(self.options.report, outcome)
            except OSError as err:
                self.stderr.write(f"cannot write the report `{self.options.report}`: {err}\n")
                return False
        self.stderr.flush()
        return True


def _names_pattern(names: set[str]) -> re.Pattern[str]:
    """A regex matching any of ``names`` (identifiers) as a whole word.

    A trie, and no leading ``\\b``: that keeps the regex engine's fast scan for the first
    character, about 20x faster than a plain alternation over a hundred names. The caller
    checks the leading word boundary (``codemods.cli._worker.mentions``).
    """

    def build(node: dict[str, dict[str, Any]]) -> str:
        ends = "" in node
        branches = [re.escape(ch) + build(sub) for ch, sub in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if ends else body

    trie: dict[str, dict[str, Any]] = {}
    for name in names:
        node = trie
        for ch in name:
            node = node.setdefault(ch, {})
        node[""] = {}
    return re.compile(build(trie) + r"\b")


def _check_writable(path: str) -> None:
    """Refuse a ``--report`` path that cannot be written, before anything else is written."""
    if os.path.islink(path):
        raise UsageError(
            f"--report `{path}` is a symlink; it is never written through (a planted link would overwrite "
            "its target): give another file name (nothing was written)"
        )
    if os.path.isdir(path):
        raise UsageError(f"--report `{path}` is a folder; give a file name (nothing was written)")
    existed = os.path.lexists(path)
    try:
        with open(path, "a", encoding="utf-8", opener=_no_follow_opener):
            pass
    except OSError as err:
        raise UsageError(f"cannot write the report `{path}`: {err.strerror or err} (nothing was written)") from err
    if not existed:
        os.unlink(path)


def _no_follow_opener(path: str, flags: int) -> int:
    return os.open(path, flags | getattr(os, "O_NOFOLLOW", 0), 0o666)


def _identity(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_dev, st.st_ino)


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def run(options: Options, stdout: TextIO | None = None, stderr: TextIO | None = None) -> int:
    """Run a migration with ``options``; returns the exit code (0, 1 or 2)."""
    return Runner(options, stdout or sys.stdout, stderr or sys.stderr).run()
