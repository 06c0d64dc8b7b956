"""Bad `max_epochs` and bad checkpoints fail in the caller, before anything is launched."""

from __future__ import annotations

import time
import traceback

import pytest
import torch
from probe import ProbeData, ProbeModule
from torch import nn

from strategies import Trainer, TrainModule
from strategies._preflight import CheckpointError, check_checkpoint


@pytest.mark.parametrize("value", [-3, -2, 1.5, "10", True])
def test_bad_max_epochs_is_a_value_error_at_construction(value):
    with pytest.raises(ValueError, match=rf"`max_epochs={value!r}`: pass a whole number of epochs.*-1 for no limit"):
        Trainer(accelerator="cpu", max_epochs=value)


@pytest.mark.parametrize("value", [None, -1, 0, 3])
def test_max_epochs_none_minus_one_and_counts_are_accepted(value):
    assert Trainer(accelerator="cpu", max_epochs=value, enable_progress_bar=False).max_epochs is not None


def test_max_epochs_zero_trains_nothing_as_in_lightning():
    module = ProbeModule()
    trainer = Trainer(accelerator="cpu", max_epochs=0, enable_progress_bar=False)
    trainer.fit(module, datamodule=ProbeData(4))
    assert trainer.state.global_step == 0


class Wide(TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Linear(3, 2)

    def training_step(self, batch, batch_idx):
        return self.body(batch[0][:, :3]).sum()


def _ddp_trainer() -> Trainer:
    # From pytest, `ddp` cannot launch (it re-runs the script): reaching the launch is a different error.
    return Trainer(strategy="ddp", accelerator="cpu", devices=2, enable_progress_bar=False)


def test_a_missing_ckpt_path_names_the_path_before_the_launch(tmp_path):
    missing = tmp_path / "nope" / "last.ckpt"
    started = time.monotonic()
    with pytest.raises(FileNotFoundError, match=rf"`ckpt_path='{missing}'` does not exist.*save_checkpoint"):
        _ddp_trainer().fit(ProbeModule(), datamodule=ProbeData(4), ckpt_path=missing)
    # Refused at once: a launch would fail otherwise, and a rendezvous would wait for its 30-minute timeout.
    assert time.monotonic() - started < 60


def _full_error(info: pytest.ExceptionInfo) -> str:
    return "".join(traceback.format_exception(info.value))


class Opaque:
    """Not plain data: `weights_only=True` refuses to load it."""


@pytest.mark.parametrize("content", ["garbage", "pickled-object"])
def test_a_file_that_does_not_load_is_not_a_checkpoint_and_no_unsafe_advice(tmp_path, content):
    path = tmp_path / "bad.ckpt"
    if content == "garbage":
        path.write_bytes(b"\x00not a checkpoint" * 10)
    else:
        torch.save({"state_dict": {}, "extra": Opaque()}, path)
    # a pickled object is named, with the safe way to convert a trusted file (never `weights_only=False`)
    expected = "is not a checkpoint written by this library" if content == "garbage" else "holds `.*Opaque`"
    with pytest.raises(CheckpointError, match=rf"{path} {expected}") as info:
        _ddp_trainer().fit(ProbeModule(), datamodule=ProbeData(4), ckpt_path=path)
    assert "weights_only=False" not in _full_error(info)


def test_a_dict_without_state_dict_is_not_a_checkpoint(tmp_path):
    path = tmp_path / "weights.pt"
    torch.save(nn.Linear(3, 2).state_dict(), path)
    with pytest.raises(CheckpointError, match=r"no `state_dict` entry \(found: \['bias', 'weight'\]\)"):
        check_checkpoint(path, Wide())


def test_a_checkpoint_of_another_model_names_the_file_and_the_keys(tmp_path):
    path = tmp_path / "other.ckpt"
    torch.save({"state_dict": {"encoder.weight": torch.zeros(2, 3), "body.weight": torch.zeros(5, 3)}}, path)
    with pytest.raises(CheckpointError) as info:
        _ddp_trainer().fit(Wide(), datamodule=ProbeData(4), ckpt_path=path)
    message = str(info.value)
    assert f"{path} is a checkpoint of another model" in message and "`Wide`" in message
    assert "missing from the file: body.bias" in message
    assert "in the file but not in the model: encoder.weight" in message
    assert "body.weight (5, 3) in the file, (2, 3) in the model" in message


def test_layers_made_in_setup_are_checked_at_restore_naming_the_file(tmp_path):
    """ProbeModule creates its layer in `setup`: the caller cannot check it, the restore names the file."""
    path = tmp_path / "other.ckpt"
    torch.save({"state_dict": {"encoder.weight": torch.zeros(2, 3)}}, path)
    check_checkpoint(path, ProbeModule())  # nothing to compare yet
    trainer = Trainer(accelerator="cpu", max_steps=1, enable_progress_bar=False)
    with pytest.raises(
        CheckpointError,
        match=rf"{path} is a checkpoint of another model.*missing from the file: "
        r"layer.weight, layer.bias.*not in the model: encoder.weight",
    ):
        trainer.fit(ProbeModule(), datamodule=ProbeData(4), ckpt_path=path)


def test_a_checkpoint_of_this_model_passes_and_resumes(tmp_path):
    trainer = Trainer(accelerator="cpu", max_steps=2, enable_progress_bar=False)
    module = ProbeModule()
    trainer.fit(module, datamodule=ProbeData(4))
    path = tmp_path / "last.ckpt"
    trainer.save_checkpoint(path)
    check_checkpoint(path, module)
    resumed = Trainer(accelerator="cpu", max_steps=3, enable_progress_bar=False)
    resumed.fit(ProbeModule(), datamodule=ProbeData(4), ckpt_path=path)
    assert resumed.state.global_step == 3


def test_a_directory_that_is_not_a_sharded_checkpoint(tmp_path):
    with pytest.raises(CheckpointError, match=r"is a directory but not a checkpoint written by this library"):
        check_checkpoint(tmp_path, Wide())
