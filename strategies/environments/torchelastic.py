"""Processes started by ``torchrun`` (torch.distributed.elastic)."""

from __future__ import annotations

import os

from typing_extensions import override

from strategies.environments.cluster_environment import ClusterEnvironment

_REQUIRED = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")


class TorchElasticEnvironment(ClusterEnvironment):
    """Reads ranks and the rendezvous from the variables torchrun sets; never writes them."""

    @property
    @override
    def main_address(self) -> str:
        return os.environ["MASTER_ADDR"]

    @property
    @override
    def main_port(self) -> int:
        return int(os.environ["MASTER_PORT"])

    @property
    @override
    def creates_processes_externally(self) -> bool:
        return True

    @staticmethod
    @override
    def detect() -> bool:
        return all(name in os.environ for name in _REQUIRED)

    @override
    def world_size(self) -> int:
        return int(os.environ["WORLD_SIZE"])

    @override
    def set_world_size(self, size: int) -> None:
        if size != self.world_size():
            raise ValueError(
                f"torchrun started {self.world_size()} processes (WORLD_SIZE) but the Trainer asks for "
                f"{size}. Set `devices` and `num_nodes` to match `--nproc-per-node` and `--nnodes`."
            )

    @override
    def global_rank(self) -> int:
        return int(os.environ["RANK"])

    @override
    def set_global_rank(self, rank: int) -> None:
        # torchrun fixes the rank; nothing to set.
        pass

    @override
    def local_rank(self) -> int:
        return int(os.environ["LOCAL_RANK"])

    @override
    def node_rank(self) -> int:
        return int(os.environ.get("GROUP_RANK", 0))

    @override
    def validate_settings(self, num_devices: int, num_nodes: int) -> None:
        expected = num_devices * num_nodes
        if expected != self.world_size():
            raise ValueError(
                f"You set `devices={num_devices}` and `num_nodes={num_nodes}`, {expected} processes in all, "
                f"but torchrun started WORLD_SIZE={self.world_size()}. Make `devices` match "
                "`--nproc-per-node` and `num_nodes` match `--nnodes`."
            )
