"""Small programs the fault tests run as real processes (tests/strategies/test_faults.py).

``python fault_run.py MODE OUT``, MODE one of:

* ``thread-fit``: ``fit`` (ddp, 2 ranks) in a ``threading.Thread``; once the thread has ended,
  every rank does more work and writes ``OUT/after<rank>``;
* ``thread-fit-wait``: the same, then each rank writes ``OUT/pid<rank>`` and sleeps (for a test to
  SIGKILL rank 0);
* ``ddp-fit``: a plain ddp fit (2 ranks), then ``OUT/fitted``;
* ``disk-full``: write ``OUT/model.ckpt``, then save a bigger one under a file-size limit
  (``RLIMIT_FSIZE``, SIGXFSZ ignored: writes fail with EFBIG as on a full disk); print what was
  raised as JSON;
* ``save-blocked``: a save whose pickling writes ``OUT/blocked`` and then sleeps (for a test to
  SIGKILL it mid-write);
* ``fsdp-kill-swap``: a 1-rank FSDP run that saves the sharded ``OUT/ckpt`` at step 2, trains on
  to step 4 and saves it again, SIGKILLing itself just before the new checkpoint is renamed into
  place;
* ``elastic`` (under ``torchrun --max-restarts 1 --nproc-per-node 2``): rank 1 fails once; each
  attempt resumes with ``fit(ckpt_path="last")``.
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

from strategies import SingleDeviceStrategy, Trainer, TrainModule


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


def ddp_trainer() -> Trainer:
    return Trainer(
        strategy="ddp",
        accelerator="cpu",
        devices=2,
        max_steps=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )


def thread_fit(out: Path, wait: bool = False) -> None:
    trainer = ddp_trainer()
    thread = threading.Thread(target=trainer.fit, args=(Tiny(), loader()))
    thread.start()
    thread.join()
    rank = trainer.global_rank
    time.sleep(1)  # the main thread goes on after the thread that called fit has ended
    (out / f"after{rank}").write_text("done")
    if wait:  # for the test to SIGKILL rank 0: rank 1 must die with it
        (out / f"pid{rank}").write_text(str(os.getpid()))
        time.sleep(120)


def disk_full(out: Path) -> None:
    import json
    import resource
    import signal

    strategy = SingleDeviceStrategy("cpu")
    strategy.save_checkpoint({"state_dict": {"w": torch.ones(4)}}, out / "model.ckpt")
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
    try:
        strategy.save_checkpoint({"state_dict": {"w": torch.zeros(100_000)}}, out / "model.ckpt")
    except BaseException as err:
        chain = []
        cause: BaseException | None = err
        while cause is not None:
            chain.append(type(cause).__name__)
            cause = cause.__cause__ or cause.__context__
        print(
            json.dumps(
                {"type": type(err).__name__, "errno": getattr(err, "errno", None), "message": str(err), "chain": chain}
            )
        )
    else:
        print(json.dumps({"type": None}))


class Blocker:
    """Pickled into a checkpoint: says so in a file, then blocks the write until the process is killed."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        self.marker.write_text("writing")
        time.sleep(120)
        return (str, ("never",))


def save_blocked(out: Path) -> None:
    strategy = SingleDeviceStrategy("cpu")
    strategy.save_checkpoint(
        {"state_dict": {"w": torch.zeros(1_000_000)}, "x": Blocker(out / "blocked")}, out / "model.ckpt"
    )


def fsdp_kill_swap(out: Path) -> None:
    import signal

    from strategies import FSDPStrategy

    trainer = Trainer(
        strategy=FSDPStrategy(state_dict_type="sharded"),
        accelerator="cpu",
        devices=1,
        max_steps=2,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    model = Tiny()
    trainer.fit(model, loader())
    trainer.save_checkpoint(out / "ckpt")
    (out / "saved-step").write_text(str(trainer.global_step))
    replace = os.replace

    def killing_replace(src, dst):
        if Path(dst) == out / "ckpt" and ".tmp" in Path(src).name.replace("-", "."):
            os.kill(os.getpid(), signal.SIGKILL)  # just before the new checkpoint is renamed into place
        replace(src, dst)

    trainer2 = Trainer(
        strategy=trainer.strategy,
        accelerator="cpu",
        devices=1,
        max_steps=4,
        logger=False,
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
    )
    trainer2.fit(model, loader())
    os.replace = killing_replace
    trainer2.save_checkpoint(out / "ckpt")
    raise AssertionError("not killed")


def elastic(out: Path) -> None:
    """Under ``torchrun --max-restarts 1``: rank 1 fails at step 3 on the first attempt only; every attempt
    calls ``fit(ckpt_path="last")`` and writes ``OUT/attempt<A>-rank<R>.json`` (first and last step)."""
    import json

    from strategies import Callback, ModelCheckpoint

    attempt = int(os.environ.get("TORCHELASTIC_RESTART_COUNT", "0"))

    class FailsOnce(Tiny):
        def training_step(self, batch, batch_idx):
            if attempt == 0 and self.trainer.global_rank == 1 and self.trainer.global_step == 3:
                raise RuntimeError("rank 1 fails once")
            return super().training_step(batch, batch_idx)

    class Start(Callback):
        step = -1

        def on_train_start(self, trainer, module):
            self.step = trainer.global_step

    start = Start()
    trainer = Trainer(
        strategy="ddp",
        accelerator="cpu",
        devices=2,
        max_steps=6,
        logger=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[start, ModelCheckpoint(dirpath=out / "ckpts", save_last=True, every_n_train_steps=2)],
    )
    trainer.fit(FailsOnce(), loader(), ckpt_path="last")
    report = {"start": start.step, "end": trainer.global_step}
    (out / f"attempt{attempt}-rank{trainer.global_rank}.json").write_text(json.dumps(report))


if __name__ == "__main__":
    mode, out = sys.argv[1], Path(sys.argv[2])
    if mode == "thread-fit":
        thread_fit(out)
    elif mode == "ddp-fit":
        ddp_trainer().fit(Tiny(), loader())
        (out / "fitted").write_text("done")
    elif mode == "thread-fit-wait":
        thread_fit(out, wait=True)
    else:
        modes = {
            "disk-full": disk_full,
            "save-blocked": save_blocked,
            "fsdp-kill-swap": fsdp_kill_swap,
            "elastic": elastic,
        }
        modes[mode](out)
