"""``examples/legacy/train.py`` written with the new API (``strategies``): same data, same seed.

    python examples/new/train.py --out DIR      # rank 0; the script is re-run once for rank 1

Rank 0 writes ``weights.pt``; they equal the legacy program's.
"""

from __future__ import annotations

import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import torch  # noqa: E402
import torch.distributed as dist  # noqa: E402
from torch import nn  # noqa: E402
from torch.utils.data import DataLoader, TensorDataset  # noqa: E402

from strategies import DDPStrategy, Trainer, TrainModule  # noqa: E402


class Regressor(TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = None

    def setup(self, stage: str) -> None:
        if self.layer is None:
            hidden = [16 if dist.get_rank() == 0 else -1]
            dist.broadcast_object_list(hidden, src=0)
            torch.manual_seed(1234)
            self.layer = nn.Sequential(nn.Linear(4, hidden[0]), nn.Tanh(), nn.Linear(hidden[0], 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


def data() -> DataLoader:
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=generator)
    y = x.sum(dim=1, keepdim=True)
    return DataLoader(TensorDataset(x, y), batch_size=8)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    out = parser.parse_args().out
    os.makedirs(out, exist_ok=True)

    model = Regressor()
    trainer = Trainer(strategy="ddp", accelerator="cpu", devices=2, max_epochs=1, enable_progress_bar=False)
    trainer.fit(model, data())
    trainer = Trainer(strategy=DDPStrategy(), accelerator="cpu", devices=2, max_epochs=1, enable_progress_bar=False)
    trainer.fit(model, data())
    if trainer.global_rank == 0:
        torch.save({k: v.detach().cpu() for k, v in model.state_dict().items()}, os.path.join(out, "weights.pt"))


if __name__ == "__main__":
    main()
