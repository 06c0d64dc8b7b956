"""CPU processes."""

from __future__ import annotations

import os
from typing import Any

import torch
from typing_extensions import override

from strategies.accelerators.accelerator import Accelerator


class CPUAccelerator(Accelerator):
    """The CPU; ``devices=N`` means N processes, at most one per core."""

    name = "cpu"

    @override
    def setup_device(self, device: torch.device) -> None:
        if device.type != "cpu":
            raise ValueError(f"`CPUAccelerator` got the device `{device}`; expected a CPU device.")

    @staticmethod
    @override
    def is_available() -> bool:
        return True

    @staticmethod
    @override
    def auto_device_count() -> int:
        return 1

    @staticmethod
    @override
    def max_device_count() -> int:
        return os.cpu_count() or 1

    @override
    def get_parallel_devices(self, devices: int | list[int]) -> list[torch.device]:
        count = devices if isinstance(devices, int) else len(devices)
        return [torch.device("cpu")] * count

    @override
    def get_device_stats(self, device: torch.device) -> dict[str, Any]:
        """``cpu_vm_percent``, ``cpu_percent`` and ``cpu_swap_percent`` (needs ``psutil``: the ``psutil`` extra)."""
        return get_cpu_stats()


def get_cpu_stats() -> dict[str, float]:
    """The machine's memory, CPU and swap use in percent, from ``psutil`` (Lightning's names)."""
    try:
        import psutil
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            "CPU statistics need `psutil`: pip install psutil (or strategy-compat's `psutil` extra).", name="psutil"
        ) from None
    return {
        "cpu_vm_percent": psutil.virtual_memory().percent,
        "cpu_percent": psutil.cpu_percent(),
        "cpu_swap_percent": psutil.swap_memory().percent,
    }
