"""Module and Trainer API parity with Lightning 2.6: manual optimization, hparams, precision names."""

from __future__ import annotations

import pytest
import torch
from probe import ProbeData, ProbeModule

from strategies import (
    DoublePrecision,
    HalfPrecision,
    MixedPrecision,
    Precision,
    Trainer,
)

QUIET = dict(
    accelerator="cpu", enable_progress_bar=False, num_sanity_val_steps=0, logger=False, enable_checkpointing=False
)


class _TwoOptimizers(ProbeModule):
    def __init__(self, manual: bool = True) -> None:
        super().__init__()
        self.automatic_optimization = not manual
        self.head = torch.nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        opt_a, opt_b = self.optimizers()
        sched_a, _ = self.lr_schedulers()
        for opt, layer in ((opt_a, self.layer), (opt_b, self.head)):
            self.toggle_optimizer(opt)
            loss = torch.nn.functional.mse_loss(layer(batch[0]), batch[1])
            opt.zero_grad()
            self.manual_backward(loss)
            opt.step()
            self.untoggle_optimizer(opt)
        sched_a.step()
        return loss

    def configure_optimizers(self):
        a, b = torch.optim.SGD(self.layer.parameters(), lr=0.1), torch.optim.SGD(self.head.parameters(), lr=0.1)
        return [a, b], [torch.optim.lr_scheduler.StepLR(a, 1, 0.5), torch.optim.lr_scheduler.StepLR(b, 1, 0.5)]


def test_manual_optimization_steps_each_optimizer_itself():
    module = _TwoOptimizers()
    before = [p.detach().clone() for p in (module.head.weight,)]
    trainer = Trainer(max_steps=4, **QUIET)
    trainer.fit(module, datamodule=ProbeData(batch_size=4))
    # Two optimizer steps per batch, as Lightning counts them; 2 batches ran.
    assert trainer.global_step == 4 and trainer.state.step_in_epoch == 0 and trainer.current_epoch == 1
    assert not torch.equal(before[0], module.head.weight)
    assert all(p.requires_grad for p in module.parameters()), "untoggle_optimizer restores requires_grad"


def test_several_optimizers_need_manual_optimization():
    with pytest.raises(RuntimeError, match="multiple optimizers is only supported with manual optimization"):
        Trainer(max_steps=1, **QUIET).fit(_TwoOptimizers(manual=False), datamodule=ProbeData(batch_size=4))


def test_manual_backward_refused_in_automatic_optimization():
    module = ProbeModule()
    module._trainer = Trainer(**QUIET)
    with pytest.raises(RuntimeError, match="`manual_backward` is for manual optimization"):
        module.manual_backward(torch.zeros((), requires_grad=True))


class _Hyper(ProbeModule):
    def __init__(self, lr: float = 0.1, width: int = 4, **extra) -> None:
        super().__init__()
        self.save_hyperparameters(ignore="width")
        self.epochs_seen: list[tuple[int, int]] = []

    def on_train_batch_end(self, outputs, batch, batch_idx):
        self.epochs_seen.append((self.current_epoch, self.global_step))
        gathered = self.all_gather(torch.tensor([1.0]))
        assert gathered.shape == (1,) and self.device == torch.device("cpu")


def test_module_properties_and_hyperparameters_in_checkpoints(tmp_path, capsys):
    module = _Hyper(lr=0.5, note="x")
    assert module.hparams == {"lr": 0.5, "note": "x"} and module.hparams.lr == 0.5
    trainer = Trainer(max_epochs=2, limit_train_batches=2, **QUIET)
    trainer.fit(module, datamodule=ProbeData(batch_size=4))
    assert module.epochs_seen == [(0, 1), (0, 2), (1, 3), (1, 4)]
    trainer.save_checkpoint(tmp_path / "last.ckpt")
    assert torch.load(tmp_path / "last.ckpt", weights_only=True)["hyper_parameters"] == {"lr": 0.5, "note": "x"}
    module.print("only on rank 0")
    assert "only on rank 0" in capsys.readouterr().out


def test_trainer_progress_properties():
    trainer = Trainer(max_epochs=1, **QUIET)
    trainer.fit(ProbeModule(), datamodule=ProbeData(batch_size=4))
    assert (trainer.current_epoch, trainer.global_step, trainer.num_training_batches) == (1, 4, 4)
    assert trainer.precision == "32-true" and isinstance(trainer.precision_plugin, Precision)
    assert trainer.lightning_module is trainer.module and trainer.should_stop is False


@pytest.mark.parametrize(
    ("name", "cls", "dtype"),
    [
        ("32-true", Precision, torch.float32),
        (32, Precision, torch.float32),
        ("32", Precision, torch.float32),
        ("bf16-mixed", MixedPrecision, torch.float32),
        ("16-true", HalfPrecision, torch.float16),
        ("bf16-true", HalfPrecision, torch.bfloat16),
        ("64-true", DoublePrecision, torch.float64),
        (64, DoublePrecision, torch.float64),
        ("64", DoublePrecision, torch.float64),
    ],
)
def test_every_lightning_precision_name_trains_with_its_dtype(name, cls, dtype):
    module = ProbeModule()
    trainer = Trainer(precision=name, max_steps=1, **QUIET)
    assert type(trainer.precision_plugin) is cls
    trainer.fit(module, datamodule=ProbeData(batch_size=4))
    assert module.layer.weight.dtype == dtype and trainer.global_step == 1


def test_short_mixed_names_warn_and_mean_mixed():
    with pytest.warns(UserWarning, match="pass `precision='bf16-mixed'`"):
        assert Trainer(precision="bf16", **QUIET).precision == "bf16-mixed"


@pytest.mark.parametrize("name", ["16-mixed", 16, "16"])
def test_fp16_mixed_on_cpu_is_refused_before_any_process_starts(name):
    with pytest.raises(ValueError, match="needs CUDA"):
        Trainer(strategy="ddp", devices=2, precision=name, accelerator="cpu")


def test_every_exported_callback_is_also_in_strategies_callbacks_as_lightning_keeps_them():
    """``from lightning.pytorch.callbacks import X`` becomes ``from strategies.callbacks import X``."""
    import strategies
    import strategies.callbacks

    exported = [
        name
        for name in strategies.__all__
        if isinstance(getattr(strategies, name), type)
        and issubclass(getattr(strategies, name), strategies.Callback)
        and name != "Callback"
    ]
    assert {"Timer", "LearningRateMonitor", "BasePredictionWriter", "OnExceptionCheckpoint"} <= set(exported)
    for name in exported:
        assert getattr(strategies.callbacks, name) is getattr(strategies, name), name
        assert name in dir(strategies.callbacks)


def test_a_datamodule_passed_where_the_loaders_go_is_the_datamodule_as_in_lightning():
    data = ProbeData(batch_size=4)
    trainer = Trainer(max_epochs=1, limit_train_batches=2, **QUIET)
    trainer.fit(ProbeModule(), data)  # Lightning 2.6 moves it to `datamodule=`
    assert trainer.datamodule is data and trainer.global_step == 2
    (result,) = trainer.validate(trainer.lightning_module, data, verbose=False)
    assert result and trainer.datamodule is data


def test_limit_batches_are_trainer_attributes_as_in_lightning():
    trainer = Trainer(limit_train_batches=3, limit_val_batches=0.5, **QUIET)
    assert (trainer.limit_train_batches, trainer.limit_val_batches, trainer.limit_test_batches) == (3, 0.5, 1.0)
    trainer.limit_test_batches = 2
    assert trainer.limits["test"] == 2


def test_save_weights_only_keeps_hyperparameters_so_load_from_checkpoint_works(tmp_path):
    from strategies import ModelCheckpoint

    module = _Hyper(lr=0.25)
    checkpoint = ModelCheckpoint(dirpath=tmp_path, save_weights_only=True)
    trainer = Trainer(max_epochs=1, limit_train_batches=2, **{**QUIET, "enable_checkpointing": True})
    trainer.callbacks.append(checkpoint)
    trainer.fit(module, datamodule=ProbeData(batch_size=4))
    saved = torch.load(checkpoint.best_model_path, weights_only=True)
    assert saved["hyper_parameters"] == {"lr": 0.25}
    assert "optimizer_states" not in saved and "callbacks" not in saved and saved["global_step"] == 2
    restored = _Hyper.load_from_checkpoint(checkpoint.best_model_path, strict=False)  # its layer comes in `setup`
    assert restored.hparams.lr == 0.25
    assert set(saved["state_dict"]) == set(module.state_dict())
