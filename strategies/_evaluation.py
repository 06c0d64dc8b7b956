"""The validation, test and predict loops, with Lightning 2.x's hooks in its order."""

from __future__ import annotations

import contextlib
import random
import sys
from collections.abc import Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import torch

from strategies._progress import ProgressBar

if TYPE_CHECKING:
    from strategies.trainer import Trainer

_STEP = {"val": "validation_step", "test": "test_step", "predict": "predict_step"}
_HOOK = {"val": "validation", "test": "test", "predict": "predict"}


def batches(loader: Iterable[Any], limit: float) -> Iterator[tuple[int, Any, bool]]:
    """``(batch_idx, batch, is_last)`` for at most ``limit`` batches; one batch is read ahead to know the last."""
    if limit <= 0:
        return
    iterator = iter(loader)
    try:
        upcoming = next(iterator)
    except StopIteration:
        return
    batch_idx = 0
    while True:
        batch = upcoming
        last = batch_idx + 1 >= limit
        if not last:
            try:
                upcoming = next(iterator)
            except StopIteration:
                last = True
        yield batch_idx, batch, last
        if last:
            return
        batch_idx += 1


def run_evaluation(trainer: Trainer, kind: str, loader: Any, limit: float, metrics_kind: str | None = None) -> Any:
    """One validation/test/predict run: ``[metrics]`` for val/test, the step outputs for predict."""
    name, metrics_kind = _HOOK[kind], metrics_kind or kind
    hooks = trainer.hooks
    with _grad_off(trainer):
        hooks.module(f"on_{name}_model_eval")
        trainer.metrics.reset(metrics_kind)
        hooks.fire(f"on_{name}_start")
        hooks.fire(f"on_{name}_epoch_start")
        outputs = _run_batches(trainer, kind, loader, limit, metrics_kind)
        with hooks.event(f"on_{name}_epoch_end"):
            hooks.callbacks(f"on_{name}_epoch_end")
            hooks.module(f"on_{name}_epoch_end")
            metrics = trainer.metrics.epoch_end(metrics_kind)
        hooks.fire(f"on_{name}_end")
        if kind != "predict":
            hooks.module(f"on_{name}_model_train")
    return outputs if kind == "predict" else [metrics]


def _grad_off(trainer: Trainer) -> contextlib.AbstractContextManager[Any]:
    """``torch.inference_mode`` (``Trainer(inference_mode=True)``), else ``no_grad``; always ``no_grad`` for
    FSDP/DeepSpeed, whose gathered-parameter buffers outlive the run and must not become inference tensors."""
    from strategies.deepspeed import DeepSpeedStrategy
    from strategies.fsdp import FSDPStrategy

    if trainer.inference_mode and not isinstance(trainer.strategy, (FSDPStrategy, DeepSpeedStrategy)):
        return torch.inference_mode()
    return torch.no_grad()


def _run_batches(trainer: Trainer, kind: str, loader: Any, limit: float, metrics_kind: str) -> list[Any]:
    name, outputs, hooks = _HOOK[kind], [], trainer.hooks
    progress = ProgressBar(trainer.enable_progress_bar and trainer.is_global_zero and metrics_kind != "sanity")
    total = None if limit == float("inf") else int(limit)
    for batch_idx, batch, _ in batches(loader, limit):
        batch = trainer.metrics.current_batch = hooks.transfer_batch(batch)
        hooks.fire(f"on_{name}_batch_start", batch, batch_idx)
        output = hooks.step(_STEP[kind], batch, batch_idx)
        with hooks.event(f"on_{name}_batch_end"):
            hooks.callbacks(f"on_{name}_batch_end", output, batch, batch_idx)
            hooks.module(f"on_{name}_batch_end", output, batch, batch_idx)
            trainer.metrics.batch_end(metrics_kind)
        if kind == "predict":
            outputs.append(output)
        if progress.enabled:
            progress.update(kind, trainer.current_epoch, batch_idx + 1, total, trainer.progress_bar_metrics)
    progress.close()
    return outputs


@contextlib.contextmanager
def isolate_rng() -> Generator[None, None, None]:
    """Restore the torch (CPU and CUDA), Python and NumPy random states afterwards (around the sanity check)."""
    torch_state, python_state = torch.get_rng_state(), random.getstate()
    cuda_states = torch.cuda.get_rng_state_all() if torch.cuda.is_initialized() else None  # type: ignore[no-untyped-call]
    numpy = sys.modules.get("numpy")
    numpy_state = numpy.random.get_state() if numpy is not None else None
    try:
        yield
    finally:
        torch.set_rng_state(torch_state)
        random.setstate(python_state)
        if cuda_states is not None:
            torch.cuda.set_rng_state_all(cuda_states)
        if numpy is not None and numpy_state is not None:
            numpy.random.set_state(numpy_state)
