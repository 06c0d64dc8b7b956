"""Checkpoints between real Lightning 2.6 and strategies, both ways (extras: needs ``lightning``).

Each side writes the same three files of the same run (4 batches an epoch, 2 epochs): a
``ModelCheckpoint`` at the end of epoch 0, a ``ModelCheckpoint(every_n_train_steps=3)`` mid-epoch 0,
and ``trainer.save_checkpoint`` after ``fit``. Every file is resumed by both trainers, which must
start at the epoch, batch and global step Lightning 2.6 starts at from its own file, with the
file's weights; and loaded by ``load_from_checkpoint`` (Lightning's and compat's) with its hyperparameters.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

pytestmark = pytest.mark.extras
L = pytest.importorskip("lightning.pytorch", reason="the interop tests need Lightning 2.6 (pip install lightning)")

import strategies  # noqa: E402

BATCHES = 4
FILES = {  # file name -> where Lightning 2.6 resumes from its own file: (epoch, batch index, global step)
    "end-of-epoch": ("ep/epoch=0-step=4.ckpt", (1, 0, 4)),
    "mid-epoch": ("mid/epoch=0-step=3.ckpt", (0, 3, 3)),
    "save_checkpoint": ("final.ckpt", (2, 0, 8)),
}


def loader() -> DataLoader:
    g = torch.Generator().manual_seed(0)
    return DataLoader(
        TensorDataset(torch.randn(4 * BATCHES, 2, generator=g), torch.randn(4 * BATCHES, 1, generator=g)), 4
    )


def _loss(module, batch):
    x, y = batch
    return ((module.layer(x) - y) ** 2).mean()


class LightningTiny(L.LightningModule):
    def __init__(self, lr: float = 0.1, width: int = 2) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.layer = nn.Linear(width, 1)

    def training_step(self, batch, batch_idx):
        return _loss(self, batch)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


class StrategiesTiny(strategies.TrainModule):
    def __init__(self, lr: float = 0.1, width: int = 2) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.layer = nn.Linear(width, 1)

    def training_step(self, batch, batch_idx):
        return _loss(self, batch)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


def _where_callback(base):
    class Where(base):
        def __init__(self) -> None:
            self.start = None
            self.first = None
            self.weights = None

        def on_train_start(self, trainer, module):
            self.start = (trainer.current_epoch, trainer.global_step)
            self.weights = module.layer.weight.detach().clone()

        def on_train_batch_start(self, trainer, module, batch, batch_idx):
            if self.first is None:
                self.first = (trainer.current_epoch, batch_idx, trainer.global_step)

    return Where


LightningWhere, StrategiesWhere = _where_callback(L.Callback), _where_callback(strategies.Callback)
QUIET = {"enable_progress_bar": False, "logger": False}


def _lightning_trainer(callbacks, max_epochs=2, **kw):
    return L.Trainer(
        accelerator="cpu", max_epochs=max_epochs, enable_model_summary=False, callbacks=callbacks, **QUIET, **kw
    )


def _strategies_trainer(callbacks, max_epochs=2, **kw):
    return strategies.Trainer(accelerator="cpu", max_epochs=max_epochs, callbacks=callbacks, **QUIET, **kw)


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """Both sides' three files, from the same run."""
    root = tmp_path_factory.mktemp("interop")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for side, trainer_of, checkpoint, module in [
            ("lightning", _lightning_trainer, L.callbacks.ModelCheckpoint, LightningTiny),
            ("strategies", _strategies_trainer, strategies.ModelCheckpoint, StrategiesTiny),
        ]:
            out = root / side
            callbacks = [
                checkpoint(dirpath=out / "ep", save_top_k=-1, filename="{epoch}-{step}"),
                checkpoint(dirpath=out / "mid", every_n_train_steps=3, save_top_k=-1, filename="{epoch}-{step}"),
            ]
            trainer = trainer_of(callbacks, **({"enable_checkpointing": True} if side == "lightning" else {}))
            torch.manual_seed(0)
            trainer.fit(module(lr=0.05), loader())
            trainer.save_checkpoint(out / "final.ckpt")
    return root


def _resume_with_lightning(path):
    where = LightningWhere()
    trainer = _lightning_trainer([where], max_epochs=3, enable_checkpointing=False)
    trainer.fit(LightningTiny(lr=0.05), loader(), ckpt_path=str(path))
    return where, trainer.global_step


def _resume_with_strategies(path):
    where = StrategiesWhere()
    trainer = _strategies_trainer([where], max_epochs=3, enable_checkpointing=False)
    trainer.fit(StrategiesTiny(lr=0.05), loader(), ckpt_path=path)
    return where, trainer.global_step


@pytest.mark.parametrize("point", list(FILES))
@pytest.mark.parametrize("writer", ["lightning", "strategies"])
@pytest.mark.parametrize("reader", ["lightning", "strategies"])
def test_resume_starts_where_lightning_resumes_its_own_file(written, writer, reader, point):
    name, (epoch, batch_idx, step) = FILES[point]
    path = written / writer / name
    saved = torch.load(path, weights_only=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Lightning's "resuming mid-epoch with a non-resumable loader"
        where, final_step = (_resume_with_lightning if reader == "lightning" else _resume_with_strategies)(path)
    assert where.start == (epoch, step)
    assert where.first == (epoch, batch_idx, step)
    assert final_step == 3 * BATCHES  # the run ends where an uninterrupted 3-epoch run does
    assert torch.equal(where.weights, saved["state_dict"]["layer.weight"])


@pytest.mark.parametrize("point", list(FILES))
@pytest.mark.parametrize("writer", ["lightning", "strategies"])
def test_load_from_checkpoint_both_ways_with_hyperparameters(written, writer, point):
    import compat

    class CompatTiny(compat.LightningModule):
        def __init__(self, lr: float = 0.1, width: int = 2) -> None:
            super().__init__()
            self.save_hyperparameters()
            self.layer = nn.Linear(width, 1)

    path = written / writer / FILES[point][0]
    saved = torch.load(path, weights_only=True)["state_dict"]
    for cls in (LightningTiny, CompatTiny):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls.load_from_checkpoint(str(path))
        assert (model.hparams["lr"], model.hparams["width"]) == (0.05, 2), cls
        assert all(torch.equal(model.state_dict()[k], v) for k, v in saved.items()), cls


def test_an_upgraded_1x_file_resumes_in_lightning_where_1x_resumed_it(tmp_path):
    from strategies.utilities import upgrade_checkpoint

    # Lightning 1.5 after epoch 0 of 4 batches: epoch=1 (the next), global_step=4, no loop state
    torch.manual_seed(3)
    weights = {f"layer.{k}": v for k, v in nn.Linear(2, 1).state_dict().items()}
    old = {
        "epoch": 1,
        "global_step": 4,
        "pytorch-lightning_version": "1.5.10",
        "state_dict": weights,
        "callbacks": {},
        "optimizer_states": [torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.05).state_dict()],
        "lr_schedulers": [],
        "hparams_name": "kwargs",
        "hyper_parameters": {"lr": 0.05, "width": 2},
    }
    path = tmp_path / "old.ckpt"
    torch.save(old, path)
    assert upgrade_checkpoint.main([str(path)]) == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        where, final_step = _resume_with_lightning(path)
        model = LightningTiny.load_from_checkpoint(str(path))
    assert where.start == (1, 4) and where.first == (1, 0, 4) and final_step == 3 * BATCHES
    assert torch.equal(where.weights, weights["layer.weight"]) and model.hparams.lr == 0.05
