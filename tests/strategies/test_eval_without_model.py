"""``trainer.test()`` / ``validate()`` / ``predict()`` without the model, and ``ckpt_path="best"``, as Lightning 2.6.

Lightning reuses the module of the previous run and, when no ``ckpt_path`` is given, loads the
best checkpoint of that ``fit`` (with a warning); ``"best"`` is the first ``ModelCheckpoint``'s
``best_model_path``. Four of the fifteen Lightning programs of issue 18 end that way.
"""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies

# The validation loss goes down epoch after epoch; the callbacks keep the *highest* one
# (``mode="max"``), so the "best" checkpoint is the first epoch's, not the last one, and loading
# it is visible in the weights and the loss.


def _data() -> TensorDataset:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 4, generator=g)
    return TensorDataset(x, x.sum(1, keepdim=True))


def _module_body(base):
    class Regression(base):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = nn.Linear(4, 1)

        def forward(self, x):
            return self.layer(x)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return nn.functional.mse_loss(self(x), y)

        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.log("val_loss", nn.functional.mse_loss(self(x), y))

        def test_step(self, batch, batch_idx):
            x, y = batch
            self.log("test_loss", nn.functional.mse_loss(self(x), y))

        def predict_step(self, batch, batch_idx):
            return self(batch[0])

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.05)

        def train_dataloader(self):
            return DataLoader(_data(), batch_size=8)

        def val_dataloader(self):
            return DataLoader(_data(), batch_size=8)

        def test_dataloader(self):
            return DataLoader(_data(), batch_size=8)

        def predict_dataloader(self):
            return DataLoader(_data(), batch_size=8)

    return Regression


def _fit(lib, trainer_cls, checkpoint_cls, tmp_path, **extra):
    module = _module_body(lib)()
    checkpoint = checkpoint_cls(
        dirpath=str(tmp_path / "ckpt"), monitor="val_loss", mode="max", save_top_k=1, save_last=True
    )
    trainer = trainer_cls(
        max_epochs=5, logger=False, enable_progress_bar=False, enable_model_summary=False,
        callbacks=[checkpoint], default_root_dir=str(tmp_path), **extra,
    )  # fmt: skip
    trainer.fit(module)
    return trainer, module, checkpoint


def test_test_without_a_model_loads_the_best_checkpoint(tmp_path) -> None:
    trainer, module, checkpoint = _fit(strategies.TrainModule, strategies.Trainer, strategies.ModelCheckpoint, tmp_path)
    best = torch.load(checkpoint.best_model_path, weights_only=True)["state_dict"]
    assert not torch.equal(module.layer.weight, best["layer.weight"])  # the last epoch is not the best
    with pytest.warns(UserWarning, match=r"called without a model: the best model of the previous `fit`"):
        [metrics] = trainer.test()
    assert torch.equal(module.layer.weight, best["layer.weight"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a value given: no warning
        [again] = trainer.validate(ckpt_path="best")
        predictions = trainer.predict(ckpt_path="last")
    assert metrics["test_loss"] == pytest.approx(again["val_loss"])  # same data, best weights
    assert len(predictions) == 4
    last = torch.load(checkpoint.last_model_path, weights_only=True)["state_dict"]
    assert torch.equal(module.layer.weight, last["layer.weight"])


def test_a_model_passed_without_ckpt_path_keeps_its_weights(tmp_path) -> None:
    trainer, module, _ = _fit(strategies.TrainModule, strategies.Trainer, strategies.ModelCheckpoint, tmp_path)
    weight = module.layer.weight.detach().clone()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        trainer.test(module)
    assert torch.equal(module.layer.weight, weight)


def test_what_cannot_be_chosen_is_an_error_saying_what_to_pass(tmp_path) -> None:
    fresh = strategies.Trainer(logger=False, enable_progress_bar=False)
    with pytest.raises(TypeError, match=r"`Trainer.test\(\)` needs a model"):
        fresh.test()
    module = _module_body(strategies.TrainModule)()
    plain = strategies.Trainer(max_epochs=1, logger=False, enable_progress_bar=False, enable_checkpointing=False)
    plain.fit(module)
    with pytest.raises(ValueError, match=r'ckpt_path="best"\)` is set but no `ModelCheckpoint`'):
        plain.test(module, ckpt_path="best")
    unsaved = strategies.ModelCheckpoint(dirpath=str(tmp_path / "none"))
    waiting = strategies.Trainer(logger=False, enable_progress_bar=False, callbacks=[unsaved])
    with pytest.raises(ValueError, match="has saved no best model yet"):
        waiting.validate(module, ckpt_path="best")


@pytest.mark.extras
def test_the_metrics_are_lightnings(tmp_path) -> None:
    """The same program on Lightning 2.6: ``test()`` with no model gives the same loss, from the best epoch."""
    L = pytest.importorskip("lightning.pytorch", reason="the side-by-side test needs Lightning 2.6")
    ours, our_module, _ = _fit(strategies.TrainModule, strategies.Trainer, strategies.ModelCheckpoint, tmp_path / "a")
    theirs, their_module, _ = _fit(
        L.LightningModule, L.Trainer, L.callbacks.ModelCheckpoint, tmp_path / "b", accelerator="cpu"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        [c], [d] = ours.validate(our_module), theirs.validate(their_module)  # the weights fit ended with
        [a], [b] = ours.test(), theirs.test()  # the best checkpoint's
    assert a["test_loss"] == pytest.approx(b["test_loss"], rel=1e-5)
    assert c["val_loss"] == pytest.approx(d["val_loss"], rel=1e-5)
    assert a["test_loss"] > c["val_loss"]  # the "best" (highest) epoch is the first, not the last
