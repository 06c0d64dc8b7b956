"""Profilers: how long each hook, step and batch fetch of a run takes (``Trainer(profiler=...)``).

``Trainer(profiler="simple")`` times every action with a clock, ``"advanced"`` runs each under
``cProfile``; both report when a run ends, as Lightning 2.6's profilers do: printed on local rank 0
(through the ``strategies`` logger, at INFO), or appended to ``<dirpath>/<stage>-<filename>.txt``
when a ``filename`` is given (``dirpath`` defaults to ``trainer.log_dir``). The actions carry
Lightning's names: ``[LightningModule]Model.on_train_batch_end``, ``[Callback]ModelCheckpoint{...}
.on_validation_end``, ``[Strategy]DDPStrategy.training_step``, ``run_training_epoch``,
``run_training_batch``, ``[_TrainingEpochLoop].train_dataloader_next``, ``[_EvaluationLoop].val_next``,
``save_checkpoint``. A ``Profiler`` subclass with ``start``/``stop`` (and ``summary``) is a profiler
of your own.
"""

from __future__ import annotations

import io
import logging
import math
import os
import re
import time
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

__all__ = ["AdvancedProfiler", "PassThroughProfiler", "Profiler", "SimpleProfiler", "resolve_profiler"]

log = logging.getLogger("strategies.profilers")


class Profiler(ABC):
    """The base of every profiler: ``start(action)``/``stop(action)``, ``summary()``, and the report.

    Args:
        dirpath: the folder of the report file (``trainer.log_dir`` when only ``filename`` is given).
        filename: write the report to ``<stage>-<filename>[-<local rank>].txt`` instead of printing it.
    """

    def __init__(self, dirpath: str | Path | None = None, filename: str | None = None) -> None:
        self.dirpath = dirpath
        self.filename = filename
        self._output_file: TextIO | None = None
        self._local_rank: int | None = None
        self._stage: str | None = None

    @abstractmethod
    def start(self, action_name: str) -> None:
        """An action starts."""

    @abstractmethod
    def stop(self, action_name: str) -> None:
        """The action ends."""

    def summary(self) -> str:
        """The report (empty: nothing to report)."""
        return ""

    @contextmanager
    def profile(self, action_name: str) -> Iterator[str]:
        """``with profiler.profile("load data"): ...`` times the block as one action."""
        try:
            self.start(action_name)
            yield action_name
        finally:
            self.stop(action_name)

    @property
    def local_rank(self) -> int:
        """The process's local rank (0 on one process)."""
        return 0 if self._local_rank is None else self._local_rank

    def setup(self, stage: str, local_rank: int | None = None, log_dir: str | None = None) -> None:
        """A run of ``stage`` starts (``local_rank`` None on one process)."""
        self._stage = stage
        self._local_rank = local_rank
        self.dirpath = self.dirpath or log_dir

    def describe(self) -> None:
        """Report, when a run ends: to the file, or on local rank 0 to the log."""
        summary = self.summary()
        if summary:
            if self.filename and self.dirpath:
                os.makedirs(self.dirpath, exist_ok=True)
                path = os.path.join(self.dirpath, self._report_name())
                with open(path, "a", encoding="utf-8") as file:
                    file.write(summary)
            elif self._local_rank in (None, 0):
                log.info(summary)
        self.teardown(self._stage)

    def teardown(self, stage: str | None) -> None:  # noqa: B027  (a hook: nothing by default)
        """After the report (nothing by default)."""

    def _report_name(self, action_name: str | None = None, extension: str = ".txt") -> str:
        parts = [p for p in (self._stage, self.filename) if p]
        if self._local_rank is not None:
            parts.append(str(self._local_rank))
        if action_name is not None:
            parts.append(action_name)
        base = re.sub(r"_+", "_", re.sub(r"[\\/:*?\"<>|\n\r\t]", "_", "-".join(parts))).strip()
        return (base or "profile") + extension

    def _stats_to_str(self, stats: dict[str, str]) -> str:
        stage = f"{self._stage.upper()} " if self._stage is not None else ""
        lines = [stage + "Profiler Report"]
        for action, value in stats.items():
            header = f"Profile stats for: {action}"
            if self._local_rank is not None:
                header += f" rank: {self._local_rank}"
            lines += [header, value]
        return os.linesep.join(lines)


class PassThroughProfiler(Profiler):
    """No profiling (``Trainer(profiler=None)``)."""

    def start(self, action_name: str) -> None:
        """Nothing."""

    def stop(self, action_name: str) -> None:
        """Nothing."""


class SimpleProfiler(Profiler):
    """The wall time of each action: mean, calls, total and share of the run, as Lightning reports it.

    Args:
        dirpath: see ``Profiler``.
        filename: see ``Profiler``.
        extended: also the number of calls and the percentage of the run's time.
    """

    def __init__(self, dirpath: str | Path | None = None, filename: str | None = None, extended: bool = True) -> None:
        super().__init__(dirpath=dirpath, filename=filename)
        self.current_actions: dict[str, float] = {}
        self.recorded_durations: dict[str, list[float]] = defaultdict(list)
        self.extended = extended
        self.start_time = time.perf_counter()

    def start(self, action_name: str) -> None:
        """Start the clock of ``action_name`` (an error if it runs already)."""
        if action_name in self.current_actions:
            raise ValueError(f"Attempted to start {action_name} which has already started.")
        self.current_actions[action_name] = time.perf_counter()

    def stop(self, action_name: str) -> None:
        """Stop it and keep the duration (an error if it was never started)."""
        end = time.perf_counter()
        if action_name not in self.current_actions:
            raise ValueError(f"Attempting to stop recording an action ({action_name}) which was never started.")
        self.recorded_durations[action_name].append(end - self.current_actions.pop(action_name))

    def summary(self) -> str:
        """A table of the actions, the longest first."""
        sep = os.linesep
        out = (f"{self._stage.upper()} " if self._stage is not None else "") + f"Profiler Report{sep}"
        if not self.recorded_durations:
            return out
        width = max(len(k) for k in self.recorded_durations)
        if self.extended:

            def row(action: str, mean: str, calls: str, total: str, share: str) -> str:
                return f"{sep}|  {action:<{width}s}\t|  {mean:<15}\t|  {calls:<15}\t|  {total:<15}\t|  {share:<15}\t|"

            header = row("Action", "Mean duration (s)", "Num calls", "Total time (s)", "Percentage %")
            rule = f"{sep}{'-' * len(header.expandtabs())}"
            run = time.perf_counter() - self.start_time
            stats = []
            for action, durations in self.recorded_durations.items():
                total = math.fsum(durations)
                stats.append((action, total / len(durations), len(durations), total, 100.0 * total / run))
            stats.sort(key=lambda stat: stat[4], reverse=True)
            out += rule + header + rule + row("Total", "-", f"{sum(s[2] for s in stats)}", f"{run:.5}", "100 %") + rule
            for action, mean, calls, total, share in stats:
                out += row(action, f"{mean:.5}", f"{calls}", f"{total:.5}", f"{share:.5}")
        else:

            def short(action: str, mean: str, total: str) -> str:
                return f"{sep}|  {action:<{width}s}\t|  {mean:<15}\t|  {total:<15}\t|"

            header = short("Action", "Mean duration (s)", "Total time (s)")
            rule = f"{sep}{'-' * len(header.expandtabs())}"
            out += rule + header + rule
            means = sorted(
                ((a, math.fsum(d) / len(d), math.fsum(d)) for a, d in self.recorded_durations.items()),
                key=lambda s: s[1],
                reverse=True,
            )
            for action, mean, total in means:
                out += short(action, f"{mean:.5}", f"{total:.5}")
        return out + rule + sep


class AdvancedProfiler(Profiler):
    """Each action under ``cProfile``: its ``pstats`` report, sorted by cumulative time.

    Args:
        dirpath: see ``Profiler``.
        filename: see ``Profiler``.
        line_count_restriction: how many lines of each report (an int) or which fraction (a float).
        dump_stats: also write each action's raw stats to ``<dirpath>/<stage>-<filename>-<action>.prof``.
    """

    def __init__(
        self,
        dirpath: str | Path | None = None,
        filename: str | None = None,
        line_count_restriction: float = 1.0,
        dump_stats: bool = False,
    ) -> None:
        super().__init__(dirpath=dirpath, filename=filename)
        self.profiled_actions: dict[str, Any] = {}  # action -> cProfile.Profile
        self.line_count_restriction = line_count_restriction
        self.dump_stats = dump_stats

    def start(self, action_name: str) -> None:
        """Start (or resume) ``action_name``'s profile."""
        profile = self.profiled_actions.get(action_name)
        if profile is None:
            import cProfile

            profile = self.profiled_actions[action_name] = cProfile.Profile()
        profile.enable()

    def stop(self, action_name: str) -> None:
        """Pause it (an error if it was never started)."""
        profile = self.profiled_actions.get(action_name)
        if profile is None:
            raise ValueError(f"Attempting to stop recording an action ({action_name}) which was never started.")
        profile.disable()

    def summary(self) -> str:
        """Every action's ``pstats`` report."""
        import pstats

        stats = {}
        for action, profile in self.profiled_actions.items():
            if self.dump_stats and self.dirpath:
                os.makedirs(self.dirpath, exist_ok=True)
                profile.dump_stats(os.path.join(self.dirpath, self._report_name(action, ".prof")))
            stream = io.StringIO()
            pstats.Stats(profile, stream=stream).strip_dirs().sort_stats("cumulative").print_stats(
                self.line_count_restriction
            )
            stats[action] = stream.getvalue()
        return self._stats_to_str(stats)

    def teardown(self, stage: str | None) -> None:
        """Forget the profiles (a new run starts afresh)."""
        self.profiled_actions = {}


_NAMES: dict[str, type[Profiler]] = {"simple": SimpleProfiler, "advanced": AdvancedProfiler}


def resolve_profiler(profiler: Any) -> Profiler:
    """``Trainer(profiler=...)``: None, ``"simple"``, ``"advanced"`` or a ``Profiler``."""
    if profiler is None:
        return PassThroughProfiler()
    if isinstance(profiler, Profiler):
        return profiler
    if isinstance(profiler, str) and profiler.lower() in _NAMES:
        return _NAMES[profiler.lower()]()
    raise ValueError(
        f"`Trainer(profiler={profiler!r})`: pass None, 'simple', 'advanced' or a `strategies.profilers.Profiler`. "
        "(Lightning's 'pytorch' and 'xla' profilers are not here.)"
    )
