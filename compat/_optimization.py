"""1.x's automatic optimization with several optimizers, on ``strategies``' loop.

Lightning 2.0 removed it (several optimizers need manual optimization there). A 1.x module whose
``training_step(batch, batch_idx, optimizer_idx)`` takes the optimizer's index, and whose
``configure_optimizers`` returns several, runs under ``compat.Trainer`` as 1.2-1.5 ran it, each
batch:

- for each optimizer in turn (or, with 1.x's ``{"optimizer": ..., "frequency": n}`` dicts, the
  one whose turn it is: ``n`` batches each, in order), its parameters alone trainable
  (``toggle_optimizer``; the others' ``requires_grad`` is off until ``untoggle_optimizer``);
- a closure runs ``training_step(batch, batch_idx, optimizer_idx)`` (then ``training_step_end``),
  zeroes the gradients on the first batch of an accumulation window, and back-propagates;
  ``optimizer_step(epoch, batch_idx, optimizer, closure)`` runs it and steps that optimizer
  (while gradients accumulate, the closure runs alone, under ``no_sync``);
- ``global_step`` goes up once per batch, not once per optimizer step (1.x counted batches);
  the learning-rate schedulers are stepped by the Trainer at their interval, as with one optimizer.

``training_epoch_end`` gets the outputs per optimizer (``outputs[optimizer_idx][batch]``), and
``on_train_batch_end`` the list of each optimizer's output, as 1.x passed them. Under DDP each
forward is followed by its backward, and the parameters a toggled-off optimizer owns get no
gradient: 1.x's DDP default ``find_unused_parameters=True`` (which compat keeps) covers that.
"""

from __future__ import annotations

import functools
import inspect
from typing import TYPE_CHECKING, Any

from strategies._optimization import AutomaticOptimization, step_optimizer

if TYPE_CHECKING:
    from strategies.trainer import Trainer

__all__ = ["FREQUENCIES", "CompatOptimization", "active_optimizers", "old_automatic_step", "takes_optimizer_idx"]

#: Where a module keeps the ``frequency`` of each optimizer its ``configure_optimizers`` returned.
FREQUENCIES = "_compat_optimizer_frequencies"


def takes_optimizer_idx(module: Any) -> bool:
    """Whether ``module.training_step`` takes 1.x's third argument, ``optimizer_idx`` (read once
    per class: the loop asks on every batch)."""
    return _class_takes_optimizer_idx(type(module))  # type: ignore[arg-type]  # classes hash


@functools.cache
def _class_takes_optimizer_idx(cls: type) -> bool:
    step = getattr(cls, "training_step", None)
    step = getattr(step, "__wrapped__", step)
    if step is None:
        return False
    try:
        params = list(inspect.signature(step).parameters)
    except (TypeError, ValueError):
        return False
    return "optimizer_idx" in params


def active_optimizers(module: Any, count: int, batch_idx: int) -> list[int]:
    """The optimizers that step on this batch: all of them, or with frequencies the one whose
    turn it is (1.x: ``n`` batches for the first, then ``m`` for the second, ..., round again)."""
    frequencies = module.__dict__.get(FREQUENCIES)
    if not frequencies or len(frequencies) != count or not any(frequencies):
        return list(range(count))
    place = batch_idx % sum(frequencies)
    total = 0
    for index, frequency in enumerate(frequencies):
        total += frequency
        if place < total:
            return [index]
    return [count - 1]  # pragma: no cover - place < sum(frequencies)


def _toggle(module: Any, name: str, optimizer: Any, index: int) -> None:
    hook = getattr(module, name)
    positional = _positional(type(module), name)  # type: ignore[arg-type]  # classes hash
    if name == "untoggle_optimizer" and positional and positional[0] == "optimizer_idx":
        hook(index)  # 1.x: untoggle_optimizer(optimizer_idx)
    elif len(positional) >= 2:
        hook(optimizer, index)  # 1.x: toggle_optimizer(optimizer, optimizer_idx)
    else:
        hook(optimizer)


@functools.cache
def _positional(cls: type, name: str) -> tuple[str, ...]:
    """The positional parameters (``self`` left out) of ``cls.name``, read once per class."""
    params = list(inspect.signature(getattr(cls, name)).parameters.values())[1:]
    return tuple(p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))


def old_automatic_step(trainer: Trainer, batch: Any, batch_idx: int, accumulating: bool) -> list[dict[str, Any]]:
    """One batch of 1.x's automatic optimization over several optimizers (the module docstring
    says how); returns each active optimizer's output (``{"loss": ..., **extra}`` or ``{}``)."""
    strategy, hooks = trainer.strategy, trainer.hooks
    module = strategy.module
    optimizers = strategy.optimizers
    results: list[dict[str, Any]] = []
    for index in active_optimizers(module, len(optimizers), batch_idx):
        optimizer = optimizers[index]

        def training_step(index: int = index) -> Any:
            return hooks.call("module", strategy, "training_step", batch, batch_idx, index)

        _toggle(module, "toggle_optimizer", optimizer, index)
        try:
            results.append(step_optimizer(trainer, index, batch_idx, accumulating, training_step))
        finally:
            _toggle(module, "untoggle_optimizer", optimizer, index)
    if not accumulating:
        trainer.state.global_step += 1
    return results


class CompatOptimization(AutomaticOptimization):
    """``compat.Trainer``'s ``optimization_class``: 1.x's loop over several optimizers for a
    ``training_step`` that takes ``optimizer_idx`` (the module docstring), else the new one."""

    def check(self, module: Any, optimizers: list[Any]) -> None:
        if not takes_optimizer_idx(module):
            super().check(module, optimizers)

    def step(self, batch: Any, batch_idx: int, accumulating: bool) -> Any:
        trainer = self.trainer
        if len(trainer.strategy.optimizers) > 1 and takes_optimizer_idx(trainer.strategy.module):
            return old_automatic_step(trainer, batch, batch_idx, accumulating)
        return super().step(batch, batch_idx, accumulating)
