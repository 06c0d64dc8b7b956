"""The base of strategies that run one process per device."""

from __future__ import annotations

import datetime
import inspect
from abc import ABC
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
from torch import nn
from typing_extensions import override

from strategies import _distributed, _watch
from strategies._distributed import RENDEZVOUS
from strategies.accelerators import Accelerator
from strategies.environments import ClusterEnvironment
from strategies.launchers import SubprocessScriptLauncher
from strategies.precision import Precision
from strategies.strategy import Strategy
from strategies.utilities.rank_zero import rank_zero_only


class ParallelStrategy(Strategy, ABC):
    """Several processes, one per device, joined by a ``torch.distributed`` process group.

    The one constructor of the parallel strategies: ``DDPStrategy``, ``FSDPStrategy`` and
    ``DeepSpeedStrategy`` take these arguments too (passed through, see ``split_parallel_kwargs``)
    and add their own.

    Args:
        accelerator: the device kind; the Trainer fills it in when ``None``.
        parallel_devices: the device of each local rank (the Trainer fills it in).
        cluster_environment: where the ranks come from (the Trainer detects it).
        precision: the precision; the Trainer fills it in when ``None``.
        num_nodes: the number of machines.
        process_group_backend: ``"gloo"``/``"nccl"``; by default nccl on CUDA, gloo otherwise.
        timeout: the rendezvous and collective timeout (torch's default: 30 minutes); a number is seconds.
            When it fires, the error names the ranks that did not arrive.
        stall_warning: seconds without progress from a rank before a line on stderr names it (the run
            goes on); ``None``: ``$STRATEGIES_STALL_WARNING_S`` or 60; ``0`` turns the line off.
    """

    def __init__(
        self,
        accelerator: Accelerator | None = None,
        parallel_devices: list[torch.device] | None = None,
        cluster_environment: ClusterEnvironment | None = None,
        precision: Precision | None = None,
        num_nodes: int = 1,
        process_group_backend: str | None = None,
        timeout: datetime.timedelta | float = _distributed.DEFAULT_TIMEOUT,
        stall_warning: float | None = None,
    ) -> None:
        super().__init__(accelerator=accelerator, precision=precision)
        self.parallel_devices = parallel_devices
        self._cluster_environment = cluster_environment
        self.num_nodes = num_nodes
        self._process_group_backend = process_group_backend
        self.timeout = timeout
        if stall_warning is None:
            stall_warning = _distributed.env_flag_seconds(_watch.STALL_VARIABLE, _watch.DEFAULT_STALL_S)
        self.stall_warning = stall_warning

    @property
    def timeout(self) -> datetime.timedelta:
        """The rendezvous and collective timeout."""
        return self._timeout

    @timeout.setter
    def timeout(self, value: datetime.timedelta | float) -> None:
        if not isinstance(value, datetime.timedelta):
            value = datetime.timedelta(seconds=float(value))
        self._timeout = value

    def _configure_launcher(self) -> None:
        """Called by the Trainer once the devices are known: the script is run again per extra local rank."""
        if self.cluster_environment is None:
            raise RuntimeError("No cluster environment: the Trainer sets one before configuring the launcher.")
        self._launcher = SubprocessScriptLauncher(self.cluster_environment, self.num_processes, self.num_nodes)

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
    def distributed_sampler_kwargs(self) -> dict[str, int] | None:
        return {"num_replicas": self.world_size, "rank": self.global_rank}

    @override
    def setup_environment(self) -> None:
        self.setup_distributed()
        super().setup_environment()

    def setup_distributed(self) -> None:
        """Seed again (``reset_seed``, as Lightning), set the ranks from the cluster environment and
        initialise the process group once."""
        from strategies._seed import reset_seed

        reset_seed()
        env = self.cluster_environment
        if env is None:
            raise RuntimeError("No cluster environment: the Trainer sets one before `setup_environment`.")
        env.set_world_size(self.num_nodes * self.num_processes)
        env.set_global_rank(self.node_rank * self.num_processes + self.local_rank)
        created = RENDEZVOUS.init_process_group(
            env, self.process_group_backend, self.global_rank, self.world_size, self.timeout
        )
        rank_zero_only.rank = self.global_rank  # as Lightning's strategies set it
        _watch.PROGRESS.start(self.global_rank, self.world_size, self.stall_warning)
        self._recorder("process_group.init" if created else "process_group.reuse")

    def check_process_group(self) -> None:
        """Raise now (before anything is launched) if an existing group does not fit this run."""
        _distributed.check_existing_group(self.process_group_backend, self.num_nodes * self.num_processes)

    @override
    def teardown(self) -> None:
        # Between stages nothing is expected to progress: stop watching until the next setup.
        _watch.PROGRESS.stop()
        super().teardown()

    @override
    def close(self) -> None:
        super().close()
        RENDEZVOUS.close()
        rank_zero_only.rank = None  # read from the environment again, as before this run
        if self.cluster_environment is not None:
            self.cluster_environment.teardown()

    # -- steps and collectives: each marks this rank's progress (named when a rank stalls) ---------

    @override
    def _step(self, name: str, *args: Any, **kwargs: Any) -> Any:
        _watch.PROGRESS.mark(f"entered {name}")
        result = super()._step(name, *args, **kwargs)
        _watch.PROGRESS.mark(f"returned from {name}")
        return result

    @override
    def backward(self, loss: torch.Tensor) -> None:
        _watch.PROGRESS.mark("entered backward (gradient all-reduce)")
        super().backward(loss)
        _watch.PROGRESS.mark("returned from backward")

    @override
    def barrier(self, name: str | None = None) -> None:
        if dist.is_initialized():
            _watch.PROGRESS.mark(f"arrived at barrier {name!r}")
            dist.barrier()
            _watch.PROGRESS.mark(f"passed barrier {name!r}")

    @override
    def broadcast(self, obj: Any, src: int = 0) -> Any:
        if not dist.is_initialized():
            return obj
        _watch.PROGRESS.mark("arrived at broadcast")
        holder = [obj]
        dist.broadcast_object_list(holder, src=src)
        return holder[0]

    @override
    def all_gather(self, tensor: torch.Tensor) -> torch.Tensor:
        if not dist.is_initialized():
            return tensor.unsqueeze(0)
        _watch.PROGRESS.mark("arrived at all_gather")
        tensor = tensor.contiguous()
        gathered = [torch.empty_like(tensor) for _ in range(dist.get_world_size())]
        dist.all_gather(gathered, tensor)
        return torch.stack(gathered)

    @override
    def reduce(self, tensor: Any, reduce_op: str = "mean") -> Any:
        if not dist.is_initialized():
            return tensor
        _watch.PROGRESS.mark("arrived at reduce")
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

    if TYPE_CHECKING:  # FSDPStrategy marks its root with the world size it was sharded for
        _strategy_compat_world: int

    def __init__(self, module: nn.Module) -> None:
        super().__init__()
        self.module = module

    def forward(self, step: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(self.module, step)(*args, **kwargs)


#: The keyword arguments every parallel strategy passes on to ``ParallelStrategy``.
PARALLEL_ARGS = frozenset(inspect.signature(ParallelStrategy.__init__).parameters) - {"self"}


def split_parallel_kwargs(kwargs: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split ``kwargs`` into ``ParallelStrategy``'s arguments and the rest (a subclass's extras)."""
    own = {k: v for k, v in kwargs.items() if k in PARALLEL_ARGS}
    return own, {k: v for k, v in kwargs.items() if k not in PARALLEL_ARGS}
