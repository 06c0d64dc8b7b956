"""The validation, test and predict loops, with Lightning 2.x's hooks in its order."""

from __future__ import annotations

import contextlib
import random
import sys
import warnings
from collections.abc import Generator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import torch

from strategies._data import EvalLoaders, apply_to_tensors
from strategies._hook_calls import check_dataloader_idx
from strategies._progress import bar_for
from strategies.prediction_writer import IndexRecorder, writers_need
from strategies.profilers import Profiler

if TYPE_CHECKING:
    from strategies.trainer import Trainer

_STEP = {"val": "validation_step", "test": "test_step", "predict": "predict_step"}
_HOOK = {"val": "validation", "test": "test", "predict": "predict"}


def batches(
    loader: Iterable[Any], limit: float, profiler: Profiler | None = None, action: str = ""
) -> Iterator[tuple[int, Any, bool]]:
    """``(batch_idx, batch, is_last)`` for at most ``limit`` batches; one batch is read ahead to know
    the last. Each fetch is the ``profiler``'s ``action`` (Lightning's ``..._next`` names)."""
    if limit <= 0:
        return
    iterator = iter(loader)

    def fetch() -> Any:
        if profiler is None:
            return next(iterator)
        with profiler.profile(action):
            return next(iterator)

    try:
        upcoming = fetch()
    except StopIteration:
        return
    batch_idx = 0
    while True:
        batch = upcoming
        last = batch_idx + 1 >= limit
        if not last:
            try:
                upcoming = fetch()
            except StopIteration:
                last = True
        yield batch_idx, batch, last
        if last:
            return
        batch_idx += 1


def run_evaluation(
    trainer: Trainer,
    kind: str,
    data: EvalLoaders,
    limits: list[int | float] | None = None,
    metrics_kind: str | None = None,
) -> Any:
    """One validation/test/predict run over every loader of ``data`` in turn (at most ``limits``
    batches of each, ``data.limits`` by default): the metrics per loader for val/test, the step
    outputs for predict (one list, or one per loader with several)."""
    name, metrics_kind = _HOOK[kind], metrics_kind or kind
    hooks, limits = trainer.hooks, data.limits if limits is None else limits
    if not any(limits):  # no batches in any loader: Lightning skips the run, hooks and all
        return None if kind == "predict" else []
    several = len(data.loaders) > 1
    check_dataloader_idx(trainer.strategy.module, kind, several)
    with _grad_off(trainer), _evaluating(trainer, kind):
        hooks.module(f"on_{name}_model_eval")
        trainer.metrics.reset(metrics_kind)
        hooks.fire(f"on_{name}_start")
        hooks.fire(f"on_{name}_epoch_start")
        writing = _Writing(trainer, data.loaders, kind == "predict")
        for dataloader_idx, (loader, limit) in enumerate(zip(data.loaders, limits, strict=True)):
            trainer.metrics.dataloader_idx = dataloader_idx if several else None
            _run_batches(trainer, kind, loader, limit, metrics_kind, dataloader_idx, several, writing)
            trainer.metrics.loader_end(metrics_kind)
        trainer.metrics.dataloader_idx = None
        with hooks.event(f"on_{name}_epoch_end"):
            hooks.callbacks(f"on_{name}_epoch_end")
            hooks.module(f"on_{name}_epoch_end")
            metrics = trainer.metrics.epoch_end(metrics_kind)
        outputs = trainer.predict_loop.predictions if kind == "predict" else metrics
        hooks.fire(f"on_{name}_end")
        if kind == "predict":  # as Lightning: the indices go, the predictions stay if they are returned
            trainer.predict_loop.epoch_batch_indices = []
            if not trainer.predict_loop.return_predictions:
                trainer.predict_loop.clear()
        if kind != "predict":
            hooks.module(f"on_{name}_model_train")
    return outputs


def _grad_off(trainer: Trainer) -> contextlib.AbstractContextManager[Any]:
    """``torch.inference_mode`` (``Trainer(inference_mode=True)``), else ``no_grad``; always ``no_grad`` for
    FSDP/DeepSpeed, whose gathered-parameter buffers outlive the run and must not become inference tensors."""
    from strategies.deepspeed import DeepSpeedStrategy
    from strategies.fsdp import FSDPStrategy

    if trainer.inference_mode and not isinstance(trainer.strategy, (FSDPStrategy, DeepSpeedStrategy)):
        return torch.inference_mode()
    return torch.no_grad()


def _run_batches(
    trainer: Trainer,
    kind: str,
    loader: Any,
    limit: float,
    metrics_kind: str,
    dataloader_idx: int,
    several: bool,
    writing: _Writing,
) -> None:
    """One loader's batches; ``dataloader_idx`` goes to the step and the batch hooks with ``several`` loaders."""
    name, hooks = _HOOK[kind], trainer.hooks
    progress = bar_for(trainer, trainer.enable_progress_bar and trainer.is_global_zero and metrics_kind != "sanity")
    total = None if limit == float("inf") else int(limit)
    extra = (dataloader_idx,) if several else ()
    writing.start(dataloader_idx)
    action = "[_PredictionLoop].predict_next" if kind == "predict" else f"[_EvaluationLoop].{kind}_next"
    for batch_idx, batch, _ in batches(loader, limit, trainer.hooks.active_profiler, action):
        batch = trainer.metrics.current_batch = hooks.transfer_batch(batch, dataloader_idx)
        hooks.fire(f"on_{name}_batch_start", batch, batch_idx, *extra)
        writing.before_step(batch_idx)
        output = hooks.step(_STEP[kind], batch, batch_idx, *extra)
        with hooks.event(f"on_{name}_batch_end"):
            hooks.callbacks(f"on_{name}_batch_end", output, batch, batch_idx, *extra)
            hooks.module(f"on_{name}_batch_end", output, batch, batch_idx, *extra)
            trainer.metrics.batch_end(metrics_kind)
        writing.after_batch(output)
        if progress.enabled:
            progress.update(kind, trainer.current_epoch, batch_idx + 1, total, trainer.progress_bar_metrics)
    progress.close()


class _Writing:
    """What ``trainer.predict_loop`` keeps, loader by loader and batch by batch: the predictions
    (returned, or for a writer that writes per run) and the batch indices the writers read
    (Lightning's order: the indices before the step, the CPU copy after the batch-end hooks)."""

    def __init__(self, trainer: Trainer, loaders: list[Any], predicting: bool) -> None:
        self.loop = trainer.predict_loop
        self.per_batch, self.per_run = writers_need(trainer.callbacks) if predicting else (False, False)
        self.keep = predicting and (self.per_run or self.loop.return_predictions)
        self.loaders, self.dataloader_idx = loaders, 0
        self.recorder: IndexRecorder | None = None
        if predicting:
            self.loop.start(len(loaders))

    def start(self, dataloader_idx: int) -> None:
        self.dataloader_idx = dataloader_idx
        if not (self.per_batch or self.per_run):
            return
        loader = self.loaders[dataloader_idx]
        recorder = getattr(loader, "batch_sampler", None)
        self.recorder = recorder if isinstance(recorder, IndexRecorder) else None
        if self.recorder is None:
            warnings.warn(
                f"Couldn't infer the batch indices fetched from your dataloader: `{type(loader).__name__}` "
                "(only a plain DataLoader with a batch sampler records them); the writers get `[]`.",
                UserWarning,
                stacklevel=5,
            )

    def before_step(self, batch_idx: int) -> None:
        if not (self.per_batch or self.per_run) or self.recorder is None:
            return
        indices = self.recorder.seen[batch_idx]
        if self.per_run:
            self.loop.epoch_batch_indices[self.dataloader_idx].append(indices)
        if self.per_batch:
            self.loop.current_batch_indices = indices

    def after_batch(self, output: Any) -> None:
        if self.keep:
            self.loop.add_prediction(self.dataloader_idx, apply_to_tensors(output, lambda t: t.detach().cpu()))


@contextlib.contextmanager
def _evaluating(trainer: Trainer, kind: str) -> Generator[None, None, None]:
    """``trainer.state.evaluating`` names the loop while it runs (``trainer.training`` is False then)."""
    previous, trainer.state.evaluating = trainer.state.evaluating, kind
    try:
        yield
    finally:
        trainer.state.evaluating = previous


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
