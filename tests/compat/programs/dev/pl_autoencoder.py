"""PyTorch Lightning's own autoencoder example (argparse + Trainer.add_argparse_args, fit with
train/val loaders, then ``trainer.test(test_dataloaders=...)`` on the best checkpoint).

Source: PyTorchLightning/pytorch-lightning (now Lightning-AI/pytorch-lightning),
        pl_examples/basic_examples/autoencoder.py
Release: 1.2.10 (commit cf5dc04db4a84e31d8c360c350b3896b67b38aeb)
URL: https://github.com/PyTorchLightning/pytorch-lightning/blob/1.2.10/pl_examples/basic_examples/autoencoder.py
Licence: Apache-2.0 (Copyright The PyTorch Lightning team)

Edits (nothing else changed):
- Data: MNIST train (55000/5000 split) and test sets replaced by random tensors of shape
  (1, 28, 28) with random labels in TensorDatasets: 192 samples split 128/64 by ``random_split``,
  and 64 test samples. torchvision and the ``pl_examples`` / ``tests.helpers`` imports removed
  (``cli_lightning_logo()`` call dropped). Doctest in the docstring removed.
- Harness: ``--out DIR`` and ``--devices N`` added to the parser; ``Trainer.from_argparse_args``
  gets ``default_root_dir=OUT``, ``max_epochs=2`` and, for N=2,
  ``accelerator="ddp_cpu", num_processes=2``. (The program already seeds: ``seed_everything(1234)``.)
"""

from argparse import ArgumentParser

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset, random_split

import pytorch_lightning as pl


class LitAutoEncoder(pl.LightningModule):

    def __init__(self):
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(28 * 28, 64),
            nn.ReLU(),
            nn.Linear(64, 3),
        )
        self.decoder = nn.Sequential(
            nn.Linear(3, 64),
            nn.ReLU(),
            nn.Linear(64, 28 * 28),
        )

    def forward(self, x):
        # in lightning, forward defines the prediction/inference actions
        embedding = self.encoder(x)
        return embedding

    def training_step(self, batch, batch_idx):
        x, y = batch
        x = x.view(x.size(0), -1)
        z = self.encoder(x)
        x_hat = self.decoder(z)
        loss = F.mse_loss(x_hat, x)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        x = x.view(x.size(0), -1)
        z = self.encoder(x)
        x_hat = self.decoder(z)
        loss = F.mse_loss(x_hat, x)
        self.log('valid_loss', loss, on_step=True)

    def test_step(self, batch, batch_idx):
        x, y = batch
        x = x.view(x.size(0), -1)
        z = self.encoder(x)
        x_hat = self.decoder(z)
        loss = F.mse_loss(x_hat, x)
        self.log('test_loss', loss, on_step=True)

    def configure_optimizers(self):
        optimizer = torch.optim.Adam(self.parameters(), lr=1e-3)
        return optimizer


def cli_main():
    pl.seed_everything(1234)

    # ------------
    # args
    # ------------
    parser = ArgumentParser()
    parser.add_argument('--batch_size', default=32, type=int)
    parser.add_argument('--hidden_dim', type=int, default=128)
    parser.add_argument('--out', type=str, required=True)  # edit: harness
    parser.add_argument('--devices', type=int, default=1, choices=[1, 2])  # edit: harness
    parser = pl.Trainer.add_argparse_args(parser)
    args = parser.parse_args()

    # ------------
    # data
    # ------------
    # edit: random tensors instead of MNIST(_DATASETS_PATH, train=True/False, download=True, ...)
    dataset = TensorDataset(torch.rand(192, 1, 28, 28), torch.randint(0, 10, (192,)))
    mnist_test = TensorDataset(torch.rand(64, 1, 28, 28), torch.randint(0, 10, (64,)))
    mnist_train, mnist_val = random_split(dataset, [128, 64])

    train_loader = DataLoader(mnist_train, batch_size=args.batch_size)
    val_loader = DataLoader(mnist_val, batch_size=args.batch_size)
    test_loader = DataLoader(mnist_test, batch_size=args.batch_size)

    # ------------
    # model
    # ------------
    model = LitAutoEncoder()

    # ------------
    # training
    # ------------
    dist = dict(accelerator="ddp_cpu", num_processes=2) if args.devices == 2 else {}  # edit: harness
    trainer = pl.Trainer.from_argparse_args(args, default_root_dir=args.out, max_epochs=2, **dist)
    trainer.fit(model, train_loader, val_loader)

    # ------------
    # testing
    # ------------
    result = trainer.test(test_dataloaders=test_loader)
    print(result)


if __name__ == '__main__':
    cli_main()
