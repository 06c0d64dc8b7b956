"""``is_overridden``: whether a module, datamodule or callback defines a hook of its own."""

from __future__ import annotations

from typing import Any

__all__ = ["is_overridden"]


def is_overridden(method_name: str, instance: object | None = None, parent: type | None = None) -> bool:
    """Whether ``instance`` overrides ``parent.method_name``, as ``lightning.pytorch.utilities.model_helpers``.

    A function set on the instance counts (``DataModule.from_datasets`` sets its dataloaders that
    way). ``parent`` defaults to the library class ``instance`` is one of: ``TrainModule``,
    ``DataModule`` or ``Callback``.

    Raises:
        ValueError: no ``parent`` given and ``instance`` is none of those.
    """
    if instance is None:
        return False
    if parent is None:
        from strategies import Callback, DataModule, TrainModule

        parent = next((base for base in (TrainModule, DataModule, Callback) if isinstance(instance, base)), None)
        if parent is None:
            raise ValueError(f"pass `parent=`: {type(instance).__name__} is not a TrainModule, DataModule or Callback")
    own: Any = getattr(instance, method_name, None)
    if own is None:
        return False
    inherited = getattr(parent, method_name, None)
    return getattr(own, "__func__", own) is not inherited
