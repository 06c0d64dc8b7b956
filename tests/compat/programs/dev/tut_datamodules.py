"""Lightning tutorial "PyTorch Lightning DataModules": the same model first with its data hooks
inside the LightningModule, then with an MNIST LightningDataModule and a model built from
``dm.size()`` / ``dm.num_classes``, then with a CIFAR10 LightningDataModule.

Source: PyTorchLightning/lightning-tutorials, lightning_examples/datamodules/datamodules.py
Commit: 41d803d48a47e2e8ce8922fb6d51d6836decd518 (2022-01-10; notebook updated 2021-06-07)
URL: https://github.com/PyTorchLightning/lightning-tutorials/blob/41d803d48a47e2e8ce8922fb6d51d6836decd518/lightning_examples/datamodules/datamodules.py
Licence: CC BY-SA (notebook .meta.yml; repository Apache-2.0), PL team

Edits (nothing else changed):
- Data: MNIST and CIFAR10 (torchvision, download) replaced by random tensors of the same shapes,
  (1, 28, 28) and (3, 32, 32), with random labels in TensorDatasets: 192 "train" samples split
  128/64 (was 55000/5000 and 45000/5000) and 64 test samples. The transforms are dropped
  (torchvision is not installed); ``prepare_data`` downloads nothing.
- ``torchmetrics.functional.accuracy(preds, y)`` (2021 signature) needs ``task=`` in the installed
  torchmetrics 1.9: replaced by a hand-written ``accuracy`` (mean of ``preds == y``).
- The notebook's cells at module level are put in ``main()`` under ``if __name__ == "__main__":``
  (needed for spawned processes). The markdown comment cells are removed.
- Harness: ``--out DIR`` and ``--devices N`` (argparse added); every Trainer gets
  ``default_root_dir=OUT``, ``max_epochs=2`` (was 2, 3 and 5) and, for N=2,
  ``accelerator="ddp_cpu", num_processes=2``. ``pl.seed_everything(0)`` added (the tutorial did
  not seed). ``gpus=AVAIL_GPUS`` kept (0 here).
"""
import argparse
import os

import torch
import torch.nn.functional as F
import pytorch_lightning as pl
from pytorch_lightning import LightningDataModule, LightningModule, Trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

PATH_DATASETS = os.environ.get("PATH_DATASETS", ".")
AVAIL_GPUS = min(1, torch.cuda.device_count())
BATCH_SIZE = 256 if AVAIL_GPUS else 64


def accuracy(preds, target):
    """edit: hand-written stand-in for the 2021 ``torchmetrics.functional.accuracy(preds, target)``."""
    return (preds == target).float().mean()


def _random_split_dataset(dims, n, seed):
    """edit: random tensors of the dataset's shape instead of the torchvision dataset."""
    g = torch.Generator().manual_seed(seed)
    return TensorDataset(torch.randn(n, *dims, generator=g), torch.randint(0, 10, (n,), generator=g))


class LitMNIST(LightningModule):
    def __init__(self, data_dir=PATH_DATASETS, hidden_size=64, learning_rate=2e-4):

        super().__init__()

        # We hardcode dataset specific stuff here.
        self.data_dir = data_dir
        self.num_classes = 10
        self.dims = (1, 28, 28)
        channels, width, height = self.dims

        self.hidden_size = hidden_size
        self.learning_rate = learning_rate

        # Build model
        self.model = nn.Sequential(
            nn.Flatten(),
            nn.Linear(channels * width * height, hidden_size),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(hidden_size, hidden_size),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(hidden_size, self.num_classes),
        )

    def forward(self, x):
        x = self.model(x)
        return F.log_softmax(x, dim=1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        preds = torch.argmax(logits, dim=1)
        acc = accuracy(preds, y)
        self.log("val_loss", loss, prog_bar=True)
        self.log("val_acc", acc, prog_bar=True)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.learning_rate)
        return optimizer

    ####################
    # DATA RELATED HOOKS
    ####################

    def prepare_data(self):
        # download
        pass  # edit: was MNIST(self.data_dir, train=True/False, download=True)

    def setup(self, stage=None):

        # Assign train/val datasets for use in dataloaders
        if stage == "fit" or stage is None:
            mnist_full = _random_split_dataset(self.dims, 192, 1)
            self.mnist_train, self.mnist_val = random_split(mnist_full, [128, 64],
                                                            generator=torch.Generator().manual_seed(2))

        # Assign test dataset for use in dataloader(s)
        if stage == "test" or stage is None:
            self.mnist_test = _random_split_dataset(self.dims, 64, 3)

    def train_dataloader(self):
        return DataLoader(self.mnist_train, batch_size=128)

    def val_dataloader(self):
        return DataLoader(self.mnist_val, batch_size=128)

    def test_dataloader(self):
        return DataLoader(self.mnist_test, batch_size=128)


class MNISTDataModule(LightningDataModule):
    def __init__(self, data_dir: str = PATH_DATASETS):
        super().__init__()
        self.data_dir = data_dir

        # self.dims is returned when you call dm.size()
        # Setting default dims here because we know them.
        # Could optionally be assigned dynamically in dm.setup()
        self.dims = (1, 28, 28)
        self.num_classes = 10

    def prepare_data(self):
        # download
        pass  # edit: was MNIST(self.data_dir, train=True/False, download=True)

    def setup(self, stage=None):

        # Assign train/val datasets for use in dataloaders
        if stage == "fit" or stage is None:
            mnist_full = _random_split_dataset(self.dims, 192, 1)
            self.mnist_train, self.mnist_val = random_split(mnist_full, [128, 64],
                                                            generator=torch.Generator().manual_seed(2))

        # Assign test dataset for use in dataloader(s)
        if stage == "test" or stage is None:
            self.mnist_test = _random_split_dataset(self.dims, 64, 3)

    def train_dataloader(self):
        return DataLoader(self.mnist_train, batch_size=BATCH_SIZE)

    def val_dataloader(self):
        return DataLoader(self.mnist_val, batch_size=BATCH_SIZE)

    def test_dataloader(self):
        return DataLoader(self.mnist_test, batch_size=BATCH_SIZE)


class LitModel(LightningModule):
    def __init__(self, channels, width, height, num_classes, hidden_size=64, learning_rate=2e-4):

        super().__init__()

        # We take in input dimensions as parameters and use those to dynamically build model.
        self.channels = channels
        self.width = width
        self.height = height
        self.num_classes = num_classes
        self.hidden_size = hidden_size
        self.learning_rate = learning_rate

        self.model = nn.Sequential(
            nn.Flatten(),
            nn.Linear(channels * width * height, hidden_size),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(hidden_size, hidden_size),
            nn.ReLU(),
            nn.Dropout(0.1),
            nn.Linear(hidden_size, num_classes),
        )

    def forward(self, x):
        x = self.model(x)
        return F.log_softmax(x, dim=1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        return loss

    def validation_step(self, batch, batch_idx):

        x, y = batch
        logits = self(x)
        loss = F.nll_loss(logits, y)
        preds = torch.argmax(logits, dim=1)
        acc = accuracy(preds, y)
        self.log("val_loss", loss, prog_bar=True)
        self.log("val_acc", acc, prog_bar=True)
        return loss

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=self.learning_rate)
        return optimizer


class CIFAR10DataModule(LightningDataModule):
    def __init__(self, data_dir: str = "./"):
        super().__init__()
        self.data_dir = data_dir

        self.dims = (3, 32, 32)
        self.num_classes = 10

    def prepare_data(self):
        # download
        pass  # edit: was CIFAR10(self.data_dir, train=True/False, download=True)

    def setup(self, stage=None):

        # Assign train/val datasets for use in dataloaders
        if stage == "fit" or stage is None:
            cifar_full = _random_split_dataset(self.dims, 192, 4)
            self.cifar_train, self.cifar_val = random_split(cifar_full, [128, 64],
                                                            generator=torch.Generator().manual_seed(5))

        # Assign test dataset for use in dataloader(s)
        if stage == "test" or stage is None:
            self.cifar_test = _random_split_dataset(self.dims, 64, 6)

    def train_dataloader(self):
        return DataLoader(self.cifar_train, batch_size=BATCH_SIZE)

    def val_dataloader(self):
        return DataLoader(self.cifar_val, batch_size=BATCH_SIZE)

    def test_dataloader(self):
        return DataLoader(self.cifar_test, batch_size=BATCH_SIZE)


def main(args):
    harness = dict(default_root_dir=args.out)  # edit: harness
    if args.devices == 2:
        harness.update(accelerator="ddp_cpu", num_processes=2)

    model = LitMNIST()
    trainer = Trainer(
        max_epochs=2,
        gpus=AVAIL_GPUS,
        progress_bar_refresh_rate=20,
        **harness,
    )
    trainer.fit(model)

    dm = MNISTDataModule()
    model = LitModel(*dm.size(), dm.num_classes)
    trainer = Trainer(
        max_epochs=2,
        progress_bar_refresh_rate=20,
        gpus=AVAIL_GPUS,
        **harness,
    )
    trainer.fit(model, dm)

    dm = CIFAR10DataModule()
    model = LitModel(*dm.size(), dm.num_classes, hidden_size=256)
    trainer = Trainer(
        max_epochs=2,
        progress_bar_refresh_rate=20,
        gpus=AVAIL_GPUS,
        **harness,
    )
    trainer.fit(model, dm)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()  # edit: harness
    parser.add_argument("--out", type=str, required=True)
    parser.add_argument("--devices", type=int, default=1, choices=[1, 2])
    pl.seed_everything(0)  # edit: added
    main(parser.parse_args())
