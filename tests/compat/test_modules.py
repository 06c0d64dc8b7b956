"""compat.callbacks / compat.loggers / compat.utilities (and the other 1.x module paths): every
public name the 1.x releases had either works, warning once with its new name, or fails at once
with `MissingNameError` saying what to do. The names come from the 1.2-1.5 catalogs."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import compat
from compat import _catalog, _legacy

REPO = Path(__file__).resolve().parents[2]
MODULES = (
    "pytorch_lightning",
    "pytorch_lightning.callbacks",
    "pytorch_lightning.loggers",
    "pytorch_lightning.utilities",
)
# What a 1.x program can import from these modules here (the rest fails with MissingNameError).
WORKS = {
    "pytorch_lightning": {"Callback", "LightningDataModule", "LightningModule", "Trainer", "seed_everything"},
    "pytorch_lightning.callbacks": {
        "BackboneFinetuning",
        "BaseFinetuning",
        "BasePredictionWriter",
        "Callback",
        "DeviceStatsMonitor",
        "EarlyStopping",
        "GradientAccumulationScheduler",
        "LambdaCallback",
        "LearningRateMonitor",
        "ModelCheckpoint",
        "ModelSummary",
        "RichModelSummary",
        "RichProgressBar",
        "TQDMProgressBar",
        "ProgressBar",  # strategies.TQDMProgressBar (1.5's rename)
        "ProgressBarBase",  # strategies.ProgressBar, with 1.x's batch counters
        "Timer",
        "StochasticWeightAveraging",
    },
    "pytorch_lightning.loggers": {
        "CSVLogger",
        "LightningLoggerBase",
        "MLFlowLogger",
        "TensorBoardLogger",
        "WandbLogger",
    },
    "pytorch_lightning.utilities": {
        "AttributeDict",
        "grad_norm",  # strategies.utilities' (1.x rounded its floats to 4 digits; these are tensors)
        "move_data_to_device",
        "rank_zero_deprecation",
        "rank_zero_info",
        "rank_zero_only",
        "rank_zero_warn",
    },
}


def _catalog_names(module: str) -> set[str]:
    """Public non-module names of ``module`` in 1.5, read from the catalog."""
    catalog = _catalog.load("pytorch_lightning-1.5")
    return {n for n in catalog.public(module) if f"{module}.{n}" not in catalog.modules}


@pytest.mark.parametrize("module", MODULES)
def test_every_15_name_works_or_fails_clearly(module):
    names = _catalog_names(module)
    assert WORKS[module] <= names  # the table above names real 1.5 names
    target = importlib.import_module(_legacy.compat_module_path(module))
    missing = set()
    for name in sorted(names):
        compat._reset_warned()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                value = getattr(target, name)
            except compat.MissingNameError as err:
                missing.add(name)
                assert "no counterpart" in str(err) and "compat.migrate" in str(err), str(err)
                continue
        assert value is not None
        if name not in compat.__all__:  # compat.Trainer, compat.Callback & co. warn on use
            messages = [str(w.message) for w in caught if issubclass(w.category, compat.CompatDeprecationWarning)]
            assert len(messages) == 1, (name, messages)
            assert f"{_legacy.compat_module_path(module)}.{name}" in messages[0]
    assert names - missing == WORKS[module]


def test_missing_name_fails_on_the_import_line():
    with pytest.raises(ImportError, match=r"ModelPruning.*lightning\.pytorch\.callbacks\.ModelPruning"):
        from compat.callbacks import ModelPruning  # noqa: F401
    with pytest.raises(AttributeError, match="NotA1xName"):
        compat.callbacks.NotA1xName  # noqa: B018
    assert not hasattr(compat.loggers, "NotA1xName")


def test_names_resolve_to_strategies_and_compat_objects():
    import strategies

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from compat.callbacks import Callback, EarlyStopping, ModelCheckpoint
        from compat.loggers import CSVLogger, LightningLoggerBase, TensorBoardLogger

        assert Callback is compat.Callback
        assert EarlyStopping is strategies.EarlyStopping
        assert issubclass(ModelCheckpoint, strategies.ModelCheckpoint) and ModelCheckpoint.__name__ == "ModelCheckpoint"
        assert issubclass(CSVLogger, strategies.CSVLogger) and issubclass(
            TensorBoardLogger, strategies.TensorBoardLogger
        )
        assert LightningLoggerBase is strategies.Logger
        assert compat.core.lightning.LightningModule is compat.LightningModule  # a 1.x deep path
        assert compat.utilities.seed.seed_everything is strategies.seed_everything
        assert compat.callbacks.model_checkpoint.ModelCheckpoint is ModelCheckpoint
        from compat.core.lightning import LightningModule  # an import statement, too
        from compat.utilities.distributed import rank_zero_only

        assert LightningModule is compat.LightningModule
        assert rank_zero_only is compat.utilities.rank_zero_only
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("compat.callbacks.not_a_1x_module")


def test_1x_packages_that_are_compat_files_take_their_1x_submodules():
    import pkgutil

    import compat.plugins

    files = {
        info.name
        for info in pkgutil.walk_packages(compat.__path__, "compat.")
        if not info.ispkg and not any(p.startswith("_") for p in info.name.split("."))
    }  # (read from the folders: the opened ones are files there)
    old_packages = {
        n for n in files if any(m.startswith(_legacy.old_path(n) + ".") for m in _legacy._all_old_modules())
    }
    assert old_packages == _legacy.OPENED
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from compat.plugins.training_type.ddp import DDPPlugin
        from compat.trainer.trainer import Trainer

        assert Trainer is compat.Trainer and DDPPlugin is compat.plugins.DDPPlugin


def test_model_checkpoint_takes_the_1x_arguments(tmp_path):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from compat.callbacks import ModelCheckpoint

        assert ModelCheckpoint(dirpath=tmp_path, period=3).every_n_epochs == 3
        assert ModelCheckpoint(dirpath=tmp_path, every_n_val_epochs=2).every_n_epochs == 2
        assert ModelCheckpoint(dirpath=tmp_path, prefix="run").filename == "run-{epoch}-{step}"
    assert any("every_n_epochs=3" in str(w.message) for w in caught)
    with pytest.raises(TypeError, match="every_n_train_steps"):
        ModelCheckpoint(dirpath=tmp_path, train_time_interval=10)
    with pytest.raises(TypeError, match="pass only `every_n_epochs`"):
        ModelCheckpoint(dirpath=tmp_path, period=3, every_n_epochs=2)


def test_lambda_callback_takes_the_1x_hooks_and_calls_them_at_their_1x_step(recwarn):
    """``LambdaCallback(on_epoch_start=..., on_batch_end=..., on_init_start=...)`` from a 1.x program:
    each old hook warns once with its new name and runs where 1.x ran it; new hooks run as usual."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    import strategies

    warnings.simplefilter("always")
    from compat.callbacks import LambdaCallback

    calls: list[str] = []

    def record(name):
        return lambda *args: calls.append(f"{name}/{len(args)}")

    hooks = ("on_init_start", "on_epoch_start", "on_batch_end", "on_pretrain_routine_start", "on_train_start")
    callback = LambdaCallback(**{name: record(name) for name in hooks})
    assert isinstance(callback, strategies.LambdaCallback)
    assert type(callback).__module__ == __name__  # compat treats it as the user's 1.x callback

    class Module(compat.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = compat.Trainer(max_epochs=2, callbacks=[callback], logger=False, checkpoint_callback=False)
    trainer.fit(Module(), DataLoader(TensorDataset(torch.randn(8, 4)), batch_size=4))
    assert calls == [
        "on_init_start/1",
        "on_pretrain_routine_start/2",
        "on_train_start/2",
        *(["on_epoch_start/2", "on_batch_end/2", "on_batch_end/2"] * 2),
    ]
    messages = [str(w.message) for w in recwarn]
    assert any("`LambdaCallback.on_epoch_start` is deprecated" in m and "on_train_epoch_start" in m for m in messages)
    assert not any("subclassed by `LambdaCallback`" in m for m in messages)
    plain = LambdaCallback(on_train_start=record("x"))
    assert type(plain).__name__ == "LambdaCallback" and type(plain).__module__ == "compat.callbacks"
    with pytest.raises(TypeError, match=r"`LambdaCallback\(on_epoch_start=...\)` needs a function; got `int`"):
        LambdaCallback(on_epoch_start=1)


def test_loggers_keep_the_1x_default_name(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from compat.loggers import CSVLogger

        assert CSVLogger(tmp_path).name == "default"
        assert CSVLogger(tmp_path, name="x").name == "x"


def test_mlflow_logger_takes_the_1x_order_and_default_name(tmp_path, monkeypatch):
    pytest.importorskip("mlflow", reason="needs the mlflow extra (pip install strategy-compat[mlflow])")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from compat.loggers import MLFlowLogger

    uri = f"file:{tmp_path / 'mlruns'}"
    logger = MLFlowLogger(tracking_uri=uri)
    assert logger._experiment_name == "default"  # 1.x's; strategies' is "lightning_logs"
    logger = MLFlowLogger("exp", "run-1", uri, {"t": "v"})  # 1.5's positions
    assert (logger._run_name, logger._tracking_uri, logger.tags) == ("run-1", uri, {"t": "v"})
    with pytest.raises(TypeError, match="pass `tracking_uri=` by keyword"):
        MLFlowLogger("exp", uri)  # 1.3's positions, where 1.5 has run_name


def test_wandb_logger_takes_the_1x_order(tmp_path):
    pytest.importorskip("wandb", reason="needs the wandb extra (pip install strategy-compat[wandb])")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from compat.loggers import WandbLogger

    logger = WandbLogger("run", str(tmp_path), True, None, None, "v1")  # offline third, version sixth
    assert logger._offline is True and logger._id == "v1" and logger._wandb_init["dir"] == str(tmp_path)
    assert logger._wandb_init["project"] is None  # wandb.init picks the project, as in 1.x
    with pytest.warns(DeprecationWarning, match="sync_step"):
        WandbLogger(sync_step=True, offline=True)
    with pytest.raises(ValueError, match="offline"):
        WandbLogger(offline=True, log_model=True)  # no run is started for either


def test_rank_zero_only_reads_the_rank_when_called(monkeypatch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from compat.utilities import rank_zero_only

    calls = []

    @rank_zero_only
    def record(value):
        calls.append(value)
        return value

    assert record(1) == 1
    monkeypatch.setenv("RANK", "1")
    assert record(2) is None
    assert rank_zero_only.rank == 1
    rank_zero_only.rank = 0  # a program (or 1.x Trainer) may set it
    try:
        assert record(3) == 3
    finally:
        rank_zero_only._rank = None
    assert calls == [1, 3]


def test_import_compat_utilities_is_torch_free():
    """Importing the module costs no torch; its rank_zero names are strategies' (which need it)."""
    code = (
        "import sys, warnings; warnings.simplefilter('ignore'); import compat, compat.utilities;"
        "assert 'torch' not in sys.modules; from compat.utilities import rank_zero_only;"
        "from strategies.utilities import rank_zero_only as new; assert rank_zero_only is new; print('ok')"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0 and "ok" in proc.stdout, proc.stderr


def test_progress_bars_keep_their_1x_meaning():
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    import strategies

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import compat
        from compat.callbacks import ProgressBar, ProgressBarBase

    assert ProgressBar is strategies.TQDMProgressBar  # 1.5 renamed the tqdm bar; the new ProgressBar is the base
    seen = []

    class Percent(ProgressBarBase):  # a 1.4 custom bar, as its docs showed
        def __init__(self):
            super().__init__()
            self.enable = True

        def disable(self):
            self.enable = False

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
            super().on_train_batch_end(trainer, pl_module, outputs, batch, batch_idx, dataloader_idx)
            seen.append((self.train_batch_idx, self.total_train_batches, dataloader_idx))

        def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx):
            super().on_validation_batch_end(trainer, pl_module, outputs, batch, batch_idx, dataloader_idx)
            seen.append(("val", self.val_batch_idx))

    class Module(compat.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).sum()

        def validation_step(self, batch, batch_idx):
            return None

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    data = DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bar = Percent()
        trainer = compat.Trainer(
            max_epochs=2,
            callbacks=[bar],
            logger=False,
            checkpoint_callback=False,
            weights_summary=None,
            num_sanity_val_steps=0,
        )
        trainer.fit(Module(), data, data)
    assert trainer.progress_bar_callback is bar
    assert seen == [(1, 2, 0), (2, 2, 0), ("val", 1), ("val", 2), (1, 2, 0), (2, 2, 0), ("val", 1), ("val", 2)]
