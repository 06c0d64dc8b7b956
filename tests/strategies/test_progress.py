"""The progress bar: tqdm on a terminal only, showing the ``prog_bar`` metrics."""

from __future__ import annotations

import io

import pytest

from strategies._progress import _TqdmBar as ProgressBar


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_draws_stage_position_and_metrics_on_a_terminal(monkeypatch):
    stream = _Tty()
    monkeypatch.setattr("sys.stdout", stream)
    bar = ProgressBar(enabled=True)
    bar.update("train", 2, 10, 10, {"loss": 0.5})
    bar.update("val", 2, 1, 4, {"val_loss": 0.25})
    bar.close()
    text = stream.getvalue()
    assert "Epoch 2" in text and "10/10" in text and "loss=0.5" in text
    assert "Validation" in text


def test_silent_when_not_a_terminal_or_disabled(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr("sys.stdout", stream)
    ProgressBar(enabled=True).update("train", 0, 1, None, {})
    tty = _Tty()
    monkeypatch.setattr("sys.stdout", tty)
    bar = ProgressBar(enabled=False)
    bar.update("train", 0, 1, None, {})
    bar.close()
    assert stream.getvalue() == "" and tty.getvalue() == "" and not bar.enabled


def test_tqdm_progress_bar_sets_the_refresh_rate_and_whether_epochs_stay(monkeypatch):
    import pytest

    from strategies import Trainer
    from strategies._progress import TQDMProgressBar, bar_for

    stream = _Tty()
    monkeypatch.setattr("sys.stdout", stream)
    trainer = Trainer(logger=False, enable_checkpointing=False, callbacks=[TQDMProgressBar(refresh_rate=5)])
    bar = bar_for(trainer, True)
    assert (bar.refresh_rate, bar.leave) == (5, False)
    for step in range(1, 5):  # below the rate: nothing drawn yet
        bar.update("train", 0, step, 10, {})
    assert stream.getvalue() == ""
    bar.update("train", 0, 5, 10, {})
    first = bar._bar
    assert first.n == 5
    bar.update("train", 1, 10, 10, {})  # a new epoch resets the one training bar (Lightning's default)
    assert bar._bar is first and first.n == 10 and first.desc.startswith("Epoch 1")
    bar.close()
    assert "Epoch 0" in stream.getvalue() and "10/10" in stream.getvalue()
    leave = bar_for(Trainer(logger=False, enable_checkpointing=False, callbacks=[TQDMProgressBar(leave=True)]), True)
    leave.update("train", 0, 1, 2, {})
    kept = leave._bar
    leave.update("train", 1, 1, 2, {})
    assert leave._bar is not kept  # leave=True: each epoch gets its own bar, which stays on screen
    leave.close()
    assert not bar_for(Trainer(logger=False, callbacks=[TQDMProgressBar(refresh_rate=0)]), True).enabled
    with pytest.raises(ValueError, match=r"`TQDMProgressBar\(refresh_rate=-1\)`: use an int >= 0"):
        TQDMProgressBar(refresh_rate=-1)
    with pytest.raises(ValueError, match="enable_progress_bar=False"):
        Trainer(enable_progress_bar=False, callbacks=[TQDMProgressBar()])


def _custom_bar_run(trainer_module, progress_base):
    """A progress bar of the user's own (Lightning's documented pattern), on one Trainer."""
    import torch
    from torch.utils.data import DataLoader, TensorDataset

    seen: dict = {"train": [], "val": [], "enabled": []}

    class Percent(progress_base):
        def __init__(self):
            super().__init__()
            self.enabled = True

        def disable(self):
            self.enabled = False

        def enable(self):
            self.enabled = True

        def on_train_batch_end(self, trainer, pl_module, outputs, batch, batch_idx):
            seen["train"].append((batch_idx, self.total_train_batches, self.total_val_batches))
            seen["metrics"] = sorted(self.get_metrics(trainer, pl_module))

        def on_validation_batch_end(self, trainer, pl_module, outputs, batch, batch_idx, dataloader_idx=0):
            self.has_dataloader_changed(dataloader_idx)
            seen["val"].append((trainer.sanity_checking, batch_idx, self.total_val_batches_current_dataloader))

    class Module(trainer_module.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            loss = self.layer(batch[0]).pow(2).mean()
            self.log("shown", loss, prog_bar=True)
            return loss

        def validation_step(self, batch, batch_idx):
            return None

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    data = DataLoader(TensorDataset(torch.randn(12, 2)), batch_size=4)
    bar = Percent()
    trainer = trainer_module.Trainer(
        accelerator="cpu",
        max_epochs=2,
        callbacks=[bar],
        logger=False,
        enable_checkpointing=False,
        enable_model_summary=False,
        num_sanity_val_steps=1,
        limit_val_batches=2,
        check_val_every_n_epoch=2,
    )
    trainer.fit(Module(), data, data)
    assert trainer.progress_bar_callback is bar
    seen["description"] = (bar.train_description, bar.validation_description)
    return seen


def test_a_progress_bar_of_ones_own_gets_lightnings_totals():
    import types

    import strategies

    ours = types.SimpleNamespace(LightningModule=strategies.TrainModule, Trainer=strategies.Trainer)
    seen = _custom_bar_run(ours, strategies.ProgressBar)
    assert seen["train"] == [(0, 3, 0), (1, 3, 0), (2, 3, 0), (0, 3, 2), (1, 3, 2), (2, 3, 2)]
    assert seen["val"] == [(True, 0, 1), (False, 0, 2), (False, 1, 2)]
    assert seen["metrics"] == ["shown"]
    assert seen["description"] == ("Training", "Validation")


def test_the_progress_bar_base_needs_disable_on_other_ranks():
    import strategies

    class Bare(strategies.ProgressBar):
        pass

    with pytest.raises(TypeError, match="reference has not been set yet"):
        _ = Bare().trainer
    trainer = type("T", (), {"is_global_zero": False})()
    with pytest.raises(NotImplementedError):
        Bare().setup(trainer, None, "fit")  # as Lightning: a bar must say how it is turned off


@pytest.mark.extras
def test_a_progress_bar_of_ones_own_sees_what_it_sees_on_lightning():
    import types

    pl = pytest.importorskip("lightning.pytorch", reason="needs the lightning extra")
    import strategies

    ours = types.SimpleNamespace(LightningModule=strategies.TrainModule, Trainer=strategies.Trainer)
    theirs = types.SimpleNamespace(LightningModule=pl.LightningModule, Trainer=pl.Trainer)
    assert _custom_bar_run(ours, strategies.ProgressBar) == _custom_bar_run(theirs, pl.callbacks.ProgressBar)
