"""Strategy names -> classes: ``Trainer(strategy="ddp")``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from strategies.strategy import Strategy


@dataclass(frozen=True)
class _Entry:
    cls: type[Strategy]
    description: str
    init_kwargs: dict[str, Any] = field(default_factory=dict)


class StrategyRegistry:
    """Maps registry names to strategy classes with default keyword arguments.

    ``Trainer.registry`` is the one the Trainer's ``strategy="..."`` names are looked up in. A
    Trainer subclass with other classes for some names sets its own: ``registry =
    Trainer.registry.copy()``, then ``registry.replace("ddp", MyDDPStrategy)``.
    """

    def __init__(self) -> None:
        self._entries: dict[str, _Entry] = {}

    def register(
        self, name: str, cls: type[Strategy], description: str, override: bool = False, **init_kwargs: Any
    ) -> None:
        """Add ``name``; an existing name needs ``override=True``."""
        if name in self._entries and not override:
            raise ValueError(f"The strategy name {name!r} is already registered. HINT: pass `override=True`.")
        self._entries[name] = _Entry(cls, description, init_kwargs)

    def create(self, name: str, **kwargs: Any) -> Strategy:
        """Instantiate the strategy registered as ``name``."""
        if name not in self._entries:
            raise ValueError(
                f"Unknown strategy {name!r}. Valid names: {', '.join(repr(n) for n in self.names())}; "
                "or pass a `Strategy` instance."
            )
        entry = self._entries[name]
        return entry.cls(**{**entry.init_kwargs, **kwargs})

    def replace(self, name: str, cls: type[Strategy]) -> None:
        """Build ``name`` with ``cls`` from now on, keeping its description and default keyword arguments.

        Raises:
            ValueError: ``name`` is not registered (use ``register`` to add it).
        """
        if name not in self._entries:
            raise ValueError(f"The strategy name {name!r} is not registered: add it with `register` first.")
        entry = self._entries[name]
        self._entries[name] = _Entry(cls, entry.description, entry.init_kwargs)

    def copy(self) -> StrategyRegistry:
        """An independent registry with the same names: registering or replacing in one leaves the other as it was."""
        clone = StrategyRegistry()
        for name, entry in self._entries.items():
            clone._entries[name] = _Entry(entry.cls, entry.description, dict(entry.init_kwargs))
        return clone

    def names(self) -> list[str]:
        """The registered names, sorted (``"auto"`` is resolved by the Trainer)."""
        return sorted({*self._entries, "auto"})

    def __contains__(self, name: object) -> bool:
        return name in self._entries or name == "auto"

    def description(self, name: str) -> str:
        """The one-line description of ``name``."""
        return self._entries[name].description


def register_find_unused(registry: StrategyRegistry, name: str, cls: type[Strategy], **init_kwargs: Any) -> None:
    """Add Lightning's ``<name>_find_unused_parameters_true``/``_false``: ``name``'s strategy
    (``cls`` with ``init_kwargs``) with ``DistributedDataParallel(find_unused_parameters=...)``."""
    for flag in (True, False):
        registry.register(
            f"{name}_find_unused_parameters_{str(flag).lower()}",
            cls,
            f"`{name}` with DistributedDataParallel(find_unused_parameters={flag}).",
            **init_kwargs,
            find_unused_parameters=flag,
        )
