"""What a checkpoint holds, and how a run is restored from one (keys as Lightning's where they overlap)."""

from __future__ import annotations

import os
import warnings
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from strategies.trainer import Trainer


def dump_checkpoint(trainer: Trainer) -> dict[str, Any]:
    """Weights, optimizers, schedulers, precision, callbacks, datamodule, hyperparameters, loop state.

    Callbacks' ``on_save_checkpoint`` and then the module's may edit the dict before it is written.
    """
    strategy, state = trainer.strategy, trainer.state
    module = strategy.module
    checkpoint: dict[str, Any] = {
        "epoch": state.epoch + 1 if state.epoch_done else state.epoch,
        "global_step": state.global_step,
        "step_in_epoch": 0 if state.epoch_done else state.step_in_epoch,
        "state_dict": strategy.module_state_dict(),
        "optimizer_states": [opt.state_dict() for opt in strategy.optimizers],
        "lr_schedulers": [config["scheduler"].state_dict() for config in strategy.lr_scheduler_configs],
        "precision": strategy.precision.state_dict(),
        "callbacks": {cb.state_key: cb.state_dict() for cb in trainer.callbacks},
        "hyper_parameters": dict(getattr(module, "hparams", {})),
    }
    if trainer.datamodule is not None:
        checkpoint[type(trainer.datamodule).__qualname__] = trainer.datamodule.state_dict()
    for callback in trainer.callbacks:
        trainer._call("callback", callback, "on_save_checkpoint", trainer, module, checkpoint)
    trainer._call_module("on_save_checkpoint", checkpoint)
    return checkpoint


def restore_checkpoint(trainer: Trainer, path: Any) -> None:
    """Load a checkpoint after ``strategy.setup`` (``weights_only=True``); loop state only for ``fit``."""
    strategy = trainer.strategy
    trainer._record("strategy.load_checkpoint")
    checkpoint = strategy.load_checkpoint(path)
    trainer._call_module("on_load_checkpoint", checkpoint)
    strategy.load_module_state_dict(checkpoint["state_dict"])
    datamodule = trainer.datamodule
    if datamodule is not None and type(datamodule).__qualname__ in checkpoint:
        datamodule.load_state_dict(checkpoint[type(datamodule).__qualname__])
    saved_callbacks = checkpoint.get("callbacks", {})
    for callback in trainer.callbacks:
        trainer._call("callback", callback, "on_load_checkpoint", trainer, strategy.module, checkpoint)
        callback.load_state_dict(saved_callbacks.get(callback.state_key, {}))
    if trainer.state.stage == "fit":
        _restore_training_state(trainer, checkpoint)


def _restore_training_state(trainer: Trainer, checkpoint: dict[str, Any]) -> None:
    strategy, state = trainer.strategy, trainer.state
    for optimizer, saved in zip(strategy.optimizers, checkpoint.get("optimizer_states", []), strict=False):
        optimizer.load_state_dict(saved)
    for config, saved in zip(strategy.lr_scheduler_configs, checkpoint.get("lr_schedulers", []), strict=False):
        config["scheduler"].load_state_dict(saved)
    strategy.precision.load_state_dict(checkpoint.get("precision", {}))
    state.epoch = checkpoint.get("epoch", 0)
    state.step_in_epoch = checkpoint.get("step_in_epoch", 0)
    state.global_step = checkpoint.get("global_step", 0)


def resolve_last(trainer: Trainer, stage: str) -> str | None:
    """``ckpt_path="last"`` as in Lightning 2.6: the newest last checkpoint of the ``ModelCheckpoint`` callbacks.

    Rank 0 looks (``<dirpath>/last*.ckpt``, and the last one a callback wrote in this process) and every
    rank gets its answer. None, with a warning, when there is none yet: so ``fit(ckpt_path="last")`` can
    stay in a script that torchrun restarts (``--max-restarts``), starting from scratch the first time
    and resuming from the last checkpoint after a failure.
    """
    from strategies.model_checkpoint import ModelCheckpoint

    found: str | None = None
    if trainer.is_global_zero:
        candidates: set[str] = set()
        for callback in trainer.callbacks:
            if isinstance(callback, ModelCheckpoint):
                candidates |= callback._find_last_checkpoints(trainer)
        if candidates:
            found = max(candidates, key=os.path.getmtime)
    found = cast("str | None", trainer.strategy.broadcast(found))
    if found is None:
        warnings.warn(
            f'`.{stage}(ckpt_path="last")` is set, but there is no last checkpoint available. No checkpoint will be '
            "loaded. HINT: Set `ModelCheckpoint(..., save_last=True)` (with a fixed `dirpath`, so that a restarted "
            "run looks in the same folder).",
            UserWarning,
            stacklevel=2,
        )
    return found
