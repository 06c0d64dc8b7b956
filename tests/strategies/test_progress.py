"""The progress bar: tqdm on a terminal only, showing the ``prog_bar`` metrics."""

from __future__ import annotations

import io

from strategies._progress import ProgressBar


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
