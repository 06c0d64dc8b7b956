"""The run ``test_hook_order.py`` records on our Trainer: the module and data of ``lightning_hooks.py``.

    python tests/strategies/scripts/hooked.py STRATEGY DEVICES OUT_DIR [STAGE,STAGE,...]

runs fit, validate, test and predict on one Trainer (each stage is a fresh run of the lifecycle)
and writes ``OUT_DIR/rank<R>.json``: ``{stage: [hook events]}``.
"""

from __future__ import annotations

import datetime
import json
import os
import sys

os.environ.setdefault("DS_ACCELERATOR", "cpu")

import torch
import torch._dynamo
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

from lightning_hooks import SETTINGS, STAGES

from strategies import Callback, DataModule, Trainer, TrainModule

OWNERS = ("module", "callback", "datamodule")


class HookedModule(TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        return torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

    def test_step(self, batch, batch_idx):
        self.log("test_loss", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

    def predict_step(self, batch, batch_idx):
        return self.layer(batch[0])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class HookedData(DataModule):
    def _loader(self):
        # 8 samples per rank: every rank sees the 2 batches of 4 of Lightning's single-device recording.
        n = 8 * self.trainer.world_size
        g = torch.Generator().manual_seed(0)
        return DataLoader(TensorDataset(torch.randn(n, 4, generator=g), torch.randn(n, 1, generator=g)), batch_size=4)

    train_dataloader = val_dataloader = test_dataloader = predict_dataloader = _loader


def make_strategy(name: str):
    """A strategy with a short collective timeout (a hang fails fast)."""
    if name == "single_device":
        return name
    from strategies import STRATEGY_REGISTRY, DDPSpawnStrategy

    # fork: the same launcher and worker code as spawn, without re-importing torch in every worker.
    strategy = DDPSpawnStrategy(start_method="fork") if name == "ddp_spawn" else STRATEGY_REGISTRY.create(name)
    strategy.timeout = datetime.timedelta(seconds=60)
    if name == "deepspeed":
        sys.modules.setdefault("deepspeed", __import__("deepspeed"))
        sys.modules["deepspeed.comm.torch"].build_shm_op = lambda *args, **kwargs: None  # gloo does the collectives
    return strategy


def record(strategy: str, devices: int, stages: tuple[str, ...] = STAGES) -> tuple[int, dict[str, list[str]]]:
    """This process's rank and the module/callback/datamodule events of each stage (one Trainer runs them all)."""
    trainer = Trainer(
        strategy=make_strategy(strategy),
        accelerator="cpu",
        devices=devices,
        record_hooks=True,
        callbacks=[Callback()],
        **SETTINGS,
    )
    try:
        for stage in stages:
            getattr(trainer, stage)(HookedModule(), datamodule=HookedData())
    finally:
        trainer.strategy.close()
    events = {
        stage: [c.name for c in trainer.hook_record if c.stage == stage and c.name.split(".")[0] in OWNERS]
        for stage in stages
    }
    return trainer.global_rank, events


def main() -> None:
    strategy, devices, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    rank, events = record(strategy, devices, tuple(sys.argv[4].split(",")) if len(sys.argv) > 4 else STAGES)
    with open(os.path.join(out, f"rank{rank}.json"), "w") as f:
        json.dump(events, f)


if __name__ == "__main__":
    main()
