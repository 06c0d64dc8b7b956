"""DistributedDataParallel, one process per device, started by re-running the script."""

from __future__ import annotations

import datetime
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel
from typing_extensions import override

from strategies import _distributed
from strategies.accelerators import Accelerator
from strategies.environments import ClusterEnvironment
from strategies.launchers import SubprocessScriptLauncher
from strategies.parallel import ParallelStrategy, _StepRedirect
from strategies.precision import Precision


class DDPStrategy(ParallelStrategy):
    """Data-parallel training with ``torch.nn.parallel.DistributedDataParallel``.

    Processes come from :class:`~strategies.SubprocessScriptLauncher` (the script is run again for
    every extra local rank), or from torchrun/SLURM, which start them all.

    Args:
        ddp_kwargs: passed to ``DistributedDataParallel`` (e.g. ``find_unused_parameters=True``).
    """

    def __init__(
        self,
        accelerator: Accelerator | None = None,
        parallel_devices: list[torch.device] | None = None,
        cluster_environment: ClusterEnvironment | None = None,
        precision: Precision | None = None,
        num_nodes: int = 1,
        process_group_backend: str | None = None,
        timeout: datetime.timedelta = _distributed.DEFAULT_TIMEOUT,
        **ddp_kwargs: Any,
    ) -> None:
        super().__init__(
            accelerator=accelerator,
            parallel_devices=parallel_devices,
            cluster_environment=cluster_environment,
            precision=precision,
            num_nodes=num_nodes,
            process_group_backend=process_group_backend,
            timeout=timeout,
        )
        self._ddp_kwargs = ddp_kwargs

    def _configure_launcher(self) -> None:
        """Called by the Trainer once the cluster environment and devices are known."""
        self._launcher = SubprocessScriptLauncher(self.cluster_environment, self.num_processes, self.num_nodes)

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
    def register_strategies(cls, registry) -> None:
        """Add ``"ddp"`` to the registry."""
        registry.register("ddp", cls, "DistributedDataParallel; the script is re-run for each extra local rank.")
