"""The default environment: processes on this machine, rendezvous on the loopback interface."""

from __future__ import annotations

import os

from typing_extensions import override

from strategies.environments.cluster_environment import ClusterEnvironment
from strategies.environments.torchelastic import check_not_partial

_LOOPBACK = "127.0.0.1"


class LocalEnvironment(ClusterEnvironment):
    """Processes on one machine, started by our launchers; the rendezvous is on 127.0.0.1.

    A pure description: reading a property never binds or writes anything. The port is
    ``MASTER_PORT`` when set (it chooses the port, not the interface: the store still listens on
    127.0.0.1 only), else the one the launcher reserved (``set_main_port``), else ``0`` until
    then. ``MASTER_ADDR`` is not read: a local run always meets on 127.0.0.1 (a run over several
    machines goes through torchrun or SLURM, whose environments read it).
    """

    def __init__(self) -> None:
        self._world_size = 1
        self._global_rank = 0
        self._port = 0

    @property
    @override
    def main_address(self) -> str:
        return _LOOPBACK

    @property
    @override
    def main_port(self) -> int:
        """``MASTER_PORT``, else the port the launcher reserved, else 0 (not chosen yet)."""
        if "MASTER_PORT" in os.environ:
            return int(os.environ["MASTER_PORT"])
        return self._port

    def set_main_port(self, port: int) -> None:
        """Record the port the rendezvous reserved for this run (``MASTER_PORT`` still wins)."""
        self._port = port

    @property
    @override
    def creates_processes_externally(self) -> bool:
        # Our subprocess launcher sets LOCAL_RANK in the children it starts.
        return "LOCAL_RANK" in os.environ

    @staticmethod
    @override
    def detect() -> bool:
        return True

    @override
    def world_size(self) -> int:
        return self._world_size

    @override
    def set_world_size(self, size: int) -> None:
        self._world_size = size

    @override
    def global_rank(self) -> int:
        return self._global_rank

    @override
    def set_global_rank(self, rank: int) -> None:
        self._global_rank = rank

    @override
    def local_rank(self) -> int:
        return int(os.environ.get("LOCAL_RANK", 0))

    @override
    def node_rank(self) -> int:
        return int(os.environ.get("NODE_RANK", 0))

    @override
    def validate_settings(self, num_devices: int, num_nodes: int) -> None:
        """A partial torchrun environment (a leftover ``LOCAL_RANK``, ...) is an error now, not a hang."""
        check_not_partial()

    @override
    def teardown(self) -> None:
        """Forget the reserved port (the rendezvous releases the socket)."""
        self._port = 0
