"""The Trainer: drives a module through the lifecycle contract on any strategy, with Lightning 2.x's hooks."""

from __future__ import annotations

import datetime
import os
import signal
import sys
import threading
import warnings
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import torch

from strategies import _arguments, _preflight
from strategies._checkpoint import dump_checkpoint, resolve_last, restore_checkpoint, select_ckpt_path
from strategies._connector import resolve_strategy
from strategies._data import EvalLoaders
from strategies._evaluation import run_evaluation
from strategies._fit_loop import FitLoop
from strategies._hook_calls import _LOADER_HOOK, HookCaller
from strategies._logging import TrainerMetrics, _LoggerProperties
from strategies._optimization import AutomaticOptimization, OptimizerProxy
from strategies._progress import ProgressBar
from strategies._results_table import print_results
from strategies._summary import model_summary
from strategies._trainer_properties import _TrainerProperties
from strategies.accelerators import Accelerator
from strategies.callbacks import Callback, HookCall
from strategies.loggers import Logger
from strategies.model_summary import ModelSummary
from strategies.module import DataModule, TrainModule, _has_own
from strategies.parallel import ParallelStrategy
from strategies.precision import Precision
from strategies.prediction_writer import PredictLoop
from strategies.profilers import Profiler, resolve_profiler
from strategies.registry import StrategyRegistry
from strategies.strategy import Strategy
from strategies.timer import Timer
from strategies.utilities.rank_zero import rank_zero_info

__all__ = ["HookCaller", "Trainer", "TrainerMetrics", "TrainerState"]

STAGES = ("fit", "validate", "test", "predict")
_KIND = {"validate": "val", "test": "test", "predict": "predict"}


@dataclass
class TrainerState:
    """Where a run is: the stage, the epoch and the number of optimizer steps done."""

    stage: str | None = None
    epoch: int = 0
    global_step: int = 0
    step_in_epoch: int = 0
    epoch_done: bool = False
    should_stop: bool = False
    is_last_batch: bool = False
    """Whether the training batch running is the epoch's last (``trainer.is_last_batch``)."""
    interrupted: bool = False
    """Whether the run ended by an exception (``trainer.interrupted``)."""
    forward_only: bool = False
    """Training batches run ``training_step`` with no zero-grad and no backward (the batch-norm epoch
    of ``StochasticWeightAveraging``, which also accumulates over the whole epoch)."""
    evaluating: str | None = None
    """The evaluation loop running now (``"val"``, ``"test"``, ``"predict"``; also the validation in ``fit``)."""

    @property
    def fn(self) -> str | None:
        """The entry point running (``"fit"``, ``"validate"``, ``"test"``, ``"predict"``): Lightning
        2.6's ``trainer.state.fn``, which compares equal to these strings."""
        return self.stage


class Trainer(_TrainerProperties, _LoggerProperties):
    """Runs ``fit``/``validate``/``test``/``predict`` with Lightning 2.x's hooks, on any strategy.

    Per process: launch -> ``strategy.setup_environment()`` (process group) -> ``prepare_data``
    (local rank 0) -> ``setup(stage)`` (datamodule, callbacks, module) -> ``configure_model`` in
    ``model_sharded_context()`` -> ``strategy.setup(trainer)`` (move, wrap, optimizers) -> loops
    -> ``strategy.teardown()`` -> ``on_fit_end`` -> ``teardown(stage)``. docs/lifecycle.md has the
    order of every hook; docs/strategies.md each argument and what differs from Lightning.

    Args:
        strategy: a registry name (``"auto"``, ``"single_device"``, ``"ddp"``, ``"ddp_spawn"``, ...)
            or a ``Strategy``.
        accelerator: ``"auto"``, ``"cpu"``, ``"cuda"`` (``"gpu"``) or an ``Accelerator``.
        devices: a count, ``-1`` for all, ``"auto"``, or a list of CUDA indices.
        num_nodes: machines; more than one needs torchrun or SLURM.
        precision: any name Lightning 2.6 takes: ``"32-true"``, ``"16-mixed"`` (CUDA), ``"bf16-mixed"``,
            ``"16-true"``, ``"bf16-true"``, ``"64-true"``, or ``16``, ``"16"``, ``"bf16"``, ``32``, ``64``.
        enable_model_summary: print a table of the module's layers and parameter counts on rank 0
            when a fit starts (on by default, as in Lightning).
        logger: ``True`` (the default logger: TensorBoard when installed, else CSV), ``False``, a
            ``Logger`` or a list of them, as in Lightning.
        enable_checkpointing: add a default ``ModelCheckpoint`` when none is given (on by default).
        default_root_dir: where logs and checkpoints go (the working directory by default).
        log_every_n_steps: how often training metrics reach the loggers (50 by default).
        enable_progress_bar: a tqdm bar on rank 0 when stdout is a terminal (on by default).
        callbacks: ``Callback`` instances.
        fast_dev_run: run 1 (``True``) or N batches of each loop, no sanity check, no loggers/checkpoints.
        max_epochs: epochs to train; ``-1`` for no limit; 1000 when no limit at all is given.
        min_epochs: train at least this many epochs, whatever stops it earlier.
        max_steps: optimizer steps to train; ``-1`` for no limit.
        min_steps: train at least this many optimizer steps.
        max_time: stop after this long: ``"DD:HH:MM:SS"``, a ``timedelta`` or a dict.
        limit_train_batches: a count or a fraction of each training epoch's batches.
        limit_val_batches: the same for validation.
        limit_test_batches: the same for testing.
        limit_predict_batches: the same for prediction.
        val_check_interval: validate every fraction of an epoch (float) or every N batches (int).
        check_val_every_n_epoch: validate every N epochs (``None``: count ``val_check_interval`` over epochs).
        num_sanity_val_steps: validation batches run before training (2; -1 for all, 0 for none).
        accumulate_grad_batches: step the optimizer every N batches (DDP/FSDP skip the gradient sync between).
        gradient_clip_val: clip gradients to this value.
        gradient_clip_algorithm: clip by ``"norm"`` (default) or ``"value"``.
        deterministic: torch's deterministic algorithms (``True`` or ``"warn"``).
        benchmark: cuDNN benchmark mode.
        inference_mode: evaluate under ``torch.inference_mode`` (else ``torch.no_grad``).
        use_distributed_sampler: give plain DataLoaders a ``DistributedSampler`` on parallel strategies.
        sync_batchnorm: turn BatchNorm layers into ``SyncBatchNorm`` before wrapping (parallel strategies).
        plugins: a ``ClusterEnvironment`` and/or a ``Precision``.
        overfit_batches: train and validate on this many batches (an int) or this fraction (a float)
            of each epoch, always the same ones: shuffling is turned off, with a warning.
        profiler: ``"simple"``, ``"advanced"`` or a ``strategies.Profiler``: time each hook, step and
            batch fetch, and report when a run ends (None: no profiling).
        detect_anomaly: run the loops under ``torch.autograd.set_detect_anomaly``.
        barebones: turn off everything that costs speed (checkpoints, loggers and ``self.log``, the
            progress bar, the summary, the sanity check), to measure the Trainer's own overhead;
            turning one of them on as well is an error.
        reload_dataloaders_every_n_epochs: fetch the training and validation loaders again every N
            epochs (0: once a run).
        record_hooks: keep every lifecycle step and hook call in ``hook_record``.

    Attributes:
        hooks: the ``HookCaller`` every hook call goes through (an instance of ``hooks_class``).
        metrics: the ``TrainerMetrics`` that ``self.log`` feeds (an instance of ``metrics_class``).
        optimization: the ``AutomaticOptimization`` that runs each batch of automatic
            optimization (an instance of ``optimization_class``).
        registry: the ``StrategyRegistry`` the ``strategy`` names are looked up in.

    A subclass extends the Trainer through these four class attributes (``hooks_class``,
    ``metrics_class``, ``optimization_class``, ``registry``); docs/strategies.md ("Extending the
    Trainer") shows how.
    """

    registry = StrategyRegistry()
    hooks_class: type[HookCaller] = HookCaller
    metrics_class: type[TrainerMetrics] = TrainerMetrics
    optimization_class: type[AutomaticOptimization] = AutomaticOptimization

    def __init__(
        self,
        *,
        strategy: str | Strategy = "auto",
        accelerator: str | Accelerator = "auto",
        devices: int | str | list[int] = "auto",
        num_nodes: int = 1,
        precision: str | int | Precision = "32-true",
        logger: Logger | Iterable[Logger] | bool | None = None,
        callbacks: list[Callback] | Callback | None = None,
        fast_dev_run: int | bool = False,
        max_epochs: int | None = None,
        min_epochs: int | None = None,
        max_steps: int = -1,
        min_steps: int | None = None,
        max_time: str | datetime.timedelta | dict[str, int] | None = None,
        limit_train_batches: float | None = None,
        limit_val_batches: float | None = None,
        limit_test_batches: float | None = None,
        limit_predict_batches: float | None = None,
        val_check_interval: float | None = None,
        check_val_every_n_epoch: int | None = 1,
        num_sanity_val_steps: int | None = None,
        log_every_n_steps: int | None = None,
        enable_checkpointing: bool | None = None,
        enable_progress_bar: bool | None = None,
        enable_model_summary: bool | None = None,
        accumulate_grad_batches: int = 1,
        gradient_clip_val: float | None = None,
        gradient_clip_algorithm: str | None = None,
        deterministic: bool | str | None = None,
        benchmark: bool | None = None,
        inference_mode: bool = True,
        use_distributed_sampler: bool = True,
        sync_batchnorm: bool = False,
        default_root_dir: str | Path | None = None,
        plugins: list[Any] | Any | None = None,
        overfit_batches: float = 0.0,
        profiler: Profiler | str | None = None,
        detect_anomaly: bool = False,
        barebones: bool = False,
        reload_dataloaders_every_n_epochs: int = 0,
        record_hooks: bool = False,
    ) -> None:
        self.barebones = bool(barebones)
        if self.barebones:
            _arguments.check_barebones(
                {
                    "enable_checkpointing": enable_checkpointing,
                    "logger": logger,
                    "enable_progress_bar": enable_progress_bar,
                    "log_every_n_steps": log_every_n_steps,
                    "enable_model_summary": enable_model_summary,
                    "num_sanity_val_steps": num_sanity_val_steps,
                    "fast_dev_run": fast_dev_run,
                    "detect_anomaly": detect_anomaly,
                    "profiler": profiler,
                }
            )
            enable_checkpointing, logger, enable_progress_bar, enable_model_summary = False, False, False, False
            log_every_n_steps, num_sanity_val_steps = 0, 0
        self.detect_anomaly = bool(detect_anomaly)
        self.profiler = resolve_profiler(profiler)
        self.reload_dataloaders_every_n_epochs = _arguments.check_reload_every(reload_dataloaders_every_n_epochs)
        overfit = _arguments.batch_limit(overfit_batches, "overfit_batches")
        self.overfit_batches: int | float = 0.0 if overfit is None else overfit
        _preflight.check_max_epochs(max_epochs)
        _arguments.check_steps_and_epochs(max_steps, min_steps, min_epochs)
        _arguments.check_val_schedule(val_check_interval, check_val_every_n_epoch)
        _arguments.check_gradient_clip_val(gradient_clip_val)
        limits = tuple(
            _arguments.batch_limit(value, f"limit_{stage}_batches")
            for stage, value in zip(
                ("train", "val", "test", "predict"),
                (limit_train_batches, limit_val_batches, limit_test_batches, limit_predict_batches),
                strict=True,
            )
        )
        val_check_interval = _arguments.batch_limit(val_check_interval, "val_check_interval")
        self.strategy = resolve_strategy(
            strategy, accelerator, devices, num_nodes, precision, list(plugins or []), self.registry
        )
        self.fast_dev_run = _arguments.fast_dev_run_batches(fast_dev_run)
        self._configure_loops(
            max_epochs=max_epochs,
            min_epochs=min_epochs,
            max_steps=max_steps,
            min_steps=min_steps,
            max_time=max_time,
            limits=limits,
            val_check_interval=val_check_interval,
            check_val_every_n_epoch=check_val_every_n_epoch,
            num_sanity_val_steps=num_sanity_val_steps,
            accumulate_grad_batches=accumulate_grad_batches,
        )
        self.gradient_clip_val = gradient_clip_val
        self.gradient_clip_algorithm = gradient_clip_algorithm or "norm"
        _arguments.check_loop_arguments(
            self.accumulate_grad_batches,
            self.val_check_interval,
            self.num_sanity_val_steps,
            gradient_clip_algorithm,
            self.check_val_every_n_epoch,
        )
        self._determinism = (deterministic, benchmark)
        _arguments.apply_determinism(deterministic, benchmark)
        self.inference_mode = inference_mode
        self.use_distributed_sampler = use_distributed_sampler
        self.sync_batchnorm = sync_batchnorm
        self.enable_progress_bar = True if enable_progress_bar is None else enable_progress_bar
        self.enable_model_summary = True if enable_model_summary is None else enable_model_summary
        self._check_strategy_support()
        self.hooks = self.hooks_class(self, record_hooks=record_hooks)
        self.metrics = self.metrics_class(self)
        self.optimization = self.optimization_class(self)
        self.callbacks = _ordered([callbacks] if isinstance(callbacks, Callback) else list(callbacks or []))
        self._configure_timer()
        bars = [type(cb).__name__ for cb in self.callbacks if isinstance(cb, ProgressBar)]
        if bars and not self.enable_progress_bar:
            raise ValueError(
                f"`Trainer(enable_progress_bar=False)` with a `{bars[0]}` in `callbacks`: drop one of them "
                "(`TQDMProgressBar(refresh_rate=0)` also hides the bar)."
            )
        self._configure_logging(
            logger=False if self.fast_dev_run else logger,
            enable_checkpointing=False if self.fast_dev_run else enable_checkpointing,
            default_root_dir=default_root_dir,
            log_every_n_steps=50 if log_every_n_steps is None else log_every_n_steps,
            enable_progress_bar=self.enable_progress_bar,
        )
        self._reset_run_state()
        self.predict_loop = PredictLoop()  # what prediction writers read (Lightning's attribute)
        self._fit_optimizers: tuple[list[torch.optim.Optimizer], list[dict[str, Any]]] = ([], [])
        self._ckpt_path: Any = None
        self._ckpt_user_managed = False
        self.strategy._recorder = self.hooks.record

    def _configure_timer(self) -> None:
        """``max_time``: a ``Timer(interval="step")`` among the callbacks, unless there is one (Lightning's rule)."""
        if self.max_time is None:
            return
        if any(isinstance(cb, Timer) for cb in self.callbacks):
            rank_zero_info("Ignoring `Trainer(max_time=...)`, callbacks list already contains a Timer.")
            return
        self.callbacks = _ordered([*self.callbacks, Timer(datetime.timedelta(seconds=self.max_time), "step")])

    def _configure_loops(
        self,
        *,
        max_epochs: int | None,
        min_epochs: int | None,
        max_steps: int,
        min_steps: int | None,
        max_time: Any,
        limits: tuple[Any, ...],
        val_check_interval: Any,
        check_val_every_n_epoch: int | None,
        num_sanity_val_steps: int | None,
        accumulate_grad_batches: int,
    ) -> None:
        self.max_epochs = max_epochs if max_epochs is not None else (1000 if max_steps == -1 else -1)
        self.min_epochs, self.max_steps, self.min_steps = min_epochs, max_steps, min_steps
        self.max_time = _arguments.parse_max_time(max_time)
        self.val_check_interval = 1.0 if val_check_interval is None else val_check_interval
        self.check_val_every_n_epoch = check_val_every_n_epoch
        sanity = 2 if num_sanity_val_steps is None else num_sanity_val_steps
        self.num_sanity_val_steps: int | float = float("inf") if sanity == -1 else sanity
        self.accumulate_grad_batches = accumulate_grad_batches
        self.limits = dict(zip(("train", "val", "test", "predict"), limits, strict=True))
        if self.fast_dev_run:
            n = self.fast_dev_run
            self.limits = dict.fromkeys(self.limits, n)
            self.max_steps, self.max_epochs, self.num_sanity_val_steps = n, 1, 0
            self.val_check_interval, self.check_val_every_n_epoch = 1.0, 1
        if self.overfit_batches:  # the same batches each epoch, for training and for validation (Lightning's)
            self.limits["train"] = self.limits["val"] = self.overfit_batches

    def _limit(stage: str) -> property:  # type: ignore[misc]
        def fget(self: Any) -> int | float:
            value = self.limits[stage]
            return 1.0 if value is None else value  # None: every batch

        def fset(self: Any, value: int | float) -> None:
            self.limits[stage] = value

        return property(
            fget,
            fset,
            doc=f"``limit_{stage}_batches``: a count, or a fraction of the batches (as Lightning's attribute).",
        )

    limit_train_batches = _limit("train")
    limit_val_batches = _limit("val")
    limit_test_batches = _limit("test")
    limit_predict_batches = _limit("predict")
    del _limit

    def _check_strategy_support(self) -> None:
        from strategies.deepspeed import DeepSpeedStrategy

        if (
            self.sync_batchnorm
            and isinstance(self.strategy, ParallelStrategy)
            and self.strategy.root_device.type == "cpu"
        ):
            raise ValueError(
                "`sync_batchnorm=True` needs CUDA: torch's DistributedDataParallel refuses SyncBatchNorm on CPU. "
                "Drop it for CPU runs (BatchNorm then normalises over each rank's batch)."
            )
        if isinstance(self.strategy, DeepSpeedStrategy):
            if self.accumulate_grad_batches != 1:
                raise ValueError(
                    f"`accumulate_grad_batches={self.accumulate_grad_batches}` with DeepSpeed: set "
                    "`gradient_accumulation_steps` in `DeepSpeedStrategy(config=...)` instead (the engine accumulates)."
                )
            if self.strategy.precision.precision not in ("32-true", "bf16-mixed", "16-mixed"):
                raise ValueError(
                    f"`precision={self.strategy.precision.precision!r}` with DeepSpeed: use '32-true', 'bf16-mixed' "
                    "or '16-mixed' (the engine keeps its own low-precision weights)."
                )

    def _reset_run_state(self) -> None:
        self.state = TrainerState()
        self.datamodule: DataModule | None = None
        self.sanity_checking = False
        self.num_training_batches: int | float = float("inf")
        self._given_loaders: dict[str, Any] = {}
        self._eval_loaders: dict[str, EvalLoaders] = {}
        self._train_loader: Any = None
        self._optimizer_proxies: list[OptimizerProxy] = []
        self.hooks.current_fx = None

    # -- entry points -------------------------------------------------------------------------

    def fit(
        self,
        model: TrainModule,
        train_dataloaders: Any = None,
        val_dataloaders: Any = None,
        datamodule: DataModule | None = None,
        ckpt_path: str | os.PathLike[str] | None = None,
    ) -> None:
        """Train ``model``; resume from ``ckpt_path`` when given (a path, or ``"last"``: the newest last
        checkpoint of the ``ModelCheckpoint`` callbacks, none the first time; see docs/strategies.md)."""
        _require_step(model, "training_step", "fit")
        ckpt_path = self._managed_ckpt("fit", ckpt_path)
        self._launch("fit", model, {"train": train_dataloaders, "val": val_dataloaders}, datamodule, ckpt_path)

    def validate(
        self,
        model: TrainModule | None = None,
        dataloaders: Any = None,
        datamodule: DataModule | None = None,
        ckpt_path: str | os.PathLike[str] | None = None,
        verbose: bool = True,
    ) -> list[dict[str, float]]:
        """Run the validation loop once; return the epoch metrics, one dict per loader (``verbose``:
        print them as a table on rank 0, as Lightning does).

        Without ``model``, the previous run's module is used and, without ``ckpt_path``, the best
        checkpoint of that ``fit`` is loaded, as in Lightning (``ckpt_path``: a path, ``"best"`` or
        ``"last"``; see ``strategies._checkpoint.select_ckpt_path``). The same holds for ``test``
        and ``predict``.
        """
        model, ckpt_path = self._model_and_ckpt("validate", model, ckpt_path)
        _require_step(model, "validation_step", "validate")
        metrics = self._launch("validate", model, {"val": dataloaders}, datamodule, ckpt_path)
        return self._results(metrics, "validate", verbose)

    def test(
        self,
        model: TrainModule | None = None,
        dataloaders: Any = None,
        datamodule: DataModule | None = None,
        ckpt_path: str | os.PathLike[str] | None = None,
        verbose: bool = True,
    ) -> list[dict[str, float]]:
        """Run the test loop once; return the epoch metrics per loader (the arguments: see ``validate``)."""
        model, ckpt_path = self._model_and_ckpt("test", model, ckpt_path)
        _require_step(model, "test_step", "test")
        metrics = self._launch("test", model, {"test": dataloaders}, datamodule, ckpt_path)
        return self._results(metrics, "test", verbose)

    def _results(self, metrics: Any, stage: str, verbose: bool) -> list[dict[str, float]]:
        results = cast("list[dict[str, float]]", metrics or [])
        if verbose and self.is_global_zero and results:
            print_results(results, stage)
        return results

    def predict(
        self,
        model: TrainModule | None = None,
        dataloaders: Any = None,
        datamodule: DataModule | None = None,
        ckpt_path: str | os.PathLike[str] | None = None,
        return_predictions: bool | None = None,
    ) -> list[Any] | None:
        """Run ``predict_step`` over the data; return this rank's outputs (rank 0's for spawn).

        ``model`` and ``ckpt_path``: see ``validate``. ``return_predictions=False`` returns ``None``
        (the outputs are not kept: a ``BasePredictionWriter`` writes them).
        """
        model, ckpt_path = self._model_and_ckpt("predict", model, ckpt_path)
        self.predict_loop.return_predictions = return_predictions is not False
        outputs = self._launch("predict", model, {"predict": dataloaders}, datamodule, ckpt_path)
        return cast("list[Any]", outputs) if return_predictions is not False else None

    def save_checkpoint(self, path: str | os.PathLike[str], weights_only: bool = False) -> None:
        """Save weights, optimizer and loop state to ``path`` (written by rank 0; all ranks call it).

        ``weights_only=True`` leaves out the optimizer, scheduler, precision and callback states
        (the module's ``on_save_checkpoint`` still runs, and the hyperparameters are kept, so
        ``load_from_checkpoint`` works), as in Lightning 2.6.
        """
        with self.profiler.profile("save_checkpoint"):
            self.strategy.save_checkpoint(dump_checkpoint(self, weights_only=weights_only), path)
            self.strategy.barrier("save_checkpoint")

    @property
    def ckpt_path(self) -> Any:
        """The checkpoint the latest run loaded (``fit/validate/test/predict(ckpt_path=...)``, ``"best"``
        and ``"last"`` resolved to the file), None when it loaded none.

        Set it to load that file in every later run that is given no ``ckpt_path`` (until it is
        set to None), as in Lightning; a ``ckpt_path`` passed to a run wins, with a warning.
        """
        return self._ckpt_path

    @ckpt_path.setter
    def ckpt_path(self, ckpt_path: Any) -> None:
        self._ckpt_path = ckpt_path
        self._ckpt_user_managed = bool(ckpt_path)

    def _managed_ckpt(self, stage: str, ckpt_path: Any) -> Any:
        if not self._ckpt_user_managed:
            return ckpt_path
        if ckpt_path:
            warnings.warn(
                f"`trainer.ckpt_path = {self._ckpt_path!r}` was called but then you passed "
                f"`trainer.{stage}(ckpt_path={ckpt_path!r})`. The latter will be loaded.",
                UserWarning,
                stacklevel=3,
            )
            self._ckpt_path, self._ckpt_user_managed = None, False
            return ckpt_path
        return self._ckpt_path

    def _model_and_ckpt(self, stage: str, model: TrainModule | None, ckpt_path: Any) -> tuple[TrainModule, Any]:
        """The module to run (``model``, else the previous run's) and the checkpoint to load."""
        ckpt_path = self._managed_ckpt(stage, ckpt_path)
        provided = model is not None
        if model is None:
            model = self._caller_module or self.strategy._module  # type: ignore[assignment]
            if model is None:
                raise TypeError(
                    f"`Trainer.{stage}()` needs a model: pass one (`trainer.{stage}(model)`); only a Trainer "
                    "that ran a model before can reuse it."
                )
        return model, select_ckpt_path(self, stage, ckpt_path, provided)

    # -- the lifecycle ------------------------------------------------------------------------

    def _launch(
        self, stage: str, model: TrainModule, loaders: dict[str, Any], datamodule: DataModule | None, ckpt_path: Any
    ) -> Any:
        if not isinstance(model, torch.nn.Module):
            raise TypeError(f"`Trainer.{stage}` needs a `TrainModule` (an nn.Module); got `{type(model).__name__}`.")
        first = next(iter(loaders))
        if isinstance(loaders[first], DataModule):  # `fit(model, dm)`: Lightning takes it as the datamodule
            loaders, datamodule = {**loaders, first: None}, loaders[first]
        if ckpt_path != "last":  # "last" is looked up once the ranks can agree on it (in `_run`)
            _preflight.check_checkpoint(ckpt_path, model)
        if isinstance(self.strategy, ParallelStrategy):
            self.strategy.check_process_group()
        launcher = self.strategy.launcher
        args = (stage, model, loaders, datamodule, ckpt_path)
        self._ckpt_path = ckpt_path  # the workers' `_run` resolves "last"
        try:
            if launcher is None:
                return self._run(*args)
            self._caller_module = model
            return launcher.launch(self._run, *args, trainer=self)
        except KeyboardInterrupt:
            # As Lightning 2.6: the `on_exception` hooks and the teardown have run (`_run`), the
            # launcher has ended the other ranks; a second Ctrl-C cannot cut the shutdown short.
            rank_zero_info("\nDetected KeyboardInterrupt, attempting graceful shutdown ...")
            if threading.current_thread() is threading.main_thread():
                signal.signal(signal.SIGINT, signal.SIG_IGN)
            sys.exit(1)

    def _run(
        self, stage: str, model: TrainModule, loaders: dict[str, Any], datamodule: DataModule | None, ckpt_path: Any
    ) -> Any:
        self._start_run(stage, model, loaders, datamodule)
        strategy, hooks = self.strategy, self.hooks
        self.profiler.setup(stage, self.local_rank if self.world_size > 1 else None, self.log_dir)
        hooks.profile(self.profiler)
        hooks.record("strategy.connect")
        strategy.connect(model)
        self._attach_module_callbacks()
        try:
            hooks.record("strategy.setup_environment")
            strategy.setup_environment()
            self._prepare_data()
            self._setup_hooks(stage)
            self._configure_model()
            hooks.record("strategy.setup")
            strategy.setup(self)
            self._setup_optimizers()
            if ckpt_path == "last":
                ckpt_path = resolve_last(self, stage)
                _preflight.check_checkpoint(ckpt_path, model)
            self._ckpt_path = ckpt_path
            if ckpt_path is not None:
                restore_checkpoint(self, ckpt_path)
            self._on_fit_start()
            if self.barebones and stage == "fit":
                rank_zero_info(
                    "`Trainer(barebones=True)` started running. The progress bar is disabled so you might want to "
                    "manually print the progress in your model."
                )
            with torch.autograd.set_detect_anomaly(self.detect_anomaly):
                result = self._run_stage(stage)
        except BaseException as exception:
            self.state.interrupted = True
            self._on_exception(exception)
            if hooks.on_run_exception(exception):
                return None
            raise
        self._teardown_strategy()
        self._on_fit_end()
        self._teardown_hooks(stage)
        self.profiler.describe()
        return result

    def _start_run(
        self, stage: str, model: TrainModule, loaders: dict[str, Any], datamodule: DataModule | None
    ) -> None:
        previous = self.state
        self._reset_run_state()
        self.state.stage = stage
        if stage != "fit":  # Lightning keeps the fit's progress: validate/test/predict after fit log at its step
            self.state.epoch, self.state.global_step = previous.epoch, previous.global_step
        # A spawned worker sends back only this run's calls (its pickled record holds the caller's earlier ones).
        self._record_from = len(self.hooks.recorder.calls) if self.hooks.recorder is not None else 0
        self._given_loaders = {k: v for k, v in loaders.items() if v is not None}
        self.datamodule = datamodule
        model._trainer = self
        if datamodule is not None:
            datamodule.trainer = self
        _arguments.apply_determinism(*self._determinism)

    def _attach_module_callbacks(self) -> None:
        """``configure_callbacks``: the module's callbacks replace the Trainer's of the same type."""
        own = self.hooks.module("configure_callbacks")
        own = [own] if isinstance(own, Callback) else list(own or [])
        if own:
            types = {type(cb) for cb in own}
            self.callbacks = _ordered([cb for cb in self.callbacks if type(cb) not in types] + own)

    def _prepare_data(self) -> None:
        if self.local_rank == 0:
            self.hooks.datamodule("prepare_data")
            self.hooks.module("prepare_data")
        self.strategy.barrier("prepare_data")

    def _setup_hooks(self, stage: str) -> None:
        # As Lightning: each logger's experiment exists before the hooks, so a run-backed logger
        # (W&B, MLflow) has its version for ``ModelCheckpoint.setup``'s folder and for user code.
        for logger in self.loggers:
            if hasattr(logger, "experiment"):
                _ = logger.experiment
        with self.hooks.event("setup"):
            self.hooks.datamodule("setup", stage)
            self.hooks.callbacks("setup", stage)
            self.hooks.module("setup", stage)
        self.strategy.barrier("post_setup")

    def _configure_model(self) -> None:
        """``configure_model`` in the sharded context; then the precision's dtype and SyncBatchNorm, before wrapping."""
        strategy = self.strategy
        with strategy.model_sharded_context(), strategy.precision.module_init_context():
            self.hooks.module("configure_model")
        strategy.precision.convert_module(strategy.module)
        if self.sync_batchnorm and isinstance(strategy, ParallelStrategy):
            torch.nn.SyncBatchNorm.convert_sync_batchnorm(strategy.module)  # type: ignore[no-untyped-call]  # unannotated in torch

    def _setup_optimizers(self) -> None:
        if self.state.stage != "fit":
            return
        module = self.strategy.module
        if module.automatic_optimization:
            self.optimization.check(module, self.strategy.optimizers)
        self._optimizer_proxies = [OptimizerProxy(opt, self) for opt in self.strategy.optimizers]

    def _on_fit_start(self) -> None:
        if self.state.stage == "fit":
            # Lightning's default ModelSummary() callback, printed here rather than kept in `callbacks`
            # (the hook record lists the user's callbacks only); a ModelSummary given prints instead.
            if self.enable_model_summary and self.is_global_zero:
                if not any(isinstance(cb, ModelSummary) for cb in self.callbacks):
                    print(model_summary(self.strategy.module))
            self.hooks.fire("on_fit_start")

    def _run_stage(self, stage: str) -> Any:
        self.strategy.barrier("run_stage")
        self.strategy.module.zero_grad()
        if stage == "fit":
            FitLoop(self).run()
            return None
        kind = _KIND[stage]
        data = self.hooks.eval_loaders(kind)
        if data is None:
            raise ValueError(f"No data to {stage}: pass `dataloaders`, a DataModule, or define `{_LOADER_HOOK[kind]}`.")
        return run_evaluation(self, kind, data)

    def _on_exception(self, exception: BaseException) -> None:
        """``on_exception`` of the callbacks and the datamodule, loggers finalized as failed, then the teardown."""
        try:
            self.hooks.callbacks("on_exception", exception)
            if self.datamodule is not None and hasattr(self.datamodule, "on_exception"):
                self.hooks.datamodule("on_exception", exception)
            self._finalize_loggers("failed")
        finally:
            self._teardown_strategy()

    def _teardown_strategy(self) -> None:
        self.hooks.record("strategy.teardown")
        strategy = self.strategy
        if self.state.stage == "fit":  # kept for `trainer.optimizers` after the run, as in Lightning
            self._fit_optimizers = (list(strategy.optimizers), list(strategy.lr_scheduler_configs))
        strategy.teardown()
        self._optimizer_proxies = []

    def _on_fit_end(self) -> None:
        if self.state.stage == "fit":
            self.hooks.fire("on_fit_end")

    def _teardown_hooks(self, stage: str) -> None:
        with self.hooks.event("teardown"):
            self.hooks.datamodule("teardown", stage)
            self.hooks.callbacks("teardown", stage)
            self.hooks.module("teardown", stage)
        self._finalize_loggers("success")

    # -- spawn result transfer ----------------------------------------------------------------

    def _worker_output(self, results: Any) -> dict[str, Any]:
        """What rank 0 of a spawned run sends back to the caller (plain data for weights_only)."""
        recorder = self.hooks.recorder
        record = [tuple(c) for c in recorder.calls[self._record_from :]] if recorder is not None else []
        return {
            "state_dict": {k: v.detach().cpu() for k, v in self.strategy.module.state_dict().items()},
            "metrics": self.metrics.worker_output(),
            "logger_versions": [getattr(logger, "_version", None) for logger in self.loggers],
            "checkpoints": [cb.state_dict() for cb in self.checkpoint_callbacks],
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
        self.metrics.recover(output["metrics"])
        for logger, version in zip(self.loggers, output["logger_versions"], strict=False):
            if version is not None and hasattr(logger, "_version"):
                logger._version = version
        for callback, state in zip(self.checkpoint_callbacks, output["checkpoints"], strict=False):
            callback.dirpath = state["dirpath"]  # resolved in the workers' setup, which the caller never ran
            callback.load_state_dict(state)
        self.state.global_step = output["global_step"]
        self.state.epoch = output["epoch"]
        if self.hooks.recorder is not None:
            self.hooks.recorder.calls.extend(HookCall(*c) for c in output["hook_record"])

    _caller_module: TrainModule | None = None

    # -- for strategies/_checkpoint.py, which calls hooks through these (trainer.hooks is the API) ----

    def _call(self, owner: str, obj: Any, hook: str, *args: Any, **kwargs: Any) -> Any:
        return self.hooks.call(owner, obj, hook, *args, **kwargs)

    def _call_module(self, hook: str, *args: Any, **kwargs: Any) -> Any:
        return self.hooks.module(hook, *args, **kwargs)

    def _record(self, name: str) -> None:
        self.hooks.record(name)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_caller_module"] = None
        return state


def _ordered(callbacks: list[Any]) -> list[Any]:
    """Checkpoint callbacks last, as Lightning orders them (they see what the others logged)."""
    from strategies.callbacks import Checkpoint

    return [cb for cb in callbacks if not isinstance(cb, Checkpoint)] + [
        cb for cb in callbacks if isinstance(cb, Checkpoint)
    ]


def _require_step(model: Any, step: str, stage: str) -> None:
    if isinstance(model, TrainModule) and not _has_own(model, step, TrainModule):
        raise NotImplementedError(
            f"`{type(model).__name__}` has no `{step}`: "
            f"define `{step}(self, batch, batch_idx)` to use `Trainer.{stage}`."
        )
