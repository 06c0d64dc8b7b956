"""The local rendezvous listens on 127.0.0.1 only, on a port the OS chose."""

from __future__ import annotations

import datetime

import torch.distributed as dist

from strategies import LocalEnvironment
from strategies._distributed import destroy_dist_connection, init_dist_connection


def _listeners(port: int) -> list[str]:
    """Local addresses (hex, as /proc/net shows them) listening on ``port``."""
    found = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as f:
            next(f)
            for line in f:
                local, state = line.split()[1], line.split()[3]
                address, hex_port = local.rsplit(":", 1)
                if state == "0A" and int(hex_port, 16) == port:
                    found.append(address)
    return found


def test_store_listens_on_loopback_only():
    env = LocalEnvironment()
    port = env.main_port
    try:
        assert init_dist_connection(env, "gloo", 0, 1, datetime.timedelta(seconds=20)) is True
        assert dist.is_initialized()
        listeners = _listeners(port)
        assert listeners == ["0100007F"], f"port {port} listens on {listeners}; expected 127.0.0.1 only"
    finally:
        destroy_dist_connection()
        env.teardown()


def test_compatible_group_is_reused_not_reinitialised():
    env = LocalEnvironment()
    try:
        assert init_dist_connection(env, "gloo", 0, 1, datetime.timedelta(seconds=20)) is True
        assert init_dist_connection(LocalEnvironment(), "gloo", 0, 1) is False
    finally:
        destroy_dist_connection()
        env.teardown()
    assert not dist.is_initialized()
