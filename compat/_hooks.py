"""Lightning 1.x hooks Lightning 2.x removed, called by ``compat.Trainer`` at their 1.x step.

``compat.Trainer``'s ``hooks_class`` (``compat/trainer.py``), a ``strategies.HookCaller``, calls
``dispatch_before``/``dispatch_after`` from its ``before``/``after`` (the documented seam,
docs/strategies.md "Extending the Trainer") around the new hook events.

The order is Lightning 1.5's (the last 1.x release that called all of them; 1.2 called
``training_epoch_end`` after ``on_train_epoch_end``, 1.3 fixed that). ``cb`` is every callback
defining the old hook, then ``m`` the module (1.x's ``call_hook`` order). An event's end comes
after its last call: for ``on_*_epoch_end`` and ``on_train_batch_end`` that is after the
metrics of the epoch/batch are reported and, for ``on_train_epoch_end``, after the monitoring
callbacks (``ModelCheckpoint``'s save comes before ``on_epoch_end``, as in 1.x):

====================================  ===========================================================
new hook call (anchor)                old hooks, in this order
====================================  ===========================================================
after ``on_fit_start``                ``on_pretrain_routine_start`` (cb, m),
                                      ``on_pretrain_routine_end`` (cb, m)
before ``on_train_epoch_start``,      ``on_epoch_start`` (cb, m)
``on_validation_epoch_start``,
``on_test_epoch_start``
before ``on_train_batch_start``       ``on_batch_start`` (cb, m)
after ``on_train_batch_end``          ``on_batch_end`` (cb, m)
before ``on_train_epoch_end``         ``training_epoch_end(outputs)`` (m)
before ``on_validation_epoch_end``    ``validation_epoch_end(outputs)`` (m)
before ``on_test_epoch_end``          ``test_epoch_end(outputs)`` (m)
after ``on_*_epoch_end``              ``on_epoch_end`` (cb, m) (train, validation and test)
before ``*_dataloader``               ``on_train_dataloader()`` ... (m)
====================================  ===========================================================

``*_step_end`` and the collection of step outputs happen in the module's own steps
(``compat/module.py``), so they run on every strategy, inside the step the strategy calls.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from compat._warnings import deprecation_message, warn_deprecated

__all__ = [
    "EPOCH_END",
    "OPTIMIZER_INDICES",
    "OUTPUTS",
    "TRAINER_HOOKS",
    "call_init_hook",
    "defines",
    "dispatch_after",
    "dispatch_before",
    "epoch_outputs",
]

_BOTH, _MODULE = "callbacks and module", "module"

# (anchor hook, "before" | "after") -> the old hooks dispatched there, each with who has it.
_EVENTS: dict[tuple[str, str], tuple[tuple[str, str], ...]] = {
    ("on_fit_start", "after"): (("on_pretrain_routine_start", _BOTH), ("on_pretrain_routine_end", _BOTH)),
    ("on_train_epoch_start", "before"): (("on_epoch_start", _BOTH),),
    ("on_validation_epoch_start", "before"): (("on_epoch_start", _BOTH),),
    ("on_test_epoch_start", "before"): (("on_epoch_start", _BOTH),),
    ("on_train_batch_start", "before"): (("on_batch_start", _BOTH),),
    ("on_train_batch_end", "after"): (("on_batch_end", _BOTH),),
    ("on_train_epoch_end", "before"): (("training_epoch_end", _MODULE),),
    ("on_validation_epoch_end", "before"): (("validation_epoch_end", _MODULE),),
    ("on_test_epoch_end", "before"): (("test_epoch_end", _MODULE),),
    ("on_train_epoch_end", "after"): (("on_epoch_end", _BOTH),),
    ("on_validation_epoch_end", "after"): (("on_epoch_end", _BOTH),),
    ("on_test_epoch_end", "after"): (("on_epoch_end", _BOTH),),
    ("train_dataloader", "before"): (("on_train_dataloader", _MODULE),),
    ("val_dataloader", "before"): (("on_val_dataloader", _MODULE),),
    ("test_dataloader", "before"): (("on_test_dataloader", _MODULE),),
    ("predict_dataloader", "before"): (("on_predict_dataloader", _MODULE),),
}
# The *_epoch_end hooks and the step whose outputs they receive.
EPOCH_END = {
    "training_epoch_end": "training_step",
    "validation_epoch_end": "validation_step",
    "test_epoch_end": "test_step",
}
# The new epoch-end hook after which the kept outputs of a step are freed.
_FREED_AFTER = {
    "on_train_epoch_end": "training_step",
    "on_validation_epoch_end": "validation_step",
    "on_test_epoch_end": "test_step",
}
OUTPUTS = "_compat_outputs"  # the module's kept step outputs: {step name: [output, ...]}
#: Under OUTPUTS: the optimizer index of each kept training output (1.x's several optimizers).
OPTIMIZER_INDICES = "training_step:optimizer_idx"
# Every old hook compat.Trainer calls (the module/callback shims warn about these at class definition).
TRAINER_HOOKS = tuple(sorted({old for olds in _EVENTS.values() for old, _ in olds}))


def defines(obj: Any, name: str) -> bool:
    """Whether ``obj``'s class defines a callable ``name``."""
    return callable(getattr(type(obj), name, None))


def _dispatch(trainer: Any, module: Any, olds: Iterable[tuple[str, str]]) -> None:
    hooks = trainer.hooks
    for old, who in olds:
        if who == _BOTH:
            for callback in trainer.callbacks:
                if defines(callback, old):
                    hooks.call("callback", callback, old, trainer, module)
        if not defines(module, old):
            continue
        if old in EPOCH_END:
            result = hooks.call("module", module, old, epoch_outputs(module, EPOCH_END[old]))
            if result is not None and old == "training_epoch_end":  # 1.x raised here, and only here
                raise TypeError(
                    f"`{type(module).__name__}.{old}` returned a value; Lightning 1.x required None: remove the "
                    "`return` (log with `self.log` instead)."
                )
            if result is not None:  # 1.3-1.5 ignored what the evaluation `*_epoch_end` returned
                warn_deprecated(
                    deprecation_message(
                        "pytorch_lightning.LightningModule",
                        "self.log",
                        member=old,
                        old_display=f"{type(module).__name__}.{old} returning a value",
                        detail="the value is ignored, as Lightning 1.3-1.5 ignored it: its 'log' and "
                        "'progress_bar' keys are not logged",
                        hint="log with `self.log(...)` and drop the `return`",
                    ),
                    once_key=("epoch end return", type(module), old),
                )
        else:
            hooks.call("module", module, old)


def dispatch_before(trainer: Any, module: Any, hook: str) -> None:
    """The old hooks 1.x called just before the event ``hook`` (before its callbacks)."""
    olds = _EVENTS.get((hook, "before"))
    if olds and module is not None:
        _dispatch(trainer, module, olds)


def dispatch_after(trainer: Any, module: Any, hook: str) -> None:
    """The old hooks 1.x called just after the event ``hook``; the outputs kept for its epoch are freed."""
    olds = _EVENTS.get((hook, "after"))
    if olds and module is not None:
        _dispatch(trainer, module, olds)
    if hook in _FREED_AFTER and module is not None:
        kept = module.__dict__.get(OUTPUTS, {})
        kept.pop(_FREED_AFTER[hook], None)
        if hook == "on_train_epoch_end":
            kept.pop(OPTIMIZER_INDICES, None)


def epoch_outputs(module: Any, step: str) -> list[Any]:
    """The outputs the module's ``step`` kept this epoch (after ``*_step_end``); with 1.x's several
    optimizers, one list per optimizer (``outputs[optimizer_idx][batch]``), as 1.x passed them."""
    kept = module.__dict__.get(OUTPUTS, {})
    outputs = kept.get(step, [])
    indices = kept.get(OPTIMIZER_INDICES) if step == "training_step" else None
    if not indices or len(indices) != len(outputs):
        return outputs
    nested: list[list[Any]] = [[] for _ in range(max(indices) + 1)]
    for index, output in zip(indices, outputs, strict=True):
        nested[index].append(output)
    return nested


def call_init_hook(callbacks: Iterable[Any], name: str, trainer: Any) -> None:
    """``Callback.on_init_start/on_init_end(trainer)``: at the start and end of ``Trainer.__init__``."""
    for callback in callbacks:
        if defines(callback, name):
            getattr(callback, name)(trainer)
