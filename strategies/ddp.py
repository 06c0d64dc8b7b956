"""DistributedDataParallel, one process per device, started by re-running the script."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from torch import nn
from torch.nn.parallel import DistributedDataParallel
from typing_extensions import override

from strategies.parallel import ParallelStrategy, _StepRedirect, split_parallel_kwargs
from strategies.registry import register_find_unused

if TYPE_CHECKING:
    from strategies.registry import StrategyRegistry


class DDPStrategy(ParallelStrategy):
    """Data-parallel training with ``torch.nn.parallel.DistributedDataParallel``.

    Processes come from ``SubprocessScriptLauncher`` (the script is run again for
    every extra local rank), or from torchrun/SLURM, which start them all.

    Args:
        *args: ``ParallelStrategy``'s positional arguments.
        **kwargs: ``ParallelStrategy``'s arguments (``timeout``, ``num_nodes``, ...);
            every other keyword goes to ``DistributedDataParallel`` (e.g. ``find_unused_parameters=True``).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        parallel_kwargs, self._ddp_kwargs = split_parallel_kwargs(kwargs)
        super().__init__(*args, **parallel_kwargs)

    @override
    def _setup_model(self, module: nn.Module) -> nn.Module:
        device_ids = [self.root_device.index] if self.root_device.type == "cuda" else None
        return DistributedDataParallel(_StepRedirect(module), device_ids=device_ids, **self._ddp_kwargs)

    @override
    def teardown(self) -> None:
        # Drop the DDP wrapper (and its reducer hooks) before anything else.
        self._model = None
        super().teardown()

    @classmethod
    @override
    def register_strategies(cls, registry: StrategyRegistry) -> None:
        """Add ``"ddp"`` and Lightning's ``"ddp_find_unused_parameters_true"``/``"_false"`` to the registry."""
        registry.register("ddp", cls, "DistributedDataParallel; the script is re-run for each extra local rank.")
        register_find_unused(registry, "ddp", cls)
