"""A training script the integration tests run as real processes (ddp re-runs it per rank).

Each rank writes ``<out>/rank<R>.json``: what the setup hooks saw, the hook record per stage,
and the weights after each fit.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from strategies import Callback, DataModule, Trainer, TrainModule


def dataset() -> TensorDataset:
    g = torch.Generator().manual_seed(1)
    return TensorDataset(torch.randn(16, 4, generator=g), torch.randn(16, 1, generator=g))


def _dist_probe(trainer: Trainer) -> dict:
    info = {"initialized": dist.is_initialized(), "trainer_rank": trainer.global_rank}
    if dist.is_initialized():
        info["dist_rank"] = dist.get_rank()
        value = torch.tensor([100 + dist.get_rank()])
        dist.broadcast(value, src=0)
        info["broadcast"] = int(value.item())
        dist.barrier()
        info["barrier"] = True
    return info


def _mark_failure() -> None:
    print(f"FAILING AT {time.time():.3f}", file=sys.stderr, flush=True)


class ProbeModule(TrainModule):
    def __init__(self, fail: str = "none", fail_rank: int = 1, sleep: float = 0.0) -> None:
        super().__init__()
        self.fail, self.fail_rank, self.sleep = fail, fail_rank, sleep
        self.seen: dict = {}

    def setup(self, stage: str) -> None:
        self.seen.setdefault("module_setup", _dist_probe(self.trainer))
        if self.fail == "setup" and self.trainer.global_rank == self.fail_rank:
            _mark_failure()
            raise ValueError(f"boom in setup on rank {self.fail_rank}")
        if not hasattr(self, "layer"):
            torch.manual_seed(0)
            self.layer = nn.Linear(4, 1)

    def on_fit_start(self) -> None:
        model = self.trainer.model
        self.seen["wrapped"] = type(model).__name__
        self.seen["layer_device"] = str(self.layer.weight.device)
        self.seen["root_device"] = str(self.trainer.strategy.root_device)

    def training_step(self, batch, batch_idx):
        if self.fail == "training_step" and self.trainer.global_rank == self.fail_rank:
            _mark_failure()
            raise ValueError(f"boom in training_step on rank {self.fail_rank}")
        if self.sleep:
            time.sleep(self.sleep)
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", nn.functional.mse_loss(self.layer(x), y), sync_dist=True)

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", nn.functional.mse_loss(self.layer(x), y), sync_dist=True)

    def predict_step(self, batch, batch_idx):
        return self.layer(batch[0])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class ProbeData(DataModule):
    def __init__(self, batch_size: int) -> None:
        super().__init__()
        self.batch_size = batch_size
        self.seen: dict = {}

    def setup(self, stage: str) -> None:
        self.seen.setdefault("datamodule_setup", _dist_probe(self.trainer))

    def train_dataloader(self):
        return DataLoader(dataset(), batch_size=self.batch_size)

    def val_dataloader(self):
        return DataLoader(dataset(), batch_size=self.batch_size)

    def test_dataloader(self):
        return DataLoader(dataset(), batch_size=self.batch_size)

    def predict_dataloader(self):
        return DataLoader(dataset(), batch_size=self.batch_size)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--strategy", default="ddp")
    parser.add_argument("--devices", type=int, default=2)
    parser.add_argument("--out", required=True)
    parser.add_argument("--fail", default="none", choices=["none", "setup", "training_step"])
    parser.add_argument("--fail-rank", type=int, default=1)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--max-steps", type=int, default=1)
    parser.add_argument("--stages", default="fit,validate,test,predict,fit")
    args = parser.parse_args()

    world = args.devices
    trainer = Trainer(
        strategy=args.strategy, accelerator="cpu", devices="auto" if "TORCHELASTIC_RUN_ID" in os.environ else world,
        max_steps=args.max_steps, limit_val_batches=1, enable_progress_bar=False, record_hooks=True,
        enable_checkpointing=False, logger=False,
        callbacks=[Callback()],
    )
    trainer.strategy.timeout = __import__("datetime").timedelta(seconds=30)
    with open(os.path.join(args.out, f"pid{trainer.global_rank}"), "w") as f:
        env = trainer.strategy.cluster_environment
        f.write(f"{os.getpid()} {env.main_port if env is not None else 0}")
    module = ProbeModule(args.fail, args.fail_rank, args.sleep)
    data = ProbeData(batch_size=16 // trainer.world_size // 2)
    report: dict = {"weights": []}
    for stage in args.stages.split(","):
        if stage == "close":
            trainer.strategy.close()
            continue
        getattr(trainer, stage)(module, datamodule=data)
        if stage == "fit":
            report["weights"].append([p.detach().flatten().tolist() for p in module.layer.parameters()])
    report.update(module.seen)
    report.update(data.seen)
    report["record"] = [list(call) for call in trainer.hook_record]
    report["pg_initialized_at_end"] = dist.is_initialized()
    report["pid"] = os.getpid()
    with open(os.path.join(args.out, f"rank{trainer.global_rank}.json"), "w") as f:
        json.dump(report, f)
    trainer.strategy.close()


if __name__ == "__main__":
    sys.exit(main())
