"""The progress bar draws on a terminal only, and only when enabled."""

from __future__ import annotations

import io

from strategies._progress import ProgressBar


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_draws_on_a_terminal(monkeypatch):
    stream = _Tty()
    monkeypatch.setattr("sys.stderr", stream)
    bar = ProgressBar(enabled=True)
    bar.update("train", 0, 3, 10, {"loss": 0.5})
    bar.close()
    assert "train epoch 0 3/10 loss=0.5" in stream.getvalue()


def test_silent_when_not_a_terminal_or_disabled(monkeypatch):
    stream = io.StringIO()
    monkeypatch.setattr("sys.stderr", stream)
    ProgressBar(enabled=True).update("train", 0, 1, None, {})
    monkeypatch.setattr("sys.stderr", _Tty())
    bar = ProgressBar(enabled=False)
    bar.update("train", 0, 1, None, {})
    assert stream.getvalue() == "" and not bar.enabled
