"""``LightningModule``, ``LightningDataModule`` and ``Callback`` with the old hook names.

* ``LightningModule.configure_sharded_model()`` is called as ``configure_model()`` (inside the
  strategy's sharded context, after the setup hooks); defining both is a ``TypeError``.
* The 1.x hooks Lightning 2.0 removed (``training_epoch_end``, ``on_epoch_start``, ...) are
  called by ``compat.Trainer`` at their 1.x step (``compat/_hooks.py``); ``*_step_end`` runs on
  the step's output inside the step, and the outputs ``*_epoch_end`` receives are collected
  there (``compat._steps``). Old signatures (``dataloader_idx``, ``on_train_epoch_end(outputs)``)
  are adapted. Each override warns once when its class is defined; one that cannot be bridged
  (``training_step(..., optimizer_idx)``, ``tbptt_split_batch``, ...) is a ``TypeError`` there.
* ``Callback.on_before_accelerator_backend_setup(trainer, pl_module)`` and
  ``Callback.on_configure_sharded_model(trainer, pl_module)`` are called from ``setup`` (after
  the callback's own ``setup`` body), once per ``setup``.
"""

from __future__ import annotations

import functools
import inspect
from argparse import ArgumentParser, Namespace
from collections.abc import Mapping
from typing import Any

from typing_extensions import deprecated

from compat import _argparse, _steps
from compat._bridge import (
    Hook,
    ShimMeta,
    bridge_subclass,
    call_old,
    forwarder,
    is_bridge,
    mark_bridge,
    user_override,
)
from compat._warnings import deprecation_message, warn_deprecated
from strategies.callbacks import Callback as _NewCallback
from strategies.module import DataModule as _DataModule
from strategies.module import TrainModule as _TrainModule
from strategies.module import _Hyperparameters

__all__ = ["Callback", "LightningDataModule", "LightningModule"]

_MODULE = "pytorch_lightning.LightningModule"
_DATAMODULE = "pytorch_lightning.LightningDataModule"
_CALLBACK = "pytorch_lightning.Callback"

_MODULE_HOOKS = (
    Hook(
        _MODULE,
        "configure_sharded_model",
        "configure_model",
        "as `configure_model()`, inside the strategy's sharded context after the setup hooks",
        make=call_old,
    ),
    *_steps.module_hooks(_MODULE),
)

_CALLBACK_HOOKS = (
    *_steps.callback_hooks(_CALLBACK),
    Hook(
        _CALLBACK,
        "on_before_accelerator_backend_setup",
        "setup",
        "from `setup(trainer, module, stage)` (the process group is up)",
        exclusive=False,
    ),
    Hook(_CALLBACK, "on_configure_sharded_model", "setup", "from `setup(trainer, module, stage)`", exclusive=False),
)
_LEGACY_CALLBACK_HOOKS = ("on_before_accelerator_backend_setup", "on_configure_sharded_model")  # from setup


def _hparams_property(owner: str) -> property:
    """``hparams`` with 1.x's setter: ``self.hparams = args`` (a ``Namespace`` or a dict) keeps
    its values as the hyperparameters (saved in checkpoints), warning once per class."""

    def fget(self: Any) -> Any:
        return _Hyperparameters.hparams.fget(self)  # type: ignore[attr-defined]

    def fset(self: Any, value: Any) -> None:
        warn_deprecated(
            deprecation_message(
                owner,
                "self.save_hyperparameters(...)",
                member="hparams",
                old_display=f"{type(self).__name__}: `self.hparams = ...`",
                detail="the values are still kept as the hyperparameters",
                hint="call `self.save_hyperparameters(args)` (a Namespace or a dict) instead",
            ),
            once_key=("hparams setter", type(self)),
        )
        if not isinstance(value, (Namespace, Mapping)):
            raise TypeError(
                f"`self.hparams = ...` takes a Namespace or a dict (as 1.x did); got a {type(value).__name__}: "
                "call `self.save_hyperparameters(...)` with the values instead."
            )
        values = vars(value) if isinstance(value, Namespace) else dict(value)
        hparams = fget(self)
        hparams.clear()
        hparams.update(values)

    return property(fget, fset, doc="The saved hyperparameters (``self.hparams.lr``); 1.x's setter is kept.")


@deprecated("LightningModule is deprecated: use strategies.TrainModule", category=None)
class LightningModule(_TrainModule, metaclass=ShimMeta):
    """``pytorch_lightning.LightningModule``: use ``strategies.TrainModule``."""

    _compat_old = _MODULE
    _compat_new = "strategies.TrainModule"
    _compat_new_cls = _TrainModule

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _steps.refuse_unbridgeable(cls, "module")
        bridge_subclass(cls, _MODULE_HOOKS)
        _steps.adapt_module(cls)

    @property
    def _trainer(self) -> Any:
        return self.__dict__.get("_compat_trainer")

    @_trainer.setter
    def _trainer(self, trainer: Any) -> None:
        _steps.check_trainer(self, trainer)
        self.__dict__["_compat_trainer"] = trainer

    configure_sharded_model = forwarder(_MODULE, "configure_sharded_model", "configure_model")
    hparams = _hparams_property(_MODULE)

    @classmethod
    def load_from_checkpoint(
        cls,
        checkpoint_path: Any,
        map_location: Any = None,
        hparams_file: Any = None,
        strict: bool = True,
        weights_only: bool | None = None,
        **kwargs: Any,
    ) -> Any:
        """1.x's ``load_from_checkpoint``: the module built from a checkpoint's hyperparameters, with its weights.

        Reads Lightning 1.2-1.5 files (``hparams_name`` ``"hparams"`` passes them as one ``hparams``
        argument, as 1.x did), Lightning 2.x's and this library's; ``kwargs`` override the saved
        hyperparameters. ``torch.load(weights_only=True)`` unless ``weights_only=False`` (only for a
        file you trust: it can execute code stored in the file); a file that needs it says so.
        """
        if hparams_file is not None:
            raise TypeError(
                "`load_from_checkpoint(hparams_file=...)` is not supported: pass the hyperparameters as keyword "
                "arguments (`load_from_checkpoint(path, lr=0.1, ...)`), which override the saved ones."
            )
        from strategies._checkpoint import load_module

        return load_module(cls, checkpoint_path, map_location, strict, weights_only, **kwargs)


@deprecated("LightningDataModule is deprecated: use strategies.DataModule", category=None)
class LightningDataModule(_DataModule, metaclass=ShimMeta):
    """``pytorch_lightning.LightningDataModule``: use ``strategies.DataModule``."""

    _compat_old = _DATAMODULE
    _compat_new = "strategies.DataModule"
    _compat_new_cls = _DataModule

    #: 1.x's shape of one sample (``size()`` returns it); a plain attribute, as it was in effect.
    dims: Any = None
    hparams = _hparams_property(_DATAMODULE)

    def __init__(
        self,
        train_transforms: Any = None,
        val_transforms: Any = None,
        test_transforms: Any = None,
        dims: Any = None,
    ) -> None:
        super().__init__()
        for name, value in (
            ("train_transforms", train_transforms),
            ("val_transforms", val_transforms),
            ("test_transforms", test_transforms),
            ("dims", dims),
        ):
            if value is not None:
                _warn_removed_member(name, "keep it on your data module yourself (an attribute of your own)")
                setattr(self, f"_{name}" if name != "dims" else name, value)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        bridge_subclass(cls, ())
        for hook in ("prepare_data", "setup", "teardown"):
            if inspect.isfunction(vars(cls).get(hook)):  # (a staticmethod is left as it is)
                setattr(cls, hook, _recording(vars(cls)[hook], hook))

    def size(self, dim: int | None = None) -> Any:
        """Deprecated (Lightning 1.5; removed in 1.7): ``self.dims``, or ``self.dims[dim]``."""
        _warn_removed_member("size", "read `self.dims` (an attribute of your own) instead")
        dims = self.dims
        return dims[dim] if dim is not None and dims is not None else dims

    def _transforms(name: str) -> property:  # type: ignore[misc]
        def fget(self: Any) -> Any:
            _warn_removed_member(name, "keep the transforms on your data module yourself")
            return getattr(self, f"_{name}", None)

        def fset(self: Any, value: Any) -> None:
            _warn_removed_member(name, "keep the transforms on your data module yourself")
            object.__setattr__(self, f"_{name}", value)

        return property(fget, fset, doc=f"Deprecated (Lightning 1.5; removed in 1.7): ``{name}``.")

    train_transforms = _transforms("train_transforms")
    val_transforms = _transforms("val_transforms")
    test_transforms = _transforms("test_transforms")
    del _transforms

    def _called(name: str, stage: str | None = None) -> property:  # type: ignore[misc]
        def fget(self: Any) -> bool:
            _warn_removed_member(name, "keep a flag of your own if your hook must not run twice")
            return (stage or name) in getattr(self, "_compat_hook_calls", ())

        return property(fget, doc=f"Deprecated (Lightning 1.4; removed in 1.6): whether ``{name}`` ran.")

    has_prepared_data = _called("has_prepared_data", "prepare_data")
    has_setup_fit = _called("has_setup_fit", "setup:fit")
    has_setup_validate = _called("has_setup_validate", "setup:validate")
    has_setup_test = _called("has_setup_test", "setup:test")
    has_setup_predict = _called("has_setup_predict", "setup:predict")
    has_teardown_fit = _called("has_teardown_fit", "teardown:fit")
    has_teardown_validate = _called("has_teardown_validate", "teardown:validate")
    has_teardown_test = _called("has_teardown_test", "teardown:test")
    has_teardown_predict = _called("has_teardown_predict", "teardown:predict")
    del _called

    # 1.x's argparse helpers (compat/_argparse.py), from the subclass's own `__init__`.

    @classmethod
    def add_argparse_args(cls, parent_parser: ArgumentParser, **kwargs: Any) -> ArgumentParser:
        """Deprecated (Lightning 2.0 removed it): the ``__init__`` arguments as ``--flags``."""
        _argparse.warn_removed(_DATAMODULE, "add_argparse_args")
        return _argparse.add_argparse_args(cls, parent_parser, **kwargs)

    @classmethod
    def from_argparse_args(cls, args: Namespace | ArgumentParser | dict, **kwargs: Any) -> Any:
        """Deprecated (Lightning 2.0 removed it): the data module from the parsed ``args`` and
        ``kwargs``."""
        _argparse.warn_removed(_DATAMODULE, "from_argparse_args")
        return _argparse.from_argparse_args(cls, args, **kwargs)

    @classmethod
    def get_init_arguments_and_types(cls) -> list[tuple[str, tuple[Any, ...], Any]]:
        """Deprecated (Lightning 2.0 removed it): ``[(name, types, default), ...]`` of ``__init__``."""
        _argparse.warn_removed(_DATAMODULE, "get_init_arguments_and_types")
        return _argparse.get_init_arguments_and_types(cls)


def _warn_removed_member(member: str, hint: str) -> None:
    warn_deprecated(deprecation_message(_DATAMODULE, None, member=member, hint=hint))


def _recording(hook: Any, name: str) -> Any:
    """``hook`` (a data module's ``prepare_data``/``setup``/``teardown``), noting each call for
    1.x's ``has_prepared_data``/``has_setup_<stage>``/``has_teardown_<stage>`` (a ``None`` stage
    is every stage, as in 1.x)."""
    if getattr(hook, "_compat_recording", False):
        return hook

    @functools.wraps(hook)
    def record(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = hook(self, *args, **kwargs)
        calls = self.__dict__.setdefault("_compat_hook_calls", set())
        if name == "prepare_data":
            calls.add(name)
        else:
            stage = kwargs.get("stage", args[0] if args else None)
            stages = ("fit", "validate", "test", "predict") if stage is None else (str(stage),)
            calls.update(f"{name}:{s}" for s in stages)
        return result

    record._compat_recording = True  # type: ignore[attr-defined]
    return record


def _call_legacy(callback: Any, trainer: Any, module: Any) -> None:
    for name in _LEGACY_CALLBACK_HOOKS:
        if user_override(type(callback), name) is not None:
            getattr(callback, name)(trainer, module)


@deprecated("Callback from compat is deprecated: use strategies.Callback", category=None)
class Callback(_NewCallback, metaclass=ShimMeta):
    """``pytorch_lightning.Callback``: use ``strategies.Callback``."""

    _compat_old = _CALLBACK
    _compat_new = "strategies.Callback"
    _compat_new_cls = _NewCallback
    _compat_setup_depth = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        _steps.refuse_unbridgeable(cls, "callback")
        bridge_subclass(cls, _CALLBACK_HOOKS)
        _steps.adapt_callback(cls)
        own_setup = vars(cls).get("setup")
        if own_setup is None or is_bridge(own_setup):
            return
        if not any(user_override(cls, name) for name in _LEGACY_CALLBACK_HOOKS):
            return

        def setup(self: Any, trainer: Any, module: Any, stage: str) -> None:
            self._compat_setup_depth += 1
            try:
                own_setup(self, trainer, module, stage)
            finally:
                self._compat_setup_depth -= 1
            if self._compat_setup_depth == 0:
                _call_legacy(self, trainer, module)

        cls.setup = mark_bridge(setup, "on_before_accelerator_backend_setup")  # type: ignore[method-assign]  # the bridge

    def setup(self, trainer: Any, module: Any, stage: str) -> None:
        """Runs the old ``on_before_accelerator_backend_setup``/``on_configure_sharded_model`` overrides."""
        if self._compat_setup_depth == 0:
            _call_legacy(self, trainer, module)

    def on_before_accelerator_backend_setup(self, trainer: Any, pl_module: Any) -> None:
        """Old hook (now ``setup``): the base does nothing."""

    def on_configure_sharded_model(self, trainer: Any, pl_module: Any) -> None:
        """Old hook (now ``setup``): the base does nothing."""
