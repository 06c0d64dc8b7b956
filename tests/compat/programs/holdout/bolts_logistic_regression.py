"""lightning-bolts' logistic regression (dict returns with "log"/"progress_bar", *_epoch_end hooks,
a LightningDataModule, argparse, ``trainer.fit(model, train_dataloader=..., val_dataloaders=...)``).

Source: PyTorchLightning/lightning-bolts (now Lightning-Universe/lightning-bolts),
        pl_bolts/models/regression/logistic_regression.py, with pl_bolts/datamodules/sklearn_datamodule.py inlined
Release: 0.4.0 (commit 2f93c88245c635a49dfcfc1d612197e1a4164ea9, 2021-09-09)
URL: https://github.com/PyTorchLightning/lightning-bolts/blob/0.4.0/pl_bolts/models/regression/logistic_regression.py
Licence: Apache-2.0 (Copyright The PyTorch Lightning team)

Edits (nothing else changed):
- One file: ``SklearnDataset`` and ``SklearnDataModule`` inlined from the same release
  (sklearn_datamodule.py; its unused ``TensorDataset`` class and doctest examples left out);
  ``from pl_bolts...`` imports removed.
- scikit-learn is not installed: ``load_iris`` is replaced by random numpy arrays of the iris
  shapes (X: 150 x 4 float64, y: 150 int64 labels in 0-2, fixed seed); ``sklearn.utils.shuffle``
  (used by ``SklearnDataModule`` with ``shuffle=True``) is replaced by ``sk_shuffle``, a
  hand-written numpy permutation with the same ``random_state`` argument; the
  ``_SKLEARN_AVAILABLE`` checks are removed.
- torchmetrics: ``torchmetrics.functional.accuracy`` (2021 signature, no ``task=``) is replaced by
  a hand-written ``accuracy(preds, target)`` (argmax over the last dim, mean of matches).
- Harness: ``--out DIR`` and ``--devices N`` parsed by a separate parser (``parse_known_args``)
  before the program's parser, which gets the remaining arguments (so they cannot clash with the
  Trainer's own ``--devices``); ``Trainer.from_argparse_args`` gets ``default_root_dir=OUT``,
  ``max_epochs=2`` and, for N=2, ``accelerator="ddp_cpu", num_processes=2``.
  The program seeds itself (``seed_everything(1234)``).
"""
import argparse
import math
from argparse import ArgumentParser
from typing import Any, Dict, List, Tuple, Type

import numpy as np
import torch
from pytorch_lightning import LightningDataModule, LightningModule, Trainer, seed_everything
from torch import Tensor, nn
from torch.nn import functional as F
from torch.nn.functional import softmax
from torch.optim import Adam
from torch.optim.optimizer import Optimizer
from torch.utils.data import DataLoader, Dataset


# ----------------------------------------------------------------------------- harness (added)
def _harness_args(argv=None):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--out", required=True)
    parser.add_argument("--devices", type=int, default=1, choices=(1, 2))
    return parser.parse_known_args(argv)


def _harness_trainer_kwargs(harness):
    kwargs = {"default_root_dir": harness.out, "max_epochs": 2}
    if harness.devices == 2:
        kwargs.update(accelerator="ddp_cpu", num_processes=2)
    return kwargs


# ----------------------------------------------------------------------------- replacements (added)
def accuracy(preds: Tensor, target: Tensor) -> Tensor:
    """Hand-written stand-in for the 2021 ``torchmetrics.functional.accuracy(preds, target)``."""
    return (preds.argmax(dim=-1) == target).float().mean()


def sk_shuffle(X, y, random_state=None):
    """Hand-written stand-in for ``sklearn.utils.shuffle(X, y, random_state=...)``."""
    perm = np.random.RandomState(random_state).permutation(len(X))
    return X[perm], y[perm]


def load_iris(return_X_y=True):
    """Random arrays of the iris shapes (150 x 4 features, 3 classes) instead of sklearn's dataset."""
    rng = np.random.RandomState(0)
    return rng.rand(150, 4) * 8.0, rng.randint(0, 3, size=150).astype(np.int64)


# ----------------------------------------------------------------------------- pl_bolts/datamodules/sklearn_datamodule.py
class SklearnDataset(Dataset):
    """Mapping between numpy (or sklearn) datasets to PyTorch datasets."""

    def __init__(self, X: np.ndarray, y: np.ndarray, X_transform: Any = None, y_transform: Any = None) -> None:
        """
        Args:
            X: Numpy ndarray
            y: Numpy ndarray
            X_transform: Any transform that works with Numpy arrays
            y_transform: Any transform that works with Numpy arrays
        """
        super().__init__()
        self.X = X
        self.Y = y
        self.X_transform = X_transform
        self.y_transform = y_transform

    def __len__(self) -> int:
        return len(self.X)

    def __getitem__(self, idx) -> Tuple[np.ndarray, np.ndarray]:
        x = self.X[idx].astype(np.float32)
        y = self.Y[idx]

        # Do not convert integer to float for classification data
        if not ((y.dtype == np.int32) or (y.dtype == np.int64)):
            y = y.astype(np.float32)

        if self.X_transform:
            x = self.X_transform(x)

        if self.y_transform:
            y = self.y_transform(y)

        return x, y


class SklearnDataModule(LightningDataModule):
    """Automatically generates the train, validation and test splits for a Numpy dataset. They are set up as
    dataloaders for convenience. Optionally, you can pass in your own validation and test splits."""

    name = "sklearn"

    def __init__(
        self,
        X,
        y,
        x_val=None,
        y_val=None,
        x_test=None,
        y_test=None,
        val_split=0.2,
        test_split=0.1,
        num_workers=0,
        random_state=1234,
        shuffle=True,
        batch_size: int = 16,
        pin_memory=True,
        drop_last=False,
        *args,
        **kwargs,
    ) -> None:

        super().__init__(*args, **kwargs)
        self.num_workers = num_workers
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.pin_memory = pin_memory
        self.drop_last = drop_last

        # shuffle x and y
        if shuffle:
            X, y = sk_shuffle(X, y, random_state=random_state)

        val_split = 0 if x_val is not None or y_val is not None else val_split
        test_split = 0 if x_test is not None or y_test is not None else test_split

        hold_out_split = val_split + test_split
        if hold_out_split > 0:
            val_split = val_split / hold_out_split
            hold_out_size = math.floor(len(X) * hold_out_split)
            x_holdout, y_holdout = X[:hold_out_size], y[:hold_out_size]
            test_i_start = int(val_split * hold_out_size)
            x_val_hold_out, y_val_holdout = x_holdout[:test_i_start], y_holdout[:test_i_start]
            x_test_hold_out, y_test_holdout = x_holdout[test_i_start:], y_holdout[test_i_start:]
            X, y = X[hold_out_size:], y[hold_out_size:]

        # if don't have x_val and y_val create split from X
        if x_val is None and y_val is None and val_split > 0:
            x_val, y_val = x_val_hold_out, y_val_holdout

        # if don't have x_test, y_test create split from X
        if x_test is None and y_test is None and test_split > 0:
            x_test, y_test = x_test_hold_out, y_test_holdout

        self._init_datasets(X, y, x_val, y_val, x_test, y_test)

    def _init_datasets(
        self, X: np.ndarray, y: np.ndarray, x_val: np.ndarray, y_val: np.ndarray, x_test: np.ndarray, y_test: np.ndarray
    ) -> None:
        self.train_dataset = SklearnDataset(X, y)
        self.val_dataset = SklearnDataset(x_val, y_val)
        self.test_dataset = SklearnDataset(x_test, y_test)

    def train_dataloader(self) -> DataLoader:
        loader = DataLoader(
            self.train_dataset,
            batch_size=self.batch_size,
            shuffle=self.shuffle,
            num_workers=self.num_workers,
            drop_last=self.drop_last,
            pin_memory=self.pin_memory,
        )
        return loader

    def val_dataloader(self) -> DataLoader:
        loader = DataLoader(
            self.val_dataset,
            batch_size=self.batch_size,
            shuffle=False,
            num_workers=self.num_workers,
            drop_last=self.drop_last,
            pin_memory=self.pin_memory,
        )
        return loader

    def test_dataloader(self) -> DataLoader:
        loader = DataLoader(
            self.test_dataset,
            batch_size=self.batch_size,
            shuffle=False,
            num_workers=self.num_workers,
            drop_last=self.drop_last,
            pin_memory=self.pin_memory,
        )
        return loader


# ----------------------------------------------------------------------------- pl_bolts/models/regression/logistic_regression.py
class LogisticRegression(LightningModule):
    """Logistic regression model."""

    def __init__(
        self,
        input_dim: int,
        num_classes: int,
        bias: bool = True,
        learning_rate: float = 1e-4,
        optimizer: Type[Optimizer] = Adam,
        l1_strength: float = 0.0,
        l2_strength: float = 0.0,
        **kwargs: Any,
    ) -> None:
        """
        Args:
            input_dim: number of dimensions of the input (at least 1)
            num_classes: number of class labels (binary: 2, multi-class: >2)
            bias: specifies if a constant or intercept should be fitted (equivalent to fit_intercept in sklearn)
            learning_rate: learning_rate for the optimizer
            optimizer: the optimizer to use (default: ``Adam``)
            l1_strength: L1 regularization strength (default: ``0.0``)
            l2_strength: L2 regularization strength (default: ``0.0``)
        """
        super().__init__()
        self.save_hyperparameters()
        self.optimizer = optimizer

        self.linear = nn.Linear(in_features=self.hparams.input_dim, out_features=self.hparams.num_classes, bias=bias)

    def forward(self, x: Tensor) -> Tensor:
        x = self.linear(x)
        y_hat = softmax(x)
        return y_hat

    def training_step(self, batch: Tuple[Tensor, Tensor], batch_idx: int) -> Dict[str, Tensor]:
        x, y = batch

        # flatten any input
        x = x.view(x.size(0), -1)

        y_hat = self.linear(x)

        # PyTorch cross_entropy function combines log_softmax and nll_loss in single function
        loss = F.cross_entropy(y_hat, y, reduction="sum")

        # L1 regularizer
        if self.hparams.l1_strength > 0:
            l1_reg = self.linear.weight.abs().sum()
            loss += self.hparams.l1_strength * l1_reg

        # L2 regularizer
        if self.hparams.l2_strength > 0:
            l2_reg = self.linear.weight.pow(2).sum()
            loss += self.hparams.l2_strength * l2_reg

        loss /= x.size(0)

        tensorboard_logs = {"train_ce_loss": loss}
        progress_bar_metrics = tensorboard_logs
        return {"loss": loss, "log": tensorboard_logs, "progress_bar": progress_bar_metrics}

    def validation_step(self, batch: Tuple[Tensor, Tensor], batch_idx: int) -> Dict[str, Tensor]:
        x, y = batch
        x = x.view(x.size(0), -1)
        y_hat = self.linear(x)
        acc = accuracy(F.softmax(y_hat, -1), y)
        return {"val_loss": F.cross_entropy(y_hat, y), "acc": acc}

    def validation_epoch_end(self, outputs: List[Dict[str, Tensor]]) -> Dict[str, Tensor]:
        acc = torch.stack([x["acc"] for x in outputs]).mean()
        val_loss = torch.stack([x["val_loss"] for x in outputs]).mean()
        tensorboard_logs = {"val_ce_loss": val_loss, "val_acc": acc}
        progress_bar_metrics = tensorboard_logs
        return {"val_loss": val_loss, "log": tensorboard_logs, "progress_bar": progress_bar_metrics}

    def test_step(self, batch: Tuple[Tensor, Tensor], batch_idx: int) -> Dict[str, Tensor]:
        x, y = batch
        x = x.view(x.size(0), -1)
        y_hat = self.linear(x)
        acc = accuracy(F.softmax(y_hat, -1), y)
        return {"test_loss": F.cross_entropy(y_hat, y), "acc": acc}

    def test_epoch_end(self, outputs: List[Dict[str, Tensor]]) -> Dict[str, Tensor]:
        acc = torch.stack([x["acc"] for x in outputs]).mean()
        test_loss = torch.stack([x["test_loss"] for x in outputs]).mean()
        tensorboard_logs = {"test_ce_loss": test_loss, "test_acc": acc}
        progress_bar_metrics = tensorboard_logs
        return {"test_loss": test_loss, "log": tensorboard_logs, "progress_bar": progress_bar_metrics}

    def configure_optimizers(self) -> Optimizer:
        return self.optimizer(self.parameters(), lr=self.hparams.learning_rate)

    @staticmethod
    def add_model_specific_args(parent_parser: ArgumentParser) -> ArgumentParser:
        parser = ArgumentParser(parents=[parent_parser], add_help=False)
        parser.add_argument("--learning_rate", type=float, default=0.0001)
        parser.add_argument("--input_dim", type=int, default=None)
        parser.add_argument("--num_classes", type=int, default=None)
        parser.add_argument("--bias", default="store_true")
        parser.add_argument("--batch_size", type=int, default=16)
        return parser


def cli_main() -> None:
    harness, argv = _harness_args()  # edit: harness flags parsed apart

    seed_everything(1234)

    # Example: Iris dataset in Sklearn (4 features, 3 class labels)
    # (edit: load_iris is the random stand-in above)

    # args
    parser = ArgumentParser()
    parser = LogisticRegression.add_model_specific_args(parser)
    parser = Trainer.add_argparse_args(parser)
    args = parser.parse_args(argv)

    # model
    # model = LogisticRegression(**vars(args))
    model = LogisticRegression(input_dim=4, num_classes=3, l1_strength=0.01, learning_rate=0.01)

    # data
    X, y = load_iris(return_X_y=True)
    loaders = SklearnDataModule(X, y, batch_size=args.batch_size, num_workers=0)

    # train
    trainer = Trainer.from_argparse_args(args, **_harness_trainer_kwargs(harness))
    trainer.fit(model, train_dataloader=loaders.train_dataloader(), val_dataloaders=loaders.val_dataloader())


if __name__ == "__main__":
    cli_main()
