"""Lightning tutorial "Introduction to Pytorch Lightning" (MNIST hello world): a minimal module fit
on a DataLoader, then a module that owns its data hooks (prepare_data/setup/*_dataloader), a
torchmetrics metric object logged with ``self.log``, ``trainer.test()`` with no model (best
checkpoint), and a second ``trainer.fit(model)`` on the same Trainer.

Source: PyTorchLightning/lightning-tutorials, lightning_examples/mnist-hello-world/hello-world.py
Commit: 41d803d48a47e2e8ce8922fb6d51d6836decd518 (2022-01-10; notebook updated 2021-06-16)
URL: https://github.com/PyTorchLightning/lightning-tutorials/blob/41d803d48a47e2e8ce8922fb6d51d6836decd518/lightning_examples/mnist-hello-world/hello-world.py
Licence: CC BY-SA (notebook .meta.yml; repository Apache-2.0), PL team

Edits (nothing else changed):
- Data: MNIST (torchvision, download) replaced by random tensors of shape (1, 28, 28) with random
  labels in TensorDatasets: 128 train samples for the first model; for LitMNIST 192 "train"
  samples split 128/64 (was 55000/5000) and 64 test samples. The transforms are dropped
  (torchvision is not installed); ``prepare_data`` downloads nothing.
- ``torchmetrics.Accuracy()`` (2021 API: no arguments) needs ``task=`` in the installed
  torchmetrics 1.9: replaced by a hand-written ``torchmetrics.Metric`` subclass ``Accuracy``
  (correct/total states, ``update(preds, target)``/``compute()``), still logged as a metric object.
- The notebook's cells at module level are put in ``main()`` under ``if __name__ == "__main__":``
  (needed for spawned processes). The markdown comment cells are removed.
- Harness: ``--out DIR`` and ``--devices N`` (argparse added); every Trainer gets
  ``default_root_dir=OUT``, ``max_epochs=2`` (was 3) and, for N=2,
  ``accelerator="ddp_cpu", num_processes=2``. ``pl.seed_everything(0)`` added (the tutorial
  did not seed). ``gpus=AVAIL_GPUS`` kept (0 here).
"""
# %%
import argparse
import os

import torch
import torchmetrics
import pytorch_lightning as pl
from pytorch_lightning import LightningModule, Trainer
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset, random_split

PATH_DATASETS = os.environ.get("PATH_DATASETS", ".")
AVAIL_GPUS = min(1, torch.cuda.device_count())
BATCH_SIZE = 256 if AVAIL_GPUS else 64


class Accuracy(torchmetrics.Metric):
    """edit: hand-written stand-in for the 2021 ``torchmetrics.Accuracy()``."""

    def __init__(self):
        super().__init__()
        self.add_state("correct", default=torch.tensor(0), dist_reduce_fx="sum")
        self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

    def update(self, preds, target):
        self.correct += (preds == target).sum()
        self.total += target.numel()

    def compute(self):
        return self.correct.float() / self.total


# %%
class MNISTModel(LightningModule):
    def __init__(self):
        super().__init__()
        self.l1 = torch.nn.Linear(28 * 28, 10)

    def forward(self, x):
        return torch.relu(self.l1(x.view(x.size(0), -1)))

    def training_step(self, batch, batch_nb):
        x, y = batch
        loss = F.cross_entropy(self(x), y)
        return loss

    def configure_optimizers(self):
        return torch.optim.Adam(self.parameters(), lr=0.02)


# %%
class LitMNIST(LightningModule):
    def __init__(self, data_dir=PATH_DATASETS, hidden_size=64, learning_rate=2e-4):

        super().__init__()

        # Set our init args as class attributes
        self.data_dir = data_dir
        self.hidden_size = hidden_size
        self.learning_rate = learning_rate

        # Hardcode some dataset specific attributes
        self.num_classes = 10
        self.dims = (1, 28, 28)
        channels, width, height = self.dims

        # Define PyTorch model
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

        self.accuracy = Accuracy()

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
        self.accuracy(preds, y)

        # Calling self.log will surface up scalars for you in TensorBoard
        self.log("val_loss", loss, prog_bar=True)
        self.log("val_acc", self.accuracy, prog_bar=True)
        return loss

    def test_step(self, batch, batch_idx):
        # Here we just reuse the validation_step for testing
        return self.validation_step(batch, batch_idx)

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
            g = torch.Generator().manual_seed(1)  # edit: random tensors instead of MNIST
            mnist_full = TensorDataset(torch.randn(192, *self.dims, generator=g),
                                       torch.randint(0, 10, (192,), generator=g))
            self.mnist_train, self.mnist_val = random_split(mnist_full, [128, 64],
                                                            generator=torch.Generator().manual_seed(2))

        # Assign test dataset for use in dataloader(s)
        if stage == "test" or stage is None:
            g = torch.Generator().manual_seed(3)  # edit: random tensors instead of MNIST
            self.mnist_test = TensorDataset(torch.randn(64, *self.dims, generator=g),
                                            torch.randint(0, 10, (64,), generator=g))

    def train_dataloader(self):
        return DataLoader(self.mnist_train, batch_size=BATCH_SIZE)

    def val_dataloader(self):
        return DataLoader(self.mnist_val, batch_size=BATCH_SIZE)

    def test_dataloader(self):
        return DataLoader(self.mnist_test, batch_size=BATCH_SIZE)


def main(args):
    harness = dict(default_root_dir=args.out)  # edit: harness
    if args.devices == 2:
        harness.update(accelerator="ddp_cpu", num_processes=2)

    # %%
    # Init our model
    mnist_model = MNISTModel()

    # Init DataLoader from MNIST Dataset
    g = torch.Generator().manual_seed(0)  # edit: random tensors instead of MNIST
    train_ds = TensorDataset(torch.randn(128, 1, 28, 28, generator=g), torch.randint(0, 10, (128,), generator=g))
    train_loader = DataLoader(train_ds, batch_size=BATCH_SIZE)

    # Initialize a trainer
    trainer = Trainer(
        gpus=AVAIL_GPUS,
        max_epochs=2,
        progress_bar_refresh_rate=20,
        **harness,
    )

    # Train the model ⚡
    trainer.fit(mnist_model, train_loader)

    # %%
    model = LitMNIST()
    trainer = Trainer(
        gpus=AVAIL_GPUS,
        max_epochs=2,
        progress_bar_refresh_rate=20,
        **harness,
    )
    trainer.fit(model)

    # %% [markdown]
    # ### Testing
    #
    # To test a model, call `trainer.test(model)`.
    #
    # Or, if you've just trained a model, you can just call `trainer.test()` and Lightning will automatically
    # test using the best saved checkpoint (conditioned on val_loss).

    # %%
    trainer.test()

    # %% [markdown]
    # ### Bonus Tip
    #
    # You can keep calling `trainer.fit(model)` as many times as you'd like to continue training

    # %%
    trainer.fit(model)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()  # edit: harness
    parser.add_argument("--out", type=str, required=True)
    parser.add_argument("--devices", type=int, default=1, choices=[1, 2])
    pl.seed_everything(0)  # edit: added
    main(parser.parse_args())
