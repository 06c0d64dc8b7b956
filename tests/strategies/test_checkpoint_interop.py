"""Checkpoints across formats, without Lightning installed: the dicts are built here from the layouts
Lightning 1.2-1.5 (``dump_checkpoint``) and 2.6 (``_CheckpointConnector.dump_checkpoint`` and the loops'
``state_dict``) write, and resumed with ``strategies.Trainer.fit(ckpt_path=...)`` at the epoch and step
the writer itself resumed at. test_checkpoint_interop_lightning.py does the same with real Lightning.
"""

from __future__ import annotations

import subprocess
import sys
import types

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from strategies import Callback, ModelCheckpoint, Trainer, TrainModule
from strategies._checkpoint import LIGHTNING_FORMAT, read_file, resume_point, upgrade
from strategies._preflight import CheckpointError
from strategies.utilities import upgrade_checkpoint

BATCHES = 4  # per epoch


class Tiny(TrainModule):
    def __init__(self, lr: float = 0.1, width: int = 2) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.layer = nn.Linear(width, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return ((self.layer(x) - y) ** 2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


def loader() -> DataLoader:
    g = torch.Generator().manual_seed(0)
    return DataLoader(
        TensorDataset(torch.randn(4 * BATCHES, 2, generator=g), torch.randn(4 * BATCHES, 1, generator=g)), 4
    )


class Where(Callback):
    """Where a resumed run starts: (epoch, global_step) at train start, then each batch's (epoch, index, step)."""

    def __init__(self) -> None:
        self.start: tuple[int, int] | None = None
        self.batches: list[tuple[int, int, int]] = []
        self.weights: torch.Tensor | None = None
        self.best_model_paths: list[str] = []

    def on_train_start(self, trainer, module):
        self.start = (trainer.current_epoch, trainer.global_step)
        self.weights = module.layer.weight.detach().clone()
        self.best_model_paths = [cb.best_model_path for cb in trainer.callbacks if isinstance(cb, ModelCheckpoint)]

    def on_train_batch_start(self, trainer, module, batch, batch_idx):
        self.batches.append((trainer.current_epoch, batch_idx, trainer.global_step))


def resume(path, max_epochs: int = 2, callbacks=()) -> tuple[Where, Trainer]:
    where = Where()
    trainer = Trainer(
        accelerator="cpu", max_epochs=max_epochs, enable_progress_bar=False, logger=False, callbacks=[where, *callbacks]
    )
    trainer.fit(Tiny(), loader(), ckpt_path=path)
    return where, trainer


def state_dict(seed: int = 1) -> dict[str, torch.Tensor]:
    """Weights for Tiny, other than the ones it starts with."""
    torch.manual_seed(seed)
    return {f"layer.{k}": v for k, v in nn.Linear(2, 1).state_dict().items()}


def sgd_state() -> dict:
    return torch.optim.SGD(nn.Linear(2, 1).parameters(), lr=0.1).state_dict()


# -- Lightning 2.6's layout (as its loops' `state_dict` writes it) ---------------------------------


def _counts(ready, started, processed, completed):
    return {"ready": ready, "completed": completed, "started": started, "processed": processed}


def lightning_26(epoch_progress, batch_progress, global_step, epoch) -> dict:
    """The keys of a Lightning 2.6 file a resume reads (the rest of its loop state is zeros)."""
    fit_loop = {
        "state_dict": {},
        "epoch_loop.state_dict": {"_batches_that_stepped": global_step},
        "epoch_loop.batch_progress": {"total": batch_progress, "current": dict(batch_progress), "is_last_batch": False},
        "epoch_progress": {"total": epoch_progress, "current": dict(epoch_progress)},
    }
    return {
        "epoch": epoch,
        "global_step": global_step,
        "pytorch-lightning_version": "2.6.6",
        "state_dict": state_dict(),
        "loops": {"fit_loop": fit_loop},
        "callbacks": {},
        "optimizer_states": [sgd_state()],
        "lr_schedulers": [],
        "hparams_name": "kwargs",
        "hyper_parameters": {"lr": 0.1, "width": 2},
    }


def test_lightning_26_end_of_epoch_file_resumes_at_the_next_epoch_not_the_same_one(tmp_path):
    # Lightning's ModelCheckpoint at the end of epoch 0: `epoch` is 0 (the epoch that ran), the loop
    # state says it was processed; Lightning 2.6 resumes at epoch 1, step 4 (this library read 0: +1 epoch)
    path = tmp_path / "epoch=0-step=4.ckpt"
    torch.save(lightning_26(_counts(1, 1, 1, 0), _counts(4, 4, 4, 4), global_step=4, epoch=0), path)
    assert upgrade(read_file(path))["epoch"] == 0  # hooks reading the checkpoint see Lightning's keys
    where, trainer = resume(path)
    assert where.start == (1, 4)
    assert where.batches[0] == (1, 0, 4)
    assert trainer.global_step == 8
    assert torch.equal(where.weights, state_dict()["layer.weight"])


def test_lightning_26_mid_epoch_file_resumes_after_the_processed_batches(tmp_path):
    # every_n_train_steps=3 in epoch 0: saved in batch 2's end hooks (processed 3, completed 2)
    path = tmp_path / "epoch=0-step=3.ckpt"
    torch.save(lightning_26(_counts(1, 1, 0, 0), _counts(3, 3, 3, 2), global_step=3, epoch=0), path)
    where, trainer = resume(path)
    assert where.start == (0, 3)
    assert where.batches[0] == (0, 3, 3)
    assert trainer.global_step == 8


def test_lightning_26_file_written_after_fit_resumes_at_the_epoch_after_the_last(tmp_path):
    path = tmp_path / "final.ckpt"
    torch.save(lightning_26(_counts(2, 2, 2, 2), _counts(4, 4, 4, 4), global_step=8, epoch=2), path)
    where, trainer = resume(path, max_epochs=3)
    assert where.start == (2, 8) and trainer.global_step == 12


# -- Lightning 1.2-1.5's layout (`CheckpointConnector.dump_checkpoint`) ------------------------------


def legacy(version: str, epoch: int, global_step: int, callbacks: dict, **extra) -> dict:
    """What 1.x wrote: ``epoch`` = current_epoch + 1, ``global_step`` = global_step + 1 at save time."""
    return {
        "epoch": epoch,
        "global_step": global_step,
        "pytorch-lightning_version": version,
        "state_dict": state_dict(),
        "callbacks": callbacks,
        "optimizer_states": [sgd_state()],
        "lr_schedulers": [],
        **extra,
    }


def checkpoint_state(path: str, dirpath: str | None = None) -> dict:
    return {
        "monitor": None,
        "best_model_score": None,
        "best_model_path": path,
        "current_score": None,
        "dirpath": dirpath,
    }


@pytest.fixture
def fake_pl(monkeypatch):
    """``pytorch_lightning`` 1.x's classes, importable only while a file is written (as on the 1.x machine)."""
    made = {}
    for module_name, name, base in [
        ("pytorch_lightning.callbacks.model_checkpoint", "ModelCheckpoint", object),
        ("pytorch_lightning.callbacks.early_stopping", "EarlyStopping", object),
        ("pytorch_lightning.utilities.parsing", "AttributeDict", dict),
    ]:
        module = types.ModuleType(module_name)
        cls = type(name, (base,), {"__module__": module_name, "__qualname__": name})
        setattr(module, name, cls)
        monkeypatch.setitem(sys.modules, module_name, module)
        made[name] = cls
    for parent in ("pytorch_lightning", "pytorch_lightning.callbacks", "pytorch_lightning.utilities"):
        monkeypatch.setitem(sys.modules, parent, types.ModuleType(parent))
    yield made


def save_without_pl(obj, path, monkeypatch) -> None:
    """Write as 1.x did, then read on a machine without ``pytorch_lightning`` (even where 2.x is installed)."""
    torch.save(obj, path)
    for name in [n for n in sys.modules if n.startswith("pytorch_lightning")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pytorch_lightning", None)  # `import pytorch_lightning...` fails


def test_lightning_13_file_with_class_keyed_callbacks_loads_weights_only_and_resumes(tmp_path, fake_pl, monkeypatch):
    # 1.3: end of epoch 0 (4 batches): 1.x saved epoch=1, global_step=4; callbacks keyed by class;
    # hyperparameters an AttributeDict; the grad scaler under native_amp_scaling_state
    hparams = fake_pl["AttributeDict"](lr=0.1, width=2)
    callbacks = {fake_pl["ModelCheckpoint"]: checkpoint_state("/old/epoch=0.ckpt", str(tmp_path))}
    scaler = {
        "scale": 1024.0,
        "growth_factor": 2.0,
        "backoff_factor": 0.5,
        "growth_interval": 2000,
        "_growth_tracker": 0,
    }
    checkpoint = legacy("1.3.8", 1, 4, callbacks, hparams_name="kwargs", hyper_parameters=hparams)
    checkpoint["native_amp_scaling_state"] = scaler
    path = tmp_path / "epoch=0.ckpt"
    save_without_pl(checkpoint, path, monkeypatch)

    loaded = read_file(path)  # weights_only=True, without pytorch_lightning installed
    upgraded = upgrade(loaded)
    assert upgraded["callbacks"] == {"ModelCheckpoint": checkpoint_state("/old/epoch=0.ckpt", str(tmp_path))}
    assert upgraded["hyper_parameters"] == {"lr": 0.1, "width": 2} and type(upgraded["hyper_parameters"]) is dict
    assert upgraded["precision"] == scaler

    where, trainer = resume(path, callbacks=[ModelCheckpoint(dirpath=str(tmp_path), save_top_k=0)])
    assert where.start == (1, 4) and where.batches[0] == (1, 0, 4) and trainer.global_step == 8
    assert torch.equal(where.weights, state_dict()["layer.weight"])
    assert where.best_model_paths == ["/old/epoch=0.ckpt"]  # the class-keyed state found its callback


def test_lightning_15_mid_epoch_file_resumes_at_the_next_epoch_as_15_did(tmp_path):
    # 1.5, every_n_train_steps=3 in epoch 0: saved epoch=1 (current + 1), global_step=3; 1.5 resumed at the
    # start of epoch 1 ("You're resuming from a checkpoint that ended mid-epoch") with 3 steps done
    key = (
        "ModelCheckpoint{'monitor': None, 'mode': 'min', 'every_n_train_steps': 3, 'every_n_epochs': 0, "
        "'train_time_interval': None, 'save_on_train_epoch_end': True}"
    )
    path = tmp_path / "epoch=0-step=2.ckpt"
    torch.save(legacy("1.5.10", 1, 3, {key: checkpoint_state("/x/epoch=0-step=2.ckpt")}), path)
    assert resume_point(read_file(path)) == (1, 0, 3)
    saver = ModelCheckpoint(every_n_train_steps=3, save_top_k=0)
    where, trainer = resume(path, callbacks=[saver])
    assert where.start == (1, 3) and where.batches[0] == (1, 0, 3) and trainer.global_step == 7
    # the 1.5 state key (with save_on_train_epoch_end) was matched to this callback's
    assert where.best_model_paths == ["/x/epoch=0-step=2.ckpt"]


def test_an_older_strategies_file_without_lightning_keys_still_resumes(tmp_path):
    # what dump_checkpoint wrote before the Lightning keys: mid-epoch 0 after 3 batches
    old = {
        "epoch": 0,
        "global_step": 3,
        "step_in_epoch": 3,
        "state_dict": state_dict(),
        "optimizer_states": [sgd_state()],
        "lr_schedulers": [],
        "precision": {},
        "callbacks": {},
        "hyper_parameters": {"lr": 0.1, "width": 2},
    }
    path = tmp_path / "old.ckpt"
    torch.save(old, path)
    where, trainer = resume(path)
    assert where.start == (0, 3) and where.batches[0] == (0, 3, 3) and trainer.global_step == 8
    assert upgrade(old)["pytorch-lightning_version"] == LIGHTNING_FORMAT


@pytest.mark.parametrize("at", ["end-of-epoch", "mid-epoch"])
def test_strategies_files_say_in_lightning_terms_where_they_resume(tmp_path, at):
    """The written loop state decodes (as Lightning 2.6 reads it) to the point this library resumes at."""
    if at == "end-of-epoch":
        saver = ModelCheckpoint(dirpath=tmp_path, save_top_k=-1, filename="{epoch}-{step}")
        name, expected = "epoch=0-step=4.ckpt", (1, 0, 4)
    else:
        saver = ModelCheckpoint(dirpath=tmp_path, every_n_train_steps=3, save_top_k=-1, filename="{epoch}-{step}")
        name, expected = "epoch=0-step=3.ckpt", (0, 3, 3)
    Trainer(accelerator="cpu", max_epochs=2, enable_progress_bar=False, logger=False, callbacks=[saver]).fit(
        Tiny(), loader()
    )
    saved = torch.load(tmp_path / name, weights_only=True)
    assert saved["pytorch-lightning_version"] == LIGHTNING_FORMAT and saved["hparams_name"] == "kwargs"
    lightning_view = {k: v for k, v in saved.items() if k != "step_in_epoch"}  # what Lightning reads
    assert resume_point(lightning_view) == expected == resume_point(saved)
    where, trainer = resume(tmp_path / name)
    assert (where.start, where.batches[0][1]) == ((expected[0], expected[2]), expected[1])


# -- weights_only ---------------------------------------------------------------------------------


class Pickled:
    """Not plain data (as an OmegaConf config in 1.x's ``hyper_parameters``)."""

    def __init__(self, lr: float) -> None:
        self.lr = lr

    def items(self):
        return {"lr": self.lr}.items()

    def keys(self):
        return ["lr"]


def test_a_file_that_needs_unpickling_says_how_to_convert_it_and_the_risk(tmp_path, monkeypatch):
    path = tmp_path / "pickled.ckpt"
    torch.save(legacy("1.5.10", 1, 4, {}, hyper_parameters=Pickled(0.1)), path)
    with pytest.raises(CheckpointError) as info:
        resume(path)
    message = str(info.value)
    assert f"holds `{__name__}.Pickled`" in message
    assert f"python -m strategies.utilities.upgrade_checkpoint --trust {path}" in message
    assert "execute code" in message and "TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1" in message
    assert "weights_only=False" not in message  # torch's own advice is never passed on

    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")  # the user trusts the file, for this run
    where, trainer = resume(path)
    assert where.start == (1, 4) and trainer.global_step == 8


def test_unpickling_in_full_a_1x_file_without_pytorch_lightning_points_to_the_upgrade(tmp_path, fake_pl, monkeypatch):
    path = tmp_path / "old.ckpt"
    save_without_pl(legacy("1.3.8", 1, 4, {fake_pl["ModelCheckpoint"]: checkpoint_state("")}), path, monkeypatch)
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(CheckpointError, match="refers to `pytorch_lightning") as info:
        resume(path)
    assert f"upgrade_checkpoint --trust {path}" in str(info.value)


# -- the upgrade command --------------------------------------------------------------------------


def test_upgrade_in_place_keeps_a_backup_and_the_result_loads_weights_only(tmp_path, fake_pl, monkeypatch):
    path = tmp_path / "old.ckpt"
    stopping = {"wait_count": 1, "stopped_epoch": 0, "best_score": torch.tensor(0.5), "patience": 3}
    checkpoint = legacy("1.2.10", 1, 4, {fake_pl["EarlyStopping"]: stopping})
    save_without_pl(checkpoint, path, monkeypatch)
    original = path.read_bytes()
    # --trust unpickles in full: the 1.x classes (pytorch_lightning absent) become the same stand-ins
    trusted = tmp_path / "trusted.ckpt"
    assert upgrade_checkpoint.main([str(path), "--trust", "--output", str(trusted)]) == 0
    assert list(torch.load(trusted, weights_only=True)["callbacks"]) == ["EarlyStopping"]
    assert upgrade_checkpoint.main([str(path)]) == 0
    assert (tmp_path / "old.ckpt.bak").read_bytes() == original
    converted = torch.load(path, weights_only=True)  # plain data now, no stand-ins
    assert converted["callbacks"]["EarlyStopping"]["wait_count"] == 1
    assert (converted["epoch"], converted["step_in_epoch"], converted["global_step"]) == (1, 0, 4)
    assert converted["pytorch-lightning_version"] == LIGHTNING_FORMAT and "fit_loop" in converted["loops"]
    # a second run does nothing to a converted file and never overwrites the backup
    assert upgrade_checkpoint.main([str(path)]) == 0
    assert (tmp_path / "old.ckpt.bak").read_bytes() == original


def test_upgrade_trust_converts_pickled_hyperparameters_to_a_new_file(tmp_path):
    path, out = tmp_path / "pickled.ckpt", tmp_path / "new.ckpt"
    torch.save(legacy("1.5.10", 1, 4, {}, hyper_parameters=Pickled(0.1)), path)
    before = path.read_bytes()
    assert upgrade_checkpoint.main([str(path), "--output", str(out)]) == 1  # refused without --trust
    assert not out.exists()
    assert upgrade_checkpoint.main([str(path), "--output", str(out), "--trust"]) == 0
    assert path.read_bytes() == before
    assert torch.load(out, weights_only=True)["hyper_parameters"] == {"lr": 0.1}


def test_upgrade_command_errors_clearly_and_leaves_the_file(tmp_path, capsys):
    bad, missing = tmp_path / "bad.ckpt", tmp_path / "missing.ckpt"
    bad.write_bytes(b"not a checkpoint")
    (tmp_path / "empty").mkdir()
    assert upgrade_checkpoint.main([str(bad), str(missing), str(tmp_path / "empty")]) == 1
    err = capsys.readouterr().err
    assert f"{bad} is not a checkpoint written by this library or by Lightning" in err
    assert f"{missing}: no such file" in err
    assert f"{tmp_path / 'empty'}: a directory without *.ckpt files" in err
    assert bad.read_bytes() == b"not a checkpoint" and not (tmp_path / "bad.ckpt.bak").exists()


@pytest.mark.slow  # a child interpreter importing torch: seconds, more on a busy machine
def test_upgrade_runs_as_a_module(tmp_path):
    path = tmp_path / "old.ckpt"
    torch.save(legacy("1.5.10", 1, 4, {}), path)
    proc = subprocess.run(
        [sys.executable, "-m", "strategies.utilities.upgrade_checkpoint", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert f"{path}: converted from lightning-1.x format" in proc.stdout
    assert torch.load(path, weights_only=True)["step_in_epoch"] == 0 and (tmp_path / "old.ckpt.bak").exists()


# -- compat's load_from_checkpoint ----------------------------------------------------------------


def test_compat_load_from_checkpoint_reads_a_1x_file_with_hparams_argument(tmp_path):
    import compat

    class OldStyle(compat.LightningModule):
        def __init__(self, hparams):
            super().__init__()
            self.save_hyperparameters(hparams)
            self.layer = nn.Linear(hparams["width"], 1)

    class KwargsStyle(compat.LightningModule):
        def __init__(self, lr: float = 1.0, width: int = 3):
            super().__init__()
            self.save_hyperparameters()
            self.layer = nn.Linear(width, 1)

    old = tmp_path / "old.ckpt"
    torch.save(legacy("1.2.10", 1, 4, {}, hparams_name="hparams", hyper_parameters={"lr": 0.1, "width": 2}), old)
    model = OldStyle.load_from_checkpoint(str(old))
    assert model.hparams["width"] == 2 and torch.equal(model.layer.weight, state_dict()["layer.weight"])

    new = tmp_path / "new.ckpt"
    torch.save(legacy("1.5.10", 1, 4, {}, hparams_name="kwargs", hyper_parameters={"lr": 0.1, "width": 2}), new)
    model = KwargsStyle.load_from_checkpoint(new, lr=0.5)  # kwargs win over the saved values
    assert (model.hparams.lr, model.hparams.width) == (0.5, 2)
    assert torch.equal(model.layer.bias, state_dict()["layer.bias"])


@pytest.mark.slow  # two spawned ranks importing torch: tens of seconds on a busy machine
def test_a_two_process_ddp_run_writes_the_lightning_keys_of_rank_zero(tmp_path):
    import datetime

    saver = ModelCheckpoint(dirpath=tmp_path, save_top_k=-1, filename="{epoch}-{step}")
    trainer = Trainer(
        strategy="ddp_spawn",
        accelerator="cpu",
        devices=2,
        max_epochs=2,
        enable_progress_bar=False,
        logger=False,
        callbacks=[saver],
    )
    trainer.strategy.timeout = datetime.timedelta(seconds=120)
    trainer.fit(Tiny(), loader())
    # 16 samples, 2 ranks, batches of 4: 2 batches per rank and epoch
    saved = torch.load(tmp_path / "epoch=0-step=2.ckpt", weights_only=True)
    assert saved["pytorch-lightning_version"] == LIGHTNING_FORMAT
    assert resume_point({k: v for k, v in saved.items() if k != "step_in_epoch"}) == (1, 0, 2) == resume_point(saved)
    where, trainer = resume(tmp_path / "epoch=0-step=2.ckpt", max_epochs=2)  # one process: 4 batches an epoch
    assert where.start == (1, 2) and trainer.global_step == 2 + BATCHES
