"""One training batch: the optimizer-step closure (automatic) or the user's own steps (manual)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Generator, Mapping
from typing import TYPE_CHECKING, Any, cast

import torch
from torch.nn.parallel import DistributedDataParallel

if TYPE_CHECKING:
    from torch.distributed.fsdp import FSDPModule

    from strategies.strategy import Strategy
    from strategies.trainer import Trainer


class OptimizerProxy:
    """The optimizer a module sees (``self.optimizers()``, ``optimizer_step``), as Lightning's ``LightningOptimizer``.

    ``step(closure)`` runs the closure (``training_step``, zero-grad, ``backward``), then
    ``on_before_optimizer_step``, gradient clipping (automatic optimization), then the strategy's
    optimizer step (grad scaler, DeepSpeed engine). The closure runs once: optimizers that
    re-evaluate it (LBFGS) are not supported. Everything else is the wrapped optimizer's.
    """

    def __init__(self, optimizer: torch.optim.Optimizer, trainer: Trainer) -> None:
        self._optimizer = optimizer
        self._trainer = trainer

    @property
    def optimizer(self) -> torch.optim.Optimizer:
        """The wrapped torch optimizer."""
        return self._optimizer

    def step(self, closure: Callable[[], Any] | None = None, **kwargs: Any) -> Any:
        """Closure, ``on_before_optimizer_step`` hooks, clipping, then the optimizer step."""
        trainer = self._trainer
        loss = closure() if closure is not None else None
        trainer.hooks.fire("on_before_optimizer_step", self._optimizer)
        module = trainer.strategy.module
        if module.automatic_optimization:
            trainer.hooks.module(
                "configure_gradient_clipping",
                self._optimizer,
                gradient_clip_val=trainer.gradient_clip_val,
                gradient_clip_algorithm=trainer.gradient_clip_algorithm,
            )
        else:
            trainer.state.global_step += 1
        if closure is not None and loss is None:
            return None  # training_step returned None: no gradients, no step (as with Lightning's AMP)
        trainer.strategy.optimizer_step(self._optimizer)
        return loss

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Zero (drop) the gradients."""
        self._optimizer.zero_grad(set_to_none=set_to_none)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._optimizer, name)


def clip_gradients(strategy: Strategy, optimizer: torch.optim.Optimizer, value: float | None, algorithm: str) -> None:
    """Clip by norm (through the strategy: sharded norms, grad scaler) or by value; nothing for None/0."""
    if value is None or value <= 0:
        return
    if algorithm == "norm":
        strategy.clip_gradients(optimizer, value)
    elif algorithm == "value":
        strategy.precision.unscale_gradients(optimizer)
        params = [p for group in optimizer.param_groups for p in group["params"] if p.grad is not None]
        torch.nn.utils.clip_grad_value_(params, value)
    else:
        raise ValueError(f"`gradient_clip_algorithm={algorithm!r}`: use 'norm' or 'value'.")


def _split_output(output: Any) -> tuple[torch.Tensor | None, dict[str, Any]]:
    if isinstance(output, Mapping):
        if output.get("loss") is None:
            raise ValueError("`training_step` returned a dict without a 'loss': add it, or return the loss tensor.")
        return output["loss"], {k: v for k, v in output.items() if k != "loss"}
    if output is None or isinstance(output, torch.Tensor):
        return output, {}
    raise TypeError(
        f"`training_step` returned a `{type(output).__name__}`: return a tensor, a dict with 'loss', or None."
    )


def automatic_step(trainer: Trainer, batch: Any, batch_idx: int, accumulating: bool) -> dict[str, Any]:
    """``optimizer_step`` with a closure running ``training_step``, zero-grad and ``backward``
    (``step_optimizer`` for the one optimizer), then one more global step unless accumulating.

    Returns what ``on_train_batch_end`` gets: ``{"loss": <loss / accumulate_grad_batches>,
    **extra}``, or ``{}`` for a skipped step.
    """
    result = step_optimizer(
        trainer, 0, batch_idx, accumulating, lambda: trainer.hooks.step("training_step", batch, batch_idx)
    )
    if not accumulating:
        trainer.state.global_step += 1
    return result


def step_optimizer(
    trainer: Trainer, index: int, batch_idx: int, accumulating: bool, training_step: Callable[[], Any]
) -> dict[str, Any]:
    """One optimizer's part of a batch: ``optimizer_step`` of optimizer ``index`` with a closure
    that runs ``training_step()`` (the step's output), zero-grads on the first batch of an
    accumulation window, and back-propagates. While gradients accumulate the closure runs alone,
    under ``no_sync`` (DDP/FSDP skip the gradient all-reduce until the stepping batch). Returns
    ``{"loss": ..., **extra}``, or ``{}`` for a skipped step; the caller counts the global step."""
    optimizer = trainer.strategy.optimizers[index]
    result: dict[str, Any] = {}
    first_of_window = batch_idx % trainer.accumulate_grad_batches == 0

    def closure() -> torch.Tensor | None:
        loss, extra = _split_output(training_step())
        if loss is None and trainer.world_size > 1:
            raise RuntimeError(
                "`training_step` returned None on a multi-process run: every rank must step together. "
                "Return a loss on every rank (e.g. `loss * 0` for a batch to skip)."
            )
        if loss is not None:
            loss = loss / trainer.accumulate_grad_batches
            result.update(loss=loss.detach().clone(), **extra)
        if first_of_window and not trainer.state.forward_only:
            trainer.hooks.fire("on_before_zero_grad", optimizer)
            trainer.hooks.module("optimizer_zero_grad", trainer.current_epoch, batch_idx, optimizer)
        if loss is not None and not trainer.state.forward_only:
            trainer.hooks.backward(loss)
        return loss

    if accumulating:
        with no_sync(trainer.strategy):
            closure()
    else:
        proxy = trainer._optimizer_proxies[index]
        trainer.hooks.module("optimizer_step", trainer.current_epoch, batch_idx, proxy, closure)
    return result


class AutomaticOptimization:
    """How a batch of automatic optimization runs: ``Trainer.optimization_class``, a seam.

    ``check`` refuses what cannot run before the first batch (several optimizers, as in Lightning
    2.x); ``step`` runs one batch (``automatic_step``) and returns what ``on_train_batch_end``
    gets. A subclass may train several optimizers in its own order (``compat.Trainer`` runs
    Lightning 1.x's loop over them).
    """

    def __init__(self, trainer: Trainer) -> None:
        self.trainer = trainer

    def check(self, module: Any, optimizers: list[torch.optim.Optimizer]) -> None:
        """Raise for what automatic optimization cannot train (called when a fit's optimizers are set up)."""
        if len(optimizers) > 1:
            raise RuntimeError(
                "Training with multiple optimizers is only supported with manual optimization. Set "
                "`self.automatic_optimization = False`, then access your optimizers in `training_step` with "
                "`opt1, opt2, ... = self.optimizers()`."
            )

    def step(self, batch: Any, batch_idx: int, accumulating: bool) -> Any:
        """One batch: ``automatic_step``."""
        return automatic_step(self.trainer, batch, batch_idx, accumulating)


def manual_step(trainer: Trainer, batch: Any, batch_idx: int) -> dict[str, Any]:
    """``training_step`` steps its own optimizers; returns its output as a dict (a tensor is the "loss")."""
    output = trainer.hooks.step("training_step", batch, batch_idx)
    if isinstance(output, Mapping):
        return dict(output)
    return {"loss": output.detach()} if isinstance(output, torch.Tensor) else {}


@contextlib.contextmanager
def no_sync(strategy: Strategy) -> Generator[None, None, None]:
    """Skip the gradient all-reduce of DDP (``no_sync``) or FSDP2 (``set_requires_gradient_sync``)."""
    model = strategy.model
    if isinstance(model, DistributedDataParallel):
        with model.no_sync():
            yield
    elif hasattr(model, "set_requires_gradient_sync"):
        sharded = cast("FSDPModule", model)  # only FSDP2's fully_shard modules have it
        sharded.set_requires_gradient_sync(False)
        try:
            yield
        finally:
            sharded.set_requires_gradient_sync(True)
    else:
        yield
