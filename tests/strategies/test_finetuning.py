"""``BaseFinetuning`` / ``BackboneFinetuning``: freeze, unfreeze into a new group, resume with it (Lightning 2.6's)."""

from __future__ import annotations

import warnings

import pytest
import torch
from _helpers import quiet_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import BackboneFinetuning, BaseFinetuning, Trainer


def _loader() -> DataLoader:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def _module(base):
    class Transfer(base):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.backbone = nn.Sequential(nn.Linear(4, 6), nn.BatchNorm1d(6), nn.ReLU())
            self.head = nn.Linear(6, 1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return nn.functional.mse_loss(self.head(self.backbone(x)), y)

        def configure_optimizers(self):
            return torch.optim.SGD(filter(lambda p: p.requires_grad, self.parameters()), lr=0.1, momentum=0.9)

    return Transfer()


def _trainer(trainer_cls=Trainer, **kwargs):
    return quiet_trainer(trainer_cls, **{"max_epochs": 4, **kwargs})


def _fit(trainer, module, ckpt_path=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(module, _loader(), ckpt_path=ckpt_path)
    return trainer


class _Probe(strategies.Callback):
    """The optimizer's group learning rates and the backbone's trainability at each epoch's end."""

    def __init__(self) -> None:
        self.seen: list[tuple[list[float], bool]] = []

    def on_train_epoch_end(self, trainer, module):
        groups = trainer.optimizers[0].param_groups
        self.seen.append(([round(g["lr"], 6) for g in groups], module.backbone[0].weight.requires_grad))


def test_the_backbone_is_frozen_then_added_with_a_rising_learning_rate() -> None:
    probe = _Probe()
    module = _module(strategies.TrainModule)
    frozen = module.backbone[0].weight.detach().clone()
    trainer = _trainer(callbacks=[BackboneFinetuning(unfreeze_backbone_at_epoch=2, lambda_func=lambda e: 1.5), probe])
    _fit(trainer, module)
    assert probe.seen == [
        ([0.1], False),
        ([0.1], False),
        ([0.1, 0.01], True),  # 0.1 * backbone_initial_ratio_lr
        ([0.1, 0.015], True),  # 1.5x, below the module's rate (should_align)
    ]
    assert not torch.equal(module.backbone[0].weight, frozen)
    assert module.backbone[1].weight.requires_grad  # train_bn=True keeps batch norms trainable


def test_the_schedule_and_weights_match_lightnings() -> None:
    pl = pytest.importorskip("lightning.pytorch", reason="needs the lightning extra (pip install -e '.[lightning]')")
    results = {}
    for name, trainer_cls, base, cls in (
        ("lightning", pl.Trainer, pl.LightningModule, pl.callbacks.BackboneFinetuning),
        ("ours", Trainer, strategies.TrainModule, BackboneFinetuning),
    ):
        module = _module(base)
        lrs = []
        probe = pl.Callback() if name == "lightning" else strategies.Callback()
        probe.on_train_epoch_end = lambda trainer, m, lrs=lrs: lrs.append(
            [round(g["lr"], 6) for g in trainer.optimizers[0].param_groups]
        )
        _fit(_trainer(trainer_cls, callbacks=[cls(unfreeze_backbone_at_epoch=1, should_align=True), probe]), module)
        results[name] = (lrs, {k: v.detach().clone() for k, v in module.state_dict().items()})
    assert results["ours"][0] == results["lightning"][0]
    for key, value in results["lightning"][1].items():
        torch.testing.assert_close(results["ours"][1][key], value, msg=key)


def test_a_resumed_run_rebuilds_the_added_group_before_loading_the_optimizer(tmp_path) -> None:
    callback = BackboneFinetuning(unfreeze_backbone_at_epoch=1, lambda_func=lambda e: 1.5)
    trainer = _fit(_trainer(max_epochs=2, callbacks=[callback]), _module(strategies.TrainModule))
    path = tmp_path / "two.ckpt"
    trainer.save_checkpoint(path)
    saved = torch.load(path, weights_only=True)["callbacks"]["BackboneFinetuning"]
    assert [g["params"] for g in saved["internal_optimizer_metadata"][0]] == [
        ["backbone.1.weight", "backbone.1.bias", "head.weight", "head.bias"],  # batch norm trainable (train_bn)
        ["backbone.0.weight", "backbone.0.bias"],
    ]
    straight = _fit(
        _trainer(max_epochs=4, callbacks=[BackboneFinetuning(1, lambda e: 1.5)]),
        straight_module := _module(strategies.TrainModule),
    )
    resumed_module = _module(strategies.TrainModule)
    resumed = _fit(_trainer(max_epochs=4, callbacks=[BackboneFinetuning(1, lambda e: 1.5)]), resumed_module, path)
    assert resumed.global_step == straight.global_step == 16
    for key, value in straight_module.state_dict().items():
        torch.testing.assert_close(resumed_module.state_dict()[key], value, msg=key)


def test_a_module_without_a_backbone_and_an_unwritten_subclass_say_what_to_do() -> None:
    class NoBackbone(strategies.TrainModule):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            return self.body(batch[0]).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    class Backbone(BackboneFinetuning):
        def freeze_before_training(self, module):
            pass  # the check at on_fit_start is what this test is about

    with pytest.raises(ValueError, match="needs `NoBackbone.backbone`, an `nn.Module`"):
        _fit(_trainer(callbacks=[Backbone()]), NoBackbone())
    with pytest.raises(NotImplementedError, match="must define `freeze_before_training"):
        _fit(_trainer(callbacks=[BaseFinetuning()]), _module(strategies.TrainModule))


def test_unfreezing_parameters_the_optimizer_has_skips_them_with_a_warning() -> None:
    module = _module(strategies.TrainModule)
    optimizer = torch.optim.SGD(module.parameters(), lr=0.1)
    with pytest.warns(UserWarning, match="already in a group of this optimizer"):
        BaseFinetuning.unfreeze_and_add_param_group(module.backbone, optimizer)
    assert len(optimizer.param_groups) == 1
