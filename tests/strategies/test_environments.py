"""Cluster environments read (never write) their variables; detection order SLURM > torchrun > local."""

from __future__ import annotations

import os

import pytest

from strategies import LocalEnvironment, SLURMEnvironment, TorchElasticEnvironment
from strategies._connector import detect_environment
from strategies.environments.slurm import _first_host

TORCHRUN = {"RANK": "3", "WORLD_SIZE": "4", "LOCAL_RANK": "1", "MASTER_ADDR": "10.0.0.1", "MASTER_PORT": "29500",
            "TORCHELASTIC_RUN_ID": "x", "GROUP_RANK": "1"}
SLURM = {"SLURM_NTASKS": "4", "SLURM_PROCID": "2", "SLURM_LOCALID": "0", "SLURM_NODEID": "1", "SLURM_JOB_ID": "123456",
         "SLURM_JOB_NODELIST": "gpu[07-09,12],cpu1", "SLURM_JOB_NAME": "train", "SLURM_NTASKS_PER_NODE": "2"}


@pytest.fixture
def clean_env(monkeypatch):
    for key in list(os.environ):
        if key.startswith(("SLURM_", "TORCHELASTIC")) or key in TORCHRUN:
            monkeypatch.delenv(key)
    return monkeypatch


def test_local_is_the_default_and_uses_loopback(clean_env):
    env = detect_environment()
    assert isinstance(env, LocalEnvironment)
    assert env.main_address == "127.0.0.1"
    assert env.main_port == 0, "a port is reserved by the launcher, never by reading the environment"
    env.set_main_port(4321)
    assert env.main_port == 4321
    clean_env.setenv("MASTER_PORT", "5555")
    clean_env.setenv("MASTER_ADDR", "10.1.2.3")
    assert (env.main_address, env.main_port) == ("127.0.0.1", 5555), "a local run meets on loopback"
    assert not env.creates_processes_externally
    env.teardown()


def test_torchelastic(clean_env):
    for k, v in TORCHRUN.items():
        clean_env.setenv(k, v)
    env = detect_environment()
    assert isinstance(env, TorchElasticEnvironment) and env.creates_processes_externally
    assert (env.global_rank(), env.world_size(), env.local_rank(), env.node_rank()) == (3, 4, 1, 1)
    assert (env.main_address, env.main_port) == ("10.0.0.1", 29500)
    env.validate_settings(num_devices=2, num_nodes=2)
    with pytest.raises(ValueError, match=r"`devices=3` and `num_nodes=2`, 6 processes.*WORLD_SIZE=4"):
        env.validate_settings(num_devices=3, num_nodes=2)
    assert dict(os.environ, **TORCHRUN) == dict(os.environ)  # nothing written


def test_slurm(clean_env):
    for k, v in SLURM.items():
        clean_env.setenv(k, v)
    env = detect_environment()
    assert isinstance(env, SLURMEnvironment)
    assert (env.global_rank(), env.world_size(), env.local_rank(), env.node_rank()) == (2, 4, 0, 1)
    assert env.main_address == "gpu07"
    assert env.main_port == 10000 + 3456
    env.validate_settings(num_devices=2, num_nodes=2)
    with pytest.raises(ValueError, match="ntasks-per-node=4"):
        env.validate_settings(num_devices=4, num_nodes=1)


def test_interactive_slurm_is_not_a_task_launch(clean_env):
    for k, v in {**SLURM, "SLURM_JOB_NAME": "bash"}.items():
        clean_env.setenv(k, v)
    assert isinstance(detect_environment(), LocalEnvironment)


@pytest.mark.parametrize(
    "nodes,first", [("node1", "node1"), ("n[03-05]", "n03"), ("a[1,4],b2", "a1"), ("x-1,y", "x-1")]
)
def test_first_host(nodes, first):
    assert _first_host(nodes) == first
