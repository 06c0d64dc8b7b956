"""The default environment: processes on this machine, rendezvous on the loopback interface."""

from __future__ import annotations

import errno
import os
import socket
import time

from typing_extensions import override

from strategies.environments.cluster_environment import ClusterEnvironment

_LOOPBACK = "127.0.0.1"


class LocalEnvironment(ClusterEnvironment):
    """Processes on one machine, started by our launchers; rendezvous on 127.0.0.1 and a free port.

    The port is reserved by binding a socket to ``127.0.0.1:0`` and keeping it open: rank 0 hands
    that socket to torch's ``TCPStore`` (``master_listen_fd``), so the store listens on loopback
    only (torch otherwise listens on all interfaces) and no other process can take the port
    between choosing and using it. ``MASTER_PORT``/``MASTER_ADDR`` in the environment win.
    """

    def __init__(self) -> None:
        self._world_size = 1
        self._global_rank = 0
        self._listen_socket: socket.socket | None = None
        self._port: int | None = None
        # Set by the spawn launcher: the parent hosts the store, so rank 0 is a client too.
        self._external_store = False

    @property
    @override
    def main_address(self) -> str:
        return os.environ.get("MASTER_ADDR", _LOOPBACK)

    @property
    @override
    def main_port(self) -> int:
        if "MASTER_PORT" in os.environ:
            return int(os.environ["MASTER_PORT"])
        if self._port is None:
            self._reserve(0)
        return self._port

    def _reserve(self, port: int) -> int:
        """Bind and hold a listening socket on 127.0.0.1 (``port=0``: the OS picks a free one)."""
        self.teardown()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # Lets the port be bound again while old connections sit in TIME_WAIT.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        deadline = time.monotonic() + 10
        while True:
            try:
                sock.bind((_LOOPBACK, port))
                break
            except OSError as err:
                # A store on this port may still be closing (the same port is reused after close()).
                if err.errno != errno.EADDRINUSE or port == 0 or time.monotonic() > deadline:
                    sock.close()
                    raise
                time.sleep(0.1)
        sock.listen()
        self._listen_socket = sock
        self._port = sock.getsockname()[1]
        return self._port

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

    def _take_listen_fd(self) -> int | None:
        """The reserved listening socket's fd, handed over once (the store then owns it)."""
        if self._listen_socket is None:
            return None
        fd = self._listen_socket.detach()
        self._listen_socket = None
        return fd

    @override
    def teardown(self) -> None:
        if self._listen_socket is not None:
            self._listen_socket.close()
            self._listen_socket = None
        self._port = None
