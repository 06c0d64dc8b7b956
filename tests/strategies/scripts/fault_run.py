"""Small programs the fault tests run as real processes (tests/strategies/test_faults.py).

``python fault_run.py thread-fit OUT``: ``fit`` (ddp, 2 ranks) in a ``threading.Thread``; once the
thread has ended, every rank does more work and writes ``OUT/after<rank>``. ``thread-fit-wait``:
the same, then each rank writes ``OUT/pid<rank>`` and sleeps (for a test to SIGKILL rank 0).
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from strategies import Trainer, TrainModule


class Tiny(TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader() -> DataLoader:
    g = torch.Generator().manual_seed(0)
    return DataLoader(TensorDataset(torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)), batch_size=2)


def thread_fit(out: Path, wait: bool = False) -> None:
    trainer = Trainer(
        strategy="ddp",
        accelerator="cpu",
        devices=2,
        max_steps=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    thread = threading.Thread(target=trainer.fit, args=(Tiny(), loader()))
    thread.start()
    thread.join()
    rank = trainer.global_rank
    time.sleep(1)  # the main thread goes on after the thread that called fit has ended
    (out / f"after{rank}").write_text("done")
    if wait:  # for the test to SIGKILL rank 0: rank 1 must die with it
        (out / f"pid{rank}").write_text(str(os.getpid()))
        time.sleep(120)


if __name__ == "__main__":
    mode, out = sys.argv[1], Path(sys.argv[2])
    if mode == "thread-fit":
        thread_fit(out)
    elif mode == "thread-fit-wait":
        thread_fit(out, wait=True)
