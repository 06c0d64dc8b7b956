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
    """A live view of ``base`` (``strategies.Trainer.registry``) with the bridged classes above for their names.

    Built from ``base``'s public ``copy``/``replace`` at each lookup, so a name registered on
    ``base`` later is found here too; ``register`` adds to ``base``, ``replace`` to this view only.
    """

    _OVERRIDES: dict[str, type[Strategy]] = {
        "ddp": DDPStrategy,
        "ddp_spawn": DDPSpawnStrategy,
        "single_device": SingleDeviceStrategy,
    }

    def __init__(self, base: StrategyRegistry) -> None:
        super().__init__()
        self._base = base
        self._overrides = dict(self._OVERRIDES)

    def copy(self) -> StrategyRegistry:
        """``base``'s names as they are now, with the bridged classes (an independent registry)."""
        view = self._base.copy()
        for name, cls in self._overrides.items():
            if name in view.names():
                view.replace(name, cls)
        return view

    def register(
        self, name: str, cls: type[Strategy], description: str, override: bool = False, **init_kwargs: Any
    ) -> None:
        """Add ``name`` to ``base`` (so ``strategies.Trainer`` knows it too)."""
        self._base.register(name, cls, description, override=override, **init_kwargs)

    def replace(self, name: str, cls: type[Strategy]) -> None:
        """Build ``name`` with ``cls`` in this view only."""
        self.copy().replace(name, cls)  # the same check for an unknown name
        self._overrides[name] = cls

    def create(self, name: str, **kwargs: Any) -> Strategy:
        """Instantiate ``name``: the bridged class where there is one."""
        return self.copy().create(name, **kwargs)

    def names(self) -> list[str]:
        """``base``'s names."""
        return self._base.names()

    def __contains__(self, name: object) -> bool:
        return name in self._base

    def description(self, name: str) -> str:
        """``base``'s description of ``name``."""
        return self._base.description(name)
