"""The validation, test and predict loops, with Lightning 2.x's hooks in its order."""

from __future__ import annotations

import contextlib
import random
import sys
import warnings
from collections.abc import Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import torch

from strategies._data import apply_to_tensors
from strategies._progress import bar_for
from strategies.prediction_writer import IndexRecorder, writers_need

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
            trainer.metrics.epoch_preview(metrics_kind)
            hooks.callbacks(f"on_{name}_epoch_end")
            hooks.module(f"on_{name}_epoch_end")
            metrics = trainer.metrics.epoch_end(metrics_kind)
        hooks.fire(f"on_{name}_end")
        if kind == "predict":  # as Lightning: the indices go, the predictions stay if they are returned
            trainer.predict_loop.epoch_batch_indices = []
            if not trainer.predict_loop.return_predictions:
                trainer.predict_loop.predictions = []
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
    progress = bar_for(trainer, trainer.enable_progress_bar and trainer.is_global_zero and metrics_kind != "sanity")
    total = None if limit == float("inf") else int(limit)
    per_batch, per_run = writers_need(trainer.callbacks) if kind == "predict" else (False, False)
    writing = _Writing(trainer, loader, per_batch, per_run)
    for batch_idx, batch, _ in batches(loader, limit):
        batch = trainer.metrics.current_batch = hooks.transfer_batch(batch)
        hooks.fire(f"on_{name}_batch_start", batch, batch_idx)
        writing.before_step(batch_idx)
        output = hooks.step(_STEP[kind], batch, batch_idx)
        with hooks.event(f"on_{name}_batch_end"):
            hooks.callbacks(f"on_{name}_batch_end", output, batch, batch_idx)
            hooks.module(f"on_{name}_batch_end", output, batch, batch_idx)
            trainer.metrics.batch_end(metrics_kind)
        writing.after_batch(output)
        if kind == "predict" and trainer.predict_loop.return_predictions:
            outputs.append(output)
        if progress.enabled:
            progress.update(kind, trainer.current_epoch, batch_idx + 1, total, trainer.progress_bar_metrics)
    progress.close()
    return outputs


class _Writing:
    """What prediction writers read in ``trainer.predict_loop``, kept batch by batch (Lightning's order:
    the indices before the step, the CPU copy of the prediction after the batch-end hooks)."""

    def __init__(self, trainer: Trainer, loader: Any, per_batch: bool, per_run: bool) -> None:
        self.loop, self.per_batch, self.per_run = trainer.predict_loop, per_batch, per_run
        recorder = getattr(loader, "batch_sampler", None)
        self.recorder = recorder if isinstance(recorder, IndexRecorder) else None
        if (per_batch or per_run) and self.recorder is None:
            warnings.warn(
                f"Couldn't infer the batch indices fetched from your dataloader: `{type(loader).__name__}` "
                "(only a plain DataLoader with a batch sampler records them); the writers get `[]`.",
                UserWarning,
                stacklevel=4,
            )
        self.loop.predictions, self.loop.epoch_batch_indices, self.loop.current_batch_indices = [], [[]], []

    def before_step(self, batch_idx: int) -> None:
        if not (self.per_batch or self.per_run) or self.recorder is None:
            return
        indices = self.recorder.seen[batch_idx]
        if self.per_run:
            self.loop.epoch_batch_indices[0].append(indices)
        if self.per_batch:
            self.loop.current_batch_indices = indices

    def after_batch(self, output: Any) -> None:
        if self.per_run:
            self.loop.predictions.append(apply_to_tensors(output, lambda t: t.detach().cpu()))


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
