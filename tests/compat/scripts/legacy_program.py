"""A Lightning 1.2-style program with its import switched to ``compat`` (used by the tests).

Every 1.x hook it overrides appends ``(who, hook, detail)`` to ``module.events`` (the module's
and the callback's), so a test can check each old hook was called at its 1.x step with 1.x
arguments. Run as a script it fits with ``accelerator="ddp_cpu"``, which spawns 2 CPU processes
as 1.x did (DDP over gloo), and each rank writes its events (``<out>.rank<N>``) at the end of its
fit: the spawned ranks' events never reach the launching process, whose model is not trained.
"""

from __future__ import annotations

import json
import sys

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import compat as pl


def data(n: int = 8) -> DataLoader:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 2, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


class LegacyModel(pl.LightningModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(2, 1)
        self.events: list[tuple[str, str, object]] = []
        self.events_out: str | None = None  # where on_fit_end writes the events (the script's runs)

    def _note(self, hook: str, detail: object = None) -> None:
        self.events.append(("m", hook, detail))

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        self._note("training_step", batch_idx)
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        return {"loss": loss, "n": len(x)}

    def training_step_end(self, output):
        self._note("training_step_end", sorted(output))
        return {"loss": output["loss"] * 2, "n": output["n"]}  # what is backpropagated

    def training_epoch_end(self, outputs):
        self._note("training_epoch_end", [(sorted(o), o["loss"].requires_grad, o["n"]) for o in outputs])

    def validation_step(self, batch, batch_idx):
        self._note("validation_step", batch_idx)
        x, y = batch
        return nn.functional.mse_loss(self(x), y)

    def validation_step_end(self, output):
        self._note("validation_step_end", type(output).__name__)
        return {"val_loss": output}

    def validation_epoch_end(self, outputs):
        self._note("validation_epoch_end", [sorted(o) for o in outputs])
        self.log("val_loss", torch.stack([o["val_loss"] for o in outputs]).mean())

    def test_step(self, batch, batch_idx):
        self._note("test_step", batch_idx)
        return batch_idx

    def test_epoch_end(self, outputs):
        self._note("test_epoch_end", outputs)

    def on_epoch_start(self):
        self._note("on_epoch_start")

    def on_epoch_end(self):
        self._note("on_epoch_end")

    def on_batch_start(self):
        self._note("on_batch_start")

    def on_batch_end(self):
        self._note("on_batch_end")

    def on_train_batch_start(self, batch, batch_idx, dataloader_idx):
        self._note("on_train_batch_start", (batch_idx, dataloader_idx))

    def on_train_epoch_end(self, outputs):  # the 1.2-1.4 signature
        self._note("on_train_epoch_end", len(outputs))

    def on_pretrain_routine_start(self):
        self._note("on_pretrain_routine_start")

    def on_pretrain_routine_end(self):
        self._note("on_pretrain_routine_end")

    def on_fit_start(self):
        self._note("on_fit_start")

    def on_fit_end(self):  # in each spawned rank: write what this rank saw
        if self.events_out is not None:
            with open(f"{self.events_out}.rank{self.global_rank}", "w") as f:
                json.dump([[who, hook, repr(detail)] for who, hook, detail in self.events], f)

    def on_train_dataloader(self):
        self._note("on_train_dataloader")

    def train_dataloader(self):
        self._note("train_dataloader")
        return data()

    def val_dataloader(self):
        return data(4)

    def test_dataloader(self):
        return data(4)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class LegacyCallback(pl.Callback):
    def __init__(self, model: LegacyModel) -> None:
        self.model = model

    def _note(self, hook: str, detail: object = None) -> None:
        self.model.events.append(("cb", hook, detail))

    def on_init_start(self, trainer):
        self._note("on_init_start")

    def on_init_end(self, trainer):
        self._note("on_init_end")

    def on_epoch_start(self, trainer, pl_module):
        self._note("on_epoch_start")

    def on_epoch_end(self, trainer, pl_module):
        self._note("on_epoch_end")

    def on_batch_start(self, trainer, pl_module):
        self._note("on_batch_start")

    def on_batch_end(self, trainer, pl_module):
        self._note("on_batch_end")

    def on_pretrain_routine_start(self, trainer, pl_module):
        self._note("on_pretrain_routine_start")

    def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
        self._note("on_train_batch_end", (batch_idx, dataloader_idx))

    def on_train_epoch_end(self, trainer, pl_module, outputs):  # the 1.2-1.4 signature
        self._note("on_train_epoch_end", len(outputs))

    def on_validation_epoch_end(self, trainer, pl_module):
        self._note("on_validation_epoch_end")


def main(out: str) -> None:
    model = LegacyModel()
    model.events_out = out
    trainer = pl.Trainer(
        accelerator="ddp_cpu",
        num_processes=2,
        max_epochs=1,
        checkpoint_callback=False,
        progress_bar_refresh_rate=0,
        weights_summary=None,
        callbacks=[LegacyCallback(model)],
    )
    trainer.fit(model)
    trainer.strategy.close()


if __name__ == "__main__":
    main(sys.argv[1])
