"""The base of strategies that run one process per device."""

from __future__ import annotations

import datetime
from abc import ABC
from typing import Any

import torch
import torch.distributed as dist
from torch import nn
from typing_extensions import override

from strategies import _distributed
from strategies.accelerators import Accelerator
from strategies.environments import ClusterEnvironment
from strategies.precision import Precision
from strategies.strategy import Strategy


class ParallelStrategy(Strategy, ABC):
    """Several processes, one per device, joined by a ``torch.distributed`` process group.

    Args:
        parallel_devices: the device of each local rank (the Trainer fills it in).
        cluster_environment: where the ranks come from (the Trainer detects it).
        num_nodes: the number of machines.
        process_group_backend: ``"gloo"``/``"nccl"``; by default nccl on CUDA, gloo otherwise.
        timeout: the rendezvous and collective timeout (torch's default: 30 minutes).
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
    ) -> None:
        super().__init__(accelerator=accelerator, precision=precision)
        self.parallel_devices = parallel_devices
        self._cluster_environment = cluster_environment
        self.num_nodes = num_nodes
        self._process_group_backend = process_group_backend
        self.timeout = timeout

    @property
    @override
    def cluster_environment(self) -> ClusterEnvironment | None:
        return self._cluster_environment

    @cluster_environment.setter
    def cluster_environment(self, environment: ClusterEnvironment) -> None:
        self._cluster_environment = environment

    @property
    def num_processes(self) -> int:
        """Processes on this node."""
        return len(self.parallel_devices) if self.parallel_devices else 1

    @property
    def process_group_backend(self) -> str:
        """The backend of the process group this strategy initialises or reuses."""
        if self._process_group_backend is not None:
            return self._process_group_backend
        return "nccl" if self.root_device.type == "cuda" else "gloo"

    @property
    @override
    def root_device(self) -> torch.device:
        devices = self.parallel_devices or [torch.device("cpu")]
        return devices[min(self.local_rank, len(devices) - 1)]

    @property
    @override
    def global_rank(self) -> int:
        env = self.cluster_environment
        return env.global_rank() if env is not None else 0

    @property
    @override
    def local_rank(self) -> int:
        env = self.cluster_environment
        return env.local_rank() if env is not None else 0

    @property
    @override
    def node_rank(self) -> int:
        env = self.cluster_environment
        return env.node_rank() if env is not None else 0

    @property
    @override
    def world_size(self) -> int:
        env = self.cluster_environment
        return env.world_size() if env is not None else 1

    @property
    @override
    def distributed_sampler_kwargs(self) -> dict[str, int]:
        return {"num_replicas": self.world_size, "rank": self.global_rank}

    @override
    def setup_environment(self) -> None:
        self.setup_distributed()
        super().setup_environment()

    def setup_distributed(self) -> None:
        """Set the ranks from the cluster environment and initialise the process group once."""
        env = self.cluster_environment
        if env is None:
            raise RuntimeError("No cluster environment: the Trainer sets one before `setup_environment`.")
        env.set_world_size(self.num_nodes * self.num_processes)
        env.set_global_rank(self.node_rank * self.num_processes + self.local_rank)
        created = _distributed.init_dist_connection(
            env, self.process_group_backend, self.global_rank, self.world_size, self.timeout
        )
        self._recorder("process_group.init" if created else "process_group.reuse")

    def check_process_group(self) -> None:
        """Raise now (before anything is launched) if an existing group does not fit this run."""
        _distributed.check_existing_group(self.process_group_backend, self.num_nodes * self.num_processes)

    @override
    def close(self) -> None:
        super().close()
        _distributed.destroy_dist_connection()
        if self.cluster_environment is not None:
            self.cluster_environment.teardown()

    @override
    def barrier(self, name: str | None = None) -> None:
        if dist.is_initialized():
            dist.barrier()

    @override
    def broadcast(self, obj: Any, src: int = 0) -> Any:
        if not dist.is_initialized():
            return obj
        holder = [obj]
        dist.broadcast_object_list(holder, src=src)
        return holder[0]

    @override
    def all_gather(self, tensor: torch.Tensor) -> torch.Tensor:
        if not dist.is_initialized():
            return tensor.unsqueeze(0)
        tensor = tensor.contiguous()
        gathered = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, tensor)
        return torch.stack(gathered)

    @override
    def reduce(self, tensor: Any, reduce_op: str = "mean") -> Any:
        if not dist.is_initialized():
            return tensor
        op, divide = _distributed.reduce_op(reduce_op)
        value = _distributed.to_tensor(tensor, self.root_device).clone()
        if divide and not value.is_floating_point():
            value = value.float()
        dist.all_reduce(value, op=op)
        return value / dist.get_world_size() if divide else value

    @override
    def reduce_boolean_decision(self, decision: bool, all: bool = True) -> bool:
        votes = self.reduce(torch.tensor(int(decision), device=self.root_device), reduce_op="sum")
        return bool(votes == self.world_size) if all else bool(votes > 0)


class _StepRedirect(nn.Module):
    """Routes ``forward(step_name, ...)`` to the module's step, so a DDP/FSDP wrapper sees it as forward."""

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, step: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.module, step)(*args, **kwargs)
