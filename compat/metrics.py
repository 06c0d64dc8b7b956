"""``pytorch_lightning.metrics`` (1.2-1.4) on compat: the metrics that moved to torchmetrics.

Lightning 1.3 moved its metrics to the torchmetrics package and 1.5 removed
``pytorch_lightning.metrics``; this module gives a 1.x program its names back, each warning once
with the torchmetrics name to import instead:

* a metric whose torchmetrics class takes the same arguments (``MeanSquaredError``,
  ``R2Score``, ``Metric``, ``MetricCollection``, ``F1`` is not one of them) is torchmetrics' class,
  under its torchmetrics name where that changed (``PSNR`` -> ``PeakSignalNoiseRatio``, ``SSIM``
  -> ``StructuralSimilarityIndexMeasure``);
* ``Accuracy`` is a ``torchmetrics.Metric`` with 1.x's arguments and behaviour: the task
  (binary, multi-label or multi-class) is read from the inputs, as 1.x read it, where
  torchmetrics 1.x needs ``task=``; micro accuracy over every sample (``subset_accuracy``:
  a multi-label sample counts when all its labels are right), ``top_k`` for class scores;
* the other classification metrics (``Precision``, ``F1``, ``AUROC``, ...) need ``task=`` in
  torchmetrics 1.x, which 1.x inferred: they raise ``compat.MissingNameError`` where they are
  imported, naming the torchmetrics class and its ``task`` argument.

torchmetrics is needed only when one of these names is used (``pip install
'strategy-compat[metrics]'``); the submodules (``pytorch_lightning.metrics.classification``, ...)
resolve their names here.
"""

from __future__ import annotations

import functools
import importlib
from typing import Any

from compat import _legacy

_OLD = "pytorch_lightning.metrics"

# 1.x name -> torchmetrics name, where torchmetrics renamed the class.
_RENAMED = {
    "F1": "F1Score",
    "FBeta": "FBetaScore",
    "IoU": "JaccardIndex",
    "PSNR": "PeakSignalNoiseRatio",
    "SSIM": "StructuralSimilarityIndexMeasure",
}

__all__ = sorted(  # noqa: PLE0605 (resolved by __getattr__)
    n for n in _legacy.old_names(_OLD) if n[:1].isupper()
)


def _torchmetrics() -> Any:
    try:
        return importlib.import_module("torchmetrics")
    except ImportError:
        raise _legacy.MissingNameError(
            f"`{_OLD}` moved to the torchmetrics package in Lightning 1.3: install it "
            "(`pip install 'strategy-compat[metrics]'`) and import the metrics from `torchmetrics`."
        ) from None


def _takes_task(cls: type) -> bool:
    import inspect

    try:
        return "task" in inspect.signature(cls.__new__).parameters
    except (TypeError, ValueError):
        return False


def _torchmetrics_class(name: str) -> tuple[Any, str]:
    new = _RENAMED.get(name, name)
    cls = getattr(_torchmetrics(), new, None)
    if cls is None:
        raise _legacy.MissingNameError(
            f"`{_legacy._shown(_OLD, name)}` (pytorch_lightning 1.x) has no torchmetrics class of that name: "
            "torchmetrics' documentation lists what replaced it."
        )
    if _takes_task(cls):
        raise _legacy.MissingNameError(
            f"`{_legacy._shown(_OLD, name)}` (pytorch_lightning 1.x) inferred binary, multi-label or multi-class "
            f"from its inputs; its successor `torchmetrics.{new}` needs that said: use "
            f"`torchmetrics.{new}(task='binary' | 'multiclass' | 'multilabel', num_classes=..., ...)`."
        )
    return cls, f"torchmetrics.{new}"


@functools.cache
def _accuracy() -> type:
    torchmetrics = _torchmetrics()
    import torch

    class Accuracy(torchmetrics.Metric):  # type: ignore[name-defined]
        """1.x's ``Accuracy``: micro accuracy, the task read from the inputs.

        ``preds`` are labels (integers, the shape of ``target``), probabilities of the positive
        class (floats in [0, 1], the shape of ``target``: binary or multi-label, over
        ``threshold``), or class scores (``target``'s shape with a class dimension after the
        first: the ``top_k`` best count, 1 by default). ``subset_accuracy``: a multi-label or
        multi-dimensional sample counts as right only when all its labels are.
        """

        is_differentiable = False
        higher_is_better = True
        full_state_update = False

        def __init__(
            self,
            threshold: float = 0.5,
            num_classes: int | None = None,
            average: str = "micro",
            mdmc_average: str | None = "global",
            ignore_index: int | None = None,
            top_k: int | None = None,
            multiclass: bool | None = None,
            subset_accuracy: bool = False,
            compute_on_step: bool = True,
            dist_sync_on_step: bool = False,
            process_group: Any = None,
            dist_sync_fn: Any = None,
            **kwargs: Any,
        ) -> None:
            if average != "micro" or ignore_index is not None:
                raise ValueError(
                    "compat's 1.x `Accuracy` computes micro accuracy over every sample; for "
                    f"`average={average!r}`/`ignore_index` use `torchmetrics.Accuracy(task=..., num_classes=..., "
                    "average=..., ignore_index=...)`."
                )
            super().__init__(
                dist_sync_on_step=dist_sync_on_step, process_group=process_group, dist_sync_fn=dist_sync_fn, **kwargs
            )
            self.threshold = threshold
            self.num_classes = num_classes
            self.top_k = top_k
            self.subset_accuracy = subset_accuracy
            self.compute_on_step = compute_on_step
            self.add_state("correct", default=torch.tensor(0), dist_reduce_fx="sum")
            self.add_state("total", default=torch.tensor(0), dist_reduce_fx="sum")

        def update(self, preds: torch.Tensor, target: torch.Tensor) -> None:
            """Count the right samples of one batch."""
            right = _right(preds, target, self.threshold, self.top_k, self.subset_accuracy)
            self.correct += right.sum()
            self.total += right.numel()

        def compute(self) -> torch.Tensor:
            """The share of right samples since the last ``reset``."""
            return self.correct.float() / self.total

        def forward(self, *args: Any, **kwargs: Any) -> Any:
            """The batch's accuracy (``None`` with ``compute_on_step=False``, as 1.x returned)."""
            value = super().forward(*args, **kwargs)
            return value if self.compute_on_step else None

    Accuracy.__module__ = __name__
    Accuracy.__qualname__ = "Accuracy"  # its pickle path (DDP spawn sends the module to each process)
    return Accuracy


def _right(preds: Any, target: Any, threshold: float, top_k: int | None, subset: bool) -> Any:
    """One boolean per sample (per label unless ``subset``): whether ``preds`` got it right."""
    import torch

    if target.is_floating_point():
        raise ValueError("`target` must hold integer labels (1.x's Accuracy): pass `target.long()` or `.int()`.")
    if preds.is_floating_point() and preds.ndim == target.ndim + 1 and preds.shape[0] == target.shape[0]:
        k = top_k or 1
        best = preds.topk(k, dim=1).indices  # (N, k, ...)
        right = (best == target.unsqueeze(1)).any(dim=1)
    elif preds.shape == target.shape:
        if preds.is_floating_point():
            if top_k is not None:
                raise ValueError("`top_k` needs class scores: `preds` of shape (N, C, ...) for `target` (N, ...)")
            if preds.min() < 0 or preds.max() > 1:
                raise ValueError(
                    "The `preds` should be probabilities, but values were detected outside of [0,1] range "
                    "(as 1.x's Accuracy said): apply `torch.sigmoid` first, or pass labels."
                )
            preds = (preds >= threshold).to(target.dtype)
        right = preds == target
    else:
        raise ValueError(
            f"`preds` of shape {tuple(preds.shape)} do not fit `target` of shape {tuple(target.shape)}: pass "
            "labels or probabilities of `target`'s shape, or class scores with a class dimension after the first."
        )
    if subset and right.ndim > 1:
        right = right.flatten(1).all(dim=1)
    return right.to(torch.bool)


def _own(name: str) -> Any:
    if name == "Accuracy":
        return _accuracy(), "torchmetrics.Accuracy"
    return _torchmetrics_class(name)


_OWN = {name: functools.partial(_own, name) for name in __all__}

__getattr__ = _legacy.module_getattr(__name__, _OWN)
__dir__ = _legacy.module_dir(__name__, _OWN)
