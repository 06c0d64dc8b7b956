"""``StochasticWeightAveraging``: the averaged weights, the SWALR schedule, the batch-norm epoch and
resuming, against hand-computed averages and side by side with Lightning 2.6."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from _helpers import quiet_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import StochasticWeightAveraging, TrainModule

torch.manual_seed(0)
X, Y = torch.randn(32, 4), torch.randn(32, 1)


def _loader() -> DataLoader:
    return DataLoader(TensorDataset(X, Y), batch_size=8)


def _module_class(base: type, batch_norm: bool, scheduler: bool) -> type:
    class Module(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            layers: list[nn.Module] = [nn.Linear(4, 8)]
            if batch_norm:
                layers.append(nn.BatchNorm1d(8))
            self.net = nn.Sequential(*layers, nn.ReLU(), nn.Linear(8, 1))
            self.weights_at_epoch_start: list[list[torch.Tensor]] = []
            self.lrs: list[float] = []

        def on_train_epoch_start(self):
            self.weights_at_epoch_start.append([p.detach().clone() for p in self.parameters()])

        def training_step(self, batch, batch_idx):
            self.lrs.append(self.trainer.optimizers[0].param_groups[0]["lr"])
            x, y = batch
            loss = nn.functional.mse_loss(self.net(x), y)
            self.log("loss", loss)
            return loss

        def configure_optimizers(self):
            optimizer = torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)
            if not scheduler:
                return optimizer
            return [optimizer], [torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)]

    return Module


def _fit(trainer_cls: Any, base: type, swa: Any, batch_norm: bool = False, scheduler: bool = False, **kwargs: Any):
    module = _module_class(base, batch_norm, scheduler)()
    trainer = quiet_trainer(trainer_cls, callbacks=[swa], **{"max_epochs": 5, **kwargs})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(module, _loader())
    return module, trainer


def test_the_module_ends_with_the_mean_of_the_weights_at_each_averaged_epochs_start() -> None:
    module, trainer = _fit(None, TrainModule, StochasticWeightAveraging(swa_lrs=0.05, swa_epoch_start=3))
    # Epochs 2, 3, 4 (0-based; swa_epoch_start counts from 1) each add their starting weights.
    starts = module.weights_at_epoch_start[2:5]
    for i, param in enumerate(module.parameters()):
        assert torch.allclose(param, torch.stack([w[i] for w in starts]).mean(0), atol=1e-6)
    assert trainer.global_step == 5 * 4


def test_the_schedule_becomes_swalr_annealing_to_swa_lrs() -> None:
    module, _ = _fit(
        None,
        TrainModule,
        StochasticWeightAveraging(swa_lrs=0.01, swa_epoch_start=2, annealing_epochs=2),
        scheduler=True,
    )
    per_epoch = module.lrs[::4]
    assert per_epoch[0] == pytest.approx(0.1)  # StepLR still in charge in epoch 0
    assert per_epoch[-1] == pytest.approx(0.01)  # SWALR has annealed to swa_lrs


def test_with_batch_norm_one_more_epoch_recomputes_the_statistics_with_forward_passes_only() -> None:
    swa = StochasticWeightAveraging(swa_lrs=0.05, swa_epoch_start=3)
    module, trainer = _fit(None, TrainModule, swa, batch_norm=True)
    assert len(module.weights_at_epoch_start) == 6  # five epochs and the batch-norm one
    assert trainer.global_step == 5 * 4 + 1  # the batch-norm epoch's one step, with no gradients
    for now, averaged in zip(module.parameters(), module.weights_at_epoch_start[5], strict=True):
        assert torch.equal(now, averaged), "the batch-norm epoch changed a weight"
    assert trainer.max_epochs == 5 and trainer.accumulate_grad_batches == 1  # put back at the end
    batch_norm = module.net[1]
    assert batch_norm.momentum == 0.1
    with torch.no_grad():  # a cumulative mean over the last epoch's batches, with the averaged weights
        hidden = module.net[0](X)
    assert torch.allclose(batch_norm.running_mean, hidden.mean(0), atol=1e-5)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"swa_lrs": 0.0}, ValueError, "positive float"),
        ({"swa_lrs": [0.1, -1.0]}, ValueError, "positive float"),
        ({"swa_lrs": 0.1, "swa_epoch_start": 0}, ValueError, "int >= 1"),
        ({"swa_lrs": 0.1, "swa_epoch_start": 1.5}, ValueError, "between 0 and 1"),
        ({"swa_lrs": 0.1, "annealing_strategy": "exp"}, ValueError, "'cos' or 'linear'"),
        ({"swa_lrs": 0.1, "avg_fn": 3}, TypeError, "callable"),
    ],
)
def test_bad_arguments_say_what_to_pass(kwargs, error, message) -> None:
    with pytest.raises(error, match=message):
        StochasticWeightAveraging(**kwargs)


def test_two_optimizers_or_a_fraction_without_max_epochs_are_refused() -> None:
    with pytest.raises(ValueError, match="needs `max_epochs`"):
        _fit(None, TrainModule, StochasticWeightAveraging(swa_lrs=0.1), max_epochs=-1, max_steps=3)


def test_a_run_resumed_mid_average_ends_with_the_weights_of_a_run_straight_through(tmp_path: Path) -> None:
    straight, _ = _fit(None, TrainModule, StochasticWeightAveraging(swa_lrs=0.05, swa_epoch_start=2))
    checkpoint = strategies.ModelCheckpoint(dirpath=tmp_path, save_top_k=-1, filename="{epoch}")
    writer = quiet_trainer(
        max_epochs=5,
        enable_checkpointing=True,
        callbacks=[StochasticWeightAveraging(swa_lrs=0.05, swa_epoch_start=2), checkpoint],
    )
    writer.fit(_module_class(TrainModule, False, False)(), _loader())
    resumed_module = _module_class(TrainModule, False, False)()
    resumed = quiet_trainer(max_epochs=5, callbacks=[StochasticWeightAveraging(swa_lrs=0.05, swa_epoch_start=2)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        resumed.fit(resumed_module, _loader(), ckpt_path=tmp_path / "epoch=2.ckpt")
    for a, b in zip(straight.parameters(), resumed_module.parameters(), strict=True):
        assert torch.allclose(a, b, atol=1e-6)


def test_the_1x_name_runs_on_compat() -> None:
    import compat.callbacks

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert compat.callbacks.StochasticWeightAveraging is StochasticWeightAveraging


@pytest.mark.extras
@pytest.mark.parametrize(
    ("batch_norm", "scheduler", "start"),
    [(False, False, 3), (True, True, 0.6), (True, False, 2), (False, True, 1)],
)
def test_the_weights_and_the_learning_rates_are_lightnings(batch_norm, scheduler, start) -> None:
    L = pytest.importorskip("lightning.pytorch", reason="the side-by-side test needs Lightning 2.6")
    args = {"swa_lrs": 0.02, "swa_epoch_start": start, "annealing_epochs": 2}
    ours, our_trainer = _fit(None, TrainModule, StochasticWeightAveraging(**args), batch_norm, scheduler)
    theirs, their_trainer = _fit(
        L.Trainer, L.LightningModule, L.callbacks.StochasticWeightAveraging(**args), batch_norm, scheduler
    )
    assert ours.lrs == pytest.approx(theirs.lrs)
    assert our_trainer.global_step == their_trainer.global_step
    for (name, a), (_, b) in zip(ours.named_buffers(), theirs.named_buffers(), strict=True):
        assert torch.allclose(a.float(), b.float(), atol=1e-6), name  # batch-norm statistics
    # The parameters: Lightning's average, as it put it into the module. Without batch norm that is
    # where Lightning ends too; with it, Lightning's last step applies stale gradients (the module
    # docstring of strategies.swa), so its end is compared with the average it transferred.
    theirs_average = theirs.weights_at_epoch_start[-1] if batch_norm else list(theirs.parameters())
    for a, b in zip(ours.parameters(), theirs_average, strict=True):
        assert torch.allclose(a, b, atol=1e-6)
    if batch_norm:  # the difference is real: Lightning's end is not its own average
        assert any(not torch.allclose(a, b) for a, b in zip(theirs.parameters(), theirs_average, strict=True))
