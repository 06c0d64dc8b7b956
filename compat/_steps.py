"""The module/callback side of the 1.x hooks: warnings, step wrappers, signature adapters, refusals.

* ``training_step_end``/``validation_step_end``/``test_step_end``: the module's step is wrapped
  so that the strategy's step returns ``*_step_end(output)`` (for training, what is
  backpropagated), as 1.x called it right after the step.
* ``*_epoch_end(outputs)``: the wrapped step keeps each output after ``*_step_end`` (training:
  ``{"loss": loss.detach(), **other keys}`` as 1.x passed them; ``None`` is skipped);
  ``compat.Trainer`` passes the list and empties it at the epoch's end (``compat/_hooks.py``).
* Old signatures: ``on_train_batch_start/end(..., dataloader_idx)`` get ``0``, as do the
  evaluation batch hooks with one loader (with several, the Trainer passes the index);
  ``on_train_epoch_end(outputs)`` (1.2-1.4) gets the epoch's training outputs.
* ``Callback.on_save_checkpoint`` returning a dict (1.x: the callback's state) stores it as the
  callback's state; ``on_load_checkpoint(trainer, pl_module, callback_state)`` gets it back.
* Old hooks with no place in the new loop are a ``TypeError`` when the class is defined.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from typing import Any

from compat._bridge import Hook, is_internal_class
from compat._hooks import EPOCH_END, OPTIMIZER_INDICES, OUTPUTS, TRAINER_HOOKS, epoch_outputs
from compat._warnings import deprecation_message, user_frame, warn_deprecated

__all__ = ["adapt_callback", "adapt_module", "callback_hooks", "check_trainer", "module_hooks", "refuse_unbridgeable"]

_CALLBACK = "pytorch_lightning.Callback"
_STEP_END = {
    "training_step": "training_step_end",
    "validation_step": "validation_step_end",
    "test_step": "test_step_end",
}

# Old hook -> (new name for the message, when it is called).
_WHEN = {
    "training_epoch_end": ("on_train_epoch_end", "with the epoch's step outputs, before `on_train_epoch_end`"),
    "validation_epoch_end": (
        "on_validation_epoch_end",
        "with the epoch's step outputs, before `on_validation_epoch_end`",
    ),
    "test_epoch_end": ("on_test_epoch_end", "with the epoch's step outputs, before `on_test_epoch_end`"),
    "training_step_end": ("training_step", "on the output of `training_step`; its return is backpropagated"),
    "validation_step_end": ("validation_step", "on the output of `validation_step`"),
    "test_step_end": ("test_step", "on the output of `test_step`"),
    "on_epoch_start": ("on_train_epoch_start", "before `on_train/validation/test_epoch_start`"),
    "on_epoch_end": ("on_train_epoch_end", "after `on_train/validation/test_epoch_end`"),
    "on_batch_start": ("on_train_batch_start", "before `on_train_batch_start`"),
    "on_batch_end": ("on_train_batch_end", "after `on_train_batch_end`"),
    "on_pretrain_routine_start": ("on_fit_start", "after `on_fit_start`"),
    "on_pretrain_routine_end": ("on_fit_start", "after `on_pretrain_routine_start`"),
    "on_train_dataloader": ("train_dataloader", "before `train_dataloader`"),
    "on_val_dataloader": ("val_dataloader", "before `val_dataloader`"),
    "on_test_dataloader": ("test_dataloader", "before `test_dataloader`"),
    "on_predict_dataloader": ("predict_dataloader", "before `predict_dataloader`"),
    "on_init_start": (None, "at the start of `compat.Trainer(...)`"),
    "on_init_end": (None, "at the end of `compat.Trainer(...)`"),
    "on_keyboard_interrupt": ("on_exception", "when a run is interrupted (the run then ends, as in 1.x)"),
}
_MODULE_ONLY = {
    "training_epoch_end",
    "validation_epoch_end",
    "test_epoch_end",
    "training_step_end",
    "validation_step_end",
    "test_step_end",
    "on_train_dataloader",
    "on_val_dataloader",
    "on_test_dataloader",
    "on_predict_dataloader",
}
_CALLBACK_ONLY = {"on_init_start", "on_init_end", "on_keyboard_interrupt"}
assert set(TRAINER_HOOKS) <= set(_WHEN)

# Hooks that cannot run in the new loop: what to do instead.
_REFUSED = {
    "module": {
        "tbptt_split_batch": "truncated backpropagation through time was removed in Lightning 2.0: split the "
        "sequence inside `training_step` with manual optimization",
        "get_progress_bar_dict": "override the progress bar's metrics instead (Lightning 2.x: "
        "`ProgressBar.get_metrics`), or log with `self.log(..., prog_bar=True)`",
        "on_hpc_save": "use `on_save_checkpoint(checkpoint)`",
        "on_hpc_load": "use `on_load_checkpoint(checkpoint)`",
    },
    "callback": {},
}
# A parameter of these hooks that 2.x no longer passes: not bridgeable.
_REFUSED_PARAMS = {
    ("module", "training_step", "hiddens"): "truncated BPTT was removed in Lightning 2.0: carry the hidden state "
    "yourself",
    ("module", "optimizer_step", "optimizer_idx"): "the 2.x signature is `optimizer_step(epoch, batch_idx, "
    "optimizer, optimizer_closure)`: drop `optimizer_idx`, `on_tpu`, `using_native_amp`, `using_lbfgs`",
    ("module", "optimizer_zero_grad", "optimizer_idx"): "the 2.x signature is `optimizer_zero_grad(epoch, "
    "batch_idx, optimizer)`: drop `optimizer_idx`",
    ("module", "backward", "optimizer_idx"): "the 2.x signature is `backward(loss, *args, **kwargs)`: drop "
    "`optimizer` and `optimizer_idx`",
}
# (hook, positional parameters 2.x passes after self, excluding trainer/module for callbacks) -> the
# 1.x parameter after them and how to fill it.
# The evaluation batch hooks get the loader's index from the Trainer when there are several
# loaders; with one, 1.x passed 0 where 2.x passes nothing.
_ADAPTED = {
    "on_train_batch_start": (2, "dataloader_idx"),
    "on_train_batch_end": (3, "dataloader_idx"),
    "on_validation_batch_start": (2, "dataloader_idx"),
    "on_validation_batch_end": (3, "dataloader_idx"),
    "on_test_batch_start": (2, "dataloader_idx"),
    "on_test_batch_end": (3, "dataloader_idx"),
    "on_predict_batch_start": (2, "dataloader_idx"),
    "on_predict_batch_end": (3, "dataloader_idx"),
    "on_train_epoch_end": (0, "outputs"),
}


def module_hooks(owner: str) -> tuple[Hook, ...]:
    """The old module hooks, for the class-definition warning (nothing is installed by name)."""
    return tuple(
        Hook(owner, old, new, when, exclusive=False) for old, (new, when) in _WHEN.items() if old not in _CALLBACK_ONLY
    )


def callback_hooks(owner: str) -> tuple[Hook, ...]:
    """The old callback hooks, for the class-definition warning."""
    return tuple(
        Hook(owner, old, new, when, exclusive=False) for old, (new, when) in _WHEN.items() if old not in _MODULE_ONLY
    )


def _user_function(cls: type, name: str) -> Any:
    for klass in cls.__mro__:
        if name in vars(klass):
            return None if is_internal_class(klass) else vars(klass)[name]
    return None


def _positional(func: Any) -> list[str]:
    try:
        params = inspect.signature(func).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)][1:]


def refuse_unbridgeable(cls: type, side: str) -> None:
    """A ``TypeError`` naming what to do, for every old hook of ``cls`` that cannot run."""
    if is_internal_class(cls):
        return
    problems = [
        f"`{cls.__name__}.{name}`: {hint}"
        for name, hint in _REFUSED[side].items()
        if _user_function(cls, name) is not None
    ]
    for (where, hook, param), hint in _REFUSED_PARAMS.items():
        func = _user_function(cls, hook)
        if where == side and func is not None and param in _positional(func):
            problems.append(f"`{cls.__name__}.{hook}` takes `{param}`: {hint}")
    if problems:
        raise TypeError(
            f"`{cls.__name__}` overrides Lightning 1.x hooks that cannot run in the new loop:\n"
            + "\n".join(f"  - {p}" for p in problems)
            + '\nSee docs/compat.md ("Hooks").'
        )


# -- steps: *_step_end and the outputs of *_epoch_end ------------------------------------------------


def _keep(store: dict[str, list[Any]], step: str, output: Any, optimizer_idx: int | None = None) -> None:
    if output is None:
        return
    if optimizer_idx is not None:  # 1.x's several optimizers: `training_epoch_end` gets them per optimizer
        store.setdefault(OPTIMIZER_INDICES, []).append(optimizer_idx)
    if step == "training_step":
        import torch

        if isinstance(output, torch.Tensor):
            output = {"loss": output.detach()}
        elif isinstance(output, dict):
            output = {
                k: (v.detach() if k == "loss" and isinstance(v, torch.Tensor) else v)
                for k, v in output.items()
                if k != "hiddens"
            }
    store.setdefault(step, []).append(output)


def _wrap_step(step: str, func: Callable[..., Any]) -> Callable[..., Any]:
    end = _STEP_END[step]
    epoch_end = next(name for name, s in EPOCH_END.items() if s == step)

    @functools.wraps(func)
    def wrapped(self: Any, *args: Any, **kwargs: Any) -> Any:
        depth = self.__dict__.get("_compat_step_depth", 0)
        self.__dict__["_compat_step_depth"] = depth + 1
        try:
            output = func(self, *args, **kwargs)
        finally:
            self.__dict__["_compat_step_depth"] = depth
        if depth:  # reached through super(): the outermost call does the 1.x work once
            return output
        cls = type(self)
        if _user_function(cls, end) is not None:
            output = getattr(self, end)(output)
        if _user_function(cls, epoch_end) is not None or (
            step == "training_step" and _takes_outputs(_user_function(cls, "on_train_epoch_end"), 0)
        ):
            index = args[2] if step == "training_step" and len(args) > 2 and isinstance(args[2], int) else None
            _keep(self.__dict__.setdefault(OUTPUTS, {}), step, output, index)
        return output

    wrapped._compat_step_wrapper = True  # type: ignore[attr-defined]
    return wrapped


def _takes_outputs(func: Any, skip: int) -> bool:
    return func is not None and len(_positional(func)) > skip


def adapt_module(cls: type) -> None:
    """Wrap the steps for ``*_step_end``/``*_epoch_end`` and adapt old hook signatures."""
    if is_internal_class(cls):
        return
    for step, end in _STEP_END.items():
        epoch_end = next(name for name, s in EPOCH_END.items() if s == step)
        wanted = (
            _user_function(cls, end)
            or _user_function(cls, epoch_end)
            or (step == "training_step" and _takes_outputs(_user_function(cls, "on_train_epoch_end"), 0))
        )
        func = getattr(cls, step, None)
        if wanted and func is not None and not getattr(func, "_compat_step_wrapper", False):
            setattr(cls, step, _wrap_step(step, func))
    _adapt_signatures(cls, skip=0)
    configure = vars(cls).get("configure_optimizers")
    if configure is not None and not getattr(configure, "_compat_adapted", False):
        cls.configure_optimizers = _frequencies_adapter(configure)  # type: ignore[attr-defined]


def _frequencies_adapter(func: Callable[..., Any]) -> Callable[..., Any]:
    """1.x's ``{"optimizer": opt, "frequency": n}`` dicts: the frequencies are kept on the module
    for the 1.x loop over several optimizers (``compat._optimization``), the key taken out."""

    @functools.wraps(func)
    def adapted(self: Any, *args: Any, **kwargs: Any) -> Any:
        result = func(self, *args, **kwargs)
        items = [result] if isinstance(result, dict) else result
        if not isinstance(items, (list, tuple)) or not items or not all(isinstance(i, dict) for i in items):
            return result
        frequencies = [i["frequency"] for i in items if i.get("frequency") is not None]
        if not frequencies:
            return result
        if len(frequencies) != len(items):
            raise ValueError(
                "`configure_optimizers` gave a `frequency` to some optimizers only: give one to each (as 1.x required)."
            )
        from compat._optimization import FREQUENCIES

        self.__dict__[FREQUENCIES] = [int(f) for f in frequencies]
        stripped = [{k: v for k, v in i.items() if k != "frequency"} for i in items]
        return stripped[0] if isinstance(result, dict) else stripped

    adapted._compat_adapted = True  # type: ignore[attr-defined]
    return adapted


def adapt_callback(cls: type) -> None:
    """Adapt old callback hook signatures (``dataloader_idx``, ``on_train_epoch_end(outputs)``, checkpoints)."""
    if is_internal_class(cls):
        return
    _adapt_signatures(cls, skip=2)
    save = vars(cls).get("on_save_checkpoint")
    if save is not None and not getattr(save, "_compat_adapted", False):
        cls.on_save_checkpoint = _save_adapter(save)  # type: ignore[attr-defined]
    load = vars(cls).get("on_load_checkpoint")
    if load is not None and "callback_state" in _positional(load) and not getattr(load, "_compat_adapted", False):
        warn_deprecated(
            deprecation_message(
                _CALLBACK,
                "load_state_dict",
                member="on_load_checkpoint",
                old_display=f"{cls.__name__}.on_load_checkpoint(trainer, pl_module, callback_state)",
                detail="1.x passed this callback's state; it still gets it",
            ),
            once_key=("hook", cls, "on_load_checkpoint"),
            frame=user_frame(sys._getframe(2)),
        )
        cls.on_load_checkpoint = _load_adapter(load)  # type: ignore[attr-defined]


def _save_adapter(func: Callable[..., Any]) -> Callable[..., Any]:
    """1.x: the dict ``on_save_checkpoint`` returns is the callback's state in the checkpoint."""

    @functools.wraps(func)
    def adapted(self: Any, trainer: Any, module: Any, checkpoint: dict[str, Any]) -> None:
        state = func(self, trainer, module, checkpoint)
        if state is not None:
            warn_deprecated(
                deprecation_message(
                    _CALLBACK,
                    "state_dict",
                    member="on_save_checkpoint",
                    old_display=f"{type(self).__name__}.on_save_checkpoint returning the state",
                    detail="the returned dict is still saved as the callback's state",
                ),
                once_key=("hook", type(self), "on_save_checkpoint"),
            )
            checkpoint.setdefault("callbacks", {})[self.state_key] = state

    adapted._compat_adapted = True  # type: ignore[attr-defined]
    return adapted


def _load_adapter(func: Callable[..., Any]) -> Callable[..., Any]:
    """1.x: ``on_load_checkpoint`` got this callback's state, not the whole checkpoint."""

    @functools.wraps(func)
    def adapted(self: Any, trainer: Any, module: Any, checkpoint: dict[str, Any]) -> None:
        func(self, trainer, module, checkpoint.get("callbacks", {}).get(self.state_key, {}))

    adapted._compat_adapted = True  # type: ignore[attr-defined]
    return adapted


def _adapt_signatures(cls: type, skip: int) -> None:
    for hook, (count, param) in _ADAPTED.items():
        func = vars(cls).get(hook)
        if func is None or getattr(func, "_compat_adapted", False) or len(_positional(func)) <= skip + count:
            continue
        setattr(cls, hook, _adapter(func, param, skip, count))


def _adapter(func: Callable[..., Any], param: str, skip: int, count: int) -> Callable[..., Any]:
    @functools.wraps(func)
    def adapted(self: Any, *args: Any) -> Any:
        if param == "dataloader_idx":
            return func(self, *args) if len(args) > skip + count else func(self, *args, 0)
        module = args[1] if skip else self
        return func(self, *args, epoch_outputs(module, "training_step"))

    adapted._compat_adapted = True  # type: ignore[attr-defined]
    return adapted


def check_trainer(module: Any, trainer: Any) -> None:
    """A module with 1.x hooks must run under ``compat.Trainer``: another Trainer would skip them.

    Under ``dp`` 1.x ran ``*_step_end`` once on the outputs gathered from every GPU; the step
    wrapper would run it on each replica's output instead, so that is refused.
    """
    if trainer is None:
        return
    module.__dict__.setdefault(OUTPUTS, {})  # before any replication: replicas share it
    cls = type(module)
    ends = [end for end in _STEP_END.values() if _user_function(cls, end) is not None]
    if ends and type(trainer.strategy).__name__ in ("DataParallelStrategy", "DataParallelPlugin"):
        raise TypeError(
            f"`{cls.__name__}` overrides {', '.join(f'`{e}`' for e in ends)}: with `strategy='dp'` Lightning 1.x ran "
            "it on the outputs gathered from all GPUs, which this Trainer cannot do. Use `strategy='ddp'` (where "
            "it runs on each process's step output, as in 1.x), or reduce the outputs in the step."
        )
    if getattr(type(trainer), "_compat_old", None) is not None:
        return
    olds = [name for name in (*TRAINER_HOOKS, *_STEP_END.values()) if _user_function(cls, name) is not None]
    if olds:
        raise TypeError(
            f"`{cls.__name__}` overrides Lightning 1.x hooks ({', '.join(f'`{n}`' for n in olds)}) that only "
            f"`compat.Trainer` calls; `{type(trainer).__name__}` would skip them. Run it with `compat.Trainer`, "
            "or move the code to the 2.x hooks (docs/compat.md)."
        )
