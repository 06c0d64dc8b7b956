"""NVIDIA GPUs through CUDA."""

from __future__ import annotations

from typing import Any

import torch
from typing_extensions import override

from strategies.accelerators.accelerator import Accelerator


class CUDAAccelerator(Accelerator):
    """CUDA devices; one process per device for parallel strategies."""

    name = "cuda"

    @override
    def setup_device(self, device: torch.device) -> None:
        if device.type != "cuda":
            raise ValueError(f"`CUDAAccelerator` got the device `{device}`; expected a CUDA device.")
        # NCCL needs the current device set before the first collective (in the setup hooks).
        torch.cuda.set_device(device)

    @staticmethod
    @override
    def is_available() -> bool:
        return torch.cuda.is_available()

    @staticmethod
    @override
    def auto_device_count() -> int:
        return torch.cuda.device_count()

    @staticmethod
    @override
    def max_device_count() -> int:
        return torch.cuda.device_count()

    @override
    def get_parallel_devices(self, devices: int | list[int]) -> list[torch.device]:
        indices = list(range(devices)) if isinstance(devices, int) else list(devices)
        return [torch.device("cuda", i) for i in indices]

    @override
    @override
    def get_device_stats(self, device: torch.device) -> dict[str, Any]:
        """``torch.cuda.memory_stats(device)``: the caching allocator's counters (bytes, allocations, OOMs)."""
        return dict(torch.cuda.memory_stats(device))

    def teardown(self) -> None:
        torch.cuda.empty_cache()
