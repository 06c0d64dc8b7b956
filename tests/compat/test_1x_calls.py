"""1.x calls the real programs make: ``fit/validate/test/predict`` bound as 1.x bound them,
``LightningDataModule.size()``/``dims``/transforms/``has_setup_*``, ``BaseFinetuning`` as 1.x
subclasses use it, and evaluation under ``no_grad`` (1.x had no inference mode)."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

import compat
from compat._warnings import CompatDeprecationWarning


def _quiet(factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory()


def _loader(n=8):
    g = torch.Generator().manual_seed(0)
    return DataLoader(TensorDataset(torch.randn(n, 4, generator=g), torch.randn(n, 1, generator=g)), batch_size=4)


class Model(compat.LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = torch.nn.Linear(4, 1)
        self.grad_enabled_in_eval: list[bool] = []

    def training_step(self, batch, batch_idx):
        x, y = batch
        return torch.nn.functional.mse_loss(self.layer(x), y)

    def validation_step(self, batch, batch_idx):
        self.grad_enabled_in_eval.append(torch.is_grad_enabled() or not torch.is_inference_mode_enabled())
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self.layer(x), y))

    def test_step(self, batch, batch_idx):
        x, y = batch
        self.log("test_loss", torch.nn.functional.mse_loss(self.layer(x), y))

    def predict_step(self, batch, batch_idx, dataloader_idx=0):
        return self.layer(batch[0])

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _trainer(tmp_path, **kwargs):
    return _quiet(
        lambda: compat.Trainer(
            **{
                "default_root_dir": str(tmp_path),
                "max_epochs": 1,
                "logger": False,
                "enable_progress_bar": False,
                **kwargs,
            }
        )
    )


def test_old_loader_keywords_are_renamed_with_one_warning_each(tmp_path):
    model, trainer = Model(), _trainer(tmp_path)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        trainer.fit(model, train_dataloader=_loader(), val_dataloaders=_loader())
        assert trainer.global_step == 2
        (result,) = trainer.test(model, test_dataloaders=_loader(), verbose=False)
        (val,) = trainer.validate(model, val_dataloaders=_loader(), verbose=False)
    assert set(result) == {"test_loss"} and set(val) == {"val_loss"}
    messages = [str(w.message) for w in rec if issubclass(w.category, CompatDeprecationWarning)]
    for old, new in (
        ("fit(train_dataloader=", "fit(train_dataloaders="),
        ("test(test_dataloaders=", "test(dataloaders="),
        ("validate(val_dataloaders=", "validate(dataloaders="),
    ):
        assert any(old in m and new in m for m in messages), (old, messages)


def test_positional_arguments_bind_in_the_1x_order(tmp_path):
    model, trainer = Model(), _trainer(tmp_path)
    _quiet(lambda: trainer.fit(model, _loader()))
    # 1.x: test(model, dataloaders, ckpt_path, verbose, datamodule); Lightning 2.x's third is `datamodule`
    path = tmp_path / "weights.ckpt"
    trainer.save_checkpoint(path)
    (result,) = _quiet(lambda: trainer.test(model, _loader(), str(path), False))
    assert "test_loss" in result and trainer.ckpt_path == str(path)
    # predict(model, dataloaders, datamodule, return_predictions, ckpt_path)
    assert _quiet(lambda: trainer.predict(model, _loader(), None, False)) is None
    with pytest.raises(TypeError, match="at most 6 positional"):  # 1.5's sixth is `test_dataloaders`
        trainer.test(model, _loader(), None, False, None, None, None)


def test_both_the_old_and_the_new_keyword_is_an_error(tmp_path):
    trainer = _trainer(tmp_path)
    with pytest.raises(TypeError, match="pass only `dataloaders`"):
        _quiet(lambda: trainer.test(Model(), dataloaders=_loader(), test_dataloaders=_loader()))


class Data(compat.LightningDataModule):
    def __init__(self):
        super().__init__()
        self.dims = (1, 4)

    def prepare_data(self):
        pass

    def setup(self, stage=None):
        self.data = _loader()

    def train_dataloader(self):
        return self.data

    def val_dataloader(self):
        return self.data


def test_a_datamodule_passed_as_the_loaders_is_the_datamodule(tmp_path):
    data, model = Data(), Model()
    _quiet(lambda: _trainer(tmp_path).fit(model, data))
    assert _quiet(lambda: data.has_setup_fit) and _quiet(lambda: data.has_prepared_data)
    assert not _quiet(lambda: data.has_setup_test)


def test_size_dims_and_transforms_are_1xs(tmp_path):
    data = Data()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        assert data.size() == (1, 4) and data.size(1) == 4
    assert any("LightningDataModule.size` is deprecated" in str(w.message) for w in rec)

    class WithTransforms(compat.LightningDataModule):
        def __init__(self):
            super().__init__(train_transforms="t", dims=(3,))

    dm = _quiet(WithTransforms)
    assert _quiet(lambda: (dm.train_transforms, dm.val_transforms, dm.size())) == ("t", None, (3,))
    dm.val_transforms = "v"  # noqa: B010 - the 1.x setter
    assert _quiet(lambda: dm.val_transforms) == "v"


def test_setup_with_no_stage_counts_for_every_stage():
    data = Data()
    data.setup()
    assert _quiet(lambda: (data.has_setup_fit, data.has_setup_test, data.has_teardown_fit)) == (True, True, False)


def test_evaluation_runs_under_no_grad_not_inference_mode_as_in_1x(tmp_path):
    model = Model()

    class NeedsAutograd(compat.Callback):
        def on_validation_epoch_end(self, trainer, pl_module):
            with torch.enable_grad():
                x = torch.randn(2, 4, requires_grad=True)
                pl_module.layer(x).sum().backward()  # fails on inference tensors
            self.grad = x.grad

    callback = NeedsAutograd()
    _quiet(lambda: _trainer(tmp_path, callbacks=[callback]).fit(model, _loader(), _loader()))
    assert callback.grad is not None and callback.grad.shape == (2, 4)
    assert _trainer(tmp_path).inference_mode is False
    assert _trainer(tmp_path, inference_mode=True).inference_mode is True


def test_base_finetuning_without_super_init_and_with_opt_idx(tmp_path):
    BaseFinetuning = _quiet(lambda: compat.callbacks.BaseFinetuning)
    calls = []
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")

        class Unfreeze(BaseFinetuning):
            def __init__(self):  # no super().__init__(), as 1.2's examples wrote it
                self.epoch = 1

            def freeze_before_training(self, pl_module):
                self.freeze(pl_module.layer)

            def finetune_function(self, pl_module, epoch, optimizer, opt_idx):
                calls.append((epoch, opt_idx))
                if epoch == self.epoch:
                    self.unfreeze_and_add_param_group(pl_module.layer, optimizer)

    assert any("finetune_function(pl_module, epoch, optimizer, opt_idx)" in str(w.message) for w in rec)

    class Frozen(Model):
        def __init__(self):
            super().__init__()
            self.bias = torch.nn.Parameter(torch.zeros(1))

        def training_step(self, batch, batch_idx):
            return super().training_step(batch, batch_idx) + self.bias.sum()

        def configure_optimizers(self):
            return torch.optim.SGD([self.bias], lr=0.1)

    model = Frozen()
    _quiet(lambda: _trainer(tmp_path, max_epochs=2, callbacks=[Unfreeze()]).fit(model, _loader()))
    assert calls == [(0, 0), (1, 0)]
    assert all(p.requires_grad for p in model.layer.parameters())


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("terminate_on_nan", False),  # 1.2-1.4's default
        ("terminate_on_nan", None),  # 1.5's
        ("stochastic_weight_avg", False),
        ("prepare_data_per_node", True),
        ("multiple_trainloader_mode", "max_size_cycle"),
        ("auto_select_gpus", False),
        ("track_grad_norm", -1),
        ("process_position", 3),  # no effect on what a run produces: any value
        ("move_metrics_to_cpu", True),
    ],
)
def test_a_removed_argument_at_its_1x_default_or_without_effect_is_taken_with_a_warning(tmp_path, name, value):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        compat.Trainer(default_root_dir=str(tmp_path), logger=False, **{name: value})
    assert any(f"Trainer({name}=" in str(w.message) for w in rec if issubclass(w.category, CompatDeprecationWarning))


@pytest.mark.parametrize(
    ("name", "value", "hint"),
    [
        ("terminate_on_nan", True, "torch.isfinite"),
        ("stochastic_weight_avg", True, "StochasticWeightAveraging"),
        ("track_grad_norm", 2, "grad_norm"),
        ("auto_lr_find", True, "lr_find"),
        ("truncated_bptt_steps", 5, "split the sequence yourself"),
    ],
)
def test_a_removed_argument_that_would_change_the_run_is_refused_saying_what_to_do(name, value, hint):
    from compat._arguments import TrainerArgumentsError

    with pytest.raises(TrainerArgumentsError, match=hint):
        _quiet(lambda: compat.Trainer(logger=False, **{name: value}))


def test_weights_save_path_is_where_checkpoints_without_a_dirpath_go_as_in_1x(tmp_path):
    trainer = _trainer(tmp_path / "root", weights_save_path=str(tmp_path / "weights"), logger=True)
    _quiet(lambda: trainer.fit(Model(), _loader()))
    saved = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*.ckpt"))
    assert [str(p.parent) for p in saved] == ["weights/lightning_logs/version_0/checkpoints"], saved


def test_tune_without_auto_arguments_has_nothing_to_do(tmp_path):
    trainer = _trainer(tmp_path)
    with pytest.warns(CompatDeprecationWarning, match="Trainer.tune"):
        assert trainer.tune(Model(), _loader()) == {}


def test_assigning_hparams_keeps_them_as_hyperparameters(tmp_path):
    from argparse import Namespace

    class Data(compat.LightningDataModule):
        def __init__(self, args):
            super().__init__()
            self.hparams = args

    class Hyper(Model):
        def __init__(self, args):
            super().__init__()
            self.hparams = args

    with pytest.warns(CompatDeprecationWarning, match="self.save_hyperparameters"):
        data = Data(Namespace(batch_size=4, root="/data"))
    assert data.hparams.batch_size == 4 and data.hparams["root"] == "/data"
    model = _quiet(lambda: Hyper({"lr": 0.5}))
    trainer = _trainer(tmp_path)
    _quiet(lambda: trainer.fit(model, _loader()))
    trainer.save_checkpoint(tmp_path / "h.ckpt")
    assert torch.load(tmp_path / "h.ckpt", weights_only=True)["hyper_parameters"] == {"lr": 0.5}


def test_a_progress_bar_refresh_rate_is_1xs_bar_at_that_rate(tmp_path):
    import strategies

    shown = _quiet(lambda: compat.Trainer(default_root_dir=str(tmp_path), logger=False, progress_bar_refresh_rate=7))
    assert [c.refresh_rate for c in shown.callbacks if isinstance(c, strategies.TQDMProgressBar)] == [7]
    hidden = _quiet(lambda: compat.Trainer(default_root_dir=str(tmp_path), logger=False, progress_bar_refresh_rate=0))
    assert not any(isinstance(c, strategies.TQDMProgressBar) for c in hidden.callbacks)


def test_assigning_hparams_something_else_says_what_to_do():
    class Data(compat.LightningDataModule):
        def __init__(self):
            super().__init__()
            self.hparams = 3

    with pytest.raises(TypeError, match="Namespace or a dict"):
        _quiet(Data)
