"""Process-group helpers shared by the parallel strategies."""

from __future__ import annotations

import datetime
import gc
import os
from typing import Any

import torch
import torch.distributed as dist

from strategies.environments import ClusterEnvironment, LocalEnvironment

# "owned": this package initialised the default group, so `close()` destroys only its own.
# "stores": rendezvous stores rank 0 serves on loopback, by port ("keep": past `close()`).
# "round": initialisations in this process (every rank counts the same).
_STATE: dict[str, Any] = {"owned": False, "stores": {}, "keep": False, "round": 0}

DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)


class ProcessGroupError(RuntimeError):
    """An existing process group does not fit the strategy asking for one."""


def check_existing_group(backend: str, world_size: int) -> bool:
    """Whether a compatible default group already exists; raise when one exists but does not fit."""
    if not (dist.is_available() and dist.is_initialized()):
        return False
    existing_backend, existing_size = dist.get_backend(), dist.get_world_size()
    if existing_size != world_size or existing_backend != backend:
        raise ProcessGroupError(
            f"A process group is already initialised with backend `{existing_backend}` and world size "
            f"{existing_size}, but this strategy needs backend `{backend}` and world size {world_size}. "
            "Call `strategy.close()` (or `torch.distributed.destroy_process_group()`) before starting a "
            "run with a different world size or backend, or make `devices`/`num_nodes` match the group."
        )
    return True


def init_dist_connection(
    environment: ClusterEnvironment,
    backend: str,
    global_rank: int,
    world_size: int,
    timeout: datetime.timedelta = DEFAULT_TIMEOUT,
) -> bool:
    """Initialise the default process group once; return False when a compatible one was reused."""
    if check_existing_group(backend, world_size):
        return False
    if not isinstance(environment, LocalEnvironment):
        # torchrun/SLURM: env:// (torchrun may already serve the store from its agent).
        os.environ.setdefault("MASTER_ADDR", environment.main_address)
        os.environ.setdefault("MASTER_PORT", str(environment.main_port))
        dist.init_process_group(backend, rank=global_rank, world_size=world_size, timeout=timeout)
        _STATE["owned"] = True
        return True
    address, port = environment.main_address, environment.main_port
    if global_rank == 0 and not environment._external_store:
        store = _STATE["stores"].get(port)
        if store is None:
            if environment._listen_socket is None and "MASTER_PORT" not in os.environ:
                environment._reserve(port)
            # Our own loopback socket: the store listens on 127.0.0.1 only (torch would use all
            # interfaces). Without one (the user set MASTER_PORT) torch binds the port itself.
            store = dist.TCPStore(address, port, world_size, True, timeout=timeout,
                                  master_listen_fd=environment._take_listen_fd(), wait_for_workers=False)
            _STATE["stores"][port] = store
    else:
        store = dist.TCPStore(address, port, world_size, False, timeout=timeout, wait_for_workers=False)
    # Every rank counts its initialisations the same way (they run the same script), so a group made
    # again on a store that is still served never reads the keys of the previous one.
    _STATE["round"] += 1
    prefixed = dist.PrefixStore(f"strategies/{_STATE['round']}/", store)
    dist.init_process_group(backend, store=prefixed, rank=global_rank, world_size=world_size, timeout=timeout)
    _STATE["owned"] = True
    return True


def keep_serving_stores() -> None:
    """Keep rank 0's rendezvous store after ``close()``: started children will meet there again."""
    _STATE["keep"] = True


def destroy_dist_connection() -> bool:
    """Destroy the default group if this package created it; return whether it did."""
    if not _STATE["owned"]:
        return False
    # A live DDP wrapper at destroy time can hang the process when it is freed later.
    gc.collect()
    if dist.is_available() and dist.is_initialized():
        dist.destroy_process_group()
    _STATE["owned"] = False
    if not _STATE["keep"]:
        _STATE["stores"].clear()
    gc.collect()  # frees a store nobody serves any more, which closes its listening socket
    return True


def reduce_op(reduce_op: str | dist.ReduceOp) -> tuple[dist.ReduceOp, bool]:
    """Map "mean"/"sum"/"max"/"min" to a ReduceOp; the bool says to divide by the world size."""
    if isinstance(reduce_op, dist.ReduceOp):
        return reduce_op, False
    name = reduce_op.lower()
    if name in ("mean", "avg"):
        return dist.ReduceOp.SUM, True
    ops = {"sum": dist.ReduceOp.SUM, "max": dist.ReduceOp.MAX, "min": dist.ReduceOp.MIN}
    if name not in ops:
        raise ValueError(f"`reduce_op={reduce_op!r}` is not supported; use one of 'mean', 'sum', 'max', 'min'.")
    return ops[name], False


def to_tensor(value: Any, device: torch.device) -> torch.Tensor:
    """A tensor on ``device`` for a number or tensor (collectives need tensors)."""
    if isinstance(value, torch.Tensor):
        return value.detach().to(device)
    return torch.tensor(value, device=device, dtype=torch.float32)
