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
    from strategies.utilities import rank_zero_only

    info = {"initialized": dist.is_initialized(), "trainer_rank": trainer.global_rank}
    info["rank_zero_only_rank"] = rank_zero_only._rank  # what the strategy set, not a fallback
    if dist.is_initialized():
        info["dist_rank"] = dist.get_rank()
        value = torch.tensor([100 + dist.get_rank()])
        dist.broadcast(value, src=0)
        info["broadcast"] = int(value.item())
        dist.barrier()
        info["barrier"] = True
    return info


def listeners(port: int) -> list[str]:
    """Local addresses (hex, as /proc/net/tcp and tcp6 show them) listening on ``port``."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.rsplit(":", 1)
                if state == "0A" and int(hex_port, 16) == port:
                    found.append(address)
    return found


def _mark_failure() -> None:
    print(f"FAILING AT {time.time():.3f}", file=sys.stderr, flush=True)


class ProbeModule(TrainModule):
    def __init__(
        self, fail: str = "none", fail_rank: int = 1, sleep: float = 0.0, out: str | None = None, hang_rank: int = -1
    ) -> None:
        super().__init__()
        self.fail, self.fail_rank, self.sleep, self.out, self.hang_rank = fail, fail_rank, sleep, out, hang_rank
        self.seen: dict = {}

    def setup(self, stage: str) -> None:
        env = self.trainer.strategy.cluster_environment
        port = env.main_port if env is not None else 0
        if self.out is not None and "pid" not in self.seen:
            # The rendezvous port is known (reserved) from here on.
            with open(os.path.join(self.out, f"pid{self.trainer.global_rank}"), "w") as f:
                f.write(f"{os.getpid()} {port}")
            self.seen["pid"] = os.getpid()
        if self.trainer.global_rank == 0 and port:
            self.seen.setdefault("listeners", listeners(port))
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
        if self.out is not None and "training" not in self.seen:
            # Tests that signal a run wait for this file (every rank is in the loop), not for a guessed delay.
            with open(os.path.join(self.out, f"training{self.trainer.global_rank}"), "w") as f:
                f.write(str(os.getpid()))
            self.seen["training"] = True
        if self.fail == "training_step" and self.trainer.global_rank == self.fail_rank:
            _mark_failure()
            raise ValueError(f"boom in training_step on rank {self.fail_rank}")
        if self.sleep:
            time.sleep(self.sleep)
        if self.trainer.global_rank == self.hang_rank and batch_idx == 1:
            print(f"HANGING AT {time.time():.3f}", file=sys.stderr, flush=True)
            time.sleep(3600)
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
    # Generous: on a busy machine rank 1 may need many seconds to import torch and join the rendezvous.
    parser.add_argument("--timeout", type=float, default=120.0)
    parser.add_argument("--hang-rank", type=int, default=-1)
    parser.add_argument("--num-nodes", type=int, default=1)
    args = parser.parse_args()

    world = args.devices
    external = "TORCHELASTIC_RUN_ID" in os.environ or "SLURM_NTASKS" in os.environ
    trainer = Trainer(
        strategy=args.strategy,
        accelerator="cpu",
        devices="auto" if external else world,
        num_nodes=args.num_nodes,
        max_steps=args.max_steps,
        limit_val_batches=1,
        enable_progress_bar=False,
        record_hooks=True,
        enable_checkpointing=False,
        logger=False,
        callbacks=[Callback()],
    )
    trainer.strategy.timeout = args.timeout
    module = ProbeModule(args.fail, args.fail_rank, args.sleep, args.out, args.hang_rank)
    data = ProbeData(batch_size=16 // trainer.world_size // 2)
    report: dict = {"weights": []}
    for stage in args.stages.split(","):
        if stage == "close":
            trainer.strategy.close()
            continue
        if stage.startswith("tryfit"):  # tryfit / tryfit-close: a fit whose failure the script catches
            try:
                trainer.fit(module, datamodule=data)
            except Exception as err:
                print(f"CAUGHT {type(err).__name__} AT {time.time():.3f}", file=sys.stderr, flush=True)
                if stage == "tryfit-close":
                    trainer.strategy.close()
            module.fail = "none"
            continue
        getattr(trainer, stage)(module, datamodule=data)
        if stage == "fit":
            report["weights"].append([p.detach().flatten().tolist() for p in module.layer.parameters()])
    report.update(module.seen)
    report.update(data.seen)
    report["record"] = [list(call) for call in trainer.hook_record]
    report["pg_initialized_at_end"] = dist.is_initialized()
    report["world_size"] = trainer.world_size
    report["node_rank"] = trainer.strategy.node_rank
    report["local_rank"] = trainer.local_rank
    report["pid"] = os.getpid()
    with open(os.path.join(args.out, f"rank{trainer.global_rank}.json"), "w") as f:
        json.dump(report, f)
    trainer.strategy.close()


if __name__ == "__main__":
    sys.exit(main())
