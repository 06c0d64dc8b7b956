"""Start the ranks as workers with ``torch.multiprocessing`` (spawn by default)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from typing_extensions import override

from strategies._distributed import LOOPBACK, RENDEZVOUS
from strategies.environments import LocalEnvironment
from strategies.launchers.launcher import Launcher, RankFailedError

if TYPE_CHECKING:
    from strategies.parallel import ParallelStrategy


class MultiprocessingLauncher(Launcher):
    """Spawns one worker per device and runs the Trainer's stage in each; the caller is no rank.

    For ``Trainer(strategy="ddp_spawn", devices=2).fit(model)`` the calls are::

        store = TCPStore("127.0.0.1", <port>, is_master=True)     # in the caller, loopback only
        torch.multiprocessing.start_processes(worker, nprocs=2, start_method="spawn")
        # worker i: LOCAL_RANK=i WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=<port>, then fit

    Everything is pickled to the workers (module, datamodule, callbacks). Rank 0 writes the
    trained weights, the callback metrics and the stage's results to a temporary file; the caller
    loads them (``weights_only=True``), updates its module (``strict=False``: layers created in a
    worker's ``setup`` do not exist in the caller) and returns the results. When a worker raises,
    the others are ended and the error names the rank and carries its traceback.
    """

    def __init__(self, strategy: ParallelStrategy, start_method: str = "spawn") -> None:
        available = mp.get_all_start_methods()
        if start_method not in available:
            raise ValueError(f"`start_method={start_method!r}` is not available here; use one of {available}.")
        self._strategy = strategy
        self.start_method = start_method

    @override
    def launch(self, function: Callable[..., Any], *args: Any, trainer: Any = None, **kwargs: Any) -> Any:
        strategy = self._strategy
        env = self._check_caller()
        world_size = strategy.num_processes * strategy.num_nodes
        # The caller serves the store on 127.0.0.1 (also on a port chosen by MASTER_PORT); every
        # worker, rank 0 included, joins it as a client.
        port = RENDEZVOUS.reserve(env.main_port)
        out_dir = tempfile.mkdtemp(prefix="strategy-compat-spawn-")
        out_path = os.path.join(out_dir, "rank0.pt")
        try:
            RENDEZVOUS.serve_for_others(port, world_size, strategy.timeout)
            context = self._start(_worker, (function, args, kwargs, trainer, port, world_size, out_path))
            _wait(context)
            output = torch.load(out_path, map_location="cpu", weights_only=True)
        finally:
            # The port is spent: the next launch reserves a fresh loopback socket.
            RENDEZVOUS.release(port)
            env.teardown()
            shutil.rmtree(out_dir, ignore_errors=True)
        if trainer is not None:
            trainer._recover_worker_output(output)
        return output["results"]

    def _check_caller(self) -> LocalEnvironment:
        env = self._strategy.cluster_environment
        if not isinstance(env, LocalEnvironment):
            raise RuntimeError(
                f"`ddp_spawn` starts its own workers and cannot run under `{type(env).__name__}`; "
                "use `strategy='ddp'` with torchrun or SLURM."
            )
        if dist.is_available() and dist.is_initialized():
            raise RuntimeError(
                "`ddp_spawn` was called from a process that already has a process group; the workers make "
                "their own. Call `torch.distributed.destroy_process_group()` first, or use `strategy='ddp'`."
            )
        return env

    def _start(self, worker: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        # Marks the workers' environment while they re-import the main module, before they know
        # their rank (libraries that act on rank 0 only can stay quiet until then).
        os.environ["STRATEGIES_SPAWNED_WORKER"] = "1"
        try:
            return mp.start_processes(  # type: ignore[no-untyped-call]  # unannotated in torch
                worker, args=args, nprocs=self._strategy.num_processes, join=False, start_method=self.start_method
            )
        finally:
            del os.environ["STRATEGIES_SPAWNED_WORKER"]


def _wait(context: Any) -> None:
    """Wait for every worker; a failure names the rank, an interrupt ends the workers first."""
    try:
        while not context.join(timeout=0.2):
            pass
    except mp.ProcessRaisedException as err:
        raise RankFailedError(err.error_index, err.msg.split("\n\n", 1)[-1]) from None
    except mp.ProcessExitedException as err:
        raise RankFailedError(err.error_index, f"(exited with code {err.exit_code})") from None
    except BaseException:
        for process in context.processes:
            if process.is_alive():
                process.kill()
            process.join()
        raise


def _unshare(module: torch.nn.Module) -> None:
    """Give this worker its own copy of tensors that pickling put in shared memory.

    torch.multiprocessing pickles CPU tensors through shared memory, so without this every worker
    (and the caller) would update the same parameters: each optimizer step would be applied once
    per worker.
    """
    with torch.no_grad():
        for tensor in (*module.parameters(), *module.buffers()):
            if tensor.is_shared():  # type: ignore[no-untyped-call]  # unannotated in torch
                tensor.data = tensor.data.clone()


def _worker(
    local_rank: int,
    function: Callable[..., Any],
    args: Any,
    kwargs: Any,
    trainer: Any,
    port: int,
    world_size: int,
    out_path: str,
) -> None:
    os.environ.update(
        LOCAL_RANK=str(local_rank), WORLD_SIZE=str(world_size), MASTER_ADDR=LOOPBACK, MASTER_PORT=str(port)
    )
    os.environ.setdefault("NODE_RANK", "0")
    RENDEZVOUS.served_elsewhere(port)
    for arg in args:
        if isinstance(arg, torch.nn.Module):
            _unshare(arg)
    results = function(*args, **kwargs)
    if trainer is not None and trainer.global_rank == 0:
        output = trainer._worker_output(results)
        tmp = Path(out_path + ".tmp")
        torch.save(output, tmp)
        os.replace(tmp, out_path)
