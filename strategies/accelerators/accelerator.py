"""The accelerator contract: devices only (no training logic)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import torch


class Accelerator(ABC):
    """One kind of device: how to select it and how many there are."""

    name: str = ""

    @abstractmethod
    def setup_device(self, device: torch.device) -> None:
        """Make ``device`` this process's current device (before any collective runs)."""

    @staticmethod
    @abstractmethod
    def is_available() -> bool:
        """Whether this kind of device exists here."""

    @staticmethod
    @abstractmethod
    def auto_device_count() -> int:
        """How many devices ``devices="auto"`` means."""

    @staticmethod
    @abstractmethod
    def max_device_count() -> int:
        """The most devices (processes) a run may ask for on one node."""

    @abstractmethod
    def get_parallel_devices(self, devices: int | list[int]) -> list[torch.device]:
        """The ``torch.device`` of each local rank."""

    def get_device_stats(self, device: torch.device) -> dict[str, Any]:
        """Statistics of ``device`` for ``DeviceStatsMonitor`` (none by default)."""
        return {}

    def teardown(self) -> None:  # noqa: B027 (an optional hook: the base does nothing)
        """Release what ``setup_device`` took."""
