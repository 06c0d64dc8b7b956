"""A 2-process DDP fit after ``seed_everything``: each rank writes the first random numbers its
``training_step`` draws (``rank<N>.json`` in argv[1]). argv[2] is how many numbers the program
draws before ``fit``; argv[3] is ``lightning`` or ``strategies``."""

import json
import sys
from pathlib import Path

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

out, before, which = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
if which == "lightning":
    from lightning.pytorch import LightningModule as Base
    from lightning.pytorch import Trainer, seed_everything
else:
    from strategies import Trainer, seed_everything
    from strategies import TrainModule as Base


class Module(Base):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(4, 1)
        self.draws: list[float] = []

    def training_step(self, batch, batch_idx):
        self.draws.append(float(torch.rand(1)))
        return self.layer(batch[0]).pow(2).mean()

    def on_train_end(self) -> None:
        (out / f"rank{self.global_rank}.json").write_text(json.dumps(self.draws))

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


seed_everything(7)
torch.rand(before)  # randomness the program uses before fit
trainer = Trainer(
    strategy="ddp",
    accelerator="cpu",
    devices=2,
    max_steps=3,
    logger=False,
    enable_checkpointing=False,
    enable_progress_bar=False,
    enable_model_summary=False,
)
trainer.fit(Module(), DataLoader(TensorDataset(torch.randn(32, 4)), batch_size=4))
