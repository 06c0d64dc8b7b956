"""The cluster-environment contract: where the ranks come from and where they meet."""

from __future__ import annotations

from abc import ABC, abstractmethod


class ClusterEnvironment(ABC):
    """Describes the processes of a run: ranks, world size and the rendezvous address."""

    @property
    @abstractmethod
    def main_address(self) -> str:
        """The address every rank connects to for the rendezvous."""

    @property
    @abstractmethod
    def main_port(self) -> int:
        """The port of the rendezvous on ``main_address``."""

    @property
    @abstractmethod
    def creates_processes_externally(self) -> bool:
        """Whether something outside (torchrun, SLURM, our own launcher) already made the processes."""

    @staticmethod
    def detect() -> bool:
        """Whether the current process runs in this environment (used by auto-detection only).

        Not abstract on purpose: an environment passed to the Trainer in ``plugins`` is used as
        given, so custom environments (and old ones migrated from Lightning 1.2, which had no
        ``detect``) need not implement it.
        """
        return False

    @abstractmethod
    def world_size(self) -> int:
        """The number of processes over all nodes."""

    @abstractmethod
    def set_world_size(self, size: int) -> None:
        """Set the world size where the environment does not fix it itself."""

    @abstractmethod
    def global_rank(self) -> int:
        """The rank of this process over all nodes."""

    @abstractmethod
    def set_global_rank(self, rank: int) -> None:
        """Set the global rank where the environment does not fix it itself."""

    @abstractmethod
    def local_rank(self) -> int:
        """The rank of this process on its node."""

    @abstractmethod
    def node_rank(self) -> int:
        """The rank of this node."""

    def validate_settings(self, num_devices: int, num_nodes: int) -> None:  # noqa: B027 (an optional hook: the base does nothing)
        """Raise ``ValueError`` when the Trainer's devices/num_nodes disagree with the environment."""

    def teardown(self) -> None:  # noqa: B027 (an optional hook: the base does nothing)
        """Release what the environment holds (sockets, variables)."""
