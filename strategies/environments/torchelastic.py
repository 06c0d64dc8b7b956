"""Processes started by ``torchrun`` (torch.distributed.elastic)."""

from __future__ import annotations

import os

from typing_extensions import override

from strategies.environments.cluster_environment import ClusterEnvironment

_REQUIRED = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID")
# Set by torchrun (torch.distributed.elastic) for every rank, and by nothing else we know of.
_TORCHRUN_ONLY = (
    "TORCHELASTIC_RUN_ID",
    "GROUP_RANK",
    "GROUP_WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "ROLE_RANK",
    "ROLE_WORLD_SIZE",
    "TORCHELASTIC_RESTART_COUNT",
    "TORCHELASTIC_MAX_RESTARTS",
)
# What a rank that something else started needs to find the others (our launchers set all of them).
_RANK_NEEDS = ("LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT")


def check_not_partial() -> None:
    """Raise at once when the environment holds part of what torchrun sets for a rank, not all of it.

    ``LOCAL_RANK`` says "this process is one rank of a run someone else started"; without
    ``WORLD_SIZE`` and ``MASTER_PORT`` (or with torchrun's own variables but not the rest of them,
    so that `TorchElasticEnvironment` is not detected) the process would wait for ranks that were never
    started until the rendezvous timed out (30 minutes by default). A shell that ran torchrun, or a
    job script that exported its variables, leaves them behind.
    """
    present = [name for name in (*_REQUIRED, *_TORCHRUN_ONLY) if name in os.environ]
    torchrun_marks = [name for name in _TORCHRUN_ONLY if name in os.environ]
    started_as_rank = "LOCAL_RANK" in os.environ
    if not torchrun_marks and (not started_as_rank or all(name in os.environ for name in _RANK_NEEDS)):
        return
    missing = [name for name in _REQUIRED if name not in os.environ]
    shown = ", ".join(f"{name}={os.environ[name]}" for name in present)
    raise RuntimeError(
        f"This process has some of the variables torchrun sets for each rank ({shown}) but not the others "
        f"(missing: {', '.join(missing)}), so it would wait for ranks that were never started. They are "
        "probably left over from a shell or job script that ran torchrun. Unset them "
        f"(`unset {' '.join(present)}`) to let the Trainer start its ranks itself, or run the script under "
        "torchrun (`torchrun --nproc-per-node N script.py`), which sets all of them."
    )


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
