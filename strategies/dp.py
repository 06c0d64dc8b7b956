"""``torch.nn.DataParallel``: one process driving several CUDA devices."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
from torch import nn
from typing_extensions import override

from strategies.accelerators import Accelerator, CUDAAccelerator
from strategies.parallel import ParallelStrategy, _StepRedirect
from strategies.precision import Precision

if TYPE_CHECKING:
    from strategies.registry import StrategyRegistry


class DataParallelStrategy(ParallelStrategy):
    """Single-process data parallelism over the local CUDA devices (``torch.nn.DataParallel``).

    Each step scatters the batch over the devices, runs a replica of the module on each, and
    gathers the outputs on the first device; a loss (or a ``"loss"`` in a dict) that comes back
    with one value per device is averaged, as Lightning's ``dp`` does in ``training_step_end``.
    No process group and no launcher; ``global_rank`` is 0 and ``world_size`` 1. It needs CUDA:
    on a machine without it, building the Trainer raises. ``"ddp"`` is faster and is what
    PyTorch recommends; ``dp`` is here for code that used it.

    Args:
        parallel_devices: the CUDA devices (the Trainer fills them in from ``devices``).
    """

    def __init__(
        self,
        accelerator: Accelerator | None = None,
        parallel_devices: list[torch.device] | None = None,
        precision: Precision | None = None,
    ) -> None:
        super().__init__(accelerator=accelerator, parallel_devices=parallel_devices, precision=precision)

    @override
    def _configure_launcher(self) -> None:
        """Called when the Trainer is built: ``dp`` without CUDA is an error here, not at the first step."""
        devices = self.parallel_devices or []
        if not isinstance(self.accelerator, CUDAAccelerator) or any(d.type != "cuda" for d in devices):
            available = torch.cuda.is_available()
            raise RuntimeError(
                "`strategy='dp'` (torch.nn.DataParallel) runs one process over several CUDA devices, but "
                + (
                    "no CUDA device is available here (`torch.cuda.is_available()` is False)"
                    if not available
                    else f"the accelerator is `{self.accelerator.name}`"
                )
                + ". Use `strategy='ddp'` (one process per device, works on CPU with gloo) or "
                "`strategy='single_device'`; on a CUDA machine pass `accelerator='cuda'`."
            )
        self._launcher = None

    @property
    @override
    def root_device(self) -> torch.device:
        return (self.parallel_devices or [torch.device("cuda", 0)])[0]

    @property
    @override
    def global_rank(self) -> int:
        return 0

    @property
    @override
    def local_rank(self) -> int:
        return 0

    @property
    @override
    def node_rank(self) -> int:
        return 0

    @property
    @override
    def world_size(self) -> int:
        return 1

    @property
    @override
    def distributed_sampler_kwargs(self) -> None:
        return None

    @override
    def setup_environment(self) -> None:
        # No process group: one process.
        self.accelerator.setup_device(self.root_device)

    @override
    def check_process_group(self) -> None:
        """Nothing to check: ``dp`` uses no process group."""

    @override
    def _setup_model(self, module: nn.Module) -> nn.Module:
        device_ids = [d.index for d in self.parallel_devices or [self.root_device]]
        return nn.DataParallel(_StepRedirect(module), device_ids=device_ids, output_device=device_ids[0])

    @override
    def training_step(self, *args: Any, **kwargs: Any) -> Any:
        return _mean_over_devices(super().training_step(*args, **kwargs))

    @override
    def validation_step(self, *args: Any, **kwargs: Any) -> Any:
        return _mean_over_devices(super().validation_step(*args, **kwargs))

    @override
    def test_step(self, *args: Any, **kwargs: Any) -> Any:
        return _mean_over_devices(super().test_step(*args, **kwargs))

    @override
    def reduce(self, tensor: Any, reduce_op: str = "mean") -> Any:
        """Averages a per-device vector (what ``DataParallel`` gathers) to one value."""
        if isinstance(tensor, torch.Tensor) and tensor.ndim > 0 and reduce_op in ("mean", "avg"):
            return tensor.float().mean()
        return tensor

    @classmethod
    @override
    def register_strategies(cls, registry: StrategyRegistry) -> None:
        """Add ``"dp"`` to the registry."""
        registry.register("dp", cls, "torch.nn.DataParallel: one process over several CUDA devices.")


def _mean_over_devices(output: Any) -> Any:
    # DataParallel gathers a 0-dim loss from each replica into a vector: average it.
    if isinstance(output, torch.Tensor) and output.ndim == 1 and output.is_floating_point():
        return output.mean()
    if isinstance(output, dict) and isinstance(output.get("loss"), torch.Tensor) and output["loss"].ndim == 1:
        return {**output, "loss": output["loss"].mean()}
    return output
