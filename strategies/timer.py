"""``Timer``: the time spent in each stage, and a time limit for training, as in Lightning 2.6.

``Trainer(max_time=...)`` adds one (``interval="step"``) unless the callbacks already hold a
``Timer``. The elapsed training time is kept in checkpoints (``state_dict``, Lightning's layout:
``{"time_elapsed": {"train": s, "sanity_check": s, "validate": s, "test": s, "predict": s}}``),
so a resumed run counts the time of the runs before it against the limit, and a checkpoint of
either library resumes on the other with its clock.
"""

from __future__ import annotations

import datetime
import re
import time
from typing import TYPE_CHECKING, Any

from strategies.callbacks import Callback
from strategies.utilities.rank_zero import rank_zero_info

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer

__all__ = ["Timer"]

#: Lightning's ``RunningStage`` values, in its order (the keys of a saved state).
STAGES = ("train", "sanity_check", "validate", "test", "predict")
_INTERVALS = ("step", "epoch")
_clock = time.monotonic  # looked up at each call, so a test can give the module a fake clock


def parse_duration(duration: Any, what: str = "Timer(duration=...)") -> float | None:
    """Seconds from ``"DD:HH:MM:SS"``, a ``timedelta`` or a dict of ``timedelta`` keywords (``None``: no limit).

    Raises:
        ValueError: any other value, naming ``what`` the user wrote.
    """
    if duration is None:
        return None
    if isinstance(duration, str):
        match = re.fullmatch(r"(\d+):(\d\d):(\d\d):(\d\d)", duration.strip())
        if not match:
            raise ValueError(
                f"`{what.replace('...', repr(duration))}` is not a duration: use 'DD:HH:MM:SS' "
                "(e.g. '00:12:00:00' for 12 hours), a `datetime.timedelta` or a dict such as {'hours': 12}."
            )
        days, hours, minutes, seconds = map(int, match.groups())
        duration = datetime.timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)
    elif isinstance(duration, dict):
        try:
            duration = datetime.timedelta(**duration)
        except TypeError as err:
            raise ValueError(
                f"`{what.replace('...', repr(duration))}`: the dict's keys must be `timedelta` keywords "
                f"(days, hours, minutes, seconds, ...): {err}"
            ) from None
    if not isinstance(duration, datetime.timedelta):
        raise ValueError(
            f"`{what.replace('...', repr(duration))}`: pass 'DD:HH:MM:SS', a `datetime.timedelta` or a dict; "
            f"got `{type(duration).__name__}`."
        )
    return duration.total_seconds()


def _stage(stage: str) -> str:
    value = getattr(stage, "value", stage)  # Lightning's RunningStage, or a plain string
    if value not in STAGES:
        raise ValueError(f"unknown stage {stage!r}: use one of {', '.join(map(repr, STAGES))}")
    return str(value)


class Timer(Callback):
    """Track the time of the training, validation and test loops, and stop training at a limit.

    Args:
        duration: the training time limit: ``"DD:HH:MM:SS"``, a ``datetime.timedelta`` or a dict of
            its keywords (``{"hours": 12}``); ``None`` only measures.
        interval: ``"step"`` checks the limit after every training batch, ``"epoch"`` after every
            training epoch. Either way it is also checked at the start of ``fit`` (after a
            checkpoint is restored: a run resumed with no time left stops at once). All ranks stop
            at the same point: rank 0's clock decides.
        verbose: log (rank 0, the ``strategies`` logger at INFO) when the limit stops training.

    Raises:
        ValueError: a ``duration`` or ``interval`` it cannot use.

    Example::

        timer = Timer(duration="00:12:00:00")
        trainer = Trainer(callbacks=[timer])
        trainer.fit(model)
        timer.time_elapsed("train"), timer.time_elapsed("validate")
    """

    def __init__(self, duration: Any = None, interval: str = "step", verbose: bool = True) -> None:
        interval = getattr(interval, "value", interval)
        if interval not in _INTERVALS:
            raise ValueError(f"`Timer(interval={interval!r})`: use 'step' or 'epoch'.")
        self._duration = parse_duration(duration)
        self._interval = interval
        self._verbose = verbose
        self._start_time: dict[str, float | None] = dict.fromkeys(STAGES)
        self._end_time: dict[str, float | None] = dict.fromkeys(STAGES)
        self._offset = 0.0

    # -- queries --------------------------------------------------------------------------------

    def start_time(self, stage: str = "train") -> float | None:
        """When ``stage`` last started (``time.monotonic()`` seconds), ``None`` if it has not."""
        return self._start_time[_stage(stage)]

    def end_time(self, stage: str = "train") -> float | None:
        """When ``stage`` last ended (``time.monotonic()`` seconds), ``None`` if it has not."""
        return self._end_time[_stage(stage)]

    def time_elapsed(self, stage: str = "train") -> float:
        """Seconds spent in ``stage`` (its last run; for ``"train"``, plus the runs a checkpoint carried)."""
        stage = _stage(stage)
        start, end = self._start_time[stage], self._end_time[stage]
        offset = self._offset if stage == "train" else 0.0
        if start is None:
            return offset
        return (_clock() if end is None else end) - start + offset

    def time_remaining(self, stage: str = "train") -> float | None:
        """Seconds left before the limit (negative once past it), ``None`` without a ``duration``."""
        return None if self._duration is None else self._duration - self.time_elapsed(stage)

    # -- hooks ----------------------------------------------------------------------------------

    def on_train_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Start the training clock."""
        self._start("train")

    def on_train_end(self, trainer: Trainer, module: TrainModule) -> None:
        """Stop the training clock."""
        self._end("train")

    def on_validation_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Start the validation clock (each validation run restarts it)."""
        self._start("validate")

    def on_validation_end(self, trainer: Trainer, module: TrainModule) -> None:
        """Stop the validation clock."""
        self._end("validate")

    def on_test_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Start the test clock."""
        self._start("test")

    def on_test_end(self, trainer: Trainer, module: TrainModule) -> None:
        """Stop the test clock."""
        self._end("test")

    def on_fit_start(self, trainer: Trainer, module: TrainModule) -> None:
        """Check the limit once the checkpoint (if any) is restored: its time may be used up."""
        if self._duration is not None:
            self._check(trainer)

    def on_train_batch_end(
        self, trainer: Trainer, module: TrainModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        """With ``interval="step"``, stop when the limit is reached."""
        if self._interval == "step" and self._duration is not None:
            self._check(trainer)

    def on_train_epoch_end(self, trainer: Trainer, module: TrainModule) -> None:
        """With ``interval="epoch"``, stop when the limit is reached."""
        if self._interval == "epoch" and self._duration is not None:
            self._check(trainer)

    # -- checkpoints ----------------------------------------------------------------------------

    def state_dict(self) -> dict[str, Any]:
        """The seconds spent in each stage, under Lightning's keys."""
        return {"time_elapsed": {stage: self.time_elapsed(stage) for stage in STAGES}}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Count the saved training time against the limit from now on."""
        self._offset = float(state_dict.get("time_elapsed", {}).get("train", 0.0))

    # -- internals ------------------------------------------------------------------------------

    def _start(self, stage: str) -> None:
        self._start_time[stage] = _clock()
        self._end_time[stage] = None

    def _end(self, stage: str) -> None:
        self._end_time[stage] = _clock()

    def _check(self, trainer: Trainer) -> None:
        assert self._duration is not None
        stop = bool(trainer.strategy.broadcast(self.time_elapsed() >= self._duration))
        trainer.should_stop = trainer.should_stop or stop
        if stop and self._verbose:
            elapsed = datetime.timedelta(seconds=int(self.time_elapsed()))
            rank_zero_info(f"Time limit reached. Elapsed time is {elapsed}. Signaling Trainer to stop.")
