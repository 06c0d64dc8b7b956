"""Resolve the Trainer's arguments into one configured strategy."""

from __future__ import annotations

from typing import Any

from strategies.accelerators import Accelerator, CPUAccelerator, CUDAAccelerator
from strategies.environments import ClusterEnvironment, LocalEnvironment, SLURMEnvironment, TorchElasticEnvironment
from strategies.parallel import ParallelStrategy
from strategies.precision import Precision, precision_for
from strategies.registry import StrategyRegistry
from strategies.single_device import SingleDeviceStrategy
from strategies.strategy import Strategy


def detect_environment() -> ClusterEnvironment:
    """The environment this process runs in: SLURM, then torchrun, else local."""
    for cls in (SLURMEnvironment, TorchElasticEnvironment):
        if cls.detect():
            return cls()
    return LocalEnvironment()


def resolve_accelerator(accelerator: str | Accelerator) -> Accelerator:
    if isinstance(accelerator, Accelerator):
        return accelerator
    name = accelerator.lower() if isinstance(accelerator, str) else accelerator
    if name == "auto":
        return CUDAAccelerator() if CUDAAccelerator.is_available() else CPUAccelerator()
    if name in ("cuda", "gpu"):
        if not CUDAAccelerator.is_available():
            raise RuntimeError(
                f"`accelerator={accelerator!r}` but no CUDA device is available here "
                "(`torch.cuda.is_available()` is False). Use `accelerator='cpu'` or `accelerator='auto'`."
            )
        return CUDAAccelerator()
    if name == "cpu":
        return CPUAccelerator()
    raise ValueError(f"Unknown `accelerator={accelerator!r}`. Valid values: 'auto', 'cpu', 'cuda' (or 'gpu').")


def resolve_devices(
    devices: Any, accelerator: Accelerator, environment: ClusterEnvironment, num_nodes: int
) -> int | list[int]:
    if devices == "auto":
        if environment.creates_processes_externally and not isinstance(environment, LocalEnvironment):
            return max(1, environment.world_size() // max(1, num_nodes))
        return accelerator.auto_device_count()
    if isinstance(devices, str):
        if "," in devices:  # "0,1" and "1," are CUDA indices, as Lightning reads them
            devices = [int(part) for part in devices.split(",") if part.strip()]
        else:
            devices = int(devices) if devices.strip().lstrip("-").isdigit() else devices
    if devices == -1:
        return accelerator.max_device_count()
    if isinstance(devices, (list, tuple)):
        if not isinstance(accelerator, CUDAAccelerator):
            raise ValueError(
                f"`devices={devices!r}` (a list of indices) needs `accelerator='cuda'`; on CPU pass a count."
            )
        bad = [i for i in devices if not 0 <= i < accelerator.max_device_count()]
        if bad:
            raise ValueError(
                f"`devices={list(devices)}` names CUDA devices {bad} that do not exist; this machine has "
                f"{accelerator.max_device_count()} (indices 0-{accelerator.max_device_count() - 1})."
            )
        return list(devices)
    if not isinstance(devices, int) or devices < 1:
        raise ValueError(
            f"`devices={devices!r}`: pass a positive count, -1 for all, 'auto', or a list of CUDA indices."
        )
    if devices > accelerator.max_device_count() and not environment.creates_processes_externally:
        raise ValueError(
            f"`devices={devices}` but this machine has only {accelerator.max_device_count()} "
            f"{accelerator.name} device(s){' (one process per core)' if accelerator.name == 'cpu' else ''}. "
            f"Use `devices={accelerator.max_device_count()}` or fewer, or `devices='auto'`."
        )
    return devices


def resolve_precision(precision: Any, accelerator: Accelerator) -> Precision:
    if isinstance(precision, Precision):
        return precision
    return precision_for(precision, "cuda" if isinstance(accelerator, CUDAAccelerator) else "cpu")


def resolve_strategy(
    strategy: str | Strategy,
    accelerator: str | Accelerator,
    devices: Any,
    num_nodes: int,
    precision: Any,
    plugins: list[Any],
    registry: StrategyRegistry,
) -> Strategy:
    """One configured strategy for the Trainer's arguments."""
    if isinstance(strategy, str) and strategy not in registry:
        registry.create(strategy)  # raises with the valid names
    if not isinstance(num_nodes, int) or num_nodes < 1:
        raise ValueError(f"`num_nodes={num_nodes!r}`: pass a positive integer.")
    environments = [p for p in plugins if isinstance(p, ClusterEnvironment)]
    unknown = [p for p in plugins if not isinstance(p, (ClusterEnvironment, Precision))]
    if unknown:
        raise TypeError(
            f"`plugins` takes cluster environments and precisions; got {[type(p).__name__ for p in unknown]}. "
            "Pass a strategy as `strategy=`."
        )
    precisions = [p for p in plugins if isinstance(p, Precision)]
    if isinstance(strategy, Strategy) and strategy._accelerator is not None and accelerator == "auto":
        accelerator = strategy._accelerator
    acc = resolve_accelerator(accelerator)
    env = environments[0] if environments else None
    if isinstance(strategy, ParallelStrategy) and strategy.cluster_environment is not None:
        env = strategy.cluster_environment
    env = env or detect_environment()
    count = resolve_devices(devices, acc, env, num_nodes)
    n_devices = count if isinstance(count, int) else len(count)
    if isinstance(strategy, str):
        if strategy == "auto":
            single = n_devices == 1 and num_nodes == 1 and isinstance(env, LocalEnvironment)
            strategy = "single_device" if single else "ddp"
        strategy = registry.create(strategy)
    if num_nodes > 1 and isinstance(env, LocalEnvironment) and isinstance(strategy, ParallelStrategy):
        raise ValueError(
            f"`num_nodes={num_nodes}` but no cluster environment was found: multi-node runs are started by "
            "torchrun (`torchrun --nnodes N --nproc-per-node D ...`) or SLURM (`srun`), which set the ranks. "
            "Launch with one of them, or pass a `ClusterEnvironment` in `plugins`."
        )
    if num_nodes > 1 and not isinstance(strategy, ParallelStrategy):
        raise ValueError(
            f"`num_nodes={num_nodes}` needs a parallel strategy such as 'ddp'; got {type(strategy).__name__}."
        )
    if strategy._accelerator is None:
        strategy.accelerator = acc
    if strategy._precision is None:
        strategy.precision = precisions[0] if precisions else resolve_precision(precision, strategy.accelerator)
    devices_list = strategy.accelerator.get_parallel_devices(count)
    if isinstance(strategy, SingleDeviceStrategy):
        if n_devices != 1 or num_nodes != 1:
            raise ValueError(
                f"`strategy='single_device'` runs one device; you asked for `devices={devices!r}`, "
                f"`num_nodes={num_nodes}`. Use `strategy='ddp'` for several."
            )
        if strategy.root_device.type != devices_list[0].type:
            strategy._root_device = devices_list[0]
    elif isinstance(strategy, ParallelStrategy):
        if strategy.parallel_devices is None:
            strategy.parallel_devices = devices_list
        strategy.num_nodes = num_nodes
        strategy.cluster_environment = env
        env.validate_settings(len(strategy.parallel_devices), num_nodes)
        # Ranks are known from here on (trainer.world_size before fit), not only after the launch.
        env.set_world_size(num_nodes * len(strategy.parallel_devices))
        env.set_global_rank(env.node_rank() * len(strategy.parallel_devices) + env.local_rank())
    strategy._configure_launcher()
    if isinstance(strategy.accelerator, CPUAccelerator) and strategy.root_device.type != "cpu":
        raise ValueError(f"The strategy's device `{strategy.root_device}` does not match `accelerator='cpu'`.")
    return strategy
