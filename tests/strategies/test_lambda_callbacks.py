"""``LambdaCallback`` and ``GradientAccumulationScheduler``: Lightning 2.6's hooks, factors and errors."""

from __future__ import annotations

import inspect
import warnings

import pytest
import torch
from _helpers import quiet_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import GradientAccumulationScheduler, LambdaCallback, Trainer


def _loader() -> DataLoader:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)  # 4 batches


def _module(base, manual: bool = False):
    class Regression(base):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = nn.Linear(4, 1)
            self.automatic_optimization = not manual

        def training_step(self, batch, batch_idx):
            x, y = batch
            loss = nn.functional.mse_loss(self.layer(x), y)
            if manual:
                opt = self.optimizers()
                opt.zero_grad()
                self.manual_backward(loss)
                opt.step()
            return loss

        def validation_step(self, batch, batch_idx):
            self.log("val_loss", nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

        def test_step(self, batch, batch_idx):
            self.log("test_loss", nn.functional.mse_loss(self.layer(batch[0]), batch[1]))

        def predict_step(self, batch, batch_idx):
            return self.layer(batch[0])

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.05)

    return Regression()


def _trainer(trainer_cls=Trainer, **kwargs):
    return quiet_trainer(trainer_cls, **{"max_epochs": 3, **kwargs})


def _quietly(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


HOOKS = [name for name in inspect.signature(LambdaCallback).parameters]


def _recording(calls: list[str]) -> LambdaCallback:
    def make(name):
        return lambda *args, **kwargs: calls.append(name)

    return LambdaCallback(**{name: make(name) for name in HOOKS})


def _run_all(trainer, module) -> None:
    _quietly(trainer.fit, module, _loader(), _loader())
    _quietly(trainer.validate, module, _loader())
    _quietly(trainer.test, module, _loader())
    _quietly(trainer.predict, module, _loader())


# -- LambdaCallback --------------------------------------------------------------------------------------


def test_its_keywords_are_the_callback_hooks() -> None:
    hooks = {n for n, v in vars(strategies.Callback).items() if callable(v) and not n.startswith("_")}
    assert set(HOOKS) == hooks - {"state_dict", "load_state_dict"}


def test_each_function_is_called_as_its_hook() -> None:
    calls: list[str] = []
    seen = []
    callback = _recording(calls)
    callback.on_train_batch_end = lambda trainer, module, outputs, batch, batch_idx: seen.append(
        (type(trainer).__name__, batch_idx, float(outputs["loss"]) > 0)
    )
    _run_all(
        _trainer(max_epochs=1, limit_val_batches=1, num_sanity_val_steps=0, callbacks=[callback]),
        _module(strategies.TrainModule),
    )
    assert seen == [("Trainer", i, True) for i in range(4)]
    assert calls[:4] == ["setup", "on_fit_start", "on_train_start", "on_train_epoch_start"]
    assert {"on_predict_batch_end", "on_test_epoch_end", "on_before_zero_grad", "teardown"} <= set(calls)


def test_a_value_that_is_not_a_function_is_refused() -> None:
    with pytest.raises(TypeError, match=r"`LambdaCallback\(on_fit_start=...\)` needs a function; got `int`"):
        LambdaCallback(on_fit_start=3)


def test_the_hooks_come_in_lightnings_order() -> None:
    """fit (with sanity check and validation), validate, test and predict: the same hook calls, in order."""
    pl = pytest.importorskip("lightning.pytorch", reason="needs the lightning extra (pip install -e '.[lightning]')")
    runs = {}
    for name, trainer_cls, base in (
        ("lightning", pl.Trainer, pl.LightningModule),
        ("ours", Trainer, strategies.TrainModule),
    ):
        calls: list[str] = []
        _run_all(_trainer(trainer_cls, max_epochs=2, limit_val_batches=2, callbacks=[_recording(calls)]), _module(base))
        runs[name] = calls
    assert runs["ours"] == runs["lightning"]


# -- GradientAccumulationScheduler -------------------------------------------------------------------------


def test_the_factor_changes_at_the_scheduled_epochs() -> None:
    scheduler = GradientAccumulationScheduler(scheduling={2: 1, 0: 2})
    assert [scheduler.get_accumulate_grad_batches(e) for e in range(4)] == [2, 2, 1, 1]
    factors = []
    probe = LambdaCallback(on_train_epoch_end=lambda trainer, module: factors.append(trainer.accumulate_grad_batches))
    trainer = _trainer(callbacks=[scheduler, probe])
    _quietly(trainer.fit, _module(strategies.TrainModule), _loader())
    assert factors == [2, 2, 1] and trainer.global_step == 2 + 2 + 4


def test_a_schedule_without_epoch_zero_starts_at_one() -> None:
    scheduling = {1: 4}
    scheduler = GradientAccumulationScheduler(scheduling)
    assert scheduling == {1: 4, 0: 1} and scheduler.epochs == [0, 1]  # Lightning fills in {0: 1} too
    assert scheduler.going_to_accumulate_grad_batches()


@pytest.mark.parametrize(
    ("scheduling", "error", "message"),
    [
        ({}, TypeError, "give at least one"),
        ({-1: 2}, ValueError, r"epochs must be ints >= 0 \(counted from 0\); got \[-1\]"),
        ({"1": 2}, ValueError, "epochs must be ints"),
        ({0: 0}, ValueError, r"accumulation factors must be ints >= 1; got \[0\]"),
        ({0: 1.5}, ValueError, "accumulation factors must be ints"),
    ],
)
def test_bad_schedules_say_what_to_pass(scheduling, error, message) -> None:
    with pytest.raises(error, match=message):
        GradientAccumulationScheduler(scheduling)


def test_manual_optimization_and_a_trainer_factor_are_refused_at_fit() -> None:
    trainer = _trainer(callbacks=[GradientAccumulationScheduler({0: 2})])
    with pytest.raises(RuntimeError, match="needs automatic optimization"):
        _quietly(trainer.fit, _module(strategies.TrainModule, manual=True), _loader())
    trainer = _trainer(accumulate_grad_batches=2, callbacks=[GradientAccumulationScheduler({0: 2})])
    with pytest.raises(ValueError, match=r"`Trainer\(accumulate_grad_batches=2\)` and `GradientAccumulationScheduler`"):
        _quietly(trainer.fit, _module(strategies.TrainModule), _loader())


def test_the_weights_match_lightnings() -> None:
    pl = pytest.importorskip("lightning.pytorch", reason="needs the lightning extra (pip install -e '.[lightning]')")
    weights, steps = {}, {}
    for name, trainer_cls, base, cls in (
        ("lightning", pl.Trainer, pl.LightningModule, pl.callbacks.GradientAccumulationScheduler),
        ("ours", Trainer, strategies.TrainModule, GradientAccumulationScheduler),
    ):
        module = _module(base)
        trainer = _trainer(trainer_cls, callbacks=[cls({0: 4, 1: 2, 2: 1})])
        _quietly(trainer.fit, module, _loader())
        weights[name], steps[name] = module.layer.weight.detach().clone(), trainer.global_step
    assert steps == {"lightning": 1 + 2 + 4, "ours": 1 + 2 + 4}
    torch.testing.assert_close(weights["ours"], weights["lightning"])


def test_the_1x_names_resolve_on_compat() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from compat.callbacks import GradientAccumulationScheduler as OldScheduler
        from compat.callbacks import LambdaCallback as OldLambda
    assert OldScheduler is GradientAccumulationScheduler and issubclass(OldLambda, LambdaCallback)
