"""The rendezvous and the default process group of this process, owned by one object.

``RENDEZVOUS`` is the only place that binds a rendezvous socket, serves or joins a
``TCPStore``, initialises or destroys the default process group. Launchers and strategies call
its methods; cluster environments only describe where the ranks meet.

Where the store listens:

- a local run (``LocalEnvironment``: our launchers, one machine) always binds 127.0.0.1, also
  when the user chose the port with ``MASTER_PORT`` (that variable chooses the port, not the
  interface);
- a cluster run whose main address is a loopback address (a one-machine SLURM or custom run)
  binds 127.0.0.1 too;
- only a cluster run whose main address names a host (``MASTER_ADDR``/the first SLURM node) lets
  torch listen on every interface, because the other nodes must reach it. torchrun's agent
  serves its own store; we join it.
"""

from __future__ import annotations

import datetime
import errno
import gc
import ipaddress
import os
import socket
import time
from typing import Any

import torch
import torch.distributed as dist

from strategies.environments import ClusterEnvironment, LocalEnvironment, TorchElasticEnvironment

DEFAULT_TIMEOUT = datetime.timedelta(minutes=30)
LOOPBACK = "127.0.0.1"
# How long to retry binding a fixed port that a store of this process is still releasing.
_BIND_RETRY_S = 10.0
_ROUNDS_KEY = "strategies/rounds"


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


def is_loopback(address: str) -> bool:
    """Whether ``address`` (an IP literal or ``localhost``) is this machine's loopback interface."""
    if address == "localhost":
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def bind_loopback(port: int = 0) -> socket.socket:
    """A socket listening on 127.0.0.1:``port`` (0: the OS picks a free port)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # Lets the port be bound again while old connections sit in TIME_WAIT.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    deadline = time.monotonic() + _BIND_RETRY_S
    while True:
        try:
            sock.bind((LOOPBACK, port))
            break
        except OSError as err:
            # A store of ours on this port may still be closing (a fixed MASTER_PORT is reused).
            if err.errno != errno.EADDRINUSE or port == 0 or time.monotonic() > deadline:
                sock.close()
                if err.errno == errno.EADDRINUSE:
                    raise OSError(
                        err.errno,
                        f"The rendezvous port 127.0.0.1:{port} is in use by another program. Unset `MASTER_PORT` "
                        "(a free port is then chosen), or set it to a free port.",
                    ) from err
                raise
            time.sleep(0.1)
    sock.listen()
    return sock


class Rendezvous:
    """Reserves the rendezvous socket, serves or joins the store, and owns the default process group.

    Rounds: every group made on a store gets a number, and the process serving the store hands
    the numbers out (a counter in the store) and marks a round complete once its group is made.
    A client joins the newest round that is neither complete nor one it joined before, so a rank
    started later (after a failure, say) meets the server in the same round, and no group ever
    reads the keys of an earlier one on a store that is still served.
    """

    def __init__(self) -> None:
        self._reserved: dict[int, socket.socket] = {}  # loopback ports held, not yet serving
        self._served: dict[int, dist.Store] = {}  # stores this process serves, by port
        self._elsewhere: set[int] = set()  # ports whose store another process serves (spawn's parent)
        self._joined: dict[tuple[str, int], int] = {}  # the last round joined on each (address, port)
        self._keep: set[int] = set()  # served ports that outlive close() (started children meet there)
        self._owned = False
        self._torchrun_groups = 0  # groups made under torchrun's agent store by this process
        self._group_store: dist.Store | None = None  # the store of the group made here (its round's prefix)

    # -- the socket and the store ----------------------------------------------------------------

    def reserve(self, port: int = 0) -> int:
        """Bind 127.0.0.1:``port`` (0: a free one) and hold it until a store takes it; return the port."""
        if port and (port in self._reserved or port in self._served):
            return port
        sock = bind_loopback(port)
        port = sock.getsockname()[1]
        self._reserved[port] = sock
        return port

    def serve(self, port: int, world_size: int, timeout: datetime.timedelta = DEFAULT_TIMEOUT) -> dist.Store:
        """The store this process serves on 127.0.0.1:``port`` (made from the reserved socket on first use)."""
        store = self._served.get(port)
        if store is None:
            self.reserve(port)
            # detach(): the store owns the fd from here (closing it twice broke a later bind).
            fd = self._reserved.pop(port).detach()
            store = dist.TCPStore(
                LOOPBACK, port, world_size, True, timeout=timeout, master_listen_fd=fd, wait_for_workers=False
            )
            self._served[port] = store
        return store

    def serve_for_others(self, port: int, world_size: int, timeout: datetime.timedelta = DEFAULT_TIMEOUT) -> None:
        """Serve the store for ranks that all run elsewhere (the spawn parent): open their first round."""
        store = self.serve(port, world_size, timeout)
        store.add(_ROUNDS_KEY, 1)

    def served_elsewhere(self, port: int) -> None:
        """In a spawned worker: the store on ``port`` is served by the parent; rank 0 is a client too."""
        self._elsewhere.add(port)

    def keep(self, port: int) -> None:
        """Keep serving ``port`` after ``close``: children this process started meet there again."""
        self._keep.add(port)

    def release(self, port: int) -> None:
        """Stop serving ``port`` (and drop a socket held for it); the port is free again."""
        self._keep.discard(port)
        self._elsewhere.discard(port)
        self._joined = {key: n for key, n in self._joined.items() if key[1] != port}
        sock = self._reserved.pop(port, None)
        if sock is not None:
            sock.close()
        if self._served.pop(port, None) is not None:
            gc.collect()  # frees the store, which closes its listening socket

    def serving(self) -> list[int]:
        """The ports this process serves a store on (or holds a socket for)."""
        return sorted({*self._served, *self._reserved})

    # -- the process group -----------------------------------------------------------------------

    @property
    def owns_group(self) -> bool:
        """Whether the default process group was made here (and ``close`` destroys it)."""
        return self._owned and dist.is_available() and dist.is_initialized()

    def init_process_group(
        self,
        environment: ClusterEnvironment,
        backend: str,
        global_rank: int,
        world_size: int,
        timeout: datetime.timedelta = DEFAULT_TIMEOUT,
    ) -> bool:
        """Initialise the default process group once; return False when a compatible one was reused."""
        if check_existing_group(backend, world_size):
            return False
        if isinstance(environment, TorchElasticEnvironment):
            self._init_under_torchrun(backend, global_rank, world_size, timeout)
            return True
        address, port = environment.main_address, environment.main_port
        if isinstance(environment, LocalEnvironment):
            address = LOOPBACK
            if not port:
                port = self.reserve(0)
                environment.set_main_port(port)
        server = global_rank == 0 and port not in self._elsewhere
        if server and (isinstance(environment, LocalEnvironment) or is_loopback(address)):
            store = self.serve(port, world_size, timeout)
        elif server:
            # A multi-node run: the other nodes reach this host by MASTER_ADDR, so torch listens on
            # every interface (an explicit choice: a cluster environment named this host).
            store = self._served.get(port) or dist.TCPStore(
                address, port, world_size, True, timeout=timeout, wait_for_workers=False
            )
            self._served[port] = store
        else:
            store = dist.TCPStore(address, port, world_size, False, timeout=timeout)
        number = self._next_round(store, (address, port), server, timeout)
        prefixed = dist.PrefixStore(f"strategies/{number}/", store)
        prefixed.set(f"joined/{global_rank}", "1")
        try:
            dist.init_process_group(backend, store=prefixed, rank=global_rank, world_size=world_size, timeout=timeout)
        except Exception as err:
            _name_absent_ranks(err, prefixed, world_size, f"{address}:{port}")
            raise
        if server:
            store.set(f"strategies/{number}/complete", "1")  # a rank started later waits for the next round
        self._owned = True
        self._group_store = prefixed
        return True

    def _init_under_torchrun(
        self, backend: str, global_rank: int, world_size: int, timeout: datetime.timedelta
    ) -> None:
        """torchrun set every variable env:// reads. Where its agent serves the store, meet there under
        a prefix of our own per restart attempt and per group of this process: torchrun's static
        rendezvous (``--master-addr/--master-port``) keeps one agent store across ``--max-restarts``,
        so a restarted rank would read the previous attempt's (dead) gloo addresses from it and fail
        with "connectFullMesh ... Connection refused"."""
        if os.environ.get("TORCHELASTIC_USE_AGENT_STORE") != "True":
            dist.init_process_group(backend, rank=global_rank, world_size=world_size, timeout=timeout)
            self._owned = True
            self._group_store = dist.PrefixStore("strategies/", dist.distributed_c10d._get_default_store())
            return
        self._torchrun_groups += 1
        attempt = os.environ.get("TORCHELASTIC_RESTART_COUNT", "0")
        agent = dist.TCPStore(
            os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"]), world_size, False, timeout=timeout
        )
        store = dist.PrefixStore(f"strategies/attempt_{attempt}/group_{self._torchrun_groups}/", agent)
        dist.init_process_group(backend, store=store, rank=global_rank, world_size=world_size, timeout=timeout)
        self._owned = True
        self._group_store = store

    def group_store(self) -> dist.Store | None:
        """The store of the default group made here (keys under its round's prefix), or None."""
        return self._group_store if self.owns_group else None

    def _next_round(self, store: dist.Store, key: tuple[str, int], server: bool, timeout: datetime.timedelta) -> int:
        """The server opens a new round; a client waits for a round newer than its last one and joins it."""
        if server:
            number = store.add(_ROUNDS_KEY, 1)
        else:
            last = self._joined.get(key, 0)
            deadline = time.monotonic() + timeout.total_seconds()
            number = store.add(_ROUNDS_KEY, 0)
            while number <= last or store.check([f"strategies/{number}/complete"]):
                if time.monotonic() > deadline:
                    raise TimeoutError(
                        f"Rank 0 did not open a new rendezvous round on {key[0]}:{key[1]} within {timeout}: it "
                        "is not calling `fit`/`validate`/`test`/`predict` in step with this rank."
                    )
                time.sleep(0.05)
                number = store.add(_ROUNDS_KEY, 0)
        self._joined[key] = number
        return number

    def close(self) -> bool:
        """Destroy the default group if this object made it; drop the stores not kept. Return whether it did."""
        destroyed = False
        if self._owned:
            # A live DDP wrapper at destroy time can hang the process when it is freed later.
            gc.collect()
            if dist.is_available() and dist.is_initialized():
                dist.destroy_process_group()
                destroyed = True
            self._owned = False
            self._group_store = None
        for port in [p for p in self.serving() if p not in self._keep]:
            self.release(port)
        return destroyed


def _name_absent_ranks(err: BaseException, store: dist.Store, world_size: int, where: str) -> None:
    """On a failed rendezvous, add which ranks never joined it to ``err``."""
    try:
        absent = [rank for rank in range(world_size) if not store.check([f"joined/{rank}"])]
    except Exception:  # the store itself is gone: nothing more to say
        return
    if absent:
        err.add_note(
            f"Rank{'s' if len(absent) > 1 else ''} {', '.join(map(str, absent))} of {world_size} did not "
            f"join the rendezvous on {where} before the timeout."
        )


#: The one rendezvous of this process.
RENDEZVOUS = Rendezvous()


def reduce_op(reduce_op: str | dist.ReduceOp) -> tuple[dist.ReduceOp | dist.ReduceOp.RedOpType, bool]:
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


def env_flag_seconds(name: str, default: float) -> float:
    """A number of seconds from the environment variable ``name``, else ``default``."""
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"`{name}={raw!r}` is not a number of seconds; unset it or set e.g. `{name}=60`.") from None
