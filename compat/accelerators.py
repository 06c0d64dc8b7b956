"""Old accelerators (``pytorch_lightning.accelerators``): the 1.2 container on top of ``strategies``.

In 1.2 an ``Accelerator(precision_plugin, training_type_plugin)`` owned the plugins and drove
the training; now the strategy owns the accelerator (devices only). The old container still
works: it *is* a device accelerator (delegating to ``strategies.CPUAccelerator`` or
``CUDAAccelerator``), ``compat.Trainer(accelerator=Accelerator(...))`` takes the strategy and the
precision out of it, and a subclass's overrides are called at the matching steps:

* ``setup(trainer, model)``: inside ``strategy.setup(trainer)``, after the user's setup hooks;
  ``super().setup(trainer, model)`` moves and wraps the model and builds the optimizers (if the
  override does not call it, that happens right after the override returns);
* ``pre_dispatch()`` / ``post_dispatch()``: end of ``strategy.setup`` / start of ``strategy.teardown``;
* ``start_training`` & co., ``dispatch``: cannot be called; a ``TypeError`` when the Trainer is built.

The old pass-through methods (``barrier``, ``broadcast``, ``training_step``, ...) forward to the
training-type plugin, with a warning.
"""

from __future__ import annotations

from typing import Any

import torch
from typing_extensions import deprecated

from compat._bridge import Hook, ShimMeta, bridge_subclass, user_override, warn_class_use
from compat._warnings import _lookup, deprecation_message, warn_deprecated
from strategies.accelerators import Accelerator as _NewAccelerator
from strategies.accelerators import CPUAccelerator as _NewCPUAccelerator
from strategies.accelerators import CUDAAccelerator as _NewCUDAAccelerator

__all__ = ["Accelerator", "CPUAccelerator", "GPUAccelerator", "TPUAccelerator"]

_OWNER = "pytorch_lightning.accelerators.Accelerator"


def _hint(member: str, fallback: str) -> str:
    entry = _lookup(_OWNER, member, None)
    return entry.hint if entry is not None and entry.hint else fallback


_LOOP = "the Trainer runs each stage itself: put per-run setup in Strategy.setup(trainer)"

_HOOKS = (
    Hook(
        _OWNER,
        "setup",
        None,
        "inside `strategy.setup(trainer)`, after the setup hooks (`super().setup(trainer, model)` moves, wraps "
        "and builds the optimizers)",
    ),
    Hook(_OWNER, "pre_dispatch", None, "at the end of `strategy.setup(trainer)`"),
    Hook(_OWNER, "post_dispatch", None, "at the start of `strategy.teardown()`"),
    *(
        Hook(_OWNER, name, None, "never", unsupported=_hint(name, _LOOP))
        for name in ("start_training", "start_evaluating", "start_testing", "start_predicting", "dispatch")
    ),
)


def _passthrough(name: str, target: str | None = None) -> Any:
    target = target or name

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        warn_deprecated(deprecation_message(_OWNER, f"trainer.strategy.{target}", member=name))
        return getattr(self._plugin(name), target)(*args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"Deprecated: ``trainer.strategy.{target}(...)``."
    return method


def _property(name: str, target: str) -> property:
    def fget(self: Any) -> Any:
        warn_deprecated(deprecation_message(_OWNER, f"trainer.strategy.{target}", member=name))
        return getattr(self._plugin(name), target)

    fget.__name__ = name
    return property(fget)


def _removed(name: str, fallback: str) -> Any:
    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(deprecation_message(_OWNER, None, member=name, hint=_hint(name, fallback)))

    method.__name__ = name
    return method


@deprecated(
    "Accelerator(precision_plugin, training_type_plugin) is deprecated: use strategies.Accelerator", category=None
)
class Accelerator(_NewAccelerator, metaclass=ShimMeta):
    """``pytorch_lightning.accelerators.Accelerator``: the 1.2 container of the two plugins.

    Args:
        precision_plugin: a precision (``PrecisionPlugin`` or ``strategies.Precision``).
        training_type_plugin: a training-type plugin (``DDPPlugin``, ...).
    """

    _compat_old = _OWNER
    _compat_new = "strategies.Accelerator"
    _compat_new_cls = _NewAccelerator
    _device_cls: type[_NewAccelerator] | None = None
    name = "cpu"

    def __init__(self, precision_plugin: Any = None, training_type_plugin: Any = None) -> None:
        warn_class_use(type(self))
        self._precision_plugin = precision_plugin
        self._training_type_plugin = training_type_plugin
        self._device: _NewAccelerator = (self._device_cls or _NewCPUAccelerator)()
        self.name = self._device.name

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        bridge_subclass(cls, _HOOKS)

    def _set_device(self, device: _NewAccelerator) -> None:
        """The compat Trainer picks the device kind of a plain ``Accelerator`` container."""
        self._device = device
        self.name = device.name

    def _plugin(self, name: str) -> Any:
        if self._training_type_plugin is None:
            raise RuntimeError(f"`Accelerator.{name}`: this accelerator has no training-type plugin yet.")
        return self._training_type_plugin

    # -- the device part (new API) --------------------------------------------------------------

    def setup_device(self, device: torch.device) -> None:
        self._device.setup_device(device)

    @classmethod
    def is_available(cls) -> bool:
        return (cls._device_cls or _NewCPUAccelerator).is_available()

    @classmethod
    def auto_device_count(cls) -> int:
        return (cls._device_cls or _NewCPUAccelerator).auto_device_count()

    @classmethod
    def max_device_count(cls) -> int:
        return (cls._device_cls or _NewCPUAccelerator).max_device_count()

    def get_parallel_devices(self, devices: int | list[int]) -> list[torch.device]:
        return self._device.get_parallel_devices(devices)

    def teardown(self) -> None:
        self._device.teardown()

    # -- the old container ----------------------------------------------------------------------

    @property
    def training_type_plugin(self) -> Any:
        """Deprecated: ``trainer.strategy``."""
        warn_deprecated(deprecation_message(_OWNER, "trainer.strategy", member="training_type_plugin"))
        return self._training_type_plugin

    @property
    def precision_plugin(self) -> Any:
        """Deprecated: ``trainer.strategy.precision``."""
        warn_deprecated(deprecation_message(_OWNER, "trainer.strategy.precision", member="precision_plugin"))
        return self._precision_plugin

    def setup(self, trainer: Any, model: Any = None) -> None:
        """Old hook: connect the plugin, move/wrap the model, build the optimizers (``strategy.setup``)."""
        plugin = self._plugin("setup")
        if user_override(type(self), "setup") is None:
            warn_deprecated(deprecation_message(_OWNER, "trainer.strategy.setup", member="setup"))
        plugin._compat_setup(trainer)

    def pre_dispatch(self, *args: Any) -> None:
        """Old hook: the base does nothing (``strategy.setup`` did the work)."""

    def post_dispatch(self, *args: Any) -> None:
        """Old hook: the base does nothing."""

    def connect_training_type_plugin(self, plugin: Any, model: Any) -> None:
        """Deprecated: the Trainer calls ``strategy.connect(module)``."""
        warn_deprecated(deprecation_message(_OWNER, "strategy.connect", member="connect_training_type_plugin"))
        plugin.connect(model)

    def connect_precision_plugin(self, plugin: Any) -> None:
        """Deprecated: the strategy owns its precision (``strategy.precision = ...``)."""
        warn_deprecated(deprecation_message(_OWNER, "strategy.precision", member="connect_precision_plugin"))
        self._plugin("connect_precision_plugin").precision = plugin

    def setup_environment(self) -> None:
        """Deprecated: device selection is ``setup_device(device)``; the process group the strategy's."""
        warn_deprecated(deprecation_message(_OWNER, "setup_device", member="setup_environment"))
        self.setup_device(self._plugin("setup_environment").root_device)

    connect = _passthrough("connect")
    barrier = _passthrough("barrier")
    broadcast = _passthrough("broadcast")
    all_gather = _passthrough("all_gather")
    training_step = _passthrough("training_step")
    validation_step = _passthrough("validation_step")
    test_step = _passthrough("test_step")
    predict = _passthrough("predict", "predict_step")
    backward = _passthrough("backward")
    optimizer_step = _passthrough("optimizer_step")
    setup_optimizers = _passthrough("setup_optimizers")
    model_sharded_context = _passthrough("model_sharded_context")
    model = _property("model", "model")
    lightning_module = _property("lightning_module", "module")
    root_device = _property("root_device", "root_device")

    @property
    def call_configure_sharded_model_hook(self) -> bool:
        """Deprecated: always ``True``."""
        warn_deprecated(deprecation_message(_OWNER, None, member="call_configure_sharded_model_hook"))
        return True

    @property
    def results(self) -> Any:
        """Removed: ``fit``/``test`` return the results."""
        raise AttributeError(
            deprecation_message(
                _OWNER, None, member="results", hint="use the value returned by trainer.fit/validate/test/predict"
            )
        )

    start_training = _removed("start_training", _LOOP)
    start_evaluating = _removed("start_evaluating", _LOOP)
    start_testing = _removed("start_testing", _LOOP)
    start_predicting = _removed("start_predicting", _LOOP)
    dispatch = _removed("dispatch", _LOOP)


@deprecated(
    "CPUAccelerator(precision_plugin, training_type_plugin) is deprecated: use strategies.CPUAccelerator", category=None
)
class CPUAccelerator(Accelerator, _NewCPUAccelerator):
    """``pytorch_lightning.accelerators.CPUAccelerator`` (the container): use ``strategies.CPUAccelerator``."""

    _compat_old = "pytorch_lightning.accelerators.CPUAccelerator"
    _compat_new = "strategies.CPUAccelerator"
    _compat_new_cls = _NewCPUAccelerator
    _device_cls = _NewCPUAccelerator


@deprecated("GPUAccelerator is deprecated: use strategies.CUDAAccelerator", category=None)
class GPUAccelerator(Accelerator, _NewCUDAAccelerator):
    """``pytorch_lightning.accelerators.GPUAccelerator``: use ``strategies.CUDAAccelerator``."""

    _compat_old = "pytorch_lightning.accelerators.GPUAccelerator"
    _compat_new = "strategies.CUDAAccelerator"
    _compat_new_cls = _NewCUDAAccelerator
    _device_cls = _NewCUDAAccelerator


class TPUAccelerator:
    """``pytorch_lightning.accelerators.TPUAccelerator``: no TPU/XLA support here; instantiating it raises."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            deprecation_message(
                "pytorch_lightning.accelerators.TPUAccelerator", None, detail="it has no runtime equivalent here"
            )
        )
