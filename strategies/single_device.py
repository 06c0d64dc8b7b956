"""One process, one device."""

from __future__ import annotations

import torch
from typing_extensions import override

from strategies.accelerators import Accelerator
from strategies.precision import Precision
from strategies.strategy import Strategy


class SingleDeviceStrategy(Strategy):
    """Runs the module in this process on one device; nothing is launched or wrapped.

    Args:
        device: the device, e.g. ``"cpu"`` or ``"cuda:0"``.
    """

    def __init__(
        self,
        device: str | torch.device = "cpu",
        accelerator: Accelerator | None = None,
        precision: Precision | None = None,
    ) -> None:
        super().__init__(accelerator=accelerator, precision=precision)
        self._root_device = torch.device(device)

    @property
    @override
    def root_device(self) -> torch.device:
        return self._root_device

    @classmethod
    def register_strategies(cls, registry) -> None:
        """Add ``"single_device"`` to the registry."""
        registry.register("single_device", cls, "One process on one device.")
