"""One process, one device."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from typing_extensions import override

from strategies.accelerators import Accelerator
from strategies.precision import Precision
from strategies.strategy import Strategy

if TYPE_CHECKING:
    from strategies.registry import StrategyRegistry


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
    @override
    def register_strategies(cls, registry: StrategyRegistry) -> None:
        """Add ``"single_device"`` to the registry."""
        registry.register("single_device", cls, "One process on one device.")
