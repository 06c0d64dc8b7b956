"""The strategy contract: how a module is placed, wrapped, stepped and checkpointed."""

from __future__ import annotations

import contextlib
import gc
import os
from abc import ABC, abstractmethod
from collections.abc import Callable, Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from strategies import _atomic
from strategies._preflight import CheckpointError, mismatch_message
from strategies.accelerators import Accelerator, CPUAccelerator
from strategies.precision import Precision

if TYPE_CHECKING:
    from strategies.environments import ClusterEnvironment
    from strategies.launchers.launcher import Launcher
    from strategies.registry import StrategyRegistry
    from strategies.trainer import Trainer


class Strategy(ABC):
    """Places the user's module on its device(s), wraps it, and runs its steps.

    The Trainer drives a strategy through the lifecycle contract (docs/lifecycle.md):
    ``connect`` -> ``setup_environment`` -> user ``setup`` hooks -> ``configure_model`` inside
    ``model_sharded_context`` -> ``setup(trainer)`` (move, wrap, optimizers) -> loops ->
    ``teardown``; ``close`` ends the run for good.

    Args:
        accelerator: the device kind; the Trainer fills it in when ``None``.
        precision: the precision; the Trainer fills it in when ``None``.
    """

    def __init__(self, accelerator: Accelerator | None = None, precision: Precision | None = None) -> None:
        self._accelerator = accelerator
        self._precision = precision
        self._module: nn.Module | None = None
        self._model: nn.Module | None = None
        self._launcher: Launcher | None = None
        self.optimizers: list[torch.optim.Optimizer] = []
        self.lr_scheduler_configs: list[dict[str, Any]] = []
        # The Trainer sets its hook recorder here; a plain function keeps the strategy picklable.
        self._recorder: Callable[[str], None] = _no_record
        # The file the last `load_checkpoint` read, named when its state dict does not fit the module.
        self._checkpoint_path: str | os.PathLike[str] | None = None

    # -- properties ---------------------------------------------------------------------------

    @property
    def module(self) -> nn.Module:
        """The user's module (never a wrapper)."""
        if self._module is None:
            raise RuntimeError("No module is connected yet: call `strategy.connect(module)` first.")
        return self._module

    @property
    def model(self) -> nn.Module:
        """The module as the strategy runs it (a DDP/FSDP wrapper where there is one)."""
        return self._model if self._model is not None else self.module

    @property
    def accelerator(self) -> Accelerator:
        """The device kind."""
        if self._accelerator is None:
            self._accelerator = CPUAccelerator()
        return self._accelerator

    @accelerator.setter
    def accelerator(self, accelerator: Accelerator) -> None:
        self._accelerator = accelerator

    @property
    def precision(self) -> Precision:
        """The precision the steps run in."""
        if self._precision is None:
            self._precision = Precision()
        return self._precision

    @precision.setter
    def precision(self, precision: Precision) -> None:
        self._precision = precision

    @property
    def launcher(self) -> Launcher | None:
        """What starts the processes; ``None`` when the current process is the whole run."""
        return self._launcher

    @property
    def cluster_environment(self) -> ClusterEnvironment | None:
        """Where the ranks come from (parallel strategies)."""
        return None

    @property
    @abstractmethod
    def root_device(self) -> torch.device:
        """The device of this process."""

    @property
    def global_rank(self) -> int:
        """This process's rank over all nodes."""
        return 0

    @property
    def local_rank(self) -> int:
        """This process's rank on its node."""
        return 0

    @property
    def node_rank(self) -> int:
        """This node's rank."""
        return 0

    @property
    def world_size(self) -> int:
        """The number of processes in the run."""
        return 1

    @property
    def is_global_zero(self) -> bool:
        """Whether this is global rank 0."""
        return self.global_rank == 0

    @property
    def distributed_sampler_kwargs(self) -> dict[str, int] | None:
        """``num_replicas``/``rank`` for a DistributedSampler, or ``None`` when not distributed."""
        return None

    @property
    def restore_checkpoint_after_setup(self) -> bool:
        """Whether ``fit(ckpt_path=...)`` restores after ``setup`` (always here: one code path)."""
        return True

    # -- construction -------------------------------------------------------------------------

    @classmethod  # noqa: B027 (an optional hook: the base does nothing)
    def register_strategies(cls, registry: StrategyRegistry) -> None:
        """Add this class's registry names (``Trainer(strategy="name")``) to ``registry``; none by default."""

    def _configure_launcher(self) -> None:
        """Called by the Trainer once devices and cluster environment are known; by default no launcher."""
        self._launcher = None

    # -- lifecycle ----------------------------------------------------------------------------

    def connect(self, module: nn.Module) -> None:
        """Store the user's module; nothing is moved or wrapped yet."""
        self._module = module
        self._model = None

    def setup_environment(self) -> None:
        """Select the device (parallel strategies also initialise the process group here)."""
        self.accelerator.setup_device(self.root_device)

    @contextlib.contextmanager
    def model_sharded_context(self) -> Generator[None, None, None]:
        """The context ``configure_model`` runs in; sharded strategies create parameters here."""
        yield

    def model_to_device(self) -> None:
        """Move the module (including layers created in the setup hooks) to ``root_device``."""
        self.module.to(self.root_device)

    def setup(self, trainer: Trainer) -> None:
        """Move the module, wrap it, then build the optimizers: in that order."""
        self._recorder("strategy.model_to_device")
        self.model_to_device()
        self._model = self._setup_model(self.module)
        self._recorder("strategy.wrap")
        if trainer.state.stage == "fit":
            self.setup_optimizers(trainer)

    def _setup_model(self, module: nn.Module) -> nn.Module:
        """Wrap the module (DDP, FSDP, ...); the base runs it as it is."""
        return module

    def setup_optimizers(self, trainer: Trainer) -> None:
        """Build optimizers and schedulers from the module's ``configure_optimizers``."""
        from strategies._optimizers import parse_optimizers

        self.optimizers, self.lr_scheduler_configs = parse_optimizers(trainer.hooks.module("configure_optimizers"))

    def teardown(self) -> None:
        """Release wrappers and optimizers and put the module back on the CPU; the group stays."""
        self._model = None
        self.optimizers = []
        self.lr_scheduler_configs = []
        if self._module is not None:
            self._module.to("cpu")
        self.precision.teardown()
        self.accelerator.teardown()
        gc.collect()

    def close(self) -> None:
        """End the run for good: teardown, and destroy what the strategy created."""
        self.teardown()

    # -- steps --------------------------------------------------------------------------------

    def _step(self, name: str, *args: Any, **kwargs: Any) -> Any:
        with self.precision.forward_context():
            if self._model is not None and self._model is not self._module:
                return self._model(name, *args, **kwargs)
            return getattr(self.module, name)(*args, **kwargs)

    def training_step(self, *args: Any, **kwargs: Any) -> Any:
        """Run the module's ``training_step`` through the wrapper (so gradients are synced)."""
        return self._step("training_step", *args, **kwargs)

    def validation_step(self, *args: Any, **kwargs: Any) -> Any:
        """Run the module's ``validation_step``."""
        return self._step("validation_step", *args, **kwargs)

    def test_step(self, *args: Any, **kwargs: Any) -> Any:
        """Run the module's ``test_step``."""
        return self._step("test_step", *args, **kwargs)

    def predict_step(self, *args: Any, **kwargs: Any) -> Any:
        """Run the module's ``predict_step``."""
        return self._step("predict_step", *args, **kwargs)

    def backward(self, loss: torch.Tensor) -> None:
        """Back-propagate through the precision (a grad scaler where there is one)."""
        self.precision.backward(loss, self.model)

    def optimizer_step(self, optimizer: torch.optim.Optimizer) -> Any:
        """Step one optimizer through the precision."""
        return self.precision.optimizer_step(optimizer, self.model)

    def clip_gradients(self, optimizer: torch.optim.Optimizer, max_norm: float) -> torch.Tensor:
        """Clip the gradient norm of the optimizer's parameters to ``max_norm``."""
        self.precision.unscale_gradients(optimizer)
        params = [p for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        return torch.nn.utils.clip_grad_norm_(params, max_norm)

    # -- collectives (single process: identities) ---------------------------------------------

    def barrier(self, name: str | None = None) -> None:  # noqa: B027 (one process: nothing to wait for)
        """Wait until every process reaches this point."""

    def broadcast(self, obj: Any, src: int = 0) -> Any:
        """``obj`` from rank ``src`` on every rank."""
        return obj

    def all_gather(self, tensor: torch.Tensor) -> torch.Tensor:
        """The tensors of all ranks, stacked along a new first dimension."""
        return tensor.unsqueeze(0)

    def reduce(self, tensor: Any, reduce_op: str = "mean") -> Any:
        """Reduce ``tensor`` over all ranks (``"mean"``, ``"sum"``, ``"max"``, ``"min"``)."""
        return tensor

    def reduce_boolean_decision(self, decision: bool, all: bool = True) -> bool:
        """Combine a decision over ranks: all must agree (``all=True``) or any suffices."""
        return decision

    # -- checkpoints --------------------------------------------------------------------------

    def module_state_dict(self) -> dict[str, Any]:
        """The module's full state dict (unwrapped names)."""
        return self.module.state_dict()

    def save_checkpoint(self, checkpoint: dict[str, Any], path: str | os.PathLike[str]) -> None:
        """Write ``checkpoint`` to ``path`` (on global rank 0 only), atomically.

        The file is written beside ``path`` under a temporary name and renamed into place, so
        ``path`` holds the old checkpoint or the new one, never a part. A failed write removes its
        temporary file, the next save removes those a killed process left, and a full disk raises
        ``OSError`` "no space left on <directory>".
        """
        if not self.is_global_zero:
            return
        _atomic.write_file(Path(path), lambda f: torch.save(checkpoint, f))

    def load_checkpoint(self, path: str | os.PathLike[str], weights_only: bool = True) -> dict[str, Any]:
        """Read a checkpoint; ``weights_only=True`` unless the caller trusts the file."""
        self._checkpoint_path = path
        checkpoint: dict[str, Any] = torch.load(path, map_location="cpu", weights_only=weights_only)
        return checkpoint

    def load_module_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> None:
        """Load a full state dict into the module; a mismatch names the file and the keys."""
        try:
            self.module.load_state_dict(state_dict, strict=strict)
        except RuntimeError as err:
            if not strict:
                raise
            expected = self.module.state_dict()
            missing = [k for k in expected if k not in state_dict]
            unexpected = [k for k in state_dict if k not in expected]
            shapes = [
                f"{k} {tuple(state_dict[k].shape)} in the file, {tuple(v.shape)} in the model"
                for k, v in expected.items()
                if k in state_dict and hasattr(state_dict[k], "shape") and state_dict[k].shape != v.shape
            ]
            path = self._checkpoint_path if self._checkpoint_path is not None else "The state dict"
            raise CheckpointError(mismatch_message(path, self.module, missing, unexpected, shapes)) from err


def _no_record(name: str) -> None:
    """The recorder of a strategy no Trainer drives."""
