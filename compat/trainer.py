"""``compat.Trainer``: the new Trainer with the old keyword arguments and attributes.

The old keywords are translated from the rename table (``compat/_arguments.py`` says how; the
table in docs/migration.md lists each one): each old name warns once at the user's line, and
every argument that cannot run is refused in one error at construction, each with its
replacement. ``resume_from_checkpoint`` becomes the default ``ckpt_path`` of ``fit``; an old
``Accelerator(precision_plugin, training_type_plugin)`` container given as ``accelerator=``
drives its plugins. The 1.x hooks of modules and callbacks are called at their 1.x steps
(``compat/_hooks.py``).
"""

from __future__ import annotations

import os
import warnings
from argparse import ArgumentParser, Namespace
from typing import Any

from typing_extensions import deprecated

import strategies
from compat import _argparse, _optimization, _warnings
from compat._arguments import (
    TRAINER,
    TrainerArgumentsError,
    Translation,
    accepted_arguments,
    check_gpus_here,
    raise_problems,
    translate,
)
from compat._bridge import ShimMeta, check_unsupported, warn_class_use
from compat._hooks import call_init_hook, defines, dispatch_after, dispatch_before
from compat._strategies import CompatRegistry
from compat._warnings import _lookup, deprecation_message, warn_deprecated
from strategies.ddp import DDPStrategy as _DDPStrategy
from strategies.single_device import SingleDeviceStrategy as _SingleDeviceStrategy
from strategies.strategy import Strategy as _Strategy

__all__ = ["CompatHookCaller", "Trainer"]

_TRAINER = TRAINER
_TRAINER_INTERNALS = (
    "accelerator_connector",
    "call_setup_hook",
    "call_configure_sharded_model",
    "pre_dispatch",
    "dispatch",
    "post_dispatch",
    "call_teardown_hook",
    "run_train",
    "run_test",
    "run_predict",
)


def _old_run_signature(method: str) -> tuple[tuple[str, ...], dict[str, str]]:
    """``Trainer.<method>``'s positional parameters in the newest 1.x release and the old names of
    its parameters, read from the catalog of the releases (``_catalog.old_parameter_names``)."""
    from compat import _catalog

    return _catalog.old_parameter_names(_catalog.load(_catalog.OLD[-1]).trainer, method)


def _old_run_arguments(method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> dict[str, Any]:
    """``fit``/``validate``/``test``/``predict``'s arguments, bound by position as the 1.x releases
    bound them (their orders differ from Lightning 2.x's: 1.x's ``test(model, loaders, "best")``
    is ``ckpt_path="best"``), as keywords of ``strategies.Trainer``'s method; an old keyword
    (``test_dataloaders=``) warns once and is given its new name."""
    positional, renamed = _old_run_signature(method)
    if len(args) > len(positional):
        raise TypeError(
            f"`Trainer.{method}` takes at most {len(positional)} positional arguments in 1.x "
            f"({', '.join(positional)}); got {len(args)}."
        )
    bound = dict(zip(positional, args, strict=False))
    for key, value in kwargs.items():
        if key in bound:
            raise TypeError(f"`Trainer.{method}` got two values for `{key}`.")
        bound[key] = value
    arguments: dict[str, Any] = {}
    for key, value in bound.items():
        new = renamed.get(key, key)
        if new != key:
            warn_deprecated(
                deprecation_message(
                    _TRAINER,
                    f"Trainer.{method}({new}=...)",
                    member=method,
                    old_display=f"Trainer.{method}({key}=...)",
                    lightning=f"Trainer.{method}({new}=...)",
                    detail="renamed in Lightning 1.4",
                )
            )
        if arguments.get(new) is not None and value is not None:
            raise TypeError(f"`Trainer.{method}` got `{key}` and `{new}`, which are one argument: pass only `{new}`.")
        if value is not None or new not in arguments:
            arguments[new] = value
    return arguments


def _check_plugins(out: Translation) -> None:
    """Overrides that cannot run are refused now; an old plugin's ``num_nodes`` moves to the Trainer."""
    for plugin in out.kwargs.get("plugins", []):
        check_unsupported(plugin, "checked when the Trainer is built")
    strategy = out.kwargs.get("strategy")
    if isinstance(strategy, _Strategy):
        check_unsupported(strategy, "checked when the Trainer is built")
        old_nodes = getattr(strategy, "_compat_num_nodes", None)
        if old_nodes is not None:
            out.kwargs.setdefault("num_nodes", old_nodes)
    container = out.container
    if container is None:
        return
    check_unsupported(container, "checked when the Trainer is built")
    if container._precision_plugin is not None:
        out.kwargs["plugins"] = [*out.kwargs.get("plugins", []), container._precision_plugin]
    if container._training_type_plugin is not None:
        if "strategy" in out.kwargs:
            out.problems.append(
                "`Trainer` got a training-type plugin in `accelerator=Accelerator(...)` and a strategy: pass only "
                "`strategy=`."
            )
        out.kwargs["strategy"] = strategy = container._training_type_plugin
    if isinstance(strategy, _Strategy) and not hasattr(strategy, "_compat_setup"):
        out.problems.append(
            f"An old `Accelerator` container drives old training-type plugins only; got `{type(strategy).__name__}`. "
            "Pass it as `strategy=` without the container."
        )
    device = out.kwargs.get("accelerator")
    if container._device_cls is None and device is not None:
        from strategies._connector import resolve_accelerator

        container._set_device(resolve_accelerator(device))
    out.kwargs["accelerator"] = container._device


def _checkpoints_under(trainer: Any, root: Any) -> None:
    """1.x's ``weights_save_path``: a ``ModelCheckpoint`` with no ``dirpath`` saves under
    ``root/<logger name>/<version>/checkpoints`` (``root/checkpoints`` without a logger)."""
    if root is None:
        return
    root = os.fspath(root)
    for callback in trainer.callbacks:
        if isinstance(callback, strategies.ModelCheckpoint) and callback.dirpath is None:
            if trainer.loggers:
                first = trainer.loggers[0]
                version = first.version if isinstance(first.version, str) else f"version_{first.version}"
                callback.dirpath = os.path.join(root, str(first.name or ""), version, "checkpoints")
            else:
                callback.dirpath = os.path.join(root, "checkpoints")


class CompatHookCaller(strategies.HookCaller):
    """``strategies.HookCaller`` that also calls the 1.x hooks at their 1.x step (the table above).

    ``compat.Trainer.hooks_class``. A ``KeyboardInterrupt`` ends the run as in Lightning 1.x: after
    the ``on_exception`` hooks and the teardown, the callbacks' ``on_keyboard_interrupt``, then the
    entry point returns None instead of raising.
    """

    def before(self, hook: str) -> None:
        """The old hooks 1.x called before the event ``hook``; at ``setup``, the checkpoint folders
        under ``Trainer(weights_save_path=...)``."""
        if hook == "setup":
            _checkpoints_under(self.trainer, getattr(self.trainer, "_compat_weights_save_path", None))
        dispatch_before(self.trainer, self.trainer.strategy.module, hook)

    def after(self, hook: str) -> None:
        """The old hooks 1.x called after the event ``hook``."""
        dispatch_after(self.trainer, self.trainer.strategy.module, hook)

    def on_run_exception(self, exception: BaseException) -> bool:
        """``on_keyboard_interrupt`` of the callbacks defining it; True (no raise) for a ``KeyboardInterrupt``."""
        if not isinstance(exception, KeyboardInterrupt):
            return False
        trainer = self.trainer
        for callback in trainer.callbacks:
            if defines(callback, "on_keyboard_interrupt"):
                self.call("callback", callback, "on_keyboard_interrupt", trainer, trainer.strategy.module)
        return True


@deprecated("pytorch_lightning.Trainer arguments are deprecated: use strategies.Trainer", category=None)
class Trainer(strategies.Trainer, metaclass=ShimMeta):
    """``pytorch_lightning.Trainer``: ``strategies.Trainer`` that also takes the old arguments.

    Args:
        **kwargs: ``strategies.Trainer``'s arguments and the old ones of docs/migration.md
            ("Arguments", "Argument values"): ``gpus``, ``num_processes``, ``tpu_cores``,
            ``distributed_backend``, ``accelerator=<strategy name>``, ``plugins=[<training-type
            plugin>]``, ``checkpoint_callback``, ``resume_from_checkpoint``,
            ``progress_bar_refresh_rate``, ``weights_summary``, ``replace_sampler_ddp``,
            ``amp_backend``, ``amp_level``, ``flush_logs_every_n_steps`` (``precision=16`` is
            read by ``strategies.Trainer`` itself, as Lightning 2.x reads it).

    Raises:
        TrainerArgumentsError: (a ``TypeError`` and a ``ValueError``) listing every argument
            that cannot run, with its replacement.
    """

    _compat_old = _TRAINER
    _compat_new = "strategies.Trainer"
    _compat_new_cls = strategies.Trainer
    registry = CompatRegistry(strategies.Trainer.registry)
    hooks_class = CompatHookCaller
    optimization_class = _optimization.CompatOptimization

    def __init__(self, **kwargs: Any) -> None:
        warn_class_use(type(self))
        # 1.x read `PL_TRAINER_<ARGUMENT>` environment variables as defaults (Lightning 2.x still does).
        kwargs = {**vars(_argparse.parse_env_variables(type(self))), **kwargs}
        callbacks = list(kwargs.get("callbacks") or [])
        call_init_hook(callbacks, "on_init_start", self)
        out = translate(kwargs, accepted_arguments(strategies.Trainer))
        for message in out.messages:
            warn_deprecated(message)
        check_gpus_here(out, kwargs)
        _check_plugins(out)
        # 1.x evaluated under `torch.no_grad` (1.2-1.5 had no inference mode): a hook that needs
        # autograd there (a callback's backward in `on_validation_epoch_end`) still runs.
        out.kwargs.setdefault("inference_mode", False)
        if out.problems:
            try:  # what the new Trainer itself would refuse belongs in the same list
                strategies.Trainer.__init__(self, **out.kwargs)
            except (TypeError, ValueError, RuntimeError, ImportError) as err:
                out.problems.append(str(err))
            raise_problems(out.problems)
        try:
            super().__init__(**out.kwargs)
        except (TypeError, ValueError) as err:  # one error type for arguments that cannot run
            raise TrainerArgumentsError(str(err)) from err
        self._compat_container = out.container
        self._compat_ckpt_path = out.ckpt_path
        self._compat_weights_save_path = out.weights_save_path
        if out.container is not None:
            if not hasattr(self.strategy, "_compat_setup"):
                raise TypeError(
                    f"An old `Accelerator` container cannot drive `{type(self.strategy).__name__}`: pass an old "
                    "training-type plugin as `Accelerator(training_type_plugin=...)`, or drop the container."
                )
            self.strategy._compat_container = out.container  # type: ignore[attr-defined]  # an old plugin's (checked above)
        call_init_hook(self.callbacks, "on_init_end", self)

    def fit(self, *args: Any, **kwargs: Any) -> None:
        """``strategies.Trainer.fit``, its arguments bound as 1.x bound them (``_old_run_arguments``:
        ``train_dataloader=`` is ``train_dataloaders=``); ``ckpt_path`` defaults to
        ``Trainer(resume_from_checkpoint=...)``.

        As in Lightning 1.2, a ``resume_from_checkpoint`` file that does not exist starts from
        scratch with a warning (an explicit ``ckpt_path`` that does not exist is an error).
        """
        arguments = _old_run_arguments("fit", args, kwargs)
        ckpt_path = arguments.get("ckpt_path")
        if ckpt_path is None and self._compat_ckpt_path is not None:
            ckpt_path = self._compat_ckpt_path
            if not os.path.exists(ckpt_path):
                warnings.warn(
                    f"No checkpoint file exists at `resume_from_checkpoint={str(ckpt_path)!r}`: training starts "
                    "from scratch (Lightning 1.2's behaviour; `fit(ckpt_path=...)` raises instead).",
                    UserWarning,
                    stacklevel=_warnings.stacklevel(),
                )
                ckpt_path = None
        if ckpt_path is not None:
            arguments["ckpt_path"] = ckpt_path
        return super().fit(**arguments)

    def validate(self, *args: Any, **kwargs: Any) -> list[dict[str, float]]:
        """``strategies.Trainer.validate``, its arguments bound as 1.x bound them
        (``validate(model, dataloaders, ckpt_path, verbose, datamodule)``; ``val_dataloaders=`` is
        ``dataloaders=``)."""
        return super().validate(**_old_run_arguments("validate", args, kwargs))

    def test(self, *args: Any, **kwargs: Any) -> list[dict[str, float]]:
        """``strategies.Trainer.test``, its arguments bound as 1.x bound them
        (``test(model, dataloaders, ckpt_path, verbose, datamodule)``; ``test_dataloaders=`` is
        ``dataloaders=``)."""
        return super().test(**_old_run_arguments("test", args, kwargs))

    def predict(self, *args: Any, **kwargs: Any) -> list[Any] | None:
        """``strategies.Trainer.predict``, its arguments bound as 1.x bound them
        (``predict(model, dataloaders, datamodule, return_predictions, ckpt_path)``)."""
        return super().predict(**_old_run_arguments("predict", args, kwargs))

    def tune(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """Deprecated (Lightning 2.0: ``Tuner``): 1.x ran the learning-rate finder and the
        batch-size scaler here when ``auto_lr_find``/``auto_scale_batch_size`` asked for them;
        compat refuses those at construction, so there is nothing to tune: returns ``{}``, as
        1.x did then."""
        _old_run_arguments("tune", args, kwargs)  # the same errors for arguments 1.x would refuse
        warn_deprecated(
            deprecation_message(
                _TRAINER,
                None,
                member="tune",
                lightning="lightning.pytorch.tuner.Tuner",
                detail="nothing to tune: `auto_lr_find`/`auto_scale_batch_size` are not set",
                hint="drop the call (Lightning 2.x tunes with `Tuner(trainer).lr_find(model)`)",
            )
        )
        return {}

    __init__._compat_1x_trainer = True  # type: ignore[attr-defined]  # its parameters are the 1.x Trainer's

    # -- 1.x's argparse helpers (compat/_argparse.py) --------------------------------------------

    @classmethod
    def add_argparse_args(cls, parent_parser: ArgumentParser, **kwargs: Any) -> ArgumentParser:
        """Deprecated (Lightning 2.0 removed it): the 1.x Trainer's arguments as ``--flags`` on
        ``parent_parser``, typed as 1.5 typed them (``compat._argparse``)."""
        _argparse.warn_removed(_TRAINER, "add_argparse_args")
        return _argparse.add_argparse_args(cls, parent_parser, **kwargs)

    @classmethod
    def from_argparse_args(cls, args: Namespace | ArgumentParser | dict, **kwargs: Any) -> Trainer:
        """Deprecated (Lightning 2.0 removed it): a Trainer from the parsed ``args`` (the values
        the user set) and ``kwargs``."""
        _argparse.warn_removed(_TRAINER, "from_argparse_args")
        return _argparse.from_argparse_args(cls, args, **kwargs)

    @classmethod
    def parse_argparser(cls, arg_parser: ArgumentParser | Namespace) -> Namespace:
        """Deprecated (Lightning 2.0 removed it): parse, a bare ``--bool_flag`` read as ``True``."""
        _argparse.warn_removed(_TRAINER, "parse_argparser")
        return _argparse.parse_argparser(cls, arg_parser)

    @classmethod
    def default_attributes(cls) -> dict[str, Any]:
        """Deprecated (Lightning 2.0 removed it): ``{argument: default}`` of the 1.x Trainer."""
        _argparse.warn_removed(_TRAINER, "default_attributes")
        return {name: default for name, _, default in _argparse.get_init_arguments_and_types(cls)}

    @classmethod
    def get_deprecated_arg_names(cls) -> list[str]:
        """Deprecated (Lightning 2.0 removed it): the 1.x names ``add_argparse_args`` skips (none)."""
        return []

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
            warn_deprecated(
                deprecation_message(
                    _TRAINER,
                    "strategy",
                    member=name,
                    hint="check `trainer.strategy` / `trainer.strategy.root_device` "
                    "(e.g. `isinstance(trainer.strategy, DDPStrategy)`)",
                )
            )
            return bool(get(self))

        fget.__name__ = name
        return property(fget)

    on_gpu = _flag("on_gpu", lambda self: self.strategy.root_device.type == "cuda")
    on_cpu = _flag("on_cpu", lambda self: self.strategy.root_device.type == "cpu")
    on_tpu = _flag("on_tpu", lambda self: False)
    use_tpu = _flag("use_tpu", lambda self: False)
    use_dp = _flag(
        "use_dp", lambda self: type(self.strategy).__name__ in ("DataParallelStrategy", "DataParallelPlugin")
    )
    use_ddp = _flag("use_ddp", lambda self: isinstance(self.strategy, _DDPStrategy))
    use_ddp2 = _flag("use_ddp2", lambda self: False)
    use_horovod = _flag("use_horovod", lambda self: False)
    use_single_gpu = _flag(
        "use_single_gpu",
        lambda self: isinstance(self.strategy, _SingleDeviceStrategy) and self.strategy.root_device.type == "cuda",
    )
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
