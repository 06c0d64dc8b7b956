"""A stand-in Trainer for the logging and callback unit tests: ``TrainerMetrics`` on one CPU device.

It offers what ``ModelCheckpoint``/``EarlyStopping`` read of a Trainer and drives the loop
notifications in the order the Trainer's loops do; the real Trainer is tested end to end in
test_lightning_program.py.
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import torch

from strategies import HookCaller, Logger, SingleDeviceStrategy, TrainerMetrics
from strategies._logging import _LoggerProperties


class Recording(Logger):
    """Keeps what the Trainer sends it."""

    def __init__(self) -> None:
        self.rows: list[tuple[int | None, dict[str, float]]] = []
        self.hparams: list[dict[str, Any]] = []

    name = "recording"
    version = 0

    def log_metrics(self, metrics: dict[str, float], step: int | None = None) -> None:
        self.rows.append((step, dict(metrics)))

    def log_hyperparams(self, params: Any) -> None:
        self.hparams.append(dict(params))


class Host(_LoggerProperties):
    """The Trainer's metrics on a single-device strategy, driven the way the loops drive them."""

    def __init__(self, stage: str = "fit", **kwargs: Any) -> None:
        self.strategy = SingleDeviceStrategy("cpu")
        self.strategy.connect(torch.nn.Linear(1, 1))
        self.state = SimpleNamespace(stage=stage, epoch=0, global_step=0)
        self.callbacks: list[Any] = list(kwargs.pop("callbacks", []))
        self.datamodule = None
        self.hooks = HookCaller(self)  # self.log reads the hook running from `hooks.current_fx`
        self.metrics = TrainerMetrics(self)
        kwargs.setdefault("logger", Recording())
        kwargs.setdefault("enable_checkpointing", any(getattr(cb, "_is_checkpoint", False) for cb in self.callbacks))
        self._configure_logging(**kwargs)

    def log(self, fx: str, name: str, value: Any, **kwargs: Any) -> None:
        self.hooks.current_fx = fx
        self.metrics.log(name, value, **kwargs)
        self.hooks.current_fx = None

    def train_batch(self, *logs: tuple[str, Any, dict[str, Any]], stepped: bool = True) -> None:
        for name, value, kwargs in logs:
            self.log("training_step", name, value, **kwargs)
        self.state.global_step += int(stepped)
        self.metrics.batch_end("train")

    # -- what the callbacks read ---------------------------------------------------------------

    should_stop = False
    sanity_checking = False
    fast_dev_run = 0
    check_val_every_n_epoch = 1
    val_check_interval = 1.0
    ckpt_path = None

    @property
    def global_step(self) -> int:
        return self.state.global_step

    @property
    def current_epoch(self) -> int:
        return self.state.epoch

    @property
    def is_global_zero(self) -> bool:
        return True

    global_rank = 0
    world_size = 1

    def save_checkpoint(self, path: Any, weights_only: bool = False) -> None:
        self.strategy.save_checkpoint({"global_step": self.global_step, "epoch": self.current_epoch}, path)

    def call(self, hook: str, *args: Any) -> None:
        for callback in self.callbacks:
            method = getattr(callback, hook, None)  # the Callback base may not declare every hook yet
            if method is not None:
                method(self, self.strategy.module, *args)

    def fit_epoch(self, train: list[float], val: list[float] | None, stepped: bool = True) -> None:
        """One training epoch (``loss`` per batch) then validation (``val_loss`` per batch), Lightning's order."""
        self.metrics.reset("train")
        for i, loss in enumerate(train):
            self.train_batch(("loss", loss, {}), stepped=stepped)
            self.call("on_train_batch_end", None, None, i)
        if val is not None:
            self.metrics.reset("val")
            for value in val:
                self.log("validation_step", "val_loss", value)
                self.metrics.batch_end("val")
            self.metrics.epoch_end("val")
            self.call("on_validation_end")
        self.metrics.epoch_end("train")
        self.call("on_train_epoch_end")
        if not self.should_stop:
            self.state.epoch += 1
