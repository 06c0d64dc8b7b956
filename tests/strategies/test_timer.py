"""``strategies.Timer`` and ``Trainer(max_time=...)``: Lightning 2.6's clock, limit and checkpoint state.

The clock is made deterministic where a test needs a limit to expire at a known batch: a
callback advances a fake ``time.monotonic`` by ten seconds a batch.
"""

from __future__ import annotations

import datetime
import logging
import warnings

import pytest
import torch
from _helpers import quiet_trainer, spawn_trainer
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies
from strategies import Callback, Timer, Trainer
from strategies import timer as timer_module

STAGE_KEYS = ["train", "sanity_check", "validate", "test", "predict"]


def _loader() -> DataLoader:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(16, 4, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)  # 4 batches an epoch


def _module(base):
    class Regression(base):
        def __init__(self) -> None:
            super().__init__()
            torch.manual_seed(0)
            self.layer = nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return nn.functional.mse_loss(self.layer(x), y)

        def validation_step(self, batch, batch_idx):
            x, y = batch
            self.log("val_loss", nn.functional.mse_loss(self.layer(x), y))

        def test_step(self, batch, batch_idx):
            x, y = batch
            self.log("test_loss", nn.functional.mse_loss(self.layer(x), y))

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    return Regression()


def _trainer(trainer_cls=Trainer, **kwargs):
    return quiet_trainer(trainer_cls, **{"max_epochs": 5, "num_sanity_val_steps": 0, **kwargs})


class _Clock:
    """A fake clock for ``strategies.timer``, moved by ``_Tick`` after each training batch."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class _Tick(Callback):
    def __init__(self, clock: _Clock, seconds: float) -> None:
        self.clock, self.seconds = clock, seconds

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        self.clock.now += self.seconds


@pytest.fixture
def clock(monkeypatch) -> _Clock:
    fake = _Clock()
    monkeypatch.setattr(timer_module, "_clock", fake)
    return fake


def _fit(trainer: Trainer, ckpt_path=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(_module(strategies.TrainModule), _loader(), _loader(), ckpt_path=ckpt_path)
    return trainer


# -- the limit -----------------------------------------------------------------------------------------


def test_a_step_limit_stops_after_the_batch_that_reaches_it(clock) -> None:
    timer = Timer(duration={"seconds": 25}, interval="step", verbose=False)
    trainer = _fit(_trainer(callbacks=[_Tick(clock, 10), timer]))
    assert trainer.global_step == 3  # 30 s >= 25 s after the third batch
    assert timer.time_elapsed() == 30 and timer.time_remaining() == -5


def test_an_epoch_limit_stops_at_the_end_of_the_epoch_that_reaches_it(clock) -> None:
    timer = Timer(duration=datetime.timedelta(seconds=25), interval="epoch", verbose=False)
    trainer = _fit(_trainer(callbacks=[_Tick(clock, 10), timer]))
    assert (trainer.global_step, trainer.current_epoch) == (4, 1)


def test_max_time_adds_a_step_timer_and_an_exhausted_one_stops_before_training(caplog) -> None:
    """Lightning 2.6: ``max_time=0`` stops at ``on_fit_start``; no batch runs, no ``on_train_start``."""
    calls = []

    class Record(Callback):
        def on_train_start(self, trainer, module):
            calls.append("on_train_start")

    trainer = _trainer(max_time=datetime.timedelta(0), callbacks=[Record()])
    timers = [cb for cb in trainer.callbacks if isinstance(cb, Timer)]
    assert len(timers) == 1 and timers[0]._interval == "step" and timers[0]._duration == 0
    with caplog.at_level(logging.INFO, logger="strategies"):
        _fit(trainer)
    assert trainer.global_step == 0 and calls == []
    assert "Time limit reached. Elapsed time is 0:00:00. Signaling Trainer to stop." in caplog.text


def test_max_time_is_ignored_when_the_callbacks_hold_a_timer(caplog) -> None:
    own = Timer()
    with caplog.at_level(logging.INFO, logger="strategies"):
        trainer = _trainer(max_time="00:00:00:00", callbacks=[own])
    assert [cb for cb in trainer.callbacks if isinstance(cb, Timer)] == [own]
    assert "Ignoring `Trainer(max_time=...)`, callbacks list already contains a Timer." in caplog.text


# -- what it measures ------------------------------------------------------------------------------------


def test_it_times_each_stage_and_saves_lightnings_keys(clock) -> None:
    timer = Timer()  # no limit: it only measures
    trainer = _fit(_trainer(max_epochs=2, callbacks=[_Tick(clock, 10), timer]))
    assert trainer.global_step == 8 and timer.time_remaining() is None
    assert timer.time_elapsed("train") == 80 and timer.end_time() == timer.start_time() + 80
    assert timer.start_time("validate") is not None and timer.time_elapsed("validate") == 0  # no tick in it
    assert timer.start_time("test") is None and timer.time_elapsed("test") == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.test(_module(strategies.TrainModule), _loader())
    assert timer.start_time("test") is not None and timer.end_time("test") is not None
    state = timer.state_dict()
    assert list(state) == ["time_elapsed"] and list(state["time_elapsed"]) == STAGE_KEYS
    assert state["time_elapsed"]["train"] == 80


def test_a_resumed_run_counts_the_time_in_the_checkpoint(clock, tmp_path) -> None:
    first = _fit(_trainer(max_epochs=1, callbacks=[_Tick(clock, 10), Timer(verbose=False)]))
    path = tmp_path / "first.ckpt"
    first.save_checkpoint(path)
    assert torch.load(path, weights_only=True)["callbacks"]["Timer"]["time_elapsed"]["train"] == 40
    timer = Timer(duration={"seconds": 55}, verbose=False)
    resumed = _fit(_trainer(max_epochs=5, callbacks=[_Tick(clock, 10), timer]), ckpt_path=path)
    assert resumed.global_step == 6  # 40 s carried + 2 batches of 10 s >= 55 s
    assert timer.time_elapsed() == 60
    used_up = Timer(duration={"seconds": 40}, verbose=False)
    again = _fit(_trainer(max_epochs=5, callbacks=[_Tick(clock, 10), used_up]), ckpt_path=path)
    assert again.global_step == 4  # checked at on_fit_start, after the restore: no batch ran


def test_a_second_fit_restarts_the_clock_of_each_stage(clock) -> None:
    timer = Timer()
    trainer = _trainer(max_epochs=1, callbacks=[_Tick(clock, 10), timer])
    _fit(trainer)
    first_start = timer.start_time()
    clock.now += 100
    _fit(_trainer(max_epochs=1, callbacks=[_Tick(clock, 10), timer]))
    assert timer.start_time() == first_start + 140 and timer.time_elapsed() == 40


# -- bad values ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"duration": "1:00:00:0"}, r"`Timer\(duration='1:00:00:0'\)` is not a duration: use 'DD:HH:MM:SS'"),
        ({"duration": {"fortnights": 1}}, r"the dict's keys must be `timedelta` keywords"),
        ({"duration": 60}, r"got `int`"),
        ({"interval": "batch"}, r"`Timer\(interval='batch'\)`: use 'step' or 'epoch'"),
    ],
)
def test_bad_arguments_say_what_to_pass(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        Timer(**kwargs)


def test_an_unknown_stage_names_the_stages() -> None:
    with pytest.raises(ValueError, match="unknown stage 'training': use one of 'train', 'sanity_check'"):
        Timer().time_elapsed("training")


def test_the_1x_name_resolves_on_compat() -> None:
    pytest.importorskip("compat")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from compat.callbacks import Timer as OldTimer
    assert OldTimer is Timer


# -- side by side with Lightning 2.6 (extras) -------------------------------------------------------------


def test_max_time_zero_and_the_saved_state_match_lightning(tmp_path) -> None:
    pl = pytest.importorskip("lightning.pytorch", reason="needs the lightning extra (pip install -e '.[lightning]')")
    runs = {}
    for name, trainer_cls, base in (("lightning", pl.Trainer, pl.LightningModule), ("ours", Trainer, None)):
        trainer = _trainer(trainer_cls, max_time={"seconds": 0})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trainer.fit(_module(base or strategies.TrainModule), _loader(), _loader())
        runs[name] = trainer.global_step
    assert runs == {"lightning": 0, "ours": 0}
    # a Lightning checkpoint's Timer state resumes here with its clock, and ours in Lightning
    theirs = pl.callbacks.Timer()
    trainer = _trainer(pl.Trainer, max_epochs=1, callbacks=[theirs])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(_module(pl.LightningModule), _loader())
        trainer.save_checkpoint(tmp_path / "lightning.ckpt")
    saved = torch.load(tmp_path / "lightning.ckpt", weights_only=False)["callbacks"]["Timer"]
    assert list(saved["time_elapsed"]) == STAGE_KEYS
    ours = Timer(duration={"days": 1}, verbose=False)
    resumed = _fit(_trainer(max_epochs=2, callbacks=[ours]), ckpt_path=tmp_path / "lightning.ckpt")
    assert resumed.global_step == 8 and ours._offset == saved["time_elapsed"]["train"]
    resumed.save_checkpoint(tmp_path / "ours.ckpt")
    back = pl.callbacks.Timer(duration={"days": 1})
    trainer = _trainer(pl.Trainer, max_epochs=3, callbacks=[back])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(_module(pl.LightningModule), _loader(), ckpt_path=tmp_path / "ours.ckpt")
    assert trainer.global_step == 12 and back._offset == pytest.approx(ours.time_elapsed())


# -- two real processes (ddp_spawn, gloo): rank 0's clock decides for both ---------------------------------


class _Regression(strategies.TrainModule):
    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


class _RankClock(Timer):
    """A clock that runs ten seconds a batch on ``fast_rank`` and one second on the other rank."""

    def __init__(self, fast_rank: int, seconds: int) -> None:
        super().__init__(duration={"seconds": seconds}, verbose=False)
        self.fast_rank, self.batches, self.rank = fast_rank, 0, -1

    def on_train_start(self, trainer, module):
        super().on_train_start(trainer, module)
        self.rank = trainer.global_rank

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        self.batches += 1
        super().on_train_batch_end(trainer, module, outputs, batch, batch_idx)

    def time_elapsed(self, stage="train"):
        return float(self.batches * (10 if self.rank == self.fast_rank else 1)) if stage == "train" else 0.0


@pytest.mark.timeout(900)
def test_under_ddp_every_rank_stops_where_rank_zeros_clock_says() -> None:
    """Rank 1's fast clock (limit 25 s) would stop it at batch 3 alone and hang rank 0 in its next
    all-reduce; rank 0's fast clock (limit 45 s) stops both at batch 5."""
    trainer = spawn_trainer(
        max_epochs=10,  # 2 batches an epoch per rank: 20 steps without a limit
        callbacks=[_RankClock(fast_rank=1, seconds=25), _RankClock(fast_rank=0, seconds=45)],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer.fit(_Regression(), _loader())
    assert trainer.global_step == 5
