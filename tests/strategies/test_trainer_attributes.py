"""Lightning 2.6's Trainer attributes that programs read: ``estimated_stepping_batches``,
``train_dataloader``, ``is_last_batch``, ``ckpt_path``, ``interrupted``, ``evaluating``, ... (each
checked here, and side by side with Lightning at the end)."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from _helpers import quiet_trainer
from torch import nn
from torch.utils.data import DataLoader, IterableDataset, TensorDataset

import strategies
from strategies import TrainModule

torch.manual_seed(0)
X, Y = torch.randn(40, 4), torch.randn(40, 1)


def _loader(n: int = 40, batch_size: int = 4) -> DataLoader:
    return DataLoader(TensorDataset(X[:n], Y[:n]), batch_size=batch_size)


class _Stream(IterableDataset):
    def __iter__(self):
        return iter(zip(X[:8], Y[:8], strict=True))


def _module_class(base: type) -> type:
    """Reads the attributes where programs read them; ``seen`` keeps what it read."""

    class Module(base):  # type: ignore[misc,valid-type]
        def __init__(self, loader: Any = None) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = nn.Linear(4, 1)
            self.loader = loader
            self.seen: dict[str, Any] = {"last": []}

        def train_dataloader(self):
            self.seen["fetched"] = self.seen.get("fetched", 0) + 1
            return self.loader if self.loader is not None else _loader()

        def training_step(self, batch, batch_idx):
            self.seen["last"].append(self.trainer.is_last_batch)
            x, y = batch
            return nn.functional.mse_loss(self.layer(x), y)

        def validation_step(self, batch, batch_idx):
            self.seen["in_validation"] = (self.trainer.training, self.trainer.validating, self.trainer.evaluating)

        def configure_optimizers(self):
            steps = self.trainer.estimated_stepping_batches
            self.seen["estimated"] = steps
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1)
            if steps in (float("inf"), -1):
                return optimizer
            scheduler = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=0.1, total_steps=int(steps))
            return {"optimizer": optimizer, "lr_scheduler": {"scheduler": scheduler, "interval": "step"}}

    return Module


_Module = _module_class(TrainModule)


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"max_epochs": 2}, 20),
        ({"max_epochs": 3, "accumulate_grad_batches": 3}, 12),  # ceil(10 / 3) a epoch
        ({"max_epochs": 2, "limit_train_batches": 0.5}, 10),
        ({"max_epochs": 5, "max_steps": 7}, 7),
        ({"max_epochs": -1, "max_steps": 9}, 9),
    ],
)
def test_estimated_stepping_batches_is_lightnings_estimate_and_onecyclelr_runs_to_its_end(kwargs, expected) -> None:
    module = _Module()
    trainer = quiet_trainer(**kwargs)
    trainer.fit(module)
    assert module.seen["estimated"] == expected
    assert trainer.global_step == expected  # OneCycleLR stepped every step and never ran past its total
    assert module.seen["fetched"] == 1, "reading the estimate fetched the training loader a second time"


def test_estimated_stepping_batches_of_a_loader_without_a_length_is_max_steps() -> None:
    module = _Module(DataLoader(_Stream(), batch_size=4))
    quiet_trainer(max_epochs=1, max_steps=-1).fit(module)
    assert module.seen["estimated"] == -1  # Lightning's answer: max_steps, here "no limit"


def test_is_last_batch_is_true_on_each_epochs_last_batch_only() -> None:
    module = _Module(_loader(12))
    quiet_trainer(max_epochs=2).fit(module)
    assert module.seen["last"] == [False, False, True, False, False, True]


def test_the_validation_inside_fit_is_evaluating_and_not_training() -> None:
    module = _Module()
    trainer = quiet_trainer(max_epochs=1, limit_train_batches=2)
    trainer.fit(module, val_dataloaders=_loader(8))
    assert module.seen["in_validation"] == (False, True, True)
    assert trainer.enable_validation and not trainer.evaluating
    assert quiet_trainer(limit_val_batches=0).enable_validation is False


def test_train_dataloader_is_the_loader_fit_ran_and_none_before() -> None:
    trainer = quiet_trainer(max_epochs=1)
    assert trainer.train_dataloader is None
    loader = _loader(8)
    trainer.fit(_Module(), loader)
    assert trainer.train_dataloader is loader


def test_ckpt_path_is_the_file_loaded_and_when_set_it_loads_in_later_runs(tmp_path: Path) -> None:
    trainer = quiet_trainer(max_epochs=1)
    module = _Module()
    trainer.fit(module)
    path = tmp_path / "a.ckpt"
    trainer.save_checkpoint(path)
    assert trainer.ckpt_path is None
    trainer.validate(module, _loader(8), ckpt_path=path, verbose=False)
    assert trainer.ckpt_path == path
    trainer.ckpt_path = path  # user-managed: every run without a ckpt_path loads it
    with torch.no_grad():
        module.layer.weight.add_(10.0)
    trainer.validate(module, _loader(8), verbose=False)
    assert float(module.layer.weight.abs().max()) < 10.0, "the file set in `trainer.ckpt_path` was not loaded"
    with pytest.warns(UserWarning, match=r"was called but then you passed .*The latter will be loaded"):
        trainer.validate(module, _loader(8), ckpt_path=path, verbose=False)
    assert trainer.ckpt_path == path
    trainer.validate(module, _loader(8), verbose=False)  # the passed path reset the managed one
    assert trainer.ckpt_path is None


def test_interrupted_after_a_run_that_raised_and_not_after_the_next() -> None:
    class Failing(_Module):
        def training_step(self, batch, batch_idx):
            raise ValueError("boom")

    trainer = quiet_trainer(max_epochs=1)
    with pytest.raises(ValueError, match="boom"):
        trainer.fit(Failing())
    assert trainer.interrupted
    trainer.fit(_Module())
    assert not trainer.interrupted


def test_the_device_and_process_views_on_one_cpu_process(capsys) -> None:
    trainer = quiet_trainer()
    assert (trainer.num_nodes, trainer.device_ids, trainer.distributed_sampler_kwargs) == (1, [0], None)
    assert trainer.scaler is None and trainer.progress_bar_callback is None
    bar = strategies.TQDMProgressBar()
    assert quiet_trainer(enable_progress_bar=True, callbacks=[bar]).progress_bar_callback is bar
    trainer.print("hello", 1)
    assert capsys.readouterr().out == "hello 1\n"
    with quiet_trainer(precision="bf16-true").init_module():
        layer = nn.Linear(2, 2)
    assert layer.weight.dtype == torch.bfloat16 and layer.weight.device.type == "cpu"


@pytest.mark.extras
def test_the_attributes_read_the_same_on_lightning(tmp_path: Path) -> None:
    L = pytest.importorskip("lightning.pytorch", reason="the side-by-side test needs Lightning 2.6")
    cases = [
        {"max_epochs": 3, "accumulate_grad_batches": 3},
        {"max_epochs": 2, "limit_train_batches": 0.5, "max_steps": 7},
        {"max_epochs": -1, "max_steps": 9},
    ]
    for kwargs in cases:
        seen = []
        for base, trainer_cls in ((TrainModule, strategies.Trainer), (L.LightningModule, L.Trainer)):
            module = _module_class(base)(_loader(36))
            trainer = quiet_trainer(trainer_cls, **kwargs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                trainer.fit(module, val_dataloaders=_loader(8))
            seen.append(
                {
                    **module.seen,
                    "global_step": trainer.global_step,
                    "after_fit": (trainer.interrupted, trainer.evaluating, trainer.ckpt_path, trainer.num_nodes),
                    "devices": (trainer.device_ids, trainer.distributed_sampler_kwargs, trainer.scaler),
                }
            )
        assert seen[0] == seen[1], kwargs


def test_state_fn_names_the_entry_point_as_lightnings_does() -> None:
    seen = []

    class Probe(strategies.Callback):
        def on_train_start(self, trainer, module):
            seen.append(trainer.state.fn)

        def on_validation_start(self, trainer, module):
            seen.append(trainer.state.fn)

    trainer = quiet_trainer(max_epochs=1, callbacks=[Probe()], num_sanity_val_steps=0)
    trainer.fit(_Module(), _loader(4), _loader(4))
    trainer.validate(_Module(), _loader(4), verbose=False)
    assert seen == ["fit", "fit", "validate"]
