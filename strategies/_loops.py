"""The training and evaluation loops, metric logging, and checkpoint contents."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from strategies._data import inject_distributed_sampler, limit_batches, move_to_device
from strategies._progress import ProgressBar

if TYPE_CHECKING:
    from strategies.module import DataModule, TrainModule
    from strategies.trainer import Trainer

_LOADER_HOOK = {"train": "train_dataloader", "val": "val_dataloader", "test": "test_dataloader",
                "predict": "predict_dataloader"}
_STEP = {"val": "validation_step", "test": "test_step", "predict": "predict_step"}
_EPOCH_END = {"val": "on_validation_epoch_end", "test": "on_test_epoch_end"}


def _loader(trainer: Trainer, kind: str, model: TrainModule, given: Any, datamodule: DataModule | None) -> Any:
    hook = _LOADER_HOOK[kind]
    loader = given
    if loader is None and datamodule is not None:
        loader = trainer._call("datamodule", datamodule, hook)
    if loader is None:
        loader = trainer._call("module", model, hook)
    if loader is not None and trainer.use_distributed_sampler:
        loader = inject_distributed_sampler(loader, trainer.strategy.distributed_sampler_kwargs, kind == "train")
    return loader


def run_stage(trainer: Trainer, stage: str, model: TrainModule, loaders: dict[str, Any],
              datamodule: DataModule | None) -> Any:
    """Run one stage's loop in this process and return its results."""
    if stage == "fit":
        train = _loader(trainer, "train", model, loaders.get("train"), datamodule)
        if train is None:
            raise ValueError(
                "No training data: pass `train_dataloaders` to `fit`, a DataModule with `train_dataloader`, "
                "or define `train_dataloader` on the module."
            )
        val = _loader(trainer, "val", model, loaders.get("val"), datamodule)
        trainer._call_callbacks("on_fit_start")
        trainer._call("module", model, "on_fit_start")
        _fit_loop(trainer, model, train, val)
        trainer._call_callbacks("on_fit_end")
        trainer._call("module", model, "on_fit_end")
        return None
    kind = {"validate": "val", "test": "test", "predict": "predict"}[stage]
    loader = _loader(trainer, kind, model, loaders.get(kind), datamodule)
    if loader is None:
        raise ValueError(f"No data to {stage}: pass `dataloaders`, or define `{_LOADER_HOOK[kind]}`.")
    return _eval_loop(trainer, model, loader, kind)


def _fit_loop(trainer: Trainer, model: TrainModule, train: Any, val: Any) -> None:
    strategy, state = trainer.strategy, trainer.state
    progress = ProgressBar(trainer.enable_progress_bar and trainer.is_global_zero)
    limit = limit_batches(train, trainer.limits["train"])
    skip = state.step_in_epoch
    while (trainer.max_epochs == -1 or state.epoch < trainer.max_epochs) and not state.should_stop:
        sampler = getattr(train, "sampler", None)
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(state.epoch)
        model.train()
        trainer._call_callbacks("on_train_epoch_start")
        trainer._call("module", model, "on_train_epoch_start")
        for batch_idx, batch in enumerate(train):
            if limit is not None and batch_idx >= limit:
                break
            if batch_idx < skip:
                continue
            if 0 <= trainer.max_steps <= state.global_step:  # a resumed run may already be done
                state.should_stop = True
                break
            _train_step(trainer, model, batch, batch_idx)
            if progress.enabled:
                progress.update("train", state.epoch, batch_idx + 1, limit, _floats(trainer.callback_metrics))
            if 0 <= trainer.max_steps <= state.global_step:
                state.should_stop = True
                break
        skip = 0
        if val is not None and (state.epoch + 1) % trainer.check_val_every_n_epoch == 0 and not state.should_stop:
            _eval_loop(trainer, model, val, "val")
            model.train()
        for config in strategy.lr_scheduler_configs:
            if config["interval"] == "epoch":
                config["scheduler"].step()
        # From here a checkpoint resumes at the next epoch (validation and schedulers are done).
        state.epoch_done = not state.should_stop
        trainer._call_callbacks("on_train_epoch_end")
        trainer._call("module", model, "on_train_epoch_end")
        state.epoch_done = False
        if not state.should_stop:
            state.epoch += 1
            state.step_in_epoch = 0
    progress.close()


def _train_step(trainer: Trainer, model: TrainModule, batch: Any, batch_idx: int) -> None:
    strategy, state = trainer.strategy, trainer.state
    batch = move_to_device(batch, strategy.root_device)
    trainer._call_callbacks("on_train_batch_start", batch, batch_idx)
    trainer._call("module", model, "on_train_batch_start", batch, batch_idx)
    trainer._record("module.training_step")
    output = strategy.training_step(batch, batch_idx)
    loss = output["loss"] if isinstance(output, dict) else output
    if loss is not None:
        for optimizer in strategy.optimizers:
            optimizer.zero_grad(set_to_none=True)
        trainer._record("strategy.backward")
        strategy.backward(loss)
        for optimizer in strategy.optimizers:
            if trainer.gradient_clip_val is not None:
                strategy.clip_gradients(optimizer, trainer.gradient_clip_val)
            trainer._record("strategy.optimizer_step")
            strategy.optimizer_step(optimizer)
        state.global_step += 1
        for config in strategy.lr_scheduler_configs:
            if config["interval"] == "step":
                config["scheduler"].step()
    # Counted before the batch-end hooks, so a checkpoint saved there resumes after this batch.
    state.step_in_epoch = batch_idx + 1
    trainer._call_callbacks("on_train_batch_end", output, batch, batch_idx)
    trainer._call("module", model, "on_train_batch_end", output, batch, batch_idx)


@torch.no_grad()
def _eval_loop(trainer: Trainer, model: TrainModule, loader: Any, kind: str) -> Any:
    strategy = trainer.strategy
    limit = limit_batches(loader, trainer.limits[kind])
    model.eval()
    trainer._in_eval, trainer._eval_sums = True, {}
    outputs = []
    step = getattr(strategy, _STEP[kind])
    try:
        for batch_idx, batch in enumerate(loader):
            if limit is not None and batch_idx >= limit:
                break
            batch = move_to_device(batch, strategy.root_device)
            trainer._record(f"module.{_STEP[kind]}")
            out = step(batch, batch_idx)
            if kind == "predict":
                outputs.append(out)
    finally:
        trainer._in_eval = False
    metrics = _reduce_eval_metrics(trainer)
    if kind in _EPOCH_END:
        trainer._call_callbacks(_EPOCH_END[kind])
        trainer._call("module", model, _EPOCH_END[kind])
    if kind == "predict":
        return outputs
    return [{k: float(v) for k, v in metrics.items()}]


def log_metric(trainer: Trainer, name: str, value: Any, sync_dist: bool) -> None:
    """``module.log``: the latest value in training, the epoch mean in evaluation."""
    value = value.detach() if isinstance(value, torch.Tensor) else torch.tensor(float(value))
    if trainer._in_eval:
        total, count, sync = trainer._eval_sums.get(name, (0.0, 0, False))
        trainer._eval_sums[name] = (total + value.float().cpu(), count + 1, sync or sync_dist)
        return
    if sync_dist:
        value = trainer.strategy.reduce(value, "mean")
    trainer.callback_metrics[name] = value.detach().cpu()


def _reduce_eval_metrics(trainer: Trainer) -> dict[str, torch.Tensor]:
    metrics = {}
    for name, (total, count, sync) in sorted(trainer._eval_sums.items()):
        mean = total / count
        if sync:
            mean = trainer.strategy.reduce(mean.to(trainer.strategy.root_device), "mean").cpu()
        metrics[name] = mean
    trainer.callback_metrics.update(metrics)
    trainer._eval_sums = {}
    return metrics


def _floats(metrics: dict[str, torch.Tensor]) -> dict[str, float]:
    return {k: float(v) for k, v in metrics.items() if v.numel() == 1}


def dump_checkpoint(trainer: Trainer) -> dict[str, Any]:
    """Everything needed to resume: weights, optimizers, schedulers, precision, loop state."""
    strategy, state = trainer.strategy, trainer.state
    return {
        "state_dict": strategy.module_state_dict(),
        "optimizer_states": [opt.state_dict() for opt in strategy.optimizers],
        "lr_schedulers": [config["scheduler"].state_dict() for config in strategy.lr_scheduler_configs],
        "precision": strategy.precision.state_dict(),
        "callbacks": {type(cb).__qualname__: cb.state_dict() for cb in trainer.callbacks},
        "epoch": state.epoch + 1 if state.epoch_done else state.epoch,
        "step_in_epoch": 0 if state.epoch_done else state.step_in_epoch,
        "global_step": state.global_step,
    }


def restore_checkpoint(trainer: Trainer, path: Any) -> None:
    """Load a checkpoint after ``strategy.setup`` (``weights_only=True``)."""
    strategy, state = trainer.strategy, trainer.state
    trainer._record("strategy.load_checkpoint")
    checkpoint = strategy.load_checkpoint(path)
    strategy.load_module_state_dict(checkpoint["state_dict"])
    if state.stage != "fit":
        return
    for optimizer, saved in zip(strategy.optimizers, checkpoint.get("optimizer_states", [])):
        optimizer.load_state_dict(saved)
    for config, saved in zip(strategy.lr_scheduler_configs, checkpoint.get("lr_schedulers", [])):
        config["scheduler"].load_state_dict(saved)
    strategy.precision.load_state_dict(checkpoint.get("precision", {}))
    for callback in trainer.callbacks:
        callback.load_state_dict(checkpoint.get("callbacks", {}).get(type(callback).__qualname__, {}))
    state.epoch = checkpoint.get("epoch", 0)
    state.step_in_epoch = checkpoint.get("step_in_epoch", 0)
    state.global_step = checkpoint.get("global_step", 0)
