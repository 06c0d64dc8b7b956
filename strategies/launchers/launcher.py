"""The launcher contract: start the processes of a run and run a function in each."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any


class RankFailedError(RuntimeError):
    """A rank of a multi-process run raised; carries that rank's traceback.

    Attributes:
        rank: the global rank that failed first.
        remote_traceback: the traceback text printed in that rank.
    """

    def __init__(self, rank: int, remote_traceback: str) -> None:
        super().__init__(f"Rank {rank} failed; its traceback follows.\n\n{remote_traceback.rstrip()}")
        self.rank = rank
        self.remote_traceback = remote_traceback


class Launcher(ABC):
    """Starts the processes of a run and runs a function in each."""

    @abstractmethod
    def launch(self, function: Callable[..., Any], *args: Any, trainer: Any = None, **kwargs: Any) -> Any:
        """Run ``function(*args, **kwargs)`` in every process; return this process's (or rank 0's) result."""
