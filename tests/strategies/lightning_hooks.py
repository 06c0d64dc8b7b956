"""How tests/strategies/data/lightning_hooks.json was made: a real Lightning 2.6 run, recorded.

Every public hook of Lightning's ``ModelHooks``/``DataHooks``/``CheckpointHooks`` (plus the
``LightningModule`` methods the loops call: steps, ``configure_optimizers``, ``optimizer_step``,
``backward``, ...), every public method of Lightning's ``Callback``, and the datamodule's data hooks
are wrapped so that each call appends ``"module.<name>"``, ``"callback.<name>"`` or
``"datamodule.<name>"`` to a list; then one tiny CPU run per stage is made with the same settings
``test_hook_order.py`` gives our Trainer (:data:`SETTINGS`). The datamodule does not override
the batch-transfer hooks, so Lightning calls the module's (it prefers a datamodule's override).

Regenerate the data (needs ``lightning``), then the tables in docs/lifecycle.md::

    PYTHONPATH=. python tests/strategies/lightning_hooks.py --write
    PYTHONPATH=. python tests/strategies/lightning_hooks.py --docs

``test_hook_order.py::test_the_json_is_what_lightning_records`` (an ``extras`` test) re-records
and compares, so the committed data cannot drift from Lightning.
"""

from __future__ import annotations

import inspect
import json
import sys
import warnings
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data" / "lightning_hooks.json"
STAGES = ("fit", "validate", "test", "predict")
# Trainer arguments both runs share: 2 train batches, 1 val batch, 1 sanity step, one epoch.
SETTINGS: dict[str, Any] = dict(
    max_epochs=1,
    limit_train_batches=2,
    limit_val_batches=1,
    limit_test_batches=1,
    limit_predict_batches=1,
    num_sanity_val_steps=1,
    enable_progress_bar=False,
    enable_checkpointing=False,
    logger=False,
)
# LightningModule methods the loops call besides the hooks classes' members.
MODULE_METHODS = (
    "training_step",
    "validation_step",
    "test_step",
    "predict_step",
    "configure_callbacks",
    "configure_optimizers",
    "backward",
    "toggle_optimizer",
    "untoggle_optimizer",
    "configure_gradient_clipping",
    "lr_scheduler_step",
    "optimizer_step",
    "optimizer_zero_grad",
)
# Deprecated in Lightning 2.x (it refuses a module overriding both it and `configure_model`).
DEPRECATED = ("configure_sharded_model",)
DATAMODULE_HOOKS = (
    "prepare_data",
    "setup",
    "teardown",
    "train_dataloader",
    "val_dataloader",
    "test_dataloader",
    "predict_dataloader",
    "state_dict",
    "load_state_dict",
    "on_exception",
)


def public_methods(cls: type) -> list[str]:
    """The public functions ``cls`` defines itself (not inherited, no properties)."""
    return sorted(n for n, v in vars(cls).items() if not n.startswith("_") and inspect.isfunction(v))


def lightning_hook_names() -> dict[str, list[str]]:
    """Lightning 2.6's hook names per owner: what our classes must all have."""
    from lightning.pytorch import Callback
    from lightning.pytorch.core.hooks import CheckpointHooks, DataHooks, ModelHooks

    module = sorted(
        {*public_methods(ModelHooks), *public_methods(DataHooks), *public_methods(CheckpointHooks), *MODULE_METHODS}
        - set(DEPRECATED)
    )
    return {"module": module, "callback": public_methods(Callback), "datamodule": list(DATAMODULE_HOOKS)}


def _recording(cls: type, owner: str, names: list[str], events: list[str]) -> type:
    def wrap(name: str):
        def method(self, *args, **kwargs):
            events.append(f"{owner}.{name}")
            return getattr(super(sub, self), name)(*args, **kwargs)

        method.__name__ = name
        return method

    sub = type(f"Recorded{cls.__name__}", (cls,), {n: wrap(n) for n in names})
    return sub


def record(stage: str) -> list[str]:
    """One Lightning run of ``stage``, the hook events in order."""
    import torch
    from lightning.pytorch import (
        Callback,
        LightningDataModule,
        LightningModule,
        Trainer,
    )
    from torch.utils.data import DataLoader, TensorDataset

    class Module(LightningModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            return torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1])

        def validation_step(self, batch, batch_idx):
            self.log("val_loss", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

        def test_step(self, batch, batch_idx):
            self.log("test_loss", torch.nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

        def predict_step(self, batch, batch_idx):
            return self.layer(batch[0])

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    class Data(LightningDataModule):
        def _loader(self):
            g = torch.Generator().manual_seed(0)
            return DataLoader(
                TensorDataset(torch.randn(8, 4, generator=g), torch.randn(8, 1, generator=g)), batch_size=4
            )

        train_dataloader = val_dataloader = test_dataloader = predict_dataloader = _loader

    names = lightning_hook_names()
    events: list[str] = []
    module = _recording(Module, "module", names["module"], events)()
    data = _recording(Data, "datamodule", names["datamodule"], events)()
    callback = _recording(Callback, "callback", names["callback"], events)()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = Trainer(accelerator="cpu", devices=1, callbacks=[callback], enable_model_summary=False, **SETTINGS)
        getattr(trainer, stage)(module, datamodule=data)
    return events


def load() -> dict[str, Any]:
    """The committed data: ``{"hooks": {owner: [names]}, "fit": [...], "validate": [...], ...}``."""
    return json.loads(DATA.read_text())


DOC = DATA.parents[3] / "docs" / "lifecycle.md"
DOC_START, DOC_END = (
    "<!-- hook-order:start (generated from tests/strategies/data/lightning_hooks.json) -->",
    "<!-- hook-order:end -->",
)


def render_tables(data: dict[str, Any]) -> str:
    """docs/lifecycle.md's hook tables: one per stage; a hook called on several owners in a row is one line."""
    out = [DOC_START]
    for stage in STAGES:
        rows: list[tuple[str, list[str]]] = []
        for event in data[stage]:
            owner, hook = event.split(".", 1)
            if rows and rows[-1][0] == hook and owner not in rows[-1][1]:
                rows[-1][1].append(owner)
            else:
                rows.append((hook, [owner]))
        out += ["", f"### `{stage}`", "", "| # | hook | called on (in this order) |", "|---|------|------|"]
        out += [f"| {i} | `{hook}` | {', '.join(owners)} |" for i, (hook, owners) in enumerate(rows, 1)]
    out.append(DOC_END)
    return "\n".join(out)


def doc_tables() -> str:
    """The generated part of docs/lifecycle.md as it is now."""
    text = DOC.read_text()
    return text[text.index(DOC_START) : text.index(DOC_END) + len(DOC_END)]


def main() -> int:
    if "--docs" in sys.argv:
        text = DOC.read_text()
        DOC.write_text(text.replace(doc_tables(), render_tables(load())))
        return 0
    recorded = {stage: record(stage) for stage in STAGES}
    if "--write" in sys.argv:
        DATA.parent.mkdir(exist_ok=True)
        DATA.write_text(json.dumps({"hooks": lightning_hook_names(), **recorded}, indent=1) + "\n")
    else:
        print(json.dumps(recorded, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
