"""``OnExceptionCheckpoint``: a checkpoint written when a run fails, as in Lightning 2.6.

When ``fit`` (or another stage) raises, the callback's ``on_exception`` saves the trainer's state
to ``<dirpath>/<filename>.ckpt``, which ``fit(ckpt_path=...)`` can resume from. A run that ends
normally removes that file in its ``teardown``, so a file left there is always from a failed run.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from strategies.callbacks import Checkpoint

if TYPE_CHECKING:
    from strategies.module import TrainModule
    from strategies.trainer import Trainer

__all__ = ["OnExceptionCheckpoint"]


class OnExceptionCheckpoint(Checkpoint):
    """Save a checkpoint when a stage raises.

    Args:
        dirpath: the folder of the checkpoint.
        filename: its name, without the ``.ckpt`` extension.

    Raises:
        ValueError: an empty ``filename``.

    Under DDP every rank must reach the save (it ends with a barrier, as Lightning's does): an
    exception raised on one rank alone stops at the barrier until its timeout.
    """

    FILE_EXTENSION = ".ckpt"

    def __init__(self, dirpath: str | os.PathLike[str], filename: str = "on_exception") -> None:
        if not filename:
            raise ValueError("`OnExceptionCheckpoint(filename='')`: give the checkpoint a name (without `.ckpt`).")
        self.dirpath = dirpath
        self.filename = filename

    @property
    def ckpt_path(self) -> str:
        """``<dirpath>/<filename>.ckpt``."""
        return os.path.join(self.dirpath, self.filename + self.FILE_EXTENSION)

    def on_exception(self, trainer: Trainer, module: TrainModule, exception: BaseException) -> None:
        """Save the trainer's state (weights, optimizers, loops) to ``ckpt_path``."""
        trainer.save_checkpoint(self.ckpt_path)

    def teardown(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        """The run ended normally: remove a checkpoint left by an earlier failed run (rank 0)."""
        if trainer.is_global_zero and os.path.isfile(self.ckpt_path):
            os.remove(self.ckpt_path)
