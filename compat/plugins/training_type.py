"""Old training-type plugins (``pytorch_lightning.plugins.training_type``) on top of ``strategies``.

Each old class subclasses its new strategy (``DDPPlugin(DDPStrategy)``) and adds the old
constructor arguments, old methods and properties (forwarding to the new ones), and the bridges
for old hooks a user subclass overrides:

==========================  =====================================================================
old override                called by the new lifecycle
==========================  =====================================================================
``init_ddp_connection``     inside ``setup_environment()`` -> ``setup_distributed()``, before the
                            setup hooks; it is what initialises the process group
``setup(model)``            at the start of ``setup(trainer)`` (after the setup hooks)
``pre_dispatch()``          at the end of ``setup(trainer)`` (model moved and wrapped, optimizers built)
``post_dispatch()``         at the start of ``teardown()`` (after the loops and teardown hooks)
``init_optimizers``         by ``setup_optimizers(trainer)``
``start_training`` & co.,   never: a ``TypeError`` when the plugin is given to a Trainer (or
``dispatch``, ``new_process``  reaches ``setup_environment``), saying where the code goes
==========================  =====================================================================
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist
from torch import nn
from typing_extensions import deprecated

import strategies
from compat._bridge import (
    Hook,
    ShimMeta,
    bridge_subclass,
    check_unsupported,
    first_param,
    forwarder,
    is_bridge,
    mark_bridge,
    property_forwarder,
    user_override,
    warn_class_use,
)
from compat._warnings import deprecation_message, user_frame, warn_deprecated
from strategies.ddp import DDPStrategy as _DDPStrategy
from strategies.ddp_spawn import DDPSpawnStrategy as _DDPSpawnStrategy
from strategies.parallel import ParallelStrategy as _ParallelStrategy
from strategies.single_device import SingleDeviceStrategy as _SingleDeviceStrategy
from strategies.strategy import Strategy as _Strategy

if TYPE_CHECKING:
    from strategies.trainer import Trainer

__all__ = [
    "TrainingTypePlugin",
    "ParallelPlugin",
    "SingleDevicePlugin",
    "DDPPlugin",
    "DDPSpawnPlugin",
    "DDP2Plugin",
    "DDPShardedPlugin",
    "DDPSpawnShardedPlugin",
    "DDPFullyShardedPlugin",
    "DeepSpeedPlugin",
    "DataParallelPlugin",
    "HorovodPlugin",
    "TPUSpawnPlugin",
    "SingleTPUPlugin",
    "RPCPlugin",
    "RPCSequentialPlugin",
]

_TTP = "pytorch_lightning.plugins.TrainingTypePlugin"
_PAR = "pytorch_lightning.plugins.ParallelPlugin"
_DDP = "pytorch_lightning.plugins.DDPPlugin"
_SPAWN = "pytorch_lightning.plugins.DDPSpawnPlugin"

_LOOP_HINT = (
    "The Trainer runs the loop itself and `strategy.launcher` starts the processes: move per-process code "
    "to `setup_environment()` or `setup(trainer)`, and code around the loop to a Callback's "
    "`on_fit_start`/`on_fit_end`."
)


def _entry_hint(owner: str, member: str, fallback: str) -> str:
    from compat._warnings import _lookup

    entry = _lookup(owner, member, None)
    return entry.hint if entry is not None and entry.hint else fallback


def _unsupported(owner: str, member: str, fallback: str = _LOOP_HINT) -> Hook:
    return Hook(owner, member, None, "never", unsupported=_entry_hint(owner, member, fallback))


def _init_optimizers_bridge(old: str) -> Any:
    def setup_optimizers(self: Any, trainer: Any) -> None:
        result = getattr(self, old)(trainer, self.module)
        optimizers, schedulers = (result[0], result[1]) if isinstance(result, tuple) else (result, [])
        from strategies._optimizers import _scheduler_config

        self.optimizers = list(optimizers)
        self.lr_scheduler_configs = [_scheduler_config(s) for s in schedulers]

    return setup_optimizers


_STRATEGY_HOOKS = (
    Hook(
        _DDP,
        "init_ddp_connection",
        "setup_distributed",
        "inside `setup_environment()` -> `setup_distributed()`, before the setup hooks, and it initialises "
        "the process group",
    ),
    Hook(
        _TTP,
        "pre_dispatch",
        None,
        "at the end of `setup(trainer)`, after the model is moved and wrapped and the optimizers are built",
    ),
    Hook(_TTP, "post_dispatch", None, "at the start of `teardown()`, after the loops and the teardown hooks"),
    Hook(_TTP, "init_optimizers", "setup_optimizers", "by `setup_optimizers(trainer)`", make=_init_optimizers_bridge),
    _unsupported(_TTP, "start_training"),
    _unsupported(_TTP, "start_evaluating"),
    _unsupported(_TTP, "start_testing"),
    _unsupported(_TTP, "start_predicting"),
    _unsupported(_TTP, "dispatch"),
    _unsupported(_SPAWN, "new_process"),
    _unsupported(_SPAWN, "get_mp_spawn_kwargs"),
    _unsupported(_SPAWN, "transfer_distrib_spawn_state_on_fit_end"),
)

_LEGACY_SETUP_PARAMS = ("model", "pl_module", "lightning_module", "module")


def _legacy_setup_bridge(cls: type[_LegacyStrategy]) -> None:
    """``setup(self, model)`` (1.2-1.4) on a user plugin: called at the start of ``setup(trainer)``."""
    func = vars(cls).get("setup")
    if func is None or is_bridge(func) or first_param(func) not in _LEGACY_SETUP_PARAMS:
        return
    warn_deprecated(
        deprecation_message(
            _TTP,
            "setup(trainer)",
            member="setup",
            old_display=f"{cls.__name__}.setup(model)",
            detail="overrides the old `setup(model)`; it is still called, at the start of `setup(trainer)`, "
            "after the setup hooks",
        ),
        once_key=("hook", cls, "setup(model)"),
        frame=user_frame(),
    )
    cls._compat_legacy_setup = func

    def setup(self: Any, trainer: Any) -> None:
        if isinstance(trainer, nn.Module):  # an old-style direct call: setup(model)
            return func(self, trainer)
        return _LegacyStrategy.setup(self, trainer)

    cls.setup = mark_bridge(setup, "setup")  # type: ignore[method-assign]  # the bridge on the user's class


def _no_record(name: str) -> None:
    """A picklable stand-in for the strategy's default (lambda) hook recorder."""


class _LegacyStrategy:
    """What every old training-type plugin adds to its new strategy."""

    def __getstate__(self) -> dict[str, Any]:
        # strategies.Strategy keeps a lambda as its default recorder, which cannot be pickled.
        state = self.__dict__.copy()
        if getattr(state.get("_recorder"), "__name__", "") == "<lambda>":
            state["_recorder"] = _no_record
        return state

    _compat_container: Any = None
    _compat_setup_done = False
    _compat_in_container = False
    _compat_legacy_setup: Any = None

    if TYPE_CHECKING:  # a mixin: the strategy it is mixed into has these

        @property
        def module(self) -> nn.Module: ...

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        bridge_subclass(cls, _STRATEGY_HOOKS)
        if user_override(cls, "setup") is cls:
            _legacy_setup_bridge(cls)

    # -- lifecycle bridges --------------------------------------------------------------------

    def setup_environment(self) -> None:
        check_unsupported(self, "checked before the processes set up")
        super().setup_environment()  # type: ignore[misc]  # a mixin: the strategy follows in the MRO

    def setup(self, trainer: Trainer) -> None:
        if isinstance(trainer, nn.Module):
            return None  # super().setup(model) from an old override: the model is already connected
        container = self._compat_container
        if container is not None and user_override(type(container), "setup") and not self._compat_in_container:
            self._compat_in_container = True
            try:
                container.setup(trainer, self.module)
            finally:
                self._compat_in_container = False
            if not self._compat_setup_done:
                self._compat_setup(trainer)
            return None
        self._compat_setup(trainer)
        return None

    def _compat_setup(self, trainer: Trainer) -> None:
        """The new ``setup(trainer)`` with the old hooks at their matching moments."""
        self._compat_setup_done = True
        legacy = type(self)._compat_legacy_setup
        if legacy is not None:
            legacy(self, self.module)
        super().setup(trainer)  # type: ignore[misc]
        if user_override(type(self), "pre_dispatch"):
            self.pre_dispatch()
        precision = self.precision  # type: ignore[attr-defined]
        if user_override(type(precision), "pre_dispatch"):
            precision.pre_dispatch()
        container = self._compat_container
        if container is not None and user_override(type(container), "pre_dispatch"):
            container.pre_dispatch()

    def teardown(self) -> None:
        if self._compat_setup_done:
            self._compat_setup_done = False
            container = self._compat_container
            if container is not None and user_override(type(container), "post_dispatch"):
                container.post_dispatch()
            if user_override(type(self), "post_dispatch"):
                self.post_dispatch()
            precision = self.precision  # type: ignore[attr-defined]
            if user_override(type(precision), "post_dispatch"):
                precision.post_dispatch()
        super().teardown()  # type: ignore[misc]

    # -- old hooks: base behaviour ------------------------------------------------------------

    def pre_dispatch(self) -> None:
        """Old hook (merged into ``setup(trainer)``): the base does nothing, ``setup`` did the work."""
        if user_override(type(self), "pre_dispatch") is None:
            warn_deprecated(deprecation_message(_TTP, "setup", member="pre_dispatch"))

    def post_dispatch(self) -> None:
        """Old hook (now ``teardown()``): the base does nothing."""
        if user_override(type(self), "post_dispatch") is None:
            warn_deprecated(deprecation_message(_TTP, "teardown", member="post_dispatch"))

    def init_optimizers(self, trainer: Any, model: Any = None) -> tuple[list, list, list]:
        """Old name of ``setup_optimizers(trainer)``; returns ``(optimizers, schedulers, [])`` like before."""
        via_super = user_override(type(self), "init_optimizers") is not None
        if not via_super:
            warn_deprecated(deprecation_message(_TTP, "setup_optimizers", member="init_optimizers"))
            self.setup_optimizers(trainer)  # type: ignore[attr-defined]
        else:
            _Strategy.setup_optimizers(self, trainer)  # type: ignore[arg-type]
        schedulers = [c["scheduler"] for c in self.lr_scheduler_configs]  # type: ignore[attr-defined]
        return list(self.optimizers), schedulers, []  # type: ignore[attr-defined]

    predict = forwarder(_TTP, "predict", "predict_step")

    # -- old properties -----------------------------------------------------------------------

    lightning_module = property_forwarder(_TTP, "lightning_module", "module")
    on_gpu = property_forwarder(_TTP, "on_gpu", "root_device", get=lambda self: self.root_device.type == "cuda")
    on_tpu = property_forwarder(_TTP, "on_tpu", "root_device", get=lambda self: False)
    setup_optimizers_in_pre_dispatch = property_forwarder(
        _TTP, "setup_optimizers_in_pre_dispatch", "setup", get=lambda self: False
    )
    call_configure_sharded_model_hook = property_forwarder(
        _TTP, "call_configure_sharded_model_hook", "configure_model", get=lambda self: True
    )

    @property
    def results(self) -> Any:
        """Removed: ``fit``/``validate``/``test``/``predict`` return the results."""
        raise AttributeError(
            deprecation_message(
                _TTP, None, member="results", hint="use the value returned by trainer.fit/validate/test/predict"
            )
        )


def _install_no_loop() -> None:
    """``start_training`` & co. called by name: there is no such step any more."""
    for name in ("start_training", "start_evaluating", "start_testing", "start_predicting", "dispatch"):

        def method(self: Any, *args: Any, _name: str = name, **kwargs: Any) -> Any:
            raise NotImplementedError(
                deprecation_message(_TTP, None, member=_name, hint=_entry_hint(_TTP, _name, _LOOP_HINT))
            )

        method.__name__ = name
        setattr(_LegacyStrategy, name, method)


_install_no_loop()


class _LegacyParallel(_LegacyStrategy):
    """``init_ddp_connection`` and the parallel properties."""

    _compat_old_owner = _DDP

    def setup_distributed(self) -> None:
        check_unsupported(self, "checked before the processes set up")
        if user_override(type(self), "init_ddp_connection") is None:
            super().setup_distributed()  # type: ignore[misc]
            return
        env = self.cluster_environment  # type: ignore[attr-defined]
        if env is None:
            raise RuntimeError("No cluster environment: the Trainer sets one before `setup_environment`.")
        env.set_world_size(self.num_nodes * self.num_processes)  # type: ignore[attr-defined]
        env.set_global_rank(self.node_rank * self.num_processes + self.local_rank)  # type: ignore[attr-defined]
        self.init_ddp_connection(self.global_rank, self.world_size)  # type: ignore[attr-defined]
        if not (dist.is_available() and dist.is_initialized()):
            raise RuntimeError(
                f"`{type(self).__name__}.init_ddp_connection` returned without initialising the process "
                "group: call `super().init_ddp_connection(global_rank, world_size)` (or "
                "`torch.distributed.init_process_group(...)`) in it."
            )

    def init_ddp_connection(self, global_rank: int | None = None, world_size: int | None = None) -> None:
        """Old hook: initialise the process group (now part of ``setup_distributed()``)."""
        if user_override(type(self), "init_ddp_connection") is None:
            # Called by name on a plugin that does not override it: the new step (dynamic dispatch,
            # so a new-style `setup_distributed` override runs).
            warn_deprecated(
                deprecation_message(self._compat_old_owner, "setup_distributed", member="init_ddp_connection")
            )
            self.setup_distributed()
            return
        # Reached through super() from the user's override: the base behaviour, the process group.
        _ParallelStrategy.setup_distributed(self)  # type: ignore[arg-type]  # a mixin of a ParallelStrategy

    torch_distributed_backend = property_forwarder(_PAR, "torch_distributed_backend", "process_group_backend")

    @property
    def task_idx(self) -> int:
        """Deprecated: ``local_rank``."""
        warn_deprecated(deprecation_message(_DDP, "local_rank", member="task_idx"))
        return self.local_rank  # type: ignore[attr-defined]


def _old_parallel_kwargs(owner: str, name: str, num_nodes: Any, sync_batchnorm: Any) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    if num_nodes is not None:
        warn_deprecated(
            deprecation_message(
                owner, "Trainer(num_nodes=...)", member="num_nodes", old_display=f"{name}(num_nodes=...)"
            )
        )
        extra["num_nodes"] = num_nodes
    if sync_batchnorm is not None:
        warn_deprecated(
            deprecation_message(
                owner,
                "a SyncBatchNorm conversion of your module",
                member="sync_batchnorm",
                old_display=f"{name}(sync_batchnorm=...)",
            )
        )
    return extra


def _convert_sync_batchnorm(module: nn.Module) -> None:
    for name, child in module.named_children():
        setattr(module, name, nn.SyncBatchNorm.convert_sync_batchnorm(child))


def _check_both(name: str, old_value: Any, new_name: str, new_value: Any, old_name: str) -> None:
    if old_value is not None and new_value is not None:
        raise TypeError(f"`{name}` got both `{old_name}` (old) and `{new_name}` (new): pass only `{new_name}`.")


@deprecated("TrainingTypePlugin is deprecated: use strategies.Strategy", category=None)
class TrainingTypePlugin(_LegacyStrategy, _Strategy, metaclass=ShimMeta):
    """``pytorch_lightning.plugins.TrainingTypePlugin``: use ``strategies.Strategy``."""

    _compat_old = _TTP
    _compat_new = "strategies.Strategy"
    _compat_new_cls = _Strategy

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warn_class_use(type(self))
        super().__init__(*args, **kwargs)


@deprecated("ParallelPlugin is deprecated: use strategies.ParallelStrategy", category=None)
class ParallelPlugin(_LegacyParallel, _ParallelStrategy, metaclass=ShimMeta):
    """``pytorch_lightning.plugins.ParallelPlugin``: use ``strategies.ParallelStrategy``."""

    _compat_old = _PAR
    _compat_new = "strategies.ParallelStrategy"
    _compat_new_cls = _ParallelStrategy
    _compat_old_owner = _PAR

    def __init__(
        self, parallel_devices: list[torch.device] | None = None, cluster_environment: Any = None, **kwargs: Any
    ) -> None:
        warn_class_use(type(self))
        super().__init__(parallel_devices=parallel_devices, cluster_environment=cluster_environment, **kwargs)


@deprecated("SingleDevicePlugin is deprecated: use strategies.SingleDeviceStrategy", category=None)
class SingleDevicePlugin(_LegacyStrategy, _SingleDeviceStrategy, metaclass=ShimMeta):
    """``pytorch_lightning.plugins.SingleDevicePlugin``: use ``strategies.SingleDeviceStrategy``."""

    _compat_old = "pytorch_lightning.plugins.SingleDevicePlugin"
    _compat_new = "strategies.SingleDeviceStrategy"
    _compat_new_cls = _SingleDeviceStrategy

    def __init__(self, device: str | torch.device = "cpu", **kwargs: Any) -> None:
        warn_class_use(type(self))
        super().__init__(device, **kwargs)


class _DDPInit:
    """The 1.2 ``DDPPlugin``/``DDPSpawnPlugin`` constructor on top of the new one."""

    _compat_sync_batchnorm = False
    _compat_num_nodes: int | None = None

    def _compat_init(
        self,
        name: str,
        owner: str,
        parallel_devices: Any,
        num_nodes: Any,
        cluster_environment: Any,
        sync_batchnorm: Any,
        kwargs: dict[str, Any],
    ) -> dict[str, Any]:
        warn_class_use(type(self))
        extra = _old_parallel_kwargs(owner, name, num_nodes, sync_batchnorm)
        self._compat_sync_batchnorm = bool(sync_batchnorm)
        self._compat_num_nodes = num_nodes
        # 1.2-1.5 built DistributedDataParallel with `find_unused_parameters=True` unless told
        # otherwise (a module whose steps leave parameters without gradients ran; 1.6 changed it)
        kwargs.setdefault("find_unused_parameters", True)
        return {"parallel_devices": parallel_devices, "cluster_environment": cluster_environment, **extra, **kwargs}

    def _setup_model(self, module: nn.Module) -> nn.Module:
        if self._compat_sync_batchnorm:
            _convert_sync_batchnorm(module)
        return super()._setup_model(module)  # type: ignore[misc]


@deprecated("DDPPlugin is deprecated: use strategies.DDPStrategy", category=None)
class DDPPlugin(_LegacyParallel, _DDPInit, _DDPStrategy, metaclass=ShimMeta):
    """``pytorch_lightning.plugins.DDPPlugin``: use ``strategies.DDPStrategy`` (``strategy="ddp"``).

    Args:
        parallel_devices, cluster_environment: as before (the Trainer fills them in).
        num_nodes, sync_batchnorm: deprecated here (``Trainer(num_nodes=...)``).
        **kwargs: the new keyword arguments (``accelerator``, ``precision``,
            ``process_group_backend``, ``timeout``) and, as before, ``DistributedDataParallel``
            arguments such as ``find_unused_parameters``.
    """

    _compat_old = _DDP
    _compat_new = "strategies.DDPStrategy"
    _compat_new_cls = _DDPStrategy

    def __init__(
        self,
        parallel_devices: list[torch.device] | None = None,
        num_nodes: int | None = None,
        cluster_environment: Any = None,
        sync_batchnorm: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            **self._compat_init(
                "DDPPlugin", _DDP, parallel_devices, num_nodes, cluster_environment, sync_batchnorm, kwargs
            )
        )


@deprecated("DDPSpawnPlugin is deprecated: use strategies.DDPSpawnStrategy", category=None)
class DDPSpawnPlugin(_LegacyParallel, _DDPInit, _DDPSpawnStrategy, metaclass=ShimMeta):
    """``pytorch_lightning.plugins.DDPSpawnPlugin``: use ``strategies.DDPSpawnStrategy`` (``strategy="ddp_spawn"``)."""

    _compat_old = _SPAWN
    _compat_new = "strategies.DDPSpawnStrategy"
    _compat_new_cls = _DDPSpawnStrategy
    _compat_old_owner = _SPAWN

    def __init__(
        self,
        parallel_devices: list[torch.device] | None = None,
        num_nodes: int | None = None,
        cluster_environment: Any = None,
        sync_batchnorm: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(
            **self._compat_init(
                "DDPSpawnPlugin", _SPAWN, parallel_devices, num_nodes, cluster_environment, sync_batchnorm, kwargs
            )
        )

    @property
    def mp_spawn_kwargs(self) -> Any:
        """Removed: spawning belongs to ``strategy.launcher``."""
        raise AttributeError(deprecation_message(_SPAWN, None, member="mp_spawn_kwargs"))

    @property
    def mp_queue(self) -> Any:
        """Removed: the launcher sends rank 0's results back."""
        raise AttributeError(deprecation_message(_SPAWN, None, member="mp_queue"))

    def new_process(self, *args: Any, **kwargs: Any) -> Any:
        """Removed: workers are started by ``strategies.MultiprocessingLauncher``."""
        raise NotImplementedError(deprecation_message(_SPAWN, None, member="new_process"))


def _new_class(name: str) -> Any:
    return getattr(strategies, name, None)


def _shim_for_optional(name: str, old: str, new_name: str) -> type:
    """A shim for a strategy that ``strategies`` has (FSDP, DeepSpeed, DP), old arguments dropped."""
    new_cls = _new_class(new_name)
    if new_cls is None:  # pragma: no cover - the strategy library provides them
        return _unavailable(name, old)

    def __init__(self: Any, *args: Any, num_nodes: int | None = None, **kwargs: Any) -> None:
        warn_class_use(type(self))
        if num_nodes is not None:
            warn_deprecated(
                deprecation_message(
                    old, "Trainer(num_nodes=...)", member="num_nodes", old_display=f"{name}(num_nodes=...)"
                )
            )
            kwargs["num_nodes"] = num_nodes
        new_cls.__init__(self, *args, **kwargs)

    namespace = {
        "__init__": __init__,
        "__module__": __name__,
        "__qualname__": name,
        "__doc__": f"``{old}``: use ``strategies.{new_name}``.",
        "_compat_old": old,
        "_compat_new": f"strategies.{new_name}",
        "_compat_new_cls": new_cls,
    }
    bases = (_LegacyParallel, new_cls) if issubclass(new_cls, _ParallelStrategy) else (_LegacyStrategy, new_cls)
    cls = ShimMeta(name, bases, namespace)
    return deprecated(f"{name} is deprecated: use strategies.{new_name}", category=None)(cls)


class _Unavailable:
    """Base of old classes with no runtime equivalent: instantiating one raises with the hint."""

    _compat_old = ""
    _compat_new: str | None = None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "_compat_old" not in vars(cls):
            bases: tuple[Any, ...] = cls.__mro__[1:]  # classes with the `_compat_*` attributes
            for base in bases:
                if "_compat_old" in vars(base) and base._compat_old:
                    warn_deprecated(
                        deprecation_message(
                            base._compat_old,
                            base._compat_new,
                            detail=f"subclassed by `{cls.__name__}`; it cannot be instantiated",
                        ),
                        once_key=("subclass", cls, base),
                        frame=user_frame(),
                    )
                    break

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(
            deprecation_message(self._compat_old, self._compat_new, detail="it has no runtime equivalent here")
        )


def _unavailable(name: str, old: str, base: type = _Unavailable) -> type:
    from compat._warnings import _lookup

    entry = _lookup(old, None, None)
    new = entry.strategies if entry is not None else None
    return type(
        name,
        (base,),
        {
            "__module__": __name__,
            "__qualname__": name,
            "_compat_old": old,
            "_compat_new": new,
            "__doc__": f"``{old}``: removed; instantiating it raises.",
        },
    )


DDP2Plugin = _unavailable("DDP2Plugin", "pytorch_lightning.plugins.DDP2Plugin")
DDPShardedPlugin = _unavailable("DDPShardedPlugin", "pytorch_lightning.plugins.DDPShardedPlugin")
DDPSpawnShardedPlugin = _unavailable("DDPSpawnShardedPlugin", "pytorch_lightning.plugins.DDPSpawnShardedPlugin")
DDPFullyShardedPlugin = _unavailable("DDPFullyShardedPlugin", "pytorch_lightning.plugins.DDPFullyShardedPlugin")
HorovodPlugin = _unavailable("HorovodPlugin", "pytorch_lightning.plugins.HorovodPlugin")
TPUSpawnPlugin = _unavailable("TPUSpawnPlugin", "pytorch_lightning.plugins.TPUSpawnPlugin")
SingleTPUPlugin = _unavailable("SingleTPUPlugin", "pytorch_lightning.plugins.SingleTPUPlugin")
RPCPlugin = _unavailable("RPCPlugin", "pytorch_lightning.plugins.RPCPlugin")
RPCSequentialPlugin = _unavailable("RPCSequentialPlugin", "pytorch_lightning.plugins.RPCSequentialPlugin")
DeepSpeedPlugin = _shim_for_optional(
    "DeepSpeedPlugin", "pytorch_lightning.plugins.DeepSpeedPlugin", "DeepSpeedStrategy"
)
DataParallelPlugin = _shim_for_optional(
    "DataParallelPlugin", "pytorch_lightning.plugins.DataParallelPlugin", "DataParallelStrategy"
)
