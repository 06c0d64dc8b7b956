"""Several validation/test/predict loaders, as Lightning 2.6 runs them: one after another, with
``dataloader_idx`` passed to the steps and batch hooks, ``/dataloader_idx_N`` metric names and one
result (or list of predictions) per loader."""

from __future__ import annotations

import csv
import importlib.util
import os
import warnings
from pathlib import Path
from typing import Any

import pytest
import torch
from _helpers import quiet_trainer, spawn_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import TrainModule

torch.manual_seed(0)
X, Y = torch.randn(40, 4), torch.randn(40, 1)


def _loader(start: int, stop: int, batch_size: int = 4) -> DataLoader:
    return DataLoader(TensorDataset(X[start:stop], Y[start:stop]), batch_size=batch_size)


def _module_class(base: type) -> type:
    """A module on ``base`` (ours or Lightning's) that logs ``loss`` per loader and ``after`` once in
    ``on_validation_epoch_end``, and records its calls."""

    class Module(base):  # type: ignore[misc,valid-type]
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = nn.Linear(4, 1)
            self.calls: list[tuple[Any, ...]] = []

        def training_step(self, batch, batch_idx):
            x, y = batch
            return nn.functional.mse_loss(self.layer(x), y)

        def validation_step(self, batch, batch_idx, dataloader_idx=0):
            x, y = batch
            self.calls.append(("step", batch_idx, dataloader_idx))
            self.log("loss", nn.functional.mse_loss(self.layer(x), y))

        def test_step(self, batch, batch_idx, dataloader_idx=0):
            x, y = batch
            self.log("test_loss", nn.functional.mse_loss(self.layer(x), y))

        def on_validation_batch_start(self, batch, batch_idx, dataloader_idx=0):
            self.calls.append(("batch_start", batch_idx, dataloader_idx))

        def on_before_batch_transfer(self, batch, dataloader_idx):
            if self.trainer.validating:
                self.calls.append(("transfer", dataloader_idx))
            return batch

        def on_validation_epoch_end(self):
            self.log("after", 1.5)

        def predict_step(self, batch, batch_idx, dataloader_idx=0):
            return self.layer(batch[0]).sum() + 100 * dataloader_idx

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Module


_Module = _module_class(TrainModule)


def _mse(module: nn.Module, start: int, stop: int, batch_size: int = 4) -> float:
    """The batch-size-weighted mean of the per-batch losses, as ``self.log`` reduces them."""
    with torch.no_grad():
        losses = [
            (
                nn.functional.mse_loss(module.layer(X[i : i + batch_size]), Y[i : i + batch_size]),
                len(X[i:stop][:batch_size]),
            )
            for i in range(start, stop, batch_size)
        ]
    return float(sum(loss * n for loss, n in losses) / sum(n for _, n in losses))


def test_validate_returns_one_dict_per_loader_with_its_own_values_and_the_epoch_end_ones() -> None:
    module = _Module()
    results = quiet_trainer().validate(module, [_loader(0, 12), _loader(12, 20)], verbose=False)
    assert results == [
        {"loss/dataloader_idx_0": pytest.approx(_mse(module, 0, 12)), "after": 1.5},
        {"loss/dataloader_idx_1": pytest.approx(_mse(module, 12, 20)), "after": 1.5},
    ]
    assert _mse(module, 0, 12) != pytest.approx(_mse(module, 12, 20))  # the two loaders differ


def test_the_step_and_hooks_get_the_loaders_index_and_batch_idx_restarts_per_loader() -> None:
    module = _Module()
    quiet_trainer().validate(module, [_loader(0, 8), _loader(8, 12)], verbose=False)
    assert module.calls == [
        ("transfer", 0),
        ("batch_start", 0, 0),
        ("step", 0, 0),
        ("transfer", 0),
        ("batch_start", 1, 0),
        ("step", 1, 0),
        ("transfer", 1),
        ("batch_start", 0, 1),
        ("step", 0, 1),
    ]


def test_one_loader_gets_no_index_and_unsuffixed_names() -> None:
    module = _Module()
    results = quiet_trainer().validate(module, _loader(0, 8), verbose=False)
    assert results == [{"loss": pytest.approx(_mse(module, 0, 8)), "after": 1.5}]
    assert ("step", 1, 0) in module.calls


def test_a_dict_of_loaders_runs_in_its_order_and_the_trainer_shows_what_was_given() -> None:
    module = _Module()
    trainer = quiet_trainer(limit_val_batches=2)
    results = trainer.validate(module, {"b": _loader(12, 20), "a": _loader(0, 12)}, verbose=False)
    assert list(results[0]) == ["loss/dataloader_idx_0", "after"]
    assert results[0]["loss/dataloader_idx_0"] == pytest.approx(_mse(module, 12, 20))
    assert results[1]["loss/dataloader_idx_1"] == pytest.approx(_mse(module, 0, 8))  # 2 batches: the limit
    assert isinstance(trainer.val_dataloaders, dict) and list(trainer.val_dataloaders) == ["b", "a"]
    assert trainer.num_val_batches == [2, 2]


def test_fit_validates_every_loader_and_monitors_a_suffixed_name(tmp_path: Path) -> None:
    checkpoint = strategies.ModelCheckpoint(monitor="loss/dataloader_idx_1", dirpath=tmp_path / "ckpt")
    trainer = quiet_trainer(
        max_epochs=2, callbacks=[checkpoint], num_sanity_val_steps=1, enable_checkpointing=True, logger=False
    )
    module = _Module()
    trainer.fit(module, _loader(0, 16), [_loader(16, 28), _loader(28, 36)])
    assert trainer.num_val_batches == [3, 2] and trainer.num_sanity_val_batches == [1, 1]
    assert sorted(k for k in trainer.callback_metrics if k.startswith("loss")) == [
        "loss/dataloader_idx_0",
        "loss/dataloader_idx_1",
    ]
    assert float(checkpoint.best_model_score) == pytest.approx(min(float(s) for s in checkpoint.best_k_models.values()))
    assert float(trainer.callback_metrics["loss/dataloader_idx_1"]) == pytest.approx(_mse(module, 28, 36))


def test_eval_values_logged_on_step_count_each_loaders_batches_over_the_fit(tmp_path: Path) -> None:
    """Lightning's step for an on-step validation value: the loader's batches seen in this ``fit``."""

    class OnStep(_Module):
        def validation_step(self, batch, batch_idx, dataloader_idx=0):
            self.log("v", float(batch_idx), on_step=True, on_epoch=False)

    trainer = quiet_trainer(max_epochs=2, logger=strategies.CSVLogger(tmp_path), num_sanity_val_steps=0)
    trainer.fit(OnStep(), _loader(0, 8), [_loader(0, 12), _loader(0, 8)])
    with open(trainer.logger.log_dir + "/metrics.csv", newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("v/dataloader_idx_0") or r.get("v/dataloader_idx_1")]
    steps = [(r["step"], "0" if r["v/dataloader_idx_0"] else "1") for r in rows]
    assert steps == [("0", "0"), ("1", "0"), ("2", "0"), ("0", "1"), ("1", "1")] + [
        ("3", "0"),
        ("4", "0"),
        ("5", "0"),
        ("2", "1"),
        ("3", "1"),
    ]


def test_several_loaders_need_dataloader_idx_in_the_step() -> None:
    class NoIndex(_Module):
        def validation_step(self, batch, batch_idx):
            pass

    with pytest.raises(RuntimeError, match=r"multiple `val_dataloader`s.*NoIndex.validation_step.*dataloader_idx=0"):
        quiet_trainer().validate(NoIndex(), [_loader(0, 4), _loader(4, 8)])


def test_one_loader_and_a_dataloader_idx_without_default_says_to_give_it_one() -> None:
    class Required(_Module):
        def validation_step(self, batch, batch_idx, dataloader_idx):
            pass

    with pytest.raises(RuntimeError, match=r"single `val_dataloader`.*default value"):
        quiet_trainer().validate(Required(), _loader(0, 4))


def test_a_step_that_takes_only_the_batch_gets_only_the_batch() -> None:
    class BatchOnly(TrainModule):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.Linear(4, 1)
            self.seen: list[int] = []

        def training_step(self, batch):
            return self.layer(batch[0]).pow(2).mean()

        def validation_step(self, batch):
            self.seen.append(len(batch[0]))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    module = BatchOnly()
    quiet_trainer(max_epochs=1, num_sanity_val_steps=0).fit(module, _loader(0, 8), _loader(0, 6))
    assert module.seen == [4, 2]


def test_logging_one_name_for_several_loaders_without_the_index_is_refused() -> None:
    class Shared(_Module):
        def validation_step(self, batch, batch_idx, dataloader_idx=0):
            self.log("shared", 1.0, add_dataloader_idx=False)

    with pytest.raises(ValueError, match=r"add_dataloader_idx=False.*loader 1 after loader 0"):
        quiet_trainer().validate(Shared(), [_loader(0, 4), _loader(4, 8)])


class _Writer(strategies.BasePredictionWriter):
    def __init__(self) -> None:
        super().__init__("batch_and_epoch")
        self.batches: list[tuple[int, int, list[int]]] = []
        self.runs: list[Any] = []

    def write_on_batch_end(self, trainer, module, prediction, batch_indices, batch, batch_idx, dataloader_idx):
        self.batches.append((batch_idx, dataloader_idx, list(batch_indices)))

    def write_on_epoch_end(self, trainer, module, predictions, batch_indices):
        self.runs.append(([len(p) for p in predictions], batch_indices))


def test_predict_returns_a_list_per_loader_and_writers_see_each_loader() -> None:
    module, writer = _Module(), _Writer()
    loaders = [DataLoader(TensorDataset(X[:6]), batch_size=4), DataLoader(TensorDataset(X[6:9]), batch_size=2)]
    predictions = quiet_trainer(callbacks=[writer]).predict(module, loaders)
    assert [len(p) for p in predictions] == [2, 2]
    with torch.no_grad():
        assert float(predictions[1][0]) == pytest.approx(float(module.layer(X[6:8]).sum()) + 100)
    assert writer.batches == [(0, 0, [0, 1, 2, 3]), (1, 0, [4, 5]), (0, 1, [0, 1]), (1, 1, [2])]
    assert writer.runs == [([2, 2], [[[0, 1, 2, 3], [4, 5]], [[0, 1], [2]]])]
    single = quiet_trainer().predict(module, loaders[0])
    assert len(single) == 2 and isinstance(single[0], torch.Tensor)  # one loader: a flat list


def test_verbose_prints_lightnings_table_one_column_per_loader(capsys, monkeypatch) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "rich" else find_spec(name, *a))
    quiet_trainer().test(_Module(), [_loader(0, 4), _loader(4, 8)])
    lines = [line.strip() for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert lines[1].split() == ["Test", "metric", "DataLoader", "0", "DataLoader", "1"]
    assert lines[3].split()[0] == "test_loss" and len(lines[3].split()) == 3
    quiet_trainer().test(_Module(), [_loader(0, 4), _loader(4, 8)], verbose=False)
    assert capsys.readouterr().out == ""


def test_a_1x_callback_and_module_with_a_required_dataloader_idx_run_on_compat() -> None:
    """1.x passed ``dataloader_idx`` to every evaluation batch hook; compat gives 0 with one loader
    and the loader's index with several."""
    import compat

    seen: list[tuple[str, int]] = []

    class OldCallback(compat.Callback):
        def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
            seen.append(("callback", dataloader_idx))

    class OldModule(_module_class(compat.LightningModule)):  # type: ignore[misc]
        def on_validation_batch_start(self, batch, batch_idx, dataloader_idx):
            seen.append(("module", dataloader_idx))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = OldModule()
        trainer = compat.Trainer(
            logger=False, checkpoint_callback=False, progress_bar_refresh_rate=0, callbacks=[OldCallback()]
        )
        trainer.validate(module, _loader(0, 4), verbose=False)
        assert seen == [("module", 0), ("callback", 0)]
        seen.clear()
        trainer.validate(module, [_loader(0, 4), _loader(0, 4)], verbose=False)
    assert seen == [("module", 0), ("callback", 0), ("module", 1), ("callback", 1)]


# -- two real processes (ddp_spawn, gloo): each loader's values reduced over the ranks ------------------


class _Synced(_Module):
    def validation_step(self, batch, batch_idx, dataloader_idx=0):
        x, y = batch
        self.log("loss", nn.functional.mse_loss(self.layer(x), y), sync_dist=True)


@pytest.mark.timeout(600)
def test_under_ddp_each_loaders_value_is_the_mean_over_every_rank() -> None:
    trainer = spawn_trainer()
    module = _Synced()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = trainer.validate(module, [_loader(0, 16), _loader(16, 24)], verbose=False)
    # Each rank sees half of each loader; the weighted mean over both ranks is the whole loader's.
    assert results[0]["loss/dataloader_idx_0"] == pytest.approx(_mse(module, 0, 16), rel=1e-5)
    assert results[1]["loss/dataloader_idx_1"] == pytest.approx(_mse(module, 16, 24), rel=1e-5)


# -- side by side with Lightning 2.6 ------------------------------------------------------------------------


def _program(api: Any, trainer_cls: Any, out: Path) -> dict[str, Any]:
    """fit, validate, test and predict with two loaders each; what a user sees of each run."""

    class Recorder(api.Callback):
        def __init__(self) -> None:
            self.calls: list[Any] = []

        def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
            self.calls.append((batch_idx, dataloader_idx, sorted(trainer.callback_metrics)))

        def on_validation_epoch_end(self, trainer, pl_module):
            self.calls.append(sorted(trainer.callback_metrics))

    class Module(_module_class(TrainModule if api is strategies else api.LightningModule)):  # type: ignore[misc]
        def validation_step(self, batch, batch_idx, dataloader_idx=0):
            x, y = batch
            loss = nn.functional.mse_loss(self.layer(x), y)
            self.log("val_loss", loss)
            self.log("val_metric", loss * 2, on_step=True)

    recorder = Recorder()
    checkpoint = api.callbacks.ModelCheckpoint(
        monitor="val_loss/dataloader_idx_1",
        filename="{epoch}-{val_loss/dataloader_idx_1:.3f}",
        auto_insert_metric_name=False,
    )
    trainer = quiet_trainer(
        trainer_cls,
        max_epochs=2,
        logger=api.loggers.CSVLogger(out),
        callbacks=[recorder, checkpoint],
        limit_val_batches=3,
        log_every_n_steps=2,
        enable_checkpointing=True,
    )
    module = Module()
    trainer.fit(module, _loader(0, 16), [_loader(16, 28), _loader(28, 36)])
    seen: dict[str, Any] = {"num_val_batches": list(trainer.num_val_batches), "calls": recorder.calls}
    seen["validate"] = trainer.validate(module, {"a": _loader(16, 28), "b": _loader(28, 36)}, verbose=False)
    seen["test"] = trainer.test(module, [_loader(16, 28), _loader(28, 36)], verbose=False)
    predictions = trainer.predict(
        module, [DataLoader(TensorDataset(X[:6]), batch_size=4), DataLoader(TensorDataset(X[6:9]), batch_size=2)]
    )
    seen["predict"] = [[round(float(t), 5) for t in p] for p in predictions]
    seen["checkpoints"] = sorted(os.listdir(checkpoint.dirpath))
    with open(Path(trainer.logger.log_dir) / "metrics.csv", newline="") as f:
        seen["metrics.csv"] = list(csv.reader(f))
    return seen


@pytest.mark.extras
def test_the_same_program_sees_what_it_sees_on_lightning(tmp_path: Path) -> None:
    L = pytest.importorskip("lightning.pytorch", reason="the side-by-side test needs Lightning 2.6")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = _program(strategies, strategies.Trainer, tmp_path / "ours")
        theirs = _program(L, L.Trainer, tmp_path / "theirs")
    assert len(theirs["metrics.csv"]) > 10 and len(theirs["validate"]) == 2  # the comparison holds on something
    for key in theirs:
        if key in ("validate", "test"):
            assert ours[key] == [{k: pytest.approx(v) for k, v in d.items()} for d in theirs[key]], key
        else:
            assert ours[key] == theirs[key], key
