"""The rendezvous owner: loopback-only listening (also with MASTER_PORT), rounds, keep/release."""

from __future__ import annotations

import datetime
import socket
import threading

import pytest
import torch.distributed as dist
from _helpers import free_port
from probe import listeners

from strategies import LocalEnvironment, SLURMEnvironment
from strategies._distributed import RENDEZVOUS, Rendezvous

TIMEOUT = datetime.timedelta(seconds=20)


LOOPBACK_ONLY = ["0100007F"]


def test_store_listens_on_loopback_only():
    env = LocalEnvironment()
    assert env.main_port == 0, "reading the environment must not reserve a port"
    try:
        assert RENDEZVOUS.init_process_group(env, "gloo", 0, 1, TIMEOUT) is True
        assert dist.is_initialized()
        port = env.main_port
        assert port > 0
        assert listeners(port) == LOOPBACK_ONLY, f"port {port} listens on {listeners(port)}"
    finally:
        RENDEZVOUS.close()
        env.teardown()
    assert listeners(port) == [], "close() left the store listening"


def test_master_port_chooses_the_port_not_the_interface(monkeypatch):
    port = free_port()
    monkeypatch.setenv("MASTER_PORT", str(port))
    env = LocalEnvironment()
    try:
        RENDEZVOUS.init_process_group(env, "gloo", 0, 1, TIMEOUT)
        assert listeners(port) == LOOPBACK_ONLY, f"MASTER_PORT={port} listens on {listeners(port)}"
    finally:
        RENDEZVOUS.close()
    assert listeners(port) == []


def test_a_cluster_run_on_a_loopback_address_stays_on_loopback(monkeypatch):
    port = free_port()
    for key, value in {
        "SLURM_NTASKS": "1",
        "SLURM_PROCID": "0",
        "SLURM_LOCALID": "0",
        "SLURM_NODEID": "0",
        "SLURM_JOB_NODELIST": "127.0.0.1",
        "SLURM_JOB_ID": "1",
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setenv("MASTER_PORT", str(port))
    try:
        RENDEZVOUS.init_process_group(SLURMEnvironment(), "gloo", 0, 1, TIMEOUT)
        assert listeners(port) == LOOPBACK_ONLY
    finally:
        RENDEZVOUS.close()


def test_compatible_group_is_reused_not_reinitialised():
    env = LocalEnvironment()
    try:
        assert RENDEZVOUS.init_process_group(env, "gloo", 0, 1, TIMEOUT) is True
        assert RENDEZVOUS.init_process_group(LocalEnvironment(), "gloo", 0, 1) is False
    finally:
        RENDEZVOUS.close()
        env.teardown()
    assert not dist.is_initialized()


def test_reserve_holds_the_port_until_release():
    owner = Rendezvous()
    port = owner.reserve()
    assert listeners(port) == LOOPBACK_ONLY
    with socket.socket() as other, pytest.raises(OSError):
        other.bind(("127.0.0.1", port))
    owner.release(port)
    assert listeners(port) == []


def test_close_keeps_the_stores_it_was_told_to_keep():
    owner = Rendezvous()
    kept, dropped = owner.reserve(), owner.reserve()
    owner.serve(kept, 2, TIMEOUT)
    owner.serve(dropped, 2, TIMEOUT)
    owner.keep(kept)
    owner.close()
    assert owner.serving() == [kept]
    assert listeners(kept) == LOOPBACK_ONLY and listeners(dropped) == []
    owner.release(kept)
    assert listeners(kept) == []


def test_a_fixed_port_in_use_by_another_program_names_the_fix(monkeypatch):
    monkeypatch.setattr("strategies._distributed._BIND_RETRY_S", 0.2)
    with socket.socket() as other:
        other.bind(("127.0.0.1", 0))
        other.listen()
        port = other.getsockname()[1]
        with pytest.raises(OSError, match=rf"127.0.0.1:{port} is in use.*Unset `MASTER_PORT`"):
            Rendezvous().reserve(port)


def test_rounds_agree_for_a_rank_started_after_a_completed_round():
    """A new client (a rank restarted after a failure) joins the server's next round, not the spent one."""
    server = Rendezvous()
    port = server.reserve()
    store = server.serve(port, 3, TIMEOUT)
    key = ("127.0.0.1", port)
    first_client = Rendezvous()
    client_store = dist.TCPStore("127.0.0.1", port, 3, False, timeout=TIMEOUT)
    assert server._next_round(store, key, True, TIMEOUT) == 1
    assert first_client._next_round(client_store, key, False, TIMEOUT) == 1
    store.set("strategies/1/complete", "1")  # what the server writes once the group exists

    late_client = Rendezvous()
    joined: list[int] = []
    waiter = threading.Thread(target=lambda: joined.append(late_client._next_round(client_store, key, False, TIMEOUT)))
    waiter.start()
    waiter.join(0.5)
    assert waiter.is_alive(), "the late rank joined round 1, which is complete"
    assert server._next_round(store, key, True, TIMEOUT) == 2
    waiter.join(10)
    assert joined == [2]
    # The first client, calling again (fit after close), meets the server in round 2 as well.
    assert first_client._next_round(client_store, key, False, TIMEOUT) == 2
    server.release(port)


def test_a_client_waiting_for_a_round_times_out_naming_the_cause():
    server = Rendezvous()
    port = server.reserve()
    server.serve(port, 2, TIMEOUT)
    client_store = dist.TCPStore("127.0.0.1", port, 2, False, timeout=TIMEOUT)
    with pytest.raises(TimeoutError, match="Rank 0 did not open a new rendezvous round"):
        Rendezvous()._next_round(client_store, ("127.0.0.1", port), False, datetime.timedelta(seconds=0.3))
    server.release(port)


def test_a_rank_that_never_joins_is_named_when_the_rendezvous_times_out():
    env = LocalEnvironment()
    try:
        with pytest.raises(Exception) as info:
            RENDEZVOUS.init_process_group(env, "gloo", 0, 2, datetime.timedelta(seconds=2))
        assert "Rank 1 of 2 did not join the rendezvous on 127.0.0.1:" in "\n".join(info.value.__notes__)
        assert not dist.is_initialized()
    finally:
        RENDEZVOUS.close()
        env.teardown()
