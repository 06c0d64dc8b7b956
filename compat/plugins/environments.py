"""Old cluster environments (``pytorch_lightning.plugins.environments``) on top of ``strategies``.

The 1.2 API had methods ``master_address()``, ``master_port()``, ``creates_children()``; the new
one has properties ``main_address``, ``main_port``, ``creates_processes_externally``. A user
subclass that implements the old methods gets the new properties bridged to them when the class
is defined (with one warning per method); calling an old method on any environment returns the
new property.
"""

from __future__ import annotations

import os
from typing import Any

from typing_extensions import deprecated

from compat._bridge import (
    Hook,
    ShimMeta,
    base_attr,
    bridge_subclass,
    is_abstract,
    old_as_property,
    warn_class_use,
)
from compat._warnings import deprecation_message, warn_deprecated
from strategies.environments import ClusterEnvironment as _NewClusterEnvironment
from strategies.environments import LocalEnvironment as _LocalEnvironment
from strategies.environments import SLURMEnvironment as _NewSLURMEnvironment
from strategies.environments import TorchElasticEnvironment as _NewTorchElasticEnvironment

__all__ = ["ClusterEnvironment", "LightningEnvironment", "SLURMEnvironment", "TorchElasticEnvironment"]

_OWNER = "pytorch_lightning.plugins.ClusterEnvironment"


def _creates_children_bridge(old: str) -> property:
    def fget(self: Any) -> bool:
        # Old contract: False meant "Lightning launches the processes"; the processes our launcher
        # started (LOCAL_RANK set, as LocalEnvironment reads it) must not launch again.
        return bool(getattr(self, old)()) or "LOCAL_RANK" in os.environ

    fget.__name__ = old
    return property(fget)


_HOOKS = (
    Hook(
        _OWNER,
        "master_address",
        "main_address",
        "as the `main_address` property (read by the launcher and the rendezvous)",
        make=old_as_property(str),
    ),
    Hook(
        _OWNER,
        "master_port",
        "main_port",
        "as the `main_port` property (read by the launcher and the rendezvous)",
        make=old_as_property(int),
    ),
    Hook(
        _OWNER,
        "creates_children",
        "creates_processes_externally",
        "as the `creates_processes_externally` property (true as well in the processes our launcher started)",
        make=_creates_children_bridge,
    ),
)


def _old_method(old: str, new: str) -> Any:
    """``env.master_address()`` -> ``env.main_address`` (reached through ``super()`` too)."""

    def method(self: Any) -> Any:
        cls = type(self)
        from compat._bridge import user_override

        if user_override(cls, old) is not None:
            # super().master_address() from the user's own override: our implementation.
            impl = base_attr(cls, new)
            if impl is None or is_abstract(impl):
                raise NotImplementedError(
                    f"`ClusterEnvironment.{old}()` is abstract: return the value in your override "
                    f"(or subclass `LightningEnvironment`, which has one)."
                )
            if isinstance(impl, property):
                if impl.fget is None:
                    raise TypeError(f"`ClusterEnvironment.{new}` is a property without a getter")
                return impl.fget(self)
            return impl(self)
        warn_deprecated(deprecation_message(_OWNER, new, member=old))
        return getattr(self, new)

    method.__name__ = old
    method.__doc__ = f"Deprecated: read the ``{new}`` property."
    return method


@deprecated("ClusterEnvironment from compat is deprecated: use strategies.ClusterEnvironment", category=None)
class ClusterEnvironment(_NewClusterEnvironment, metaclass=ShimMeta):
    """``pytorch_lightning.plugins.environments.ClusterEnvironment``: deprecated.

    Subclasses may implement the old methods (``master_address()``, ``master_port()``,
    ``creates_children()``) instead of the new properties; ``detect()`` defaults to False.
    """

    _compat_old = "pytorch_lightning.plugins.ClusterEnvironment"
    _compat_new = "strategies.ClusterEnvironment"
    _compat_new_cls = _NewClusterEnvironment

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        bridge_subclass(cls, _HOOKS)

    @staticmethod
    def detect() -> bool:
        """Old environments had no ``detect``: they are used when passed in ``plugins`` only."""
        return False

    master_address = _old_method("master_address", "main_address")
    master_port = _old_method("master_port", "main_port")
    creates_children = _old_method("creates_children", "creates_processes_externally")


@deprecated("LightningEnvironment is deprecated: use strategies.LocalEnvironment", category=None)
class LightningEnvironment(_LocalEnvironment, ClusterEnvironment):
    """``pytorch_lightning.plugins.environments.LightningEnvironment``: use ``strategies.LocalEnvironment``."""

    _compat_old = "pytorch_lightning.plugins.LightningEnvironment"
    _compat_new = "strategies.LocalEnvironment"
    _compat_new_cls = _LocalEnvironment

    def __init__(self) -> None:
        warn_class_use(type(self))
        super().__init__()


@deprecated("SLURMEnvironment from compat is deprecated: use strategies.SLURMEnvironment", category=None)
class SLURMEnvironment(_NewSLURMEnvironment, ClusterEnvironment):
    """``pytorch_lightning.plugins.environments.SLURMEnvironment``: use ``strategies.SLURMEnvironment``."""

    _compat_old = "pytorch_lightning.plugins.SLURMEnvironment"
    _compat_new = "strategies.SLURMEnvironment"
    _compat_new_cls = _NewSLURMEnvironment

    def __init__(self) -> None:
        warn_class_use(type(self))
        super().__init__()

    detect = staticmethod(_NewSLURMEnvironment.detect)


@deprecated("TorchElasticEnvironment from compat is deprecated: use strategies.TorchElasticEnvironment", category=None)
class TorchElasticEnvironment(_NewTorchElasticEnvironment, ClusterEnvironment):
    """``pytorch_lightning.plugins.environments.TorchElasticEnvironment``: use the one in ``strategies``."""

    _compat_old = "pytorch_lightning.plugins.TorchElasticEnvironment"
    _compat_new = "strategies.TorchElasticEnvironment"
    _compat_new_cls = _NewTorchElasticEnvironment

    def __init__(self) -> None:
        warn_class_use(type(self))
        super().__init__()

    detect = staticmethod(_NewTorchElasticEnvironment.detect)

    @staticmethod
    def is_using_torchelastic() -> bool:
        """Deprecated: use ``TorchElasticEnvironment.detect()``."""
        warn_deprecated(
            deprecation_message(
                "pytorch_lightning.plugins.TorchElasticEnvironment", "detect", member="is_using_torchelastic"
            )
        )
        return _NewTorchElasticEnvironment.detect()
