"""After ``fit``: ``validate``/``test``/``predict`` keep ``global_step``/``current_epoch``, and ``optimizers`` stay.

Lightning 2.6 keeps both (its fit loop's progress and the strategy's optimizers outlive the run);
the extras test runs the same program on Lightning and compares.
"""

from __future__ import annotations

import csv
import importlib.util
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset


def _program(pl: Any, logger_cls: Any, root: Path) -> tuple[dict[str, tuple[Any, ...]], list[dict[str, str]]]:
    """fit 2 epochs of 4 batches, then validate, test, predict; what the Trainer says after each, and metrics.csv."""

    class Module(pl.LightningModule if hasattr(pl, "LightningModule") else pl.TrainModule):  # type: ignore[misc]
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)
            self.seen: list[tuple[int, int]] = []

        def training_step(self, batch, batch_idx):
            return torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])

        def validation_step(self, batch, batch_idx):
            self.log("v", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

        def test_step(self, batch, batch_idx):
            self.seen.append((self.global_step, self.current_epoch))
            self.log("t", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

        def predict_step(self, batch, batch_idx):
            return self.layer(batch[0])

        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
            return {"optimizer": optimizer, "lr_scheduler": torch.optim.lr_scheduler.StepLR(optimizer, 1)}

    g = torch.Generator().manual_seed(0)
    data = DataLoader(TensorDataset(torch.randn(8, 2, generator=g), torch.randn(8, 1, generator=g)), batch_size=2)
    trainer = pl.Trainer(
        accelerator="cpu",
        devices=1,
        max_epochs=2,
        logger=logger_cls(root),
        enable_checkpointing=False,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
    )
    model = Module()

    def now(trainer: Any) -> tuple[Any, ...]:
        weight = model.layer.weight
        optimizers = trainer.optimizers
        trains_model = bool(optimizers) and optimizers[0].param_groups[0]["params"][0] is weight
        return (
            trainer.global_step,
            trainer.current_epoch,
            len(optimizers),
            len(trainer.lr_scheduler_configs),
            trains_model,
        )

    seen = {"start": now(trainer)}
    trainer.fit(model, data, data)
    seen["fit"] = now(trainer)
    trainer.validate(model, data)
    seen["validate"] = now(trainer)
    trainer.test(model, data)
    seen["test"] = now(trainer)
    seen["test_step"] = model.seen[0]
    trainer.predict(model, data)
    seen["predict"] = now(trainer)
    fresh = pl.Trainer(accelerator="cpu", devices=1, logger=False, enable_progress_bar=False)
    fresh.test(Module(), data)
    seen["fresh_test"] = (fresh.global_step, fresh.current_epoch, len(fresh.optimizers))
    with open(Path(trainer.logger.log_dir) / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    return seen, rows


def _ours(root: Path) -> tuple[dict[str, tuple[Any, ...]], list[dict[str, str]]]:
    import strategies

    return _program(strategies, strategies.CSVLogger, root)


def test_validate_test_predict_after_fit_keep_the_step_the_epoch_and_the_optimizers(tmp_path):
    seen, rows = _ours(tmp_path)
    kept = (8, 2, 1, 1, True)  # 2 epochs x 4 steps; the SGD and its scheduler, on the module's weights
    assert seen["start"] == (0, 0, 0, 0, False)
    assert seen["fit"] == seen["validate"] == seen["test"] == seen["predict"] == kept
    assert seen["test_step"] == (8, 2)
    assert seen["fresh_test"] == (0, 0, 0)  # nothing kept where no fit ran
    # The validate and test rows are logged at the fit's last step and epoch (they were at step 0, epoch 0).
    validate_row, test_row = rows[-2:]
    assert validate_row["v"] and test_row["t"]
    assert (validate_row["step"], validate_row["epoch"]) == (test_row["step"], test_row["epoch"]) == ("8", "2")


@pytest.mark.extras
@pytest.mark.skipif(importlib.util.find_spec("lightning") is None, reason="lightning is not installed (optional extra)")
def test_the_same_as_lightning(tmp_path):
    import lightning.pytorch as lightning
    from lightning.pytorch.loggers import CSVLogger

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs, their_rows = _program(lightning, CSVLogger, tmp_path / "lightning")
    ours, our_rows = _ours(tmp_path / "ours")
    assert ours == theirs
    columns = ("step", "epoch")
    assert [tuple(r[c] for c in columns) for r in our_rows] == [tuple(r[c] for c in columns) for r in their_rows]


def test_a_checkpoint_saved_after_fit_keeps_the_optimizer_and_scheduler_states(tmp_path):
    """Lightning 2.6 saves them after ``fit`` too; without them a resume restarts momentum in silence."""
    import strategies

    class Module(strategies.TrainModule):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            return torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])

        def configure_optimizers(self):
            opt = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)
            return {"optimizer": opt, "lr_scheduler": torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)}

    def fit(epochs, ckpt_path=None):
        g = torch.Generator().manual_seed(0)
        data = DataLoader(TensorDataset(torch.randn(8, 2, generator=g), torch.randn(8, 1, generator=g)), batch_size=4)
        module = Module()
        trainer = strategies.Trainer(
            max_epochs=epochs, logger=False, enable_checkpointing=False, enable_progress_bar=False
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer.fit(module, data, ckpt_path=ckpt_path)
        return trainer, module

    first, _ = fit(2)
    first.save_checkpoint(tmp_path / "after.ckpt")
    saved = torch.load(tmp_path / "after.ckpt", weights_only=True)
    assert len(saved["optimizer_states"]) == 1 and saved["optimizer_states"][0]["state"]  # the momentum buffers
    assert saved["lr_schedulers"][0]["last_epoch"] == 2
    _, straight = fit(4)
    _, resumed = fit(4, tmp_path / "after.ckpt")
    torch.testing.assert_close(resumed.layer.weight, straight.layer.weight)
