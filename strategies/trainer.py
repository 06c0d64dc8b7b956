"""The Trainer: drives a module through the lifecycle contract on any strategy."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch

from strategies import _loops, _preflight
from strategies._connector import resolve_strategy
from strategies.callbacks import Callback, HookCall, HookRecorder
from strategies.module import DataModule, TrainModule, _has_own
from strategies.parallel import ParallelStrategy
from strategies.precision import Precision
from strategies.registry import StrategyRegistry
from strategies.strategy import Strategy

STAGES = ("fit", "validate", "test", "predict")


@dataclass
class TrainerState:
    """Where a run is: the stage, the epoch and the number of optimizer steps done."""

    stage: str | None = None
    epoch: int = 0
    global_step: int = 0
    step_in_epoch: int = 0
    epoch_done: bool = False
    should_stop: bool = False


class Trainer:
    """Runs ``fit``/``validate``/``test``/``predict`` with the setup-inside-dist lifecycle.

    Per process: launch -> ``strategy.setup_environment()`` (process group) -> ``prepare_data``
    (local rank 0, then a barrier) -> ``setup(stage)`` hooks -> ``configure_model`` in
    ``model_sharded_context()`` -> ``strategy.setup(trainer)`` (move, wrap, optimizers) -> loops
    -> ``teardown(stage)`` hooks -> ``strategy.teardown()``. See docs/lifecycle.md.

    Args:
        strategy: a registry name (``"auto"``, ``"single_device"``, ``"ddp"``, ``"ddp_spawn"``, ...)
            or a ``Strategy``.
        accelerator: ``"auto"``, ``"cpu"``, ``"cuda"`` (``"gpu"``) or an ``Accelerator``.
        devices: a count, ``-1`` for all, ``"auto"``, or a list of CUDA indices.
        num_nodes: machines; more than one needs torchrun or SLURM.
        precision: ``"32-true"``, ``"bf16-mixed"`` or ``"16-mixed"`` (CUDA).
        max_epochs: epochs to train (1000 when neither this nor ``max_steps`` is set).
        max_steps: optimizer steps to train; ``-1`` for no limit.
        limit_train_batches: a count or a fraction of each training epoch's batches.
        limit_val_batches: the same for validation.
        limit_test_batches: the same for testing.
        limit_predict_batches: the same for prediction.
        callbacks: ``Callback`` instances.
        plugins: a ``ClusterEnvironment`` and/or a ``Precision``.
        use_distributed_sampler: give plain DataLoaders a ``DistributedSampler`` on parallel
            strategies.
        enable_progress_bar: a progress bar on rank 0 when stderr is a terminal.
        gradient_clip_val: clip the gradient norm to this value.
        check_val_every_n_epoch: validate every N training epochs.
        record_hooks: keep every lifecycle step and hook call in :attr:`hook_record`.
    """

    registry = StrategyRegistry()

    def __init__(
        self,
        *,
        strategy: str | Strategy = "auto",
        accelerator: str | Any = "auto",
        devices: int | str | list[int] = "auto",
        num_nodes: int = 1,
        precision: str | Precision = "32-true",
        max_epochs: int | None = None,
        max_steps: int = -1,
        limit_train_batches: int | float | None = None,
        limit_val_batches: int | float | None = None,
        limit_test_batches: int | float | None = None,
        limit_predict_batches: int | float | None = None,
        callbacks: list[Callback] | None = None,
        plugins: list[Any] | None = None,
        use_distributed_sampler: bool = True,
        enable_progress_bar: bool = True,
        gradient_clip_val: float | None = None,
        check_val_every_n_epoch: int = 1,
        record_hooks: bool = False,
    ) -> None:
        _preflight.check_max_epochs(max_epochs)
        self.strategy = resolve_strategy(
            strategy, accelerator, devices, num_nodes, precision, list(plugins or []), self.registry
        )
        self.max_epochs = max_epochs if max_epochs is not None else (1000 if max_steps == -1 else -1)
        self.max_steps = max_steps
        self.limits = {
            "train": limit_train_batches,
            "val": limit_val_batches,
            "test": limit_test_batches,
            "predict": limit_predict_batches,
        }
        self.callbacks = list(callbacks or [])
        self.use_distributed_sampler = use_distributed_sampler
        self.enable_progress_bar = enable_progress_bar
        self.gradient_clip_val = gradient_clip_val
        self.check_val_every_n_epoch = check_val_every_n_epoch
        self._recorder = HookRecorder() if record_hooks else None
        self.state = TrainerState()
        self.callback_metrics: dict[str, torch.Tensor] = {}
        self.datamodule: DataModule | None = None
        self._eval_sums: dict[str, list[Any]] = {}
        self._in_eval = False
        self._ckpt_path: str | None = None
        self.strategy._recorder = self._record

    # -- properties ---------------------------------------------------------------------------

    @property
    def global_rank(self) -> int:
        """This process's rank over all nodes."""
        return self.strategy.global_rank

    @property
    def local_rank(self) -> int:
        """This process's rank on its node."""
        return self.strategy.local_rank

    @property
    def world_size(self) -> int:
        """The number of processes."""
        return self.strategy.world_size

    @property
    def is_global_zero(self) -> bool:
        """Whether this is global rank 0."""
        return self.strategy.is_global_zero

    @property
    def accelerator(self) -> Any:
        """The strategy's accelerator."""
        return self.strategy.accelerator

    @property
    def precision(self) -> Precision:
        """The strategy's precision."""
        return self.strategy.precision

    @property
    def model(self) -> torch.nn.Module:
        """The module as the strategy runs it (wrapped)."""
        return self.strategy.model

    @property
    def module(self) -> torch.nn.Module:
        """The user's module."""
        return self.strategy.module

    @property
    def num_devices(self) -> int:
        """Devices (processes) per node."""
        if isinstance(self.strategy, ParallelStrategy):
            return self.strategy.num_processes
        return 1

    @property
    def hook_record(self) -> list[HookCall]:
        """Every lifecycle step and hook call of this process (``record_hooks=True``)."""
        if self._recorder is None:
            raise RuntimeError("The hook record is off: create the Trainer with `record_hooks=True`.")
        return self._recorder.calls

    # -- entry points -------------------------------------------------------------------------

    def fit(
        self,
        model: TrainModule,
        train_dataloaders: Any = None,
        val_dataloaders: Any = None,
        datamodule: DataModule | None = None,
        ckpt_path: str | os.PathLike | None = None,
    ) -> None:
        """Train ``model``; resume from ``ckpt_path`` when given."""
        if not _has_own(model, "training_step", TrainModule):
            raise NotImplementedError(
                f"`{type(model).__name__}` has no `training_step`: define "
                "`training_step(self, batch, batch_idx)` returning the loss to use `Trainer.fit`."
            )
        loaders = {"train": train_dataloaders, "val": val_dataloaders}
        self._launch("fit", model, loaders, datamodule, ckpt_path)

    def validate(self, model: TrainModule, dataloaders: Any = None, datamodule: DataModule | None = None,
                 ckpt_path: str | os.PathLike | None = None) -> list[dict[str, float]]:
        """Run the validation loop once; return the logged metrics."""
        return self._launch("validate", model, {"val": dataloaders}, datamodule, ckpt_path)

    def test(self, model: TrainModule, dataloaders: Any = None, datamodule: DataModule | None = None,
             ckpt_path: str | os.PathLike | None = None) -> list[dict[str, float]]:
        """Run the test loop once; return the logged metrics."""
        return self._launch("test", model, {"test": dataloaders}, datamodule, ckpt_path)

    def predict(self, model: TrainModule, dataloaders: Any = None, datamodule: DataModule | None = None,
                ckpt_path: str | os.PathLike | None = None) -> list[Any]:
        """Run ``predict_step`` over the data; return this rank's outputs (rank 0's for spawn)."""
        return self._launch("predict", model, {"predict": dataloaders}, datamodule, ckpt_path)

    def save_checkpoint(self, path: str | os.PathLike) -> None:
        """Save weights, optimizer and loop state to ``path`` (written by rank 0; all ranks call it)."""
        self.strategy.save_checkpoint(_loops.dump_checkpoint(self), path)
        self.strategy.barrier("save_checkpoint")

    # -- the lifecycle ------------------------------------------------------------------------

    def _launch(self, stage: str, model: TrainModule, loaders: dict[str, Any], datamodule: DataModule | None,
                ckpt_path: Any) -> Any:
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"`Trainer.{stage}` needs a `TrainModule` (an nn.Module); got `{type(model).__name__}`.")
        _preflight.check_checkpoint(ckpt_path, model)
        if isinstance(self.strategy, ParallelStrategy):
            self.strategy.check_process_group()
        launcher = self.strategy.launcher
        args = (stage, model, loaders, datamodule, ckpt_path)
        if launcher is None:
            return self._run(*args)
        self._caller_module = model
        return launcher.launch(self._run, *args, trainer=self)

    def _record(self, name: str) -> None:
        if self._recorder is not None:
            self._recorder.record(self.global_rank, self.state.stage or "", name)

    def _call(self, owner: str, obj: Any, hook: str, *args: Any) -> Any:
        self._record(f"{owner}.{hook}")
        return getattr(obj, hook)(*args)

    def _call_callbacks(self, hook: str, *args: Any) -> None:
        for callback in self.callbacks:
            self._call("callback", callback, hook, self, self.strategy.module, *args)

    def _run(self, stage: str, model: TrainModule, loaders: dict[str, Any], datamodule: DataModule | None,
             ckpt_path: Any) -> Any:
        self.state = TrainerState(stage=stage)
        self.datamodule = datamodule
        model._trainer = self
        if datamodule is not None:
            datamodule.trainer = self
        strategy = self.strategy
        self._record("strategy.connect")
        strategy.connect(model)
        try:
            self._record("strategy.setup_environment")
            strategy.setup_environment()
            if self.local_rank == 0:
                if datamodule is not None:
                    self._call("datamodule", datamodule, "prepare_data")
                self._call("module", model, "prepare_data")
            strategy.barrier("prepare_data")
            self._call_callbacks("setup", stage)
            self._call("module", model, "setup", stage)
            if datamodule is not None:
                self._call("datamodule", datamodule, "setup", stage)
            strategy.barrier("post_setup")
            with strategy.model_sharded_context(), strategy.precision.module_init_context():
                self._call("module", model, "configure_model")
            self._record("strategy.setup")
            strategy.setup(self)
            if ckpt_path is not None:
                _loops.restore_checkpoint(self, ckpt_path)
            result = _loops.run_stage(self, stage, model, loaders, datamodule)
            self._call_callbacks("teardown", stage)
            self._call("module", model, "teardown", stage)
            if datamodule is not None:
                self._call("datamodule", datamodule, "teardown", stage)
            return result
        finally:
            self._record("strategy.teardown")
            strategy.teardown()
            self._in_eval = False

    # -- spawn result transfer ----------------------------------------------------------------

    def _worker_output(self, results: Any) -> dict[str, Any]:
        """What rank 0 of a spawned run sends back to the caller (plain data for weights_only)."""
        record = [tuple(c) for c in self._recorder.calls] if self._recorder is not None else []
        return {
            "state_dict": {k: v.detach().cpu() for k, v in self.strategy.module.state_dict().items()},
            "callback_metrics": {k: v.detach().cpu() for k, v in self.callback_metrics.items()},
            "results": results,
            "hook_record": record,
            "global_step": self.state.global_step,
            "epoch": self.state.epoch,
        }

    def _recover_worker_output(self, output: dict[str, Any]) -> None:
        """Update the caller's module and metrics from rank 0's output."""
        module = self._caller_module
        if module is not None:
            module.load_state_dict(output["state_dict"], strict=False)
        self.callback_metrics.update(output["callback_metrics"])
        self.state.global_step = output["global_step"]
        self.state.epoch = output["epoch"]
        if self._recorder is not None:
            self._recorder.calls.extend(HookCall(*c) for c in output["hook_record"])

    def _log(self, name: str, value: Any, sync_dist: bool) -> None:
        _loops.log_metric(self, name, value, sync_dist)

    _caller_module: TrainModule | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_caller_module"] = None
        return state
