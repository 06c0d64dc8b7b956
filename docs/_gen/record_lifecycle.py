"""Record the hook order of a 2-process ``fit`` (run by ``lifecycle.py --record``; not a test).

``python docs/_gen/record_lifecycle.py --strategy ddp --out DIR`` trains a tiny model with
``Trainer(record_hooks=True)`` on 2 CPU processes and writes each rank's record of the ``fit``
stage to ``DIR/rank<R>.json``. The record is written when the process exits, so it holds every
call, including the last ``strategy.teardown`` (a spawned worker exits through
``multiprocessing``'s own exit handler, where ``atexit`` does not run: hence ``Finalize``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from multiprocessing.util import Finalize
from typing import Any

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from strategies import Callback, DataModule, Trainer, TrainModule


class _Model(TrainModule):
    def setup(self, stage: str) -> None:
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch: Any, batch_idx: int) -> None:
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.layer(x), y), sync_dist=True)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return torch.optim.SGD(self.parameters(), lr=0.1)


class _Data(DataModule):
    def _loader(self) -> DataLoader:
        g = torch.Generator().manual_seed(0)
        return DataLoader(TensorDataset(torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)), batch_size=2)

    def train_dataloader(self) -> DataLoader:
        return self._loader()

    def val_dataloader(self) -> DataLoader:
        return self._loader()


class _WriteAtExit(Callback):
    """Writes this rank's record when its process exits (after the last lifecycle call)."""

    def __init__(self, out: str) -> None:
        self.out = out

    def setup(self, trainer: Trainer, module: TrainModule, stage: str) -> None:
        record, path = trainer.hook_record, os.path.join(self.out, f"rank{trainer.global_rank}.json")
        Finalize(None, _dump, args=(record, path), exitpriority=100)


def _dump(record: list, path: str) -> None:
    with open(path, "w", encoding="utf-8") as f:
        json.dump([call.name for call in record if call.stage == "fit"], f)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", choices=["ddp", "ddp_spawn"], required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    trainer = Trainer(
        strategy=args.strategy,
        accelerator="cpu",
        devices=2,
        max_steps=1,
        limit_val_batches=1,
        enable_progress_bar=False,
        record_hooks=True,
        callbacks=[_WriteAtExit(args.out)],
    )
    trainer.fit(_Model(), datamodule=_Data())
    trainer.strategy.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
