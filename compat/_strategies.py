"""The strategies ``compat.Trainer`` builds from names (``"ddp"``, ``"auto"``, ...).

They are the new strategies with the old-hook bridges of ``compat.plugins`` (so an old
``Accelerator`` container's or precision plugin's overrides are called at the matching steps)
and no deprecation warning of their own: the user did not write an old class name.
"""

from __future__ import annotations

from typing import Any

from compat.plugins.training_type import DDPPlugin, DDPSpawnPlugin, SingleDevicePlugin
from strategies.registry import StrategyRegistry
from strategies.strategy import Strategy


class DDPStrategy(DDPPlugin):
    """``strategies.DDPStrategy`` with the old-hook bridges (built by ``compat.Trainer`` from ``"ddp"``)."""


class DDPSpawnStrategy(DDPSpawnPlugin):
    """``strategies.DDPSpawnStrategy`` with the old-hook bridges (from ``"ddp_spawn"``)."""


class SingleDeviceStrategy(SingleDevicePlugin):
    """``strategies.SingleDeviceStrategy`` with the old-hook bridges (from ``"single_device"``)."""


class CompatRegistry(StrategyRegistry):
    """The strategies registry, with the bridged classes for the names above."""

    _OVERRIDES: dict[str, type[Strategy]] = {
        "ddp": DDPStrategy,
        "ddp_spawn": DDPSpawnStrategy,
        "single_device": SingleDeviceStrategy,
    }

    def __init__(self, base: StrategyRegistry) -> None:
        self._base = base

    @property
    def _entries(self) -> dict[str, Any]:  # type: ignore[override]
        entries = dict(self._base._entries)
        for name, cls in self._OVERRIDES.items():
            if name in entries:
                entries[name] = type(entries[name])(cls, entries[name].description, entries[name].init_kwargs)
        return entries

    def register(self, *args: Any, **kwargs: Any) -> None:
        self._base.register(*args, **kwargs)
