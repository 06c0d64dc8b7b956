"""Train a small regression MLP with DDP on 2 CPU processes.

    python examples/train_ddp.py            # rank 0; the script is re-run once for rank 1

Layers are built in `setup`, where `torch.distributed` is already live; the Trainer moves and
wraps them afterwards.
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from strategies import Trainer, TrainModule


class Regressor(TrainModule):
    def setup(self, stage: str) -> None:
        # The process group exists here: agree on a hidden size chosen by rank 0.
        hidden = [32]
        if dist.is_initialized():
            dist.broadcast_object_list(hidden, src=0)
        self.net = nn.Sequential(nn.Linear(8, hidden[0]), nn.ReLU(), nn.Linear(hidden[0], 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x), y)
        self.log("train_loss", loss, sync_dist=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=1e-2)


def main() -> None:
    torch.manual_seed(0)
    x = torch.randn(512, 8)
    y = x.sum(dim=1, keepdim=True)
    trainer = Trainer(strategy="ddp", accelerator="cpu", devices=2, max_epochs=5)
    trainer.fit(Regressor(), DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True))
    if trainer.is_global_zero:
        print(f"final train_loss {trainer.callback_metrics['train_loss'].item():.4f}")


if __name__ == "__main__":
    main()
