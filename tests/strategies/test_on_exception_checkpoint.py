"""``OnExceptionCheckpoint``: the state at the failure, resumable; removed by a run that ends well."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import OnExceptionCheckpoint, Trainer


def _loader() -> DataLoader:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def _module(base, fail_at: int | None):
    class Regression(base):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            if fail_at is not None and self.global_step == fail_at:
                raise RuntimeError("the data went bad")
            return nn.functional.mse_loss(self.layer(batch[0]), batch[1])

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Regression()


def _fit(trainer_cls, base, tmp_path, fail_at, ckpt_path=None):
    trainer = trainer_cls(
        max_epochs=2,
        logger=False,
        # a Checkpoint callback: enable_checkpointing=False is refused, and no default ModelCheckpoint is added
        enable_checkpointing=True,
        default_root_dir=tmp_path / "root",
        enable_progress_bar=False,
        enable_model_summary=False,
        callbacks=[OnExceptionCheckpoint(tmp_path) if trainer_cls is Trainer else _lightning_callback(tmp_path)],
        **({"accelerator": "cpu"} if trainer_cls is not Trainer else {}),
    )
    module = _module(base, fail_at)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fail_at is None:
            trainer.fit(module, _loader(), ckpt_path=ckpt_path)
        else:
            with pytest.raises(RuntimeError, match="the data went bad"):
                trainer.fit(module, _loader(), ckpt_path=ckpt_path)
    return trainer, module


def _lightning_callback(tmp_path):
    import lightning.pytorch as pl

    return pl.callbacks.OnExceptionCheckpoint(tmp_path)


def test_a_failed_fit_leaves_a_checkpoint_that_resumes_where_it_failed(tmp_path) -> None:
    _fit(Trainer, strategies.TrainModule, tmp_path, fail_at=5)
    path = tmp_path / "on_exception.ckpt"
    saved = torch.load(path, weights_only=True)
    assert saved["global_step"] == 5 and saved["epoch"] == 1
    trainer, _ = _fit(Trainer, strategies.TrainModule, tmp_path, fail_at=None, ckpt_path=path)
    assert trainer.global_step == 8
    assert not path.exists()  # the run ended well: its teardown removed the failure's checkpoint


def test_it_is_a_checkpoint_callback_as_in_lightning(tmp_path) -> None:
    trainer = Trainer(default_root_dir=tmp_path, callbacks=[OnExceptionCheckpoint(tmp_path)])
    assert [type(cb).__name__ for cb in trainer.callbacks] == ["OnExceptionCheckpoint"]  # no default ModelCheckpoint
    with pytest.raises(ValueError, match=r"`Trainer\(enable_checkpointing=False\)` was given together with a `OnExc"):
        Trainer(enable_checkpointing=False, callbacks=[OnExceptionCheckpoint(tmp_path)])


def test_a_name_is_required() -> None:
    with pytest.raises(ValueError, match="give the checkpoint a name"):
        OnExceptionCheckpoint(".", filename="")
    assert OnExceptionCheckpoint("runs", "crash").ckpt_path.endswith("runs/crash.ckpt")


def test_the_checkpoint_matches_lightnings_and_each_resumes_the_others(tmp_path) -> None:
    pl = pytest.importorskip("lightning.pytorch", reason="needs the lightning extra (pip install -e '.[lightning]')")
    ours_dir, theirs_dir = tmp_path / "ours", tmp_path / "theirs"
    _, ours_module = _fit(Trainer, strategies.TrainModule, ours_dir, fail_at=5)
    _, their_module = _fit(pl.Trainer, pl.LightningModule, theirs_dir, fail_at=5)
    ours = torch.load(ours_dir / "on_exception.ckpt", weights_only=True)
    theirs = torch.load(theirs_dir / "on_exception.ckpt", weights_only=False)
    assert (ours["global_step"], ours["epoch"]) == (theirs["global_step"], theirs["epoch"])
    for key, value in theirs["state_dict"].items():
        torch.testing.assert_close(ours["state_dict"][key], value)
    resumed, _ = _fit(
        Trainer, strategies.TrainModule, tmp_path / "a", fail_at=None, ckpt_path=theirs_dir / "on_exception.ckpt"
    )
    back, _ = _fit(
        pl.Trainer, pl.LightningModule, tmp_path / "b", fail_at=None, ckpt_path=ours_dir / "on_exception.ckpt"
    )
    assert resumed.global_step == back.global_step == 8
