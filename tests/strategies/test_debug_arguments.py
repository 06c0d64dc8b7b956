"""``overfit_batches``, ``detect_anomaly``, ``barebones`` and ``reload_dataloaders_every_n_epochs``:
Lightning 2.6's meanings, checked here and side by side with Lightning."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch
from _helpers import quiet_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import TrainModule

torch.manual_seed(0)
X, Y = torch.randn(32, 4), torch.randn(32, 1)
INDEX = torch.arange(32).float().unsqueeze(1)


def _module_class(base: type) -> type:
    """Records which samples each training and validation batch holds, and each loader fetch."""

    class Module(base):  # type: ignore[misc,valid-type]
        def __init__(self, shuffle: bool = True) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = nn.Linear(4, 1)
            self.shuffle = shuffle
            self.seen: dict[str, list[Any]] = {"train": [], "val": [], "fetched": []}

        def train_dataloader(self):
            self.seen["fetched"].append(("train", self.trainer.current_epoch))
            return DataLoader(TensorDataset(X, Y, INDEX), batch_size=4, shuffle=self.shuffle)

        def val_dataloader(self):
            self.seen["fetched"].append(("val", self.trainer.current_epoch))
            return DataLoader(TensorDataset(X, Y, INDEX), batch_size=4, shuffle=self.shuffle)

        def training_step(self, batch, batch_idx):
            x, y, index = batch
            self.seen["train"].append((self.trainer.current_epoch, index.flatten().int().tolist()))
            return nn.functional.mse_loss(self.layer(x), y)

        def validation_step(self, batch, batch_idx):
            self.seen["val"].append((self.trainer.current_epoch, batch[2].flatten().int().tolist()))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Module


_Module = _module_class(TrainModule)


def test_overfit_batches_trains_and_validates_on_the_same_first_batches_with_a_warning() -> None:
    module = _Module()
    with pytest.warns(UserWarning, match="You requested to overfit but enabled train dataloader shuffling"):
        quiet_trainer(max_epochs=2, overfit_batches=2, num_sanity_val_steps=0).fit(module)
    assert module.seen["train"] == [(e, list(range(b * 4, b * 4 + 4))) for e in (0, 1) for b in (0, 1)]
    assert [batch for _, batch in module.seen["val"]] == [[0, 1, 2, 3], [4, 5, 6, 7]] * 2


def test_overfit_batches_as_a_fraction_and_its_bad_values() -> None:
    module = _Module(shuffle=False)
    quiet_trainer(max_epochs=1, overfit_batches=0.25, num_sanity_val_steps=0).fit(module)
    assert len(module.seen["train"]) == 2  # a quarter of 8 batches
    with pytest.raises(ValueError, match="overfit_batches"):
        quiet_trainer(overfit_batches=-1)


def test_detect_anomaly_names_the_backward_that_made_a_nan() -> None:
    class NaN(_Module):
        def training_step(self, batch, batch_idx):
            return torch.sqrt(self.layer(batch[0]).sum() * 0 - 1.0)

    with pytest.raises(RuntimeError, match="returned nan values"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        quiet_trainer(max_steps=1, detect_anomaly=True).fit(NaN(shuffle=False))
    quiet_trainer(max_steps=1).fit(NaN(shuffle=False))  # without it the NaN goes by, as in torch
    assert not torch.is_anomaly_enabled()


def test_barebones_turns_every_costly_feature_off_and_refuses_one_turned_on(tmp_path) -> None:
    trainer = strategies.Trainer(barebones=True, max_epochs=1, default_root_dir=tmp_path)
    assert (trainer.loggers, trainer.checkpoint_callbacks, trainer.enable_progress_bar) == ([], [], False)
    assert (trainer.enable_model_summary, trainer.num_sanity_val_steps, trainer.log_every_n_steps) == (False, 0, 0)
    trainer.fit(_Module(shuffle=False))
    assert not list(tmp_path.iterdir()), "a barebones run wrote files"

    class Logs(_Module):
        def training_step(self, batch, batch_idx):
            self.log("loss", 1.0)
            return super().training_step(batch, batch_idx)

    with pytest.raises(ValueError, match=r"trying to `self.log\(\)` but `Trainer\(barebones=True\)`"):
        strategies.Trainer(barebones=True, max_epochs=1).fit(Logs(shuffle=False))
    for kwargs in (
        {"enable_checkpointing": True},
        {"logger": True},
        {"num_sanity_val_steps": 2},
        {"detect_anomaly": True},
    ):
        with pytest.raises(ValueError, match=r"barebones=True, .* was passed"):
            strategies.Trainer(barebones=True, **kwargs)


def test_reload_dataloaders_every_n_epochs_fetches_them_again() -> None:
    module = _Module(shuffle=False)
    quiet_trainer(max_epochs=5, reload_dataloaders_every_n_epochs=2, limit_train_batches=1, limit_val_batches=1).fit(
        module
    )
    assert module.seen["fetched"] == [("val", 0), ("train", 0), ("train", 2), ("val", 2), ("train", 4), ("val", 4)]
    with pytest.raises(ValueError, match="reload_dataloaders_every_n_epochs"):
        quiet_trainer(reload_dataloaders_every_n_epochs=-1)


@pytest.mark.extras
@pytest.mark.parametrize(
    "kwargs",
    [
        {"max_epochs": 2, "overfit_batches": 3},
        {"max_epochs": 2, "overfit_batches": 0.25, "num_sanity_val_steps": 0},
        {"max_epochs": 5, "reload_dataloaders_every_n_epochs": 2, "limit_train_batches": 2, "limit_val_batches": 1},
        {"max_epochs": 3, "reload_dataloaders_every_n_epochs": 1, "limit_train_batches": 1},
    ],
)
def test_the_batches_and_fetches_are_lightnings(kwargs) -> None:
    L = pytest.importorskip("lightning.pytorch", reason="the side-by-side test needs Lightning 2.6")
    seen = []
    for base, trainer_cls in ((TrainModule, strategies.Trainer), (L.LightningModule, L.Trainer)):
        torch.manual_seed(1)
        module = _module_class(base)(shuffle="overfit_batches" in kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            quiet_trainer(trainer_cls, **kwargs).fit(module)
        seen.append(module.seen)
    assert seen[0] == seen[1]
