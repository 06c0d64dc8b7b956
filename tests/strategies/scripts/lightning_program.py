"""A program written for Lightning 2.6; tests run it as is and with only its imports changed.

test_lightning_program.py swaps the three marked import lines for ``strategies`` ones and runs
both versions on 2 CPU processes (``python lightning_program.py OUT_DIR``). Each rank writes
what it ends with to ``OUT_DIR/rank<N>.json``.
"""

# ruff: noqa: I001  (the marked import block is swapped by the test as text; keep it together)
import json
import os
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset

# -- imports: the only lines that differ between the two versions --
from lightning.pytorch import LightningDataModule, LightningModule, Trainer, seed_everything
from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint
from lightning.pytorch.loggers import CSVLogger
# -- end of imports --


class Regression(LightningDataModule):
    def __init__(self, batch_size=8):
        super().__init__()
        self.batch_size = batch_size

    def setup(self, stage):
        g = torch.Generator().manual_seed(0)
        x = torch.randn(128, 8, generator=g)
        y = x @ torch.linspace(-1, 1, 8).unsqueeze(1) + 0.1 * torch.randn(128, 1, generator=g)
        self.train_set = TensorDataset(x[:96], y[:96])
        self.val_set = TensorDataset(x[96:], y[96:])

    def train_dataloader(self):
        return DataLoader(self.train_set, batch_size=self.batch_size)

    def val_dataloader(self):
        return DataLoader(self.val_set, batch_size=self.batch_size)


class Model(LightningModule):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x).float(), y)
        self.log("train_loss", loss, prog_bar=True, on_step=True, on_epoch=True, sync_dist=True)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self.net(x).float(), y)
        self.log("val_loss", loss, prog_bar=True, sync_dist=True)
        self.log("val_max", loss, reduce_fx="max", sync_dist=True)

    def on_train_epoch_end(self):
        self.log("weight_norm", self.net[0].weight.norm(), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.2)


def main(out_dir):
    seed_everything(1)
    checkpoint = ModelCheckpoint(monitor="val_loss", save_top_k=2, save_last=True)
    stopper = EarlyStopping(monitor="val_loss", min_delta=0.05, patience=2)
    trainer = Trainer(
        accelerator="cpu",
        devices=2,
        strategy="ddp",
        max_epochs=12,
        precision="bf16-mixed",
        accumulate_grad_batches=2,
        log_every_n_steps=2,
        default_root_dir=out_dir,
        logger=CSVLogger(out_dir, name="csv"),
        callbacks=[checkpoint, stopper],
        enable_progress_bar=False,
        num_sanity_val_steps=2,
    )
    trainer.fit(Model(), datamodule=Regression())
    result = {
        "rank": trainer.global_rank,
        "current_epoch": trainer.current_epoch,
        "global_step": trainer.global_step,
        "should_stop": trainer.should_stop,
        "stopped_epoch": stopper.stopped_epoch,
        "best_model_path": os.path.relpath(checkpoint.best_model_path, out_dir),
        "best_model_score": float(checkpoint.best_model_score),
        "best_k_models": sorted(os.path.relpath(p, out_dir) for p in checkpoint.best_k_models),
        "last_model_path": os.path.relpath(checkpoint.last_model_path, out_dir),
        "callback_metrics": {k: float(v) for k, v in trainer.callback_metrics.items()},
        "logged_metrics": sorted(trainer.logged_metrics),
        "progress_bar_metrics": sorted(trainer.progress_bar_metrics),
        "log_dir": os.path.relpath(trainer.log_dir, out_dir),
    }
    with open(os.path.join(out_dir, f"rank{trainer.global_rank}.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1])
