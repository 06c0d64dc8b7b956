"""Machinery shared by the shims: the shim metaclass, override detection and hook bridges.

A *shim class* is an old name defined in ``compat`` as a subclass of its new class (so old
constructor arguments, old methods and the bridges of old hooks can live on it). It carries:

* ``_compat_old``: the ``pytorch_lightning.`` path of the old name (for the message);
* ``_compat_new``: the new name shown to the user;
* ``_compat_new_cls``: the new class, so that ``isinstance``/``issubclass`` hold both ways
  (``isinstance(DDPStrategy(), DDPPlugin)`` is true, see ``ShimMeta``).

User subclasses are checked when they are defined (``__init_subclass__``): an override of an old
hook name is warned about once and bridged to the new name the lifecycle calls.
"""

from __future__ import annotations

import inspect
import sys
from abc import ABCMeta
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compat._warnings import deprecation_message, user_frame, warn_deprecated

_INTERNAL_MODULES = ("compat", "strategies", "builtins", "abc", "typing", "torch")


def is_internal_class(klass: type) -> bool:
    """Whether ``klass`` belongs to us (or to Python/torch) rather than to the user."""
    module = getattr(klass, "__module__", "") or ""
    return klass is object or module.split(".")[0] in _INTERNAL_MODULES


def defining_class(cls: type, name: str) -> type | None:
    """The first class of ``cls.__mro__`` whose own namespace has ``name``."""
    for klass in cls.__mro__:
        if name in vars(klass):
            return klass
    return None


def user_override(cls: type, name: str) -> type | None:
    """The user class that defines ``name`` for ``cls`` (``None`` if the definition is ours)."""
    klass = defining_class(cls, name)
    if klass is None or is_internal_class(klass):
        return None
    if is_bridge(vars(klass)[name]):
        return None
    return klass


def base_attr(cls: type, name: str) -> Any:
    """Our own definition of ``name`` (skipping user classes and installed bridges)."""
    for klass in cls.__mro__:
        if is_internal_class(klass) and name in vars(klass) and not is_bridge(vars(klass)[name]):
            return vars(klass)[name]
    return None


def is_bridge(value: Any) -> bool:
    """Whether ``value`` is a bridge ``compat`` installed on a user class."""
    target = value.fget if isinstance(value, property) else value
    return getattr(target, "_compat_bridge_for", None) is not None


def mark_bridge(value: Any, old: str) -> Any:
    target: Any = value.fget if isinstance(value, property) else value
    target._compat_bridge_for = old
    return value


def is_abstract(value: Any) -> bool:
    target = value.fget if isinstance(value, property) else value
    return bool(getattr(target, "__isabstractmethod__", False))


class ShimMeta(ABCMeta):
    """``isinstance``/``issubclass`` against a shim base delegate to its new class.

    So ``isinstance(trainer.strategy, DDPPlugin)`` holds for a ``DDPStrategy`` the new API built,
    and ``isinstance(DDPPlugin(), DDPStrategy)`` holds because the shim subclasses it. User
    subclasses of a shim keep the ordinary behaviour. The check uses the real MRO (never
    ``issubclass``) so ABC's subclass walk cannot recurse back into us.
    """

    def __instancecheck__(cls, obj: Any) -> bool:
        new = vars(cls).get("_compat_new_cls")
        if new is not None:
            return new in type(obj).__mro__ or new in getattr(getattr(obj, "__class__", None), "__mro__", ())
        return super().__instancecheck__(obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        new = vars(cls).get("_compat_new_cls")
        if new is not None:
            return new in getattr(sub, "__mro__", ())
        return super().__subclasscheck__(sub)


def is_shim(klass: type) -> bool:
    return "_compat_old" in vars(klass)


def shim_message(klass: type, detail: str = "") -> str:
    shim: Any = klass  # a ShimMeta class: it sets the `_compat_*` attributes of the module docstring
    return deprecation_message(
        shim._compat_old,
        shim._compat_new,
        lightning=vars(klass).get("_compat_lightning"),
        hint=vars(klass).get("_compat_hint", ""),
        detail=detail,
    )


def warn_class_use(cls: type) -> None:
    """Warn that an old class was instantiated (only for the shim itself, not user subclasses)."""
    if is_shim(cls):
        warn_deprecated(shim_message(cls))


@dataclass(frozen=True)
class Hook:
    """An old hook name a user subclass may override.

    Attributes:
        owner: ``pytorch_lightning.`` path of the class that had the hook (for the message).
        old: the old name.
        new: the new name our lifecycle calls, or ``None`` when a step of ours calls ``old``.
        when: where in the new lifecycle the override is called (for the message).
        make: builds the attribute installed on the user class as ``new`` (``None``: nothing).
        unsupported: the override cannot be called: the error message (raised later, see
            ``check_unsupported``).
        exclusive: defining both ``old`` and ``new`` in one class is a ``TypeError``.
    """

    owner: str
    old: str
    new: str | None
    when: str
    make: Callable[[str], Any] | None = None
    unsupported: str | None = None
    exclusive: bool = True


def hook_message(hook: Hook, cls: type) -> str:
    if hook.unsupported:
        return deprecation_message(
            hook.owner,
            hook.new,
            member=hook.old,
            old_display=f"{cls.__name__}.{hook.old}",
            detail=f"overrides `{hook.owner.rsplit('.', 1)[-1]}.{hook.old}`, which is NOT called any more",
            hint=hook.unsupported,
        )
    return deprecation_message(
        hook.owner,
        hook.new,
        member=hook.old,
        old_display=f"{cls.__name__}.{hook.old}",
        detail=f"overrides the old hook `{hook.owner.rsplit('.', 1)[-1]}.{hook.old}`; it is still called, {hook.when}",
    )


def bridge_subclass(cls: type, hooks: tuple[Hook, ...]) -> None:
    """Detect overrides of old hook names on a user class, warn once each, install bridges."""
    if is_internal_class(cls):
        return
    frame = user_frame(sys._getframe(1))
    warn_subclassing_at(cls, frame)
    unsupported = dict(getattr(cls, "_compat_unsupported", {}))
    for hook in hooks:
        owner = user_override(cls, hook.old)
        if owner is None:
            continue
        if hook.exclusive and hook.new and hook.new in vars(owner) and not is_bridge(vars(owner)[hook.new]):
            raise TypeError(
                f"`{owner.__name__}` defines both `{hook.old}` (old name) and `{hook.new}` (new name); "
                f"keep only `{hook.new}` and move the body of `{hook.old}` into it."
            )
        warn_deprecated(hook_message(hook, owner), once_key=("hook", owner, hook.old), frame=frame)
        if hook.unsupported:
            unsupported[hook.old] = hook_message(hook, owner)
            continue
        if hook.make is None or hook.new is None:
            continue
        impl_owner = defining_class(cls, hook.new)
        if impl_owner is None or is_internal_class(impl_owner) or is_bridge(vars(impl_owner)[hook.new]):
            setattr(cls, hook.new, mark_bridge(hook.make(hook.old), hook.old))
    if unsupported:
        cls._compat_unsupported = unsupported  # type: ignore[attr-defined]  # a marker on the user's class


def warn_subclassing_at(cls: type, frame: Any) -> None:
    for base in cls.__bases__:
        if is_shim(base):
            warn_deprecated(
                shim_message(base, detail=f"subclassed by `{cls.__name__}`"),
                once_key=("subclass", cls, base),
                frame=frame,
            )


def check_unsupported(obj: Any, where: str) -> None:
    """Raise for overrides that cannot be bridged (``start_training``, ``new_process``, ...)."""
    unsupported = getattr(type(obj), "_compat_unsupported", None)
    if unsupported:
        names = ", ".join(f"`{n}`" for n in unsupported)
        details = " ".join(unsupported.values())
        raise TypeError(
            f"`{type(obj).__name__}` overrides {names}, which the new lifecycle cannot call ({where}). {details}"
        )


# -- builders for the installed bridges ----------------------------------------------------------


def call_old(old: str) -> Callable[..., Any]:
    """A method ``new(self, *args)`` that calls the user's ``old(*args)``."""

    def bridge(self: Any, *args: Any, **kwargs: Any) -> Any:
        return getattr(self, old)(*args, **kwargs)

    bridge.__name__ = f"_bridge_{old}"
    return bridge


def old_as_property(convert: Callable[[Any], Any] = lambda v: v) -> Callable[[str], property]:
    """A property ``new`` whose value is the user's method ``old()``."""

    def make(old: str) -> property:
        def fget(self: Any) -> Any:
            return convert(getattr(self, old)())

        fget.__name__ = old
        return property(fget)

    return make


def forwarder(
    owner: str,
    old: str,
    new: str,
    *,
    call: Callable[..., Any] | None = None,
    hint: str = "",
    doc: str = "",
) -> Callable[..., Any]:
    """An old method on a shim base: warns, then reaches the new name.

    Dynamic dispatch: a new-style subclass's override of ``new`` is what runs. When the user's
    class overrides ``old`` itself (so ``new`` is a bridge back to ``old``), we were reached
    through ``super().old(...)``: run our own implementation of ``new`` instead (no recursion,
    no second warning: the class definition already warned).
    """
    message_args = dict(hint=hint)

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        cls = type(self)
        via_super = user_override(cls, old) is not None
        if not via_super:
            warn_deprecated(deprecation_message(owner, new, member=old, **message_args))
        if call is not None:
            return call(self, via_super, *args, **kwargs)
        impl = getattr(cls, new)
        if via_super and is_bridge(impl):
            impl = base_attr(cls, new)
            if impl is None or is_abstract(impl):
                raise NotImplementedError(f"`{old}` has no base implementation to reach through `super()`.")
            return impl(self, *args, **kwargs)
        return getattr(self, new)(*args, **kwargs)

    method.__name__ = old
    method.__doc__ = doc or f"Deprecated: use ``{new}``."
    return method


def property_forwarder(
    owner: str, old: str, new: str, *, get: Callable[[Any], Any] | None = None, hint: str = ""
) -> property:
    """An old property on a shim: warns at the user's line, then returns the new one."""

    def fget(self: Any) -> Any:
        warn_deprecated(deprecation_message(owner, new, member=old, hint=hint))
        return get(self) if get is not None else getattr(self, new)

    fget.__name__ = old
    fget.__doc__ = f"Deprecated: use ``{new}``."
    return property(fget)


def first_param(func: Any) -> str | None:
    """The name of the first parameter after ``self`` (``setup(self, model)`` -> ``"model"``)."""
    try:
        params = list(inspect.signature(func).parameters)
    except (TypeError, ValueError):
        return None
    return params[1] if len(params) > 1 else None
