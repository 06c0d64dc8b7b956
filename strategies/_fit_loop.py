"""The fit loop: sanity check, epochs, batches, validation checks, schedulers, stopping (Lightning 2.x's order)."""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from strategies._data import EvalLoaders, batch_count, set_sampler_epoch
from strategies._evaluation import batches, isolate_rng, run_evaluation
from strategies._optimization import manual_step
from strategies._progress import bar_for
from strategies.module import TrainModule, _has_own

if TYPE_CHECKING:
    from strategies.trainer import Trainer

_INF = float("inf")


class FitLoop:
    """Runs ``fit`` in one process after ``on_fit_start``; the Trainer holds the settings and state."""

    def __init__(self, trainer: Trainer) -> None:
        self.trainer = trainer
        self.train_loader: Any = None
        self.val_data: EvalLoaders | None = None
        self.num_batches: int | float = _INF
        self.val_check_batch: int | float = _INF
        self.total_batch_idx = 0
        self._train_loaded_epoch: float = -_INF
        self._val_loaded_epoch: float = -_INF
        self.progress = bar_for(trainer, trainer.enable_progress_bar and trainer.is_global_zero)

    def run(self) -> None:
        """Sanity check, then ``on_train_start``, the epochs, ``on_train_end``."""
        trainer = self.trainer
        with isolate_rng():
            self._sanity_check()
        self._setup_train_data()
        if self._validation_enabled() and self.val_data is None:
            self._val_data()
        if self._done():
            return
        trainer.hooks.fire("on_train_start")
        while not self._done():
            with trainer.profiler.profile("run_training_epoch"):
                self._epoch()
        self.progress.close()
        trainer.hooks.fire("on_train_end")

    # -- setup ------------------------------------------------------------------------------

    def _validation_enabled(self) -> bool:
        trainer = self.trainer
        return _has_own(trainer.strategy.module, "validation_step", TrainModule) and trainer.limits["val"] != 0

    def _sanity_check(self) -> None:
        trainer = self.trainer
        if not self._validation_enabled() or trainer.num_sanity_val_steps == 0 or trainer.state.global_step > 0:
            return
        trainer.sanity_checking = True
        with trainer.hooks.event("on_sanity_check_start"):
            trainer.hooks.callbacks("on_sanity_check_start")
        self._val_data()
        if self.val_data is not None:
            limits = [min(trainer.num_sanity_val_steps, limit) for limit in self.val_data.limits]
            run_evaluation(trainer, "val", self.val_data, limits, metrics_kind="sanity")
        with trainer.hooks.event("on_sanity_check_end"):
            trainer.hooks.callbacks("on_sanity_check_end")
        trainer.sanity_checking = False

    def _reload_due(self, loaded_epoch: float) -> bool:
        """``reload_dataloaders_every_n_epochs``: whether loaders fetched at ``loaded_epoch`` are due again."""
        every = self.trainer.reload_dataloaders_every_n_epochs
        return bool(every) and self.trainer.state.epoch - loaded_epoch >= every

    def _val_data(self) -> EvalLoaders | None:
        """The validation loaders, fetched again when ``reload_dataloaders_every_n_epochs`` says so."""
        if self.val_data is None or self._reload_due(self._val_loaded_epoch):
            self.val_data = self.trainer.hooks.eval_loaders("val")
            self._val_loaded_epoch = self.trainer.state.epoch
        return self.val_data

    def _setup_train_data(self, reload: bool = False) -> None:
        trainer = self.trainer
        self.train_loader = trainer.hooks.train_loader(reload=reload)
        self._train_loaded_epoch = trainer.state.epoch
        if self.train_loader is None:
            raise ValueError(
                "No training data: pass `train_dataloaders` to `fit`, a DataModule with `train_dataloader`, "
                "or define `train_dataloader` on the module."
            )
        self.num_batches = batch_count(self.train_loader, trainer.limits["train"])
        trainer.num_training_batches = self.num_batches
        interval = trainer.val_check_interval
        if isinstance(interval, int):
            if (
                interval > self.num_batches
                and trainer.check_val_every_n_epoch is not None
                and self._validation_enabled()
            ):
                raise ValueError(
                    f"`val_check_interval={interval}` is more than the {self.num_batches} training batches of an "
                    "epoch. Use a smaller value, or `check_val_every_n_epoch=None` to count batches over epochs."
                )
            self.val_check_batch = interval
        elif self.num_batches == _INF:
            if interval != 1.0:
                raise ValueError("A training loader without a length needs `val_check_interval` as 1.0 or an int.")
        else:
            self.val_check_batch = max(1, int(self.num_batches * interval))

    # -- stopping ------------------------------------------------------------------------------

    def _can_stop_early(self) -> bool:
        trainer, state = self.trainer, self.trainer.state
        return state.epoch >= (trainer.min_epochs or 0) and state.global_step >= (trainer.min_steps or 0)

    def _max_steps_reached(self) -> bool:
        return 0 <= self.trainer.max_steps <= self.trainer.state.global_step

    def _done(self) -> bool:
        trainer, state = self.trainer, self.trainer.state
        if self.num_batches == 0 or self._max_steps_reached():
            return True
        if trainer.max_epochs != -1 and state.epoch >= trainer.max_epochs:
            return True
        return state.should_stop and self._can_stop_early()

    # -- one epoch ------------------------------------------------------------------------------

    def _epoch(self) -> None:
        trainer, state = self.trainer, self.trainer.state
        if self._reload_due(self._train_loaded_epoch):
            self._setup_train_data(reload=True)
        set_sampler_epoch(self.train_loader, state.epoch)
        trainer.metrics.reset("train")
        trainer.hooks.fire("on_train_epoch_start")
        skip, finished = state.step_in_epoch, False
        profiler = trainer.hooks.active_profiler
        fetch = "[_TrainingEpochLoop].train_dataloader_next"
        for batch_idx, batch, is_last in batches(self.train_loader, self.num_batches, profiler, fetch):
            if batch_idx < skip:
                finished = is_last
                continue
            if self._max_steps_reached() or (state.should_stop and self._can_stop_early()):
                break
            if self._batch(batch, batch_idx, is_last):
                break
            finished = is_last
        self._epoch_end(finished)

    def _epoch_end(self, finished: bool) -> None:
        trainer, state = self.trainer, self.trainer.state
        # A checkpoint saved from here on resumes at the next epoch when this one ran all its batches.
        state.epoch_done = finished
        hooks = trainer.hooks
        with hooks.event("on_train_epoch_end"):  # the monitoring callbacks see the epoch's metrics
            trainer.metrics.epoch_preview("train")
            hooks.callbacks("on_train_epoch_end", monitoring=False)
            hooks.module("on_train_epoch_end")
            trainer.metrics.epoch_end("train")
            hooks.callbacks("on_train_epoch_end", monitoring=True)
        if finished:
            self._step_schedulers("epoch", plateau=True)
        state.epoch_done = False
        state.epoch += 1
        state.step_in_epoch = 0

    # -- one batch --------------------------------------------------------------------------------

    def _batch(self, batch: Any, batch_idx: int, is_last: bool) -> bool:
        """One training batch; True ends the epoch (``on_train_batch_start`` returned -1)."""
        trainer, state = self.trainer, self.trainer.state
        state.is_last_batch = is_last
        hooks = trainer.hooks
        batch = trainer.metrics.current_batch = hooks.transfer_batch(batch)
        if hooks.fire("on_train_batch_start", batch, batch_idx) == -1:
            return True
        accumulating = (batch_idx + 1) % trainer.accumulate_grad_batches != 0 and not is_last
        with trainer.profiler.profile("run_training_batch"):
            if trainer.strategy.module.automatic_optimization:
                output = trainer.optimization.step(batch, batch_idx, accumulating)
            else:
                output = manual_step(trainer, batch, batch_idx)
        if not accumulating:
            self._step_schedulers("step", plateau=False, batch_idx=batch_idx)
        if is_last:
            self._step_schedulers("epoch", plateau=False)
        # Counted before the batch-end hooks, so a checkpoint saved there resumes after this batch.
        state.step_in_epoch = batch_idx + 1
        with hooks.event("on_train_batch_end"):
            hooks.callbacks("on_train_batch_end", output, batch, batch_idx)
            hooks.module("on_train_batch_end", output, batch, batch_idx)
            trainer.metrics.batch_end("train")
        if self.progress.enabled:
            total = None if self.num_batches == _INF else int(self.num_batches)
            self.progress.update("train", state.epoch, batch_idx + 1, total, trainer.progress_bar_metrics)
        if self.val_data is not None and self._should_validate(batch_idx, is_last):
            if not accumulating:
                hooks.module("on_validation_model_zero_grad")
            val_data = self._val_data()
            if val_data is not None:
                run_evaluation(trainer, "val", val_data)
        if not accumulating:
            self._step_schedulers("step", plateau=True, batch_idx=batch_idx)
        self.total_batch_idx += 1
        return False

    def _should_validate(self, batch_idx: int, is_last: bool) -> bool:
        trainer = self.trainer
        every = trainer.check_val_every_n_epoch
        if self.val_data is None or not self._validation_enabled():
            return False
        if every is not None and (trainer.state.epoch + 1) % every != 0:
            return False
        if is_last and self.val_check_batch == _INF:
            return True
        if trainer.state.should_stop and self._can_stop_early():
            return True
        if self.val_check_batch == _INF:
            return False
        current = self.total_batch_idx if every is None else batch_idx
        return (current + 1) % self.val_check_batch == 0

    def _step_schedulers(self, interval: str, plateau: bool, batch_idx: int = 0) -> None:
        trainer = self.trainer
        if not trainer.strategy.module.automatic_optimization:
            return
        for config in trainer.strategy.lr_scheduler_configs:
            if config["interval"] != interval or config["reduce_on_plateau"] != plateau:
                continue
            index = (batch_idx if interval == "step" else trainer.state.epoch) + 1
            if index % config["frequency"]:
                continue
            metric = None
            if plateau:
                metric = trainer.callback_metrics.get(config["monitor"])
                if metric is None:
                    message = (
                        f"`ReduceLROnPlateau` watches `{config['monitor']}`, which was not logged; logged: "
                        f"{sorted(trainer.callback_metrics)}. Log it with `self.log`, or set 'strict': False."
                    )
                    if config["strict"]:
                        raise RuntimeError(message)
                    warnings.warn(message, RuntimeWarning, stacklevel=2)
                    continue
            trainer.hooks.module("lr_scheduler_step", config["scheduler"], metric)
