"""A 1.x GAN-style module with two optimizers and ``training_step(..., optimizer_idx)`` under
``compat.Trainer``: ``python several_optimizers.py OUT DEVICES`` (2: 1.x's ``ddp_cpu`` on 2
processes). Each rank writes ``OUT/rank<r>.json`` at the end of fit: the (batch, optimizer)
calls, the global step, the learning rates and a checksum of the weights."""

from __future__ import annotations

import json
import sys
import warnings

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import compat

warnings.simplefilter("ignore")


class TwoOptimizers(compat.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.generator = nn.Linear(4, 4)
        self.discriminator = nn.Linear(4, 1)
        self.calls: list[list[int]] = []

    def training_step(self, batch, batch_idx, optimizer_idx):
        (x,) = batch
        self.calls.append([batch_idx, optimizer_idx])
        if optimizer_idx == 0:  # the generator: the discriminator's parameters are frozen here
            assert not any(p.requires_grad for p in self.discriminator.parameters())
            return -self.discriminator(self.generator(x)).mean()
        assert not any(p.requires_grad for p in self.generator.parameters())
        fake = self.generator(x).detach()
        return (self.discriminator(fake) - self.discriminator(x)).mean()

    def on_fit_end(self):
        trainer = self.trainer
        result = {
            "calls": self.calls,
            "global_step": trainer.global_step,
            "lrs": [opt.param_groups[0]["lr"] for opt in trainer.optimizers],
            "weights": sum(float(p.detach().double().sum()) for p in self.parameters()),
        }
        with open(f"{self.out}/rank{trainer.global_rank}.json", "w") as f:
            json.dump(result, f)

    def configure_optimizers(self):
        opt_g = torch.optim.SGD(self.generator.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(self.discriminator.parameters(), lr=0.2)
        return [opt_g, opt_d], [
            torch.optim.lr_scheduler.StepLR(opt_g, 1, 0.5),
            torch.optim.lr_scheduler.StepLR(opt_d, 1, 0.5),
        ]


def main(out: str, devices: int) -> None:
    torch.manual_seed(0)
    data = DataLoader(TensorDataset(torch.randn(16, 4)), batch_size=4)
    dist = {"accelerator": "ddp_cpu", "num_processes": 2} if devices == 2 else {}
    trainer = compat.Trainer(
        max_epochs=2, logger=False, enable_progress_bar=False, checkpoint_callback=False, default_root_dir=out, **dist
    )
    model = TwoOptimizers()
    model.out = out
    trainer.fit(model, data)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
