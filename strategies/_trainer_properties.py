"""The Trainer's read-only views (ranks, devices, progress) and ``should_stop``, as Lightning names them."""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import torch

from strategies._data import batch_count
from strategies.parallel import ParallelStrategy

if TYPE_CHECKING:
    from strategies._data import EvalLoaders
    from strategies._hook_calls import HookCaller
    from strategies.callbacks import HookCall
    from strategies.precision import Precision
    from strategies.strategy import Strategy
    from strategies.trainer import TrainerState


class _TrainerProperties:
    """Mixed into ``Trainer``: everything here reads ``self.strategy``, ``self.state`` or ``self.hooks``."""

    if TYPE_CHECKING:  # the Trainer's, which this class is mixed into
        strategy: Strategy
        state: TrainerState
        hooks: HookCaller
        _fit_optimizers: tuple[list[torch.optim.Optimizer], list[dict[str, Any]]]
        _eval_loaders: dict[str, EvalLoaders]
        _train_loader: Any
        num_sanity_val_steps: int | float
        max_epochs: int
        max_steps: int
        accumulate_grad_batches: int
        limits: dict[str, Any]
        callbacks: list[Any]

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
    def node_rank(self) -> int:
        """This node's rank."""
        return self.strategy.node_rank

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
    def precision(self) -> str:
        """The precision's name (``"32-true"``, ``"bf16-mixed"``, ...), as Lightning's ``trainer.precision``."""
        return self.strategy.precision.precision

    @property
    def precision_plugin(self) -> Precision:
        """The strategy's precision object."""
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
    def lightning_module(self) -> torch.nn.Module:
        """The user's module (Lightning's name)."""
        return self.strategy.module

    @property
    def optimizers(self) -> list[torch.optim.Optimizer]:
        """The optimizers ``configure_optimizers`` returned; after ``fit`` the last fit's, as in Lightning."""
        return self.strategy.optimizers or self._fit_optimizers[0]

    @property
    def lr_scheduler_configs(self) -> list[dict[str, Any]]:
        """The schedulers with their ``interval``/``frequency``/``monitor``; after ``fit`` the last fit's."""
        return self.strategy.lr_scheduler_configs or self._fit_optimizers[1]

    @property
    def num_devices(self) -> int:
        """Devices (processes) per node."""
        if isinstance(self.strategy, ParallelStrategy):
            return self.strategy.num_processes
        return 1

    @property
    def current_epoch(self) -> int:
        """The epoch being trained (epochs completed, after ``fit``)."""
        return self.state.epoch

    @property
    def global_step(self) -> int:
        """Optimizer steps taken."""
        return self.state.global_step

    @property
    def should_stop(self) -> bool:
        """Set it to stop ``fit`` after this batch (honouring ``min_epochs``/``min_steps``); set it on every rank."""
        return self.state.should_stop

    @should_stop.setter
    def should_stop(self, value: bool) -> None:
        self.state.should_stop = value

    @property
    def training(self) -> bool:
        """Whether ``fit`` is running (outside its validation and sanity check)."""
        return self.state.stage == "fit" and self.state.evaluating is None

    @property
    def validating(self) -> bool:
        """Whether a validation run is going on (``validate``, or the validation in ``fit``)."""
        return self.state.stage == "validate" or self.state.evaluating == "val"

    @property
    def testing(self) -> bool:
        """Whether ``test`` is running."""
        return self.state.stage == "test"

    @property
    def predicting(self) -> bool:
        """Whether ``predict`` is running."""
        return self.state.stage == "predict"

    @property
    def is_last_batch(self) -> bool:
        """Whether the training batch running is the last of its epoch."""
        return self.state.is_last_batch

    @property
    def interrupted(self) -> bool:
        """Whether the latest run ended by an exception (after the ``on_exception`` hooks)."""
        return self.state.interrupted

    @property
    def evaluating(self) -> bool:
        """Whether an evaluation loop runs (validation, also inside ``fit``, test or predict)."""
        return self.state.evaluating is not None or self.state.stage in ("validate", "test", "predict")

    @property
    def enable_validation(self) -> bool:
        """Whether ``fit`` validates: a ``validation_step`` of the module's own and ``limit_val_batches`` > 0."""
        from strategies.module import TrainModule, _has_own

        module = self.strategy._module
        return module is not None and _has_own(module, "validation_step", TrainModule) and self.limits["val"] != 0

    @property
    def num_nodes(self) -> int:
        """The number of machines."""
        return int(getattr(self.strategy, "num_nodes", 1))

    @property
    def device_ids(self) -> list[int]:
        """The indices of the devices this process's strategy runs on (0, 1, ... for CPU processes)."""
        devices = getattr(self.strategy, "parallel_devices", None) or [self.strategy.root_device]
        return [device.index if device.index is not None else i for i, device in enumerate(devices)]

    @property
    def distributed_sampler_kwargs(self) -> dict[str, Any] | None:
        """``num_replicas``/``rank`` for a ``DistributedSampler`` (None on one process)."""
        return self.strategy.distributed_sampler_kwargs

    @property
    def scaler(self) -> Any:
        """The precision's grad scaler (``"16-mixed"``), or None."""
        return getattr(self.strategy.precision, "scaler", None)

    @property
    def progress_bar_callback(self) -> Any:
        """The ``ProgressBar`` (``TQDMProgressBar``, ``RichProgressBar``, your own) in ``callbacks``, or
        None (the default bar is drawn by the Trainer)."""
        from strategies._progress import ProgressBar

        return next((cb for cb in self.callbacks if isinstance(cb, ProgressBar)), None)

    def print(self, *args: Any, **kwargs: Any) -> None:
        """``print`` on local rank 0 only."""
        if self.local_rank == 0:
            print(*args, **kwargs)

    @contextlib.contextmanager
    def init_module(self, empty_init: bool | None = None) -> Iterator[None]:
        """Create the module's tensors on the strategy's device and in the precision's dtype at once.

        ``empty_init`` is accepted for Lightning's signature; the weights are always initialized.
        """
        with self.strategy.root_device, self.strategy.precision.module_init_context():
            yield

    @property
    def train_dataloader(self) -> Any:
        """The training loader of the latest ``fit`` (with its ``DistributedSampler``), None before."""
        return self._train_loader

    @property
    def estimated_stepping_batches(self) -> int | float:
        """The optimizer steps ``fit`` will take: Lightning's estimate from ``max_epochs``, ``max_steps``,
        the training batches per epoch (``limit_train_batches``, this rank's share) and
        ``accumulate_grad_batches``. Read in ``configure_optimizers`` (for ``OneCycleLR``) it fetches
        the training loader early, as Lightning does.
        """
        if self.max_epochs == -1:
            return float("inf") if self.max_steps == -1 else self.max_steps
        loader = self._train_loader
        if loader is None and self.state.stage == "fit" and self.strategy._module is not None:
            loader = self.hooks.train_loader()
        total = float("inf") if loader is None else batch_count(loader, self.limits["train"])
        if total == float("inf"):
            return self.max_steps
        steps = math.ceil(total / self.accumulate_grad_batches) * max(self.max_epochs, 1)
        return min(steps, self.max_steps) if self.max_steps != -1 else steps

    # -- the evaluation loaders (those of the latest run of each kind) -----------------------

    def _eval_view(self, kind: str) -> EvalLoaders | None:
        return self._eval_loaders.get(kind)

    @property
    def val_dataloaders(self) -> Any:
        """The validation loaders as given (one, or the list/dict of them), as the loop runs them; None before."""
        data = self._eval_view("val")
        return None if data is None else data.iterables

    @property
    def test_dataloaders(self) -> Any:
        """The test loaders, as ``val_dataloaders``."""
        data = self._eval_view("test")
        return None if data is None else data.iterables

    @property
    def predict_dataloaders(self) -> Any:
        """The prediction loaders, as ``val_dataloaders``."""
        data = self._eval_view("predict")
        return None if data is None else data.iterables

    @property
    def num_val_batches(self) -> list[int | float]:
        """The validation batches run from each loader (``limit_val_batches`` capped by its length)."""
        data = self._eval_view("val")
        return [] if data is None else list(data.limits)

    @property
    def num_test_batches(self) -> list[int | float]:
        """The test batches run from each loader."""
        data = self._eval_view("test")
        return [] if data is None else list(data.limits)

    @property
    def num_predict_batches(self) -> list[int | float]:
        """The prediction batches run from each loader."""
        data = self._eval_view("predict")
        return [] if data is None else list(data.limits)

    @property
    def num_sanity_val_batches(self) -> list[int | float]:
        """The sanity-check batches run from each validation loader."""
        return [min(self.num_sanity_val_steps, count) for count in self.num_val_batches]

    @property
    def hook_record(self) -> list[HookCall]:
        """Every lifecycle step and hook call of this process (``record_hooks=True``)."""
        recorder = self.hooks.recorder
        if recorder is None:
            raise RuntimeError("The hook record is off: create the Trainer with `record_hooks=True`.")
        return recorder.calls
