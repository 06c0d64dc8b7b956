"""One small fit with an MLflow or W&B logger, on ``strategies`` or on Lightning 2.6.

    python service_logger_run.py {strategies,lightning} {mlflow,wandb} OUT_DIR [--devices N] [--log-model X]

The same module and data on both sides: two epochs of four batches, ``self.log`` of a loss
(``train_loss``), a metric with characters MLflow rejects (``val/acc@1``) and hyperparameters
(nested, a list, a callable), a ``ModelCheckpoint`` keeping the best two by ``val_loss``. With
``--devices 2`` it is a ``ddp`` fit on CPU (gloo), launched by the Trainer itself. Prints one line
``RESULT <json>`` on global rank 0 (the logger's name, version, save_dir, the checkpoint
callback's dirpath), which the tests read.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import torch
from torch.utils.data import DataLoader, TensorDataset


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("side", choices=["strategies", "lightning"])
    parser.add_argument("service", choices=["mlflow", "wandb"])
    parser.add_argument("out")
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--log-model", default="false", choices=["false", "true", "all"])
    args = parser.parse_args()
    log_model: bool | str = {"false": False, "true": True, "all": "all"}[args.log_model]

    if args.side == "lightning":
        from lightning.pytorch import LightningModule, Trainer
        from lightning.pytorch.callbacks import ModelCheckpoint
        from lightning.pytorch.loggers import MLFlowLogger, WandbLogger
    else:
        from strategies import MLFlowLogger, ModelCheckpoint, Trainer, WandbLogger
        from strategies import TrainModule as LightningModule

    class Module(LightningModule):
        def __init__(self, lr: float = 0.1, sizes: tuple = (4, 1), nested: dict | None = None, act=torch.tanh):
            super().__init__()
            self.save_hyperparameters()
            self.layer = torch.nn.Linear(*sizes)

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.layer(x), y)
            self.log("train_loss", loss, on_step=True, on_epoch=True)
            return loss

        def validation_step(self, batch, batch_idx):
            x, y = batch
            loss = torch.nn.functional.mse_loss(self.layer(x), y)
            self.log("val_loss", loss, sync_dist=True)
            self.log("val/acc@1", 1.0 - loss.detach(), sync_dist=True)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)

    torch.manual_seed(0)
    x = torch.randn(32, 4)
    y = x.sum(dim=1, keepdim=True)
    loader = DataLoader(TensorDataset(x, y), batch_size=8 // args.devices)
    val_loader = DataLoader(TensorDataset(x[:16], y[:16]), batch_size=8 // args.devices)

    if args.service == "mlflow":
        logger = MLFlowLogger(
            experiment_name="compare",
            run_name="run-a",
            tracking_uri=f"file:{os.path.join(args.out, 'mlruns')}",
            tags={"team": "compat"},
            log_model=log_model,
        )
    else:
        logger = WandbLogger(name="run-a", project="compare", save_dir=args.out, offline=True)

    checkpoint = ModelCheckpoint(monitor="val_loss", save_top_k=2, save_last=True)
    trainer = Trainer(
        accelerator="cpu",
        devices=args.devices,
        strategy="ddp" if args.devices > 1 else "auto",
        max_epochs=2,
        logger=logger,
        callbacks=[checkpoint],
        log_every_n_steps=1,
        enable_progress_bar=False,
        enable_model_summary=False,
        default_root_dir=args.out,
        deterministic=True,
    )
    torch.manual_seed(0)
    model = Module(nested={"depth": 2, "opts": [{"a": 1}, {"b": 2}]})
    trainer.fit(model, loader, val_loader)
    if trainer.global_rank == 0:
        result = {
            "name": logger.name,
            "version": logger.version,
            "save_dir": logger.save_dir,
            "dirpath": checkpoint.dirpath,
            "best": checkpoint.best_model_path,
            "pid": os.getpid(),
        }
        print("RESULT " + json.dumps(result), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
