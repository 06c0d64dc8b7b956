"""Which rank holds up the others: every rank publishes its progress, rank 0 watches for stalls.

A rank marks its progress when it enters or leaves a step, backward or a collective
(``Progress.mark``). While a stage runs, a daemon thread in every rank writes its latest mark,
the time of that mark and where its main thread is now to the rendezvous store; on rank 0 the
same thread reads every rank's entry and prints one line on stderr when no rank has made progress
for ``stall_warning`` seconds, naming the ranks that did not arrive where the others wait. The run
goes on (ranks that are all at the same mark are busy, not waiting: no line). When a collective's
timeout fires, ``Progress.annotate`` adds the same names to the
error.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from typing import Any

import torch.distributed as dist

STALL_VARIABLE = "STRATEGIES_STALL_WARNING_S"
DEFAULT_STALL_S = 60.0
_KEY = "strategies/progress/{rank}"


class Progress:
    """This rank's progress marks, and the thread that publishes (and on rank 0 watches) them."""

    def __init__(self) -> None:
        self._count = 0
        self._label = "started"
        self._since = time.time()
        self._store: dist.Store | None = None
        self._rank = 0
        self._world_size = 1
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._main_ident = threading.main_thread().ident

    def mark(self, label: str) -> None:
        """Record that this rank got somewhere (cheap: no I/O, the thread publishes it)."""
        self._count += 1
        self._label = label
        self._since = time.time()

    def start(self, rank: int, world_size: int, stall_warning: float) -> None:
        """Publish this rank's progress while a stage runs (and on rank 0 watch everyone's)."""
        self.stop()
        store = _group_store()
        if world_size < 2 or store is None:
            return
        self._store, self._rank, self._world_size = store, rank, world_size
        self.mark("set up the process group")
        self._publish()
        interval = min(5.0, max(0.2, stall_warning / 4)) if stall_warning > 0 else 5.0
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(interval, stall_warning), name="strategy-compat-progress", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        """Stop publishing (the stage ended); the last entries stay readable for ``annotate``."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(timeout=2)
        self._thread = None

    def _run(self, interval: float, stall_warning: float) -> None:
        warned = False
        while not self._stop.wait(interval):
            try:
                self._publish()
                if self._rank != 0 or stall_warning <= 0:
                    continue
                entries = self.entries()
                stalled = bool(entries) and all(time.time() - e["since"] >= stall_warning for e in entries.values())
                # Ranks level with each other are busy (a slow step, a first import), not waiting.
                stalled = stalled and len({e["count"] for e in entries.values()}) > 1
                if stalled and not warned:
                    sys.stderr.write(
                        f"strategies: no rank has made progress for {stall_warning:g} s. "
                        f"{describe(entries)} The run goes on.\n"
                    )
                    sys.stderr.flush()
                warned = bool(stalled)
            except Exception:  # the store went away (a rank ended the job): nothing left to watch
                return

    def _publish(self) -> None:
        if self._store is None:
            return
        entry = {"count": self._count, "label": self._label, "since": self._since, "where": self._where()}
        self._store.set(_KEY.format(rank=self._rank), json.dumps(entry))

    def _where(self) -> str:
        frame = sys._current_frames().get(self._main_ident) if self._main_ident is not None else None
        if frame is None:
            return "?"
        return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno} in {frame.f_code.co_name}"

    def entries(self) -> dict[int, dict[str, Any]]:
        """Every rank's last published progress (ranks that published nothing are left out)."""
        if self._store is None:
            return {}
        keys = {rank: _KEY.format(rank=rank) for rank in range(self._world_size)}
        found = {}
        for rank, key in keys.items():
            if self._store.check([key]):
                found[rank] = json.loads(self._store.get(key))
        return found

    def annotate(self, err: BaseException) -> None:
        """Name the ranks that did not arrive on a timeout error raised in this rank."""
        text = str(err).lower()
        if not ("timed out" in text or "timeout" in text or isinstance(err, TimeoutError)):
            return
        try:
            entries = self.entries()
        except Exception:
            return
        if entries:
            err.add_note(describe(entries))


def describe(entries: dict[int, dict[str, Any]]) -> str:
    """Which ranks are behind (did not arrive) and where the others wait."""
    now = time.time()
    ahead = max(e["count"] for e in entries.values())
    behind = {r: e for r, e in entries.items() if e["count"] < ahead}
    waiting = {r: e for r, e in entries.items() if e["count"] == ahead}

    def one(rank: int, entry: dict[str, Any]) -> str:
        return (
            f"rank {rank} (last progress: {entry['label']}, {now - entry['since']:.0f} s ago; now at {entry['where']})"
        )

    def many(group: dict[int, dict[str, Any]]) -> str:
        return "; ".join(one(r, e) for r, e in sorted(group.items()))

    if not behind:
        return f"Every rank is at the same point: {many(entries)}."
    label = "Ranks" if len(behind) > 1 else "Rank"
    return (
        f"{label} {', '.join(map(str, sorted(behind)))} did not arrive where the others wait: {many(behind)}. "
        f"Waiting: {many(waiting)}."
    )


def _group_store() -> dist.Store | None:
    """The store of the default group (where every rank can reach every other rank's entries)."""
    from strategies._distributed import RENDEZVOUS

    return RENDEZVOUS.group_store()


#: This process's progress.
PROGRESS = Progress()
