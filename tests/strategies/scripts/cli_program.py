"""A LightningCLI program in Lightning 2.6's shape (the CLI tests run it; its imports are swapped for Lightning's).

python cli_program.py fit --config config.yaml
"""

import torch
from torch.utils.data import DataLoader, TensorDataset

from strategies import DataModule as LightningDataModule
from strategies import TrainModule as LightningModule
from strategies.cli import LightningCLI


class Regressor(LightningModule):
    """A two-layer regressor; the CLI's optimizer replaces ``configure_optimizers`` when one is given."""

    def __init__(self, hidden: int = 8, lr: float = 0.1) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.net = torch.nn.Sequential(torch.nn.Linear(4, hidden), torch.nn.ReLU(), torch.nn.Linear(hidden, 1))

    def forward(self, x):
        return self.net(x)

    def _loss(self, batch):
        x, y = batch
        return torch.nn.functional.mse_loss(self(x), y)

    def training_step(self, batch, batch_idx):
        loss = self._loss(batch)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        self.log("val_loss", self._loss(batch), sync_dist=True)

    def test_step(self, batch, batch_idx):
        self.log("test_loss", self._loss(batch), sync_dist=True)

    def predict_step(self, batch, batch_idx):
        return self(batch[0])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


class WideRegressor(Regressor):
    """A subclass, for ``--model=WideRegressor`` when the CLI is given no model class."""

    def __init__(self, hidden: int = 32, lr: float = 0.05, depth: int = 1) -> None:
        super().__init__(hidden=hidden, lr=lr)
        self.save_hyperparameters()


class RandomData(LightningDataModule):
    """Random inputs whose target is their sum (the same for every run: a fixed generator)."""

    def __init__(self, batch_size: int = 8, size: int = 64) -> None:
        super().__init__()
        self.save_hyperparameters()

    def setup(self, stage):
        x = torch.randn(self.hparams.size, 4, generator=torch.Generator().manual_seed(0))
        self.dataset = TensorDataset(x, x.sum(1, keepdim=True))

    def train_dataloader(self):
        return DataLoader(self.dataset, batch_size=self.hparams.batch_size)

    def val_dataloader(self):
        return DataLoader(self.dataset, batch_size=self.hparams.batch_size)

    def test_dataloader(self):
        return DataLoader(self.dataset, batch_size=self.hparams.batch_size)

    def predict_dataloader(self):
        return DataLoader(self.dataset, batch_size=self.hparams.batch_size)


if __name__ == "__main__":
    import sys

    if sys.argv[1:2] == ["--any-model"]:  # the model class is chosen on the command line
        sys.argv.pop(1)
        LightningCLI(datamodule_class=RandomData)
    else:
        LightningCLI(Regressor, RandomData)
