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
