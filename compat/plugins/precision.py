"""Old precision plugins (``pytorch_lightning.plugins.precision``) on top of ``strategies.Precision``.

Old overrides bridged: ``master_params`` (-> ``main_params``), ``on_save_checkpoint`` /
``on_load_checkpoint`` (-> ``state_dict`` / ``load_state_dict``), ``pre_dispatch`` /
``post_dispatch`` (called at the end of ``strategy.setup(trainer)`` / start of ``teardown()``).
``dispatch`` cannot be called any more: a ``TypeError`` when the Trainer is built.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import deprecated

from compat._bridge import (
    Hook,
    ShimMeta,
    base_attr,
    bridge_subclass,
    call_old,
    forwarder,
    user_override,
    warn_class_use,
)
from compat._warnings import deprecation_message, warn_deprecated
from strategies.precision import MixedPrecision as _MixedPrecision
from strategies.precision import Precision as _Precision

__all__ = [
    "PrecisionPlugin",
    "MixedPrecisionPlugin",
    "NativeMixedPrecisionPlugin",
    "ApexMixedPrecisionPlugin",
    "ShardedNativeMixedPrecisionPlugin",
    "FullyShardedNativeMixedPrecisionPlugin",
    "DeepSpeedPrecisionPlugin",
    "TPUHalfPrecisionPlugin",
]

_OWNER = "pytorch_lightning.plugins.PrecisionPlugin"


def _state_dict_bridge(old: str) -> Any:
    def state_dict(self: Any) -> dict[str, Any]:
        checkpoint: dict[str, Any] = {}
        getattr(self, old)(checkpoint)
        return checkpoint

    return state_dict


def _load_state_dict_bridge(old: str) -> Any:
    def load_state_dict(self: Any, state: dict[str, Any]) -> None:
        getattr(self, old)(dict(state))

    return load_state_dict


def _hint(member: str) -> str:
    from compat._warnings import _lookup

    entry = _lookup(_OWNER, member, None)
    return entry.hint if entry is not None else "removed: drop the override"


_HOOKS = (
    Hook(_OWNER, "master_params", "main_params", "as `main_params`", make=call_old),
    Hook(
        _OWNER,
        "on_save_checkpoint",
        "state_dict",
        "by `state_dict()` (with an empty dict it fills; what it writes is the saved state)",
        make=_state_dict_bridge,
    ),
    Hook(_OWNER, "on_load_checkpoint", "load_state_dict", "by `load_state_dict(state)`", make=_load_state_dict_bridge),
    Hook(_OWNER, "pre_dispatch", None, "at the end of `strategy.setup(trainer)`"),
    Hook(_OWNER, "post_dispatch", None, "at the start of `strategy.teardown()`"),
    Hook(_OWNER, "dispatch", None, "never", unsupported=_hint("dispatch")),
)


def _normalise_precision(precision: Any) -> str:
    value = str(precision)
    if value in ("16", "16-mixed", "mixed"):
        return "16-mixed"
    if value in ("bf16", "bf16-mixed"):
        return "bf16-mixed"
    raise ValueError(f"`precision={precision!r}`: mixed precision is 16 ('16-mixed') or 'bf16' ('bf16-mixed').")


@deprecated("PrecisionPlugin is deprecated: use strategies.Precision", category=None)
class PrecisionPlugin(_Precision, metaclass=ShimMeta):
    """``pytorch_lightning.plugins.PrecisionPlugin``: use ``strategies.Precision``."""

    _compat_old = _OWNER
    _compat_new = "strategies.Precision"
    _compat_new_cls: type[_Precision] = _Precision
    EPSILON = 1e-6

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warn_class_use(type(self))
        super().__init__(*args, **kwargs)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        bridge_subclass(cls, _HOOKS)

    master_params = forwarder(_OWNER, "master_params", "main_params")

    def on_save_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Old hook: write the precision's state into ``checkpoint`` (now ``state_dict()``)."""
        if user_override(type(self), "on_save_checkpoint") is None:
            warn_deprecated(deprecation_message(_OWNER, "state_dict", member="on_save_checkpoint"))
            checkpoint.update(self.state_dict())
        else:  # super().on_save_checkpoint() from the user's override
            checkpoint.update(base_attr(type(self), "state_dict")(self))

    def on_load_checkpoint(self, checkpoint: dict[str, Any]) -> None:
        """Old hook: restore from ``checkpoint`` (now ``load_state_dict(state)``)."""
        if user_override(type(self), "on_load_checkpoint") is None:
            warn_deprecated(deprecation_message(_OWNER, "load_state_dict", member="on_load_checkpoint"))
            self.load_state_dict(checkpoint)
        else:
            base_attr(type(self), "load_state_dict")(self, checkpoint)

    def pre_dispatch(self) -> None:
        """Old hook: the base does nothing."""

    def post_dispatch(self) -> None:
        """Old hook: the base does nothing."""


@deprecated("MixedPrecisionPlugin is deprecated: use strategies.MixedPrecision", category=None)
class MixedPrecisionPlugin(_MixedPrecision, PrecisionPlugin):
    """``pytorch_lightning.plugins.MixedPrecisionPlugin``: use ``strategies.MixedPrecision``.

    Args:
        precision: 16 / ``"16-mixed"`` (default, as the old native AMP plugin) or ``"bf16"``.
        device: ``"cuda"`` (default) or ``"cpu"`` (bf16 only).
    """

    _compat_old = "pytorch_lightning.plugins.MixedPrecisionPlugin"
    _compat_new = "strategies.MixedPrecision"
    _compat_new_cls = _MixedPrecision
    EPSILON = 1e-5

    def __init__(self, precision: Any = 16, device: str = "cuda", scaler: Any = None) -> None:
        warn_class_use(type(self))
        _MixedPrecision.__init__(self, _normalise_precision(precision), device)
        if scaler is not None:
            self.scaler = scaler


@deprecated("NativeMixedPrecisionPlugin is deprecated: use strategies.MixedPrecision", category=None)
class NativeMixedPrecisionPlugin(MixedPrecisionPlugin):
    """``pytorch_lightning.plugins.NativeMixedPrecisionPlugin``: ``Trainer(precision="16-mixed")``."""

    _compat_old = "pytorch_lightning.plugins.NativeMixedPrecisionPlugin"
    _compat_new = "strategies.MixedPrecision"
    _compat_new_cls = _MixedPrecision


class _UnavailablePrecision:
    _compat_old = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            deprecation_message(self._compat_old, None, detail="it has no runtime equivalent here")
        )


def _unavailable(name: str, old: str) -> type:
    return type(
        name,
        (_UnavailablePrecision,),
        {
            "__module__": __name__,
            "__qualname__": name,
            "_compat_old": old,
            "__doc__": f"``{old}``: removed; instantiating it raises.",
        },
    )


ApexMixedPrecisionPlugin = _unavailable(
    "ApexMixedPrecisionPlugin", "pytorch_lightning.plugins.ApexMixedPrecisionPlugin"
)
ShardedNativeMixedPrecisionPlugin = _unavailable(
    "ShardedNativeMixedPrecisionPlugin", "pytorch_lightning.plugins.ShardedNativeMixedPrecisionPlugin"
)
FullyShardedNativeMixedPrecisionPlugin = _unavailable(
    "FullyShardedNativeMixedPrecisionPlugin", "pytorch_lightning.plugins.FullyShardedNativeMixedPrecisionPlugin"
)
DeepSpeedPrecisionPlugin = _unavailable(
    "DeepSpeedPrecisionPlugin", "pytorch_lightning.plugins.DeepSpeedPrecisionPlugin"
)
TPUHalfPrecisionPlugin = _unavailable("TPUHalfPrecisionPlugin", "pytorch_lightning.plugins.TPUHalfPrecisionPlugin")
