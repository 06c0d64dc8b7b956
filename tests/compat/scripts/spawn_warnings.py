"""A ddp_spawn program with old names: run by tests/compat/test_spawn_warnings.py."""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import compat
from compat.plugins import DDPSpawnPlugin


class MyPlugin(DDPSpawnPlugin):
    def pre_dispatch(self):
        super().pre_dispatch()


class Model(compat.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    data = DataLoader(TensorDataset(torch.randn(16, 4), torch.randn(16, 1)), batch_size=4)
    trainer = compat.Trainer(accelerator="cpu", devices=2, plugins=[MyPlugin()], max_steps=1, enable_progress_bar=False)
    trainer.fit(Model(), data)
    print("done")
