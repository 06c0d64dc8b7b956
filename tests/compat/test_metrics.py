"""``pytorch_lightning.metrics`` (1.2-1.4) on compat: torchmetrics' classes, and 1.x's ``Accuracy``."""

from __future__ import annotations

import warnings

import pytest
import torch

import compat

torchmetrics = pytest.importorskip("torchmetrics", reason="the metrics extra (torchmetrics) is not installed")


def _get(name: str, module: str = "compat.metrics"):
    import importlib

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compat._reset_warned()
        value = getattr(importlib.import_module(module), name)
    return value, [str(w.message) for w in caught if issubclass(w.category, compat.CompatDeprecationWarning)]


def test_same_argument_metrics_are_torchmetrics_classes_under_their_new_names():
    mse, messages = _get("MeanSquaredError")
    assert mse is torchmetrics.MeanSquaredError
    assert len(messages) == 1 and "`torchmetrics.MeanSquaredError`" in messages[0]
    psnr, messages = _get("PSNR")
    assert psnr is torchmetrics.PeakSignalNoiseRatio and "torchmetrics.PeakSignalNoiseRatio" in messages[0]
    assert _get("Metric")[0] is torchmetrics.Metric
    regression, _ = _get("MeanAbsoluteError", "compat.metrics.regression")  # a 1.x submodule
    assert regression is torchmetrics.MeanAbsoluteError


def test_metrics_whose_successor_needs_a_task_fail_at_import_saying_which():
    with pytest.raises(compat.MissingNameError, match=r"torchmetrics\.F1Score\(task="):
        from compat.metrics import F1  # noqa: F401
    with pytest.raises(compat.MissingNameError, match=r"torchmetrics\.Precision\(task="):
        from compat.metrics.classification import Precision  # noqa: F401
    with pytest.raises(AttributeError):
        compat.metrics.NotAMetric  # noqa: B018


def _accuracy(**kwargs):
    cls, messages = _get("Accuracy")
    assert "`torchmetrics.Accuracy`" in messages[0]
    assert issubclass(cls, torchmetrics.Metric)
    return cls(**kwargs)


def test_accuracy_reads_the_task_from_the_inputs_as_1x_did():
    gen = torch.Generator().manual_seed(0)
    probs = torch.rand(50, generator=gen)
    labels = torch.randint(0, 2, (50,), generator=gen)
    binary = _accuracy()
    expected = torchmetrics.Accuracy(task="binary")(probs, labels)
    assert torch.allclose(binary(probs, labels), expected)

    scores = torch.randn(40, 5, generator=gen)
    target = torch.randint(0, 5, (40,), generator=gen)
    for k in (1, 2):
        multiclass = _accuracy(top_k=k)
        reference = torchmetrics.Accuracy(task="multiclass", num_classes=5, average="micro", top_k=k)
        assert torch.allclose(multiclass(scores, target), reference(scores, target))

    multilabel = torch.rand(30, 4, generator=gen)
    truth = torch.randint(0, 2, (30, 4), generator=gen)
    per_label = _accuracy()
    ref = torchmetrics.Accuracy(task="multilabel", num_labels=4, average="micro")
    assert torch.allclose(per_label(multilabel, truth), ref(multilabel, truth))
    subset = _accuracy(subset_accuracy=True)
    exact = ((multilabel >= 0.5).long() == truth).all(dim=1).float().mean()
    assert torch.allclose(subset(multilabel, truth), exact)

    assert _accuracy()(torch.tensor([1, 2, 3]), torch.tensor([1, 0, 3])).item() == pytest.approx(2 / 3)


def test_accuracy_accumulates_over_batches_and_resets():
    metric = _accuracy()
    metric.update(torch.tensor([1, 1]), torch.tensor([1, 1]))
    metric.update(torch.tensor([0, 0, 0, 0]), torch.tensor([1, 1, 1, 0]))
    assert metric.compute().item() == pytest.approx(3 / 6)
    metric.reset()
    metric.update(torch.tensor([1]), torch.tensor([1]))
    assert metric.compute().item() == 1.0
    assert _accuracy(compute_on_step=False)(torch.tensor([1]), torch.tensor([1])) is None


def test_accuracy_refuses_what_1x_refused_and_what_it_cannot_do():
    with pytest.raises(ValueError, match=r"outside of \[0,1\]"):
        _accuracy()(torch.tensor([2.0, -1.0]), torch.tensor([1, 0]))
    with pytest.raises(ValueError, match="do not fit"):
        _accuracy()(torch.rand(3, 2), torch.tensor([1, 0, 1, 1]))
    with pytest.raises(ValueError, match="integer labels"):
        _accuracy()(torch.rand(3), torch.rand(3))
    with pytest.raises(ValueError, match=r"torchmetrics\.Accuracy\(task="):
        _accuracy(average="macro")


def test_accuracy_pickles_by_its_1x_path_so_ddp_spawn_can_send_it():
    import pickle

    metric = _accuracy()
    metric.update(torch.tensor([1, 0]), torch.tensor([1, 1]))
    copy = pickle.loads(pickle.dumps(metric))
    assert type(copy) is type(metric) and float(copy.compute()) == 0.5
