"""``compat.Trainer``: the new Trainer with the old keyword arguments and attributes.

Old keywords and what they become (each warns once at the user's line):

=====================================  ==========================================================
``accelerator="ddp"`` (a strategy      ``strategy="ddp"``; ``"ddp_cpu"`` -> ``strategy="ddp",
name, 1.2-1.6 meaning)                 accelerator="cpu"``; ``"ddp2"``, ``"horovod"``,
                                       ``"ddp_sharded"`` -> ``ValueError`` with the hint
``distributed_backend=...``            the same as ``accelerator=<name>`` above
``gpus=N``                             ``accelerator="cuda", devices=N``
``num_processes=N``                    ``accelerator="cpu", devices=N``
``plugins=[DDPPlugin(...)]``           ``strategy=DDPPlugin(...)`` (environments and precisions
                                       stay in ``plugins``)
``accelerator=Accelerator(p, t)``      ``strategy=t``, precision ``p``, the container's device
=====================================  ==========================================================

An old keyword together with the new one it maps to is a ``TypeError``.
"""

from __future__ import annotations

from typing import Any

from typing_extensions import deprecated

import strategies
from strategies.accelerators import Accelerator as _NewAccelerator
from strategies.ddp import DDPStrategy as _DDPStrategy
from strategies.single_device import SingleDeviceStrategy as _SingleDeviceStrategy
from strategies.strategy import Strategy as _Strategy

from compat import _warnings
from compat._strategies import CompatRegistry
from compat._bridge import ShimMeta, check_unsupported, warn_class_use
from compat._warnings import _lookup, deprecation_message, warn_deprecated

__all__ = ["Trainer"]

_TRAINER = "pytorch_lightning.Trainer"
_UNSET: Any = object()

# Old strategy names given to `accelerator=`/`distributed_backend=` -> (strategy, accelerator) or a refusal.
_STRATEGY_VALUES: dict[str, tuple[str, str | None]] = {
    "ddp": ("ddp", None),
    "ddp_spawn": ("ddp_spawn", None),
    "ddp_cpu": ("ddp", "cpu"),
    "dp": ("dp", None),
    "deepspeed": ("deepspeed", None),
    "fsdp": ("fsdp", None),
}
_REFUSED_VALUES = {
    "ddp2": "DDP2 was removed (broken on torch>=1.9): use strategy='ddp'",
    "horovod": "Horovod is not supported: launch with torchrun and use strategy='ddp'",
    "ddp_sharded": "FairScale sharded training is gone: use strategy='fsdp' (parameters are sharded, new checkpoint "
                   "layout) or strategy='deepspeed'",
    "ddp_sharded_spawn": "FairScale sharded training is gone: use strategy='fsdp' or strategy='deepspeed'",
    "tpu_spawn": "strategies has no TPU/XLA support: keep Lightning for TPUs",
    "ddp_fully_sharded": "use strategy='fsdp' (torch FSDP; FairScale arguments do not carry over)",
}
_DEVICE_NAMES = ("auto", "cpu", "cuda", "gpu")
_TRAINER_INTERNALS = ("call_setup_hook", "call_configure_sharded_model", "pre_dispatch", "dispatch", "post_dispatch",
                      "call_teardown_hook", "run_train", "run_test", "run_predict")


def _given(value: Any) -> bool:
    return value is not _UNSET


def _both(old: str, new: str) -> TypeError:
    return TypeError(
        f"`Trainer` got both `{old}=` (old) and `{new}=` (new); pass only `{new}=`. "
        f"Run `{_warnings.MIGRATE_COMMAND}` to rewrite the call."
    )


def _strategy_value(keyword: str, value: str) -> tuple[str, str | None]:
    """Map an old strategy name given to ``accelerator=``/``distributed_backend=``, or refuse it."""
    if value in _REFUSED_VALUES:
        entry = _lookup(_TRAINER, keyword, value)
        hint = entry.hint if entry is not None and entry.hint else _REFUSED_VALUES[value]
        raise ValueError(
            f"`Trainer({keyword}={value!r})` has no equivalent here: {hint.rstrip('.')}. "
            f"Run `{_warnings.MIGRATE_COMMAND}` to find every such call."
        )
    strategy, device = _STRATEGY_VALUES[value]
    new = f"Trainer(strategy={strategy!r}" + (f", accelerator={device!r})" if device else ")")
    warn_deprecated(deprecation_message(_TRAINER, new, member=keyword, value=value))
    return strategy, device


def _is_strategy_name(value: Any) -> bool:
    return isinstance(value, str) and (value in _STRATEGY_VALUES or value in _REFUSED_VALUES)


def _parse_gpus(gpus: Any) -> Any:
    if isinstance(gpus, str):
        text = gpus.strip()
        if text == "-1":
            return -1
        if "," in text:
            return [int(i) for i in text.split(",") if i.strip()]
        return int(text)
    return gpus


@deprecated("pytorch_lightning.Trainer arguments are deprecated: use strategies.Trainer", category=None)
class Trainer(strategies.Trainer, metaclass=ShimMeta):
    """``pytorch_lightning.Trainer``: ``strategies.Trainer`` that also takes the old arguments.

    Args:
        gpus: deprecated: ``accelerator="cuda", devices=gpus``.
        num_processes: deprecated: ``accelerator="cpu", devices=num_processes``.
        distributed_backend: deprecated: a strategy name (as ``strategy=``).
        accelerator: a device (``"cpu"``, ``"cuda"``, ``"gpu"``, ``"auto"``), an accelerator, an
            old strategy name (deprecated: ``strategy=``), or an old ``Accelerator`` container.
        plugins: environments and precisions; a training-type plugin here is deprecated
            (``strategy=``).
        **kwargs: the other ``strategies.Trainer`` arguments.
    """

    _compat_old = _TRAINER
    _compat_new = "strategies.Trainer"
    _compat_new_cls = strategies.Trainer
    registry = CompatRegistry(strategies.Trainer.registry)

    def __init__(
        self,
        *,
        strategy: Any = _UNSET,
        accelerator: Any = _UNSET,
        devices: Any = _UNSET,
        num_nodes: Any = _UNSET,
        plugins: Any = None,
        gpus: Any = _UNSET,
        num_processes: Any = _UNSET,
        distributed_backend: Any = _UNSET,
        tpu_cores: Any = _UNSET,
        **kwargs: Any,
    ) -> None:
        warn_class_use(type(self))
        plugins = list(plugins or [])
        container = None
        device: Any = _UNSET

        if _given(tpu_cores) and tpu_cores:
            raise ValueError("`Trainer(tpu_cores=...)`: strategies has no TPU/XLA support; keep Lightning for TPUs.")

        # distributed_backend= (1.2) and accelerator=<strategy name> (1.4-1.6) -> strategy=
        if _given(distributed_backend) and distributed_backend is not None:
            if _given(strategy):
                raise _both("distributed_backend", "strategy")
            if _is_strategy_name(accelerator):
                raise _both("distributed_backend", "accelerator")
            if distributed_backend not in _STRATEGY_VALUES and distributed_backend not in _REFUSED_VALUES:
                raise ValueError(f"`Trainer(distributed_backend={distributed_backend!r})`: unknown value.")
            strategy, device_from_value = _strategy_value("distributed_backend", distributed_backend)
            if device_from_value:
                device = device_from_value
        if _is_strategy_name(accelerator):
            if _given(strategy):
                raise _both("accelerator", "strategy")
            strategy, device_from_value = _strategy_value("accelerator", accelerator)
            accelerator = _UNSET
            if device_from_value:
                device = device_from_value
        elif isinstance(accelerator, _NewAccelerator) and hasattr(accelerator, "_training_type_plugin"):
            container = accelerator
            accelerator = _UNSET
            if container._precision_plugin is not None:
                plugins.append(container._precision_plugin)
            if container._training_type_plugin is not None:
                if _given(strategy):
                    raise TypeError(
                        "`Trainer` got a training-type plugin in `accelerator=Accelerator(...)` and `strategy=`: "
                        "pass only `strategy=`."
                    )
                strategy = container._training_type_plugin
        elif _given(accelerator):
            device = accelerator

        # gpus= / num_processes= -> accelerator= + devices=
        if _given(gpus) and gpus is not None:
            warn_deprecated(deprecation_message(_TRAINER, "Trainer(accelerator='cuda', devices=...)", member="gpus",
                                                old_display="Trainer(gpus=...)"))
            if _given(devices):
                raise _both("gpus", "devices")
            gpus = _parse_gpus(gpus)
            if gpus not in (0, [], None):
                if _given(device) and isinstance(device, str) and device.lower() == "cpu":
                    raise ValueError(f"`Trainer(gpus={gpus!r})` asks for GPUs but `accelerator='cpu'`.")
                device = device if _given(device) and not isinstance(device, str) else "cuda"
                devices = gpus
        if _given(num_processes) and num_processes is not None:
            warn_deprecated(deprecation_message(_TRAINER, "Trainer(accelerator='cpu', devices=...)",
                                                member="num_processes", old_display="Trainer(num_processes=...)"))
            if _given(devices):
                raise _both("num_processes", "devices")
            devices = num_processes
            if not _given(device):
                device = "cpu"

        # plugins=[DDPPlugin(...)] / plugins=["ddp_sharded"] -> strategy=
        for plugin in list(plugins):
            if isinstance(plugin, _Strategy) or _is_strategy_name(plugin):
                warn_deprecated(deprecation_message(_TRAINER, "Trainer(strategy=...)", member="plugins",
                                                    old_display="Trainer(plugins=[<training-type plugin>])"))
                plugins.remove(plugin)
                if isinstance(plugin, str):
                    plugin, device_from_value = _strategy_value("plugins", plugin)
                    if device_from_value and not _given(device):
                        device = device_from_value
                if _given(strategy) and isinstance(strategy, _Strategy) and strategy is not plugin:
                    raise _both("plugins", "strategy")
                if _given(strategy) and isinstance(strategy, str) and isinstance(plugin, _Strategy):
                    expected = strategies.Trainer.registry._entries.get(strategy)
                    if expected is not None and not isinstance(plugin, expected.cls):
                        raise ValueError(
                            f"`Trainer(strategy/accelerator={strategy!r})` and `plugins=[{type(plugin).__name__}()]` "
                            "disagree: pass only the plugin as `strategy=`."
                        )
                strategy = plugin

        for plugin in plugins:
            check_unsupported(plugin, "checked when the Trainer is built")
        if isinstance(strategy, _Strategy):
            check_unsupported(strategy, "checked when the Trainer is built")
            old_nodes = getattr(strategy, "_compat_num_nodes", None)
            if old_nodes is not None and not _given(num_nodes):
                num_nodes = old_nodes
        if container is not None:
            check_unsupported(container, "checked when the Trainer is built")
            if isinstance(strategy, _Strategy) and not hasattr(strategy, "_compat_setup"):
                raise TypeError(
                    f"An old `Accelerator` container drives old training-type plugins only; got "
                    f"`{type(strategy).__name__}`. Pass it as `strategy=` without the container."
                )
            if container._device_cls is None and _given(device):
                from strategies._connector import resolve_accelerator

                container._set_device(resolve_accelerator(device))
            device = container._device

        new_kwargs: dict[str, Any] = {}
        for name, value in (("strategy", strategy), ("accelerator", device), ("devices", devices),
                            ("num_nodes", num_nodes)):
            if _given(value):
                new_kwargs[name] = value
        if plugins:
            new_kwargs["plugins"] = plugins
        super().__init__(**new_kwargs, **kwargs)
        self._compat_container = container
        if container is not None:
            if not hasattr(self.strategy, "_compat_setup"):
                raise TypeError(
                    f"An old `Accelerator` container cannot drive `{type(self.strategy).__name__}`: pass an old "
                    "training-type plugin as `Accelerator(training_type_plugin=...)`, or drop the container."
                )
            self.strategy._compat_container = container

    # -- old attributes -------------------------------------------------------------------------

    @property
    def training_type_plugin(self) -> _Strategy:
        """Deprecated: ``trainer.strategy``."""
        warn_deprecated(deprecation_message(_TRAINER, "strategy", member="training_type_plugin"))
        return self.strategy

    @property
    def accelerator_backend(self) -> Any:
        """Deprecated: ``trainer.strategy`` (the old container, when one was passed)."""
        warn_deprecated(deprecation_message(_TRAINER, "strategy", member="accelerator_backend"))
        return self._compat_container if self._compat_container is not None else self.strategy

    def _flag(name: str, get: Any) -> property:  # type: ignore[misc]
        def fget(self: Any) -> bool:
            warn_deprecated(deprecation_message(_TRAINER, "strategy", member=name,
                                                hint="check `trainer.strategy` / `trainer.strategy.root_device` "
                                                     "(e.g. `isinstance(trainer.strategy, DDPStrategy)`)"))
            return bool(get(self))

        fget.__name__ = name
        return property(fget)

    on_gpu = _flag("on_gpu", lambda self: self.strategy.root_device.type == "cuda")
    on_cpu = _flag("on_cpu", lambda self: self.strategy.root_device.type == "cpu")
    on_tpu = _flag("on_tpu", lambda self: False)
    use_tpu = _flag("use_tpu", lambda self: False)
    use_dp = _flag("use_dp", lambda self: type(self.strategy).__name__ in ("DataParallelStrategy", "DataParallelPlugin"))
    use_ddp = _flag("use_ddp", lambda self: isinstance(self.strategy, _DDPStrategy))
    use_ddp2 = _flag("use_ddp2", lambda self: False)
    use_horovod = _flag("use_horovod", lambda self: False)
    use_single_gpu = _flag("use_single_gpu", lambda self: isinstance(self.strategy, _SingleDeviceStrategy)
                           and self.strategy.root_device.type == "cuda")
    del _flag

    def __getattr__(self, name: str) -> Any:
        if name in _TRAINER_INTERNALS:
            entry = _lookup(_TRAINER, name, None)
            hint = entry.hint if entry is not None else "call trainer.fit/validate/test/predict"
            raise AttributeError(
                f"`Trainer.{name}` was removed (internal to the Trainer now): {hint.rstrip('.')}. "
                f"Run `{_warnings.MIGRATE_COMMAND}` to find the calls."
            )
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

