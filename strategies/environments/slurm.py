"""Processes started by SLURM (``srun``), one task per device."""

from __future__ import annotations

import os
import re

from typing_extensions import override

from strategies.environments.cluster_environment import ClusterEnvironment


class SLURMEnvironment(ClusterEnvironment):
    """Reads ranks from the SLURM task variables; the main address is the first node of the job."""

    @property
    @override
    def main_address(self) -> str:
        if "MASTER_ADDR" in os.environ:
            return os.environ["MASTER_ADDR"]
        nodes = os.environ.get("SLURM_JOB_NODELIST") or os.environ.get("SLURM_NODELIST", "127.0.0.1")
        return _first_host(nodes)

    @property
    @override
    def main_port(self) -> int:
        if "MASTER_PORT" in os.environ:
            return int(os.environ["MASTER_PORT"])
        # Every task of a job derives the same port from the job id, in the unprivileged range.
        job_id = os.environ.get("SLURM_JOB_ID", "0")
        return 10000 + int(job_id[-4:] or 0)

    @property
    @override
    def creates_processes_externally(self) -> bool:
        return True

    @staticmethod
    @override
    def detect() -> bool:
        # An interactive allocation (`salloc` then `python train.py`) is not a task launch.
        return "SLURM_NTASKS" in os.environ and os.environ.get("SLURM_JOB_NAME") not in ("bash", "interactive")

    @override
    def world_size(self) -> int:
        return int(os.environ["SLURM_NTASKS"])

    @override
    def set_world_size(self, size: int) -> None:
        if size != self.world_size():
            raise ValueError(
                f"SLURM started SLURM_NTASKS={self.world_size()} tasks but the Trainer asks for {size} "
                "processes. Request `--ntasks-per-node=<devices>` and `--nodes=<num_nodes>`."
            )

    @override
    def global_rank(self) -> int:
        return int(os.environ["SLURM_PROCID"])

    @override
    def set_global_rank(self, rank: int) -> None:
        # SLURM fixes the rank; nothing to set.
        pass

    @override
    def local_rank(self) -> int:
        return int(os.environ["SLURM_LOCALID"])

    @override
    def node_rank(self) -> int:
        return int(os.environ.get("SLURM_NODEID", 0))

    @override
    def validate_settings(self, num_devices: int, num_nodes: int) -> None:
        per_node = os.environ.get("SLURM_NTASKS_PER_NODE")
        if per_node is not None and per_node.split("(")[0] != str(num_devices):
            raise ValueError(
                f"You set `devices={num_devices}` but SLURM_NTASKS_PER_NODE={per_node}. "
                f"Submit with `#SBATCH --ntasks-per-node={num_devices}`."
            )
        if num_devices * num_nodes != self.world_size():
            raise ValueError(
                f"You set `devices={num_devices}` and `num_nodes={num_nodes}` ({num_devices * num_nodes} "
                f"processes) but SLURM_NTASKS={self.world_size()}. Match `--ntasks-per-node` and `--nodes`."
            )


def _first_host(nodelist: str) -> str:
    """The first host of a SLURM node list: ``node[03-05,07],gpu1`` -> ``node03``."""
    match = re.match(r"([^,\[]+)(\[([^\]]+)\])?", nodelist.strip())
    if match is None:
        return nodelist
    prefix, _, ranges = match.groups()
    if not ranges:
        return prefix
    first = ranges.split(",")[0].split("-")[0]
    return prefix + first
