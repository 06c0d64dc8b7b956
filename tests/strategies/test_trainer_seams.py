"""The Trainer's documented seams: ``hooks_class``, ``metrics_class`` and the registry's copy/replace."""

from __future__ import annotations

import logging
import signal
from typing import Any

import pytest
import torch
from hooked import HookedData, HookedModule
from lightning_hooks import SETTINGS, STAGES, load

from strategies import (
    Callback,
    DDPStrategy,
    HookCaller,
    SingleDeviceStrategy,
    StrategyRegistry,
    Trainer,
    TrainerMetrics,
)

OWNERS = ("module", "callback", "datamodule")


class SpyHooks(HookCaller):
    """Notes every hook call and every event's start and end."""

    def __init__(self, trainer: Trainer, record_hooks: bool = False) -> None:
        super().__init__(trainer, record_hooks)
        self.seen: list[str] = []

    def call(self, owner: str, obj: Any, hook: str, *args: Any, **kwargs: Any) -> Any:
        self.seen.append(f"{owner}.{hook}")
        return super().call(owner, obj, hook, *args, **kwargs)

    def before(self, hook: str) -> None:
        self.seen.append(f"before.{hook}")

    def after(self, hook: str) -> None:
        self.seen.append(f"after.{hook}")


class SpyTrainer(Trainer):
    hooks_class = SpyHooks


def _run_stages() -> dict[str, list[str]]:
    trainer = SpyTrainer(accelerator="cpu", devices=1, callbacks=[Callback()], **SETTINGS)
    hooks = trainer.hooks
    assert isinstance(hooks, SpyHooks)
    seen = {}
    for stage in STAGES:
        hooks.seen.clear()
        getattr(trainer, stage)(HookedModule(), datamodule=HookedData())
        seen[stage] = list(hooks.seen)
    return seen


@pytest.fixture(scope="module")
def seen() -> dict[str, list[str]]:
    return _run_stages()


@pytest.mark.parametrize("stage", STAGES)
def test_a_hook_caller_subclass_sees_every_hook_in_lightnings_order(seen, stage):
    calls = [name for name in seen[stage] if name.split(".", 1)[0] in OWNERS]
    assert calls == load()[stage]  # Lightning 2.6's recorded order (data/lightning_hooks.json)


@pytest.mark.parametrize("stage", STAGES)
def test_every_callback_hook_runs_inside_an_event_of_its_name(seen, stage):
    open_events: list[str] = []
    for name in seen[stage]:
        kind, hook = name.split(".", 1)
        if kind == "before":
            open_events.append(hook)
        elif kind == "after":
            assert open_events and open_events.pop() == hook, (name, open_events)
        elif kind == "callback":
            assert hook in open_events, f"{name} outside an event of its name"
    assert open_events == []


def test_fit_events_bracket_the_dataloader_and_epoch_end_calls(seen):
    fit = seen["fit"]
    i = fit.index("before.train_dataloader")
    assert fit[i : i + 3] == ["before.train_dataloader", "datamodule.train_dataloader", "after.train_dataloader"]
    j = fit.index("before.on_train_epoch_end")
    end = ["callback.on_train_epoch_end", "module.on_train_epoch_end", "after.on_train_epoch_end"]
    assert fit[j + 1 : j + 4] == end


class _FxProbe(Callback):
    def __init__(self) -> None:
        self.fx: list[tuple[str | None, bool]] = []

    def on_train_epoch_start(self, trainer: Any, module: Any) -> None:
        self.fx.append((trainer.hooks.current_fx, trainer.training))

    def on_validation_epoch_start(self, trainer: Any, module: Any) -> None:
        self.fx.append((trainer.hooks.current_fx, trainer.training))


def test_current_fx_names_the_running_hook_and_is_none_between_hooks():
    probe = _FxProbe()
    trainer = Trainer(accelerator="cpu", devices=1, callbacks=[probe], **SETTINGS)
    trainer.fit(HookedModule(), datamodule=HookedData())
    assert probe.fx == [
        ("on_validation_epoch_start", False),  # the sanity check
        ("on_train_epoch_start", True),
        ("on_validation_epoch_start", False),
    ]
    assert trainer.hooks.current_fx is None


class _Interrupting(HookedModule):
    def training_step(self, batch, batch_idx):
        raise KeyboardInterrupt


class _QuietHooks(HookCaller):
    def on_run_exception(self, exception: BaseException) -> bool:
        self.caught = exception
        return isinstance(exception, KeyboardInterrupt)


def test_on_run_exception_may_end_a_failed_run_quietly(caplog):
    settings = {**SETTINGS, "num_sanity_val_steps": 0}
    previous = signal.getsignal(signal.SIGINT)
    try:  # the default hook caller re-raises, and Ctrl-C then ends the program as in Lightning 2.6
        with pytest.raises(SystemExit) as ended, caplog.at_level(logging.INFO, logger="strategies"):
            Trainer(accelerator="cpu", devices=1, **settings).fit(_Interrupting(), datamodule=HookedData())
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN  # a second Ctrl-C cannot cut the shutdown short
    finally:
        signal.signal(signal.SIGINT, previous)
    assert ended.value.code == 1
    assert "Detected KeyboardInterrupt, attempting graceful shutdown" in caplog.text

    class Quiet(Trainer):
        hooks_class = _QuietHooks

    trainer = Quiet(accelerator="cpu", devices=1, **settings)
    assert trainer.fit(_Interrupting(), datamodule=HookedData()) is None
    assert isinstance(trainer.hooks.caught, KeyboardInterrupt)


class _CountingMetrics(TrainerMetrics):
    def __init__(self, trainer: Any) -> None:
        super().__init__(trainer)
        self.names: list[str] = []

    def log(self, name: str, value: Any, **kwargs: Any) -> None:
        self.names.append(name)
        super().log(name, value, **kwargs)


def test_a_metrics_subclass_gets_every_self_log_and_the_trainer_reads_it():
    class Counting(Trainer):
        metrics_class = _CountingMetrics

    trainer = Counting(accelerator="cpu", devices=1, **SETTINGS)
    trainer.validate(HookedModule(), datamodule=HookedData())
    assert trainer.metrics.names == ["val_loss"]
    assert trainer.callback_metrics is trainer.metrics.callback_metrics
    assert set(trainer.callback_metrics) == {"val_loss"}


# -- the registry ---------------------------------------------------------------------------------


class _MyDDP(DDPStrategy):
    pass


def test_a_registry_copy_is_independent_of_the_original():
    original = Trainer.registry.copy()  # a copy to change here, so the Trainer's own stays as it is
    copy = original.copy()
    assert copy.names() == original.names() == Trainer.registry.names()
    copy.replace("ddp", _MyDDP)
    copy.register("mine", SingleDeviceStrategy, "a test name")
    assert type(copy.create("ddp")) is _MyDDP
    assert type(original.create("ddp")) is DDPStrategy
    assert type(Trainer.registry.create("ddp")) is DDPStrategy
    assert "mine" in copy and "mine" not in original
    original.register("only_original", SingleDeviceStrategy, "another test name")
    assert "only_original" not in copy


def test_replace_keeps_the_description_and_default_arguments():
    registry = StrategyRegistry()
    registry.register("cpu_one", SingleDeviceStrategy, "one CPU", device="cpu")

    class Mine(SingleDeviceStrategy):
        pass

    registry.replace("cpu_one", Mine)
    built = registry.create("cpu_one")
    assert type(built) is Mine and built.root_device == torch.device("cpu")
    assert registry.description("cpu_one") == "one CPU"
    with pytest.raises(ValueError, match="not registered: add it with `register`"):
        registry.replace("nope", Mine)


def test_a_trainer_subclass_uses_its_own_registry_copy():
    class MyTrainer(Trainer):
        registry = Trainer.registry.copy()

    MyTrainer.registry.replace("single_device", type("Mine", (SingleDeviceStrategy,), {}))
    assert type(MyTrainer(strategy="single_device", accelerator="cpu").strategy).__name__ == "Mine"
    assert type(Trainer(strategy="single_device", accelerator="cpu").strategy) is SingleDeviceStrategy
