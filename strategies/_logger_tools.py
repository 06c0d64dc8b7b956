"""What the remote-service loggers (MLflow, Weights & Biases) share: parameter flattening,
metric prefixes, the rank-zero experiment and the scan for checkpoints not yet uploaded."""

from __future__ import annotations

import functools
import inspect
import os
from argparse import Namespace
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import torch

_F = TypeVar("_F", bound=Callable[..., Any])


def params_dict(params: Mapping[str, Any] | Namespace | None) -> dict[str, Any]:
    """``params`` as a plain dict (an ``argparse.Namespace`` is accepted, as in Lightning)."""
    if params is None:
        return {}
    if isinstance(params, Namespace):
        return dict(vars(params))
    return dict(params)


def flatten_params(params: Mapping[Any, Any], delimiter: str = "/", parent: str = "") -> dict[str, Any]:
    """``{"a": {"b": 1}, "l": [{"c": 2}]}`` -> ``{"a/b": 1, "l/0/c": 2}``; other values are kept as they are."""
    flat: dict[str, Any] = {}
    for key, value in params.items():
        name = f"{parent}{delimiter}{key}" if parent else str(key)
        if isinstance(value, Namespace):
            value = vars(value)
        if isinstance(value, Mapping):
            flat.update(flatten_params(value, delimiter, name))
        elif isinstance(value, list) and value and all(isinstance(item, Mapping) for item in value):
            for index, item in enumerate(value):
                flat.update(flatten_params(item, delimiter, f"{name}{delimiter}{index}"))
        else:
            flat[name] = value
    return flat


def sanitize_callables(params: Mapping[str, Any]) -> dict[str, Any]:
    """A class or function value becomes its name (a callable returning a value: that value)."""

    def clean(value: Any) -> Any:
        if inspect.isclass(value):
            return value.__name__
        if callable(value):
            try:
                result = value()
            except Exception:
                return getattr(value, "__name__", None)
            return result if not callable(result) else getattr(value, "__name__", None)
        return value

    return {key: clean(value) for key, value in params.items()}


def json_values(params: Mapping[str, Any]) -> dict[str, Any]:
    """Each value that JSON cannot hold becomes its ``str``; tensors and numbers keep their value."""
    import json

    out: dict[str, Any] = {}
    for key, value in params.items():
        if isinstance(value, torch.Tensor):
            value = value.item() if value.numel() == 1 else value.tolist()
        try:
            json.dumps(value)
        except (TypeError, ValueError):
            value = str(value)
        out[key] = value
    return out


def add_prefix(metrics: Mapping[str, Any], prefix: str, separator: str = "-") -> dict[str, Any]:
    """``prefix-name`` for every metric, or the metrics unchanged when there is no prefix."""
    if not prefix:
        return dict(metrics)
    return {f"{prefix}{separator}{key}": value for key, value in metrics.items()}


class DummyExperiment:
    """What ``logger.experiment`` is on a rank other than 0: every call does nothing.

    Code such as ``self.logger.experiment.log_image(...)`` in a training step then runs unchanged
    on every rank and only rank 0 reaches the service, as in Lightning.
    """

    def nop(self, *args: Any, **kwargs: Any) -> None:
        """Does nothing."""

    def __getattr__(self, _: str) -> Callable[..., None]:
        return self.nop

    def __getitem__(self, _: Any) -> DummyExperiment:
        return self

    def __setitem__(self, *_: Any) -> None:
        pass


def _global_rank() -> int:
    from strategies.utilities.rank_zero import rank_zero_only

    return rank_zero_only.rank


def rank_zero_experiment(getter: _F) -> _F:
    """Make an ``experiment`` property return a ``DummyExperiment`` on every rank but 0."""

    @functools.wraps(getter)
    def experiment(self: Any) -> Any:
        if _global_rank() != 0:
            return DummyExperiment()
        return getter(self)

    return experiment  # type: ignore[return-value]


def checkpoints_to_upload(checkpoint_callback: Any, uploaded: dict[str, float]) -> list[tuple[float, str, Any, str]]:
    """``(mtime, path, score, tag)`` of each checkpoint the callback holds that changed since upload, oldest first.

    The files are the callback's ``best_k_models``, its ``last_model_path`` and its
    ``best_model_path``; ``uploaded`` maps a path to the mtime it had when it was last uploaded.
    """
    found: dict[str, tuple[Any, str]] = {}
    for path, score in getattr(checkpoint_callback, "best_k_models", {}).items():
        found[path] = (score, "best_k")
    last = getattr(checkpoint_callback, "last_model_path", "")
    if last:
        found.setdefault(last, (getattr(checkpoint_callback, "current_score", None), "latest"))
    best = getattr(checkpoint_callback, "best_model_path", "")
    if best:
        found.setdefault(best, (getattr(checkpoint_callback, "best_model_score", None), "best"))
    new = []
    for path, (score, tag) in found.items():
        if not os.path.isfile(path):
            continue
        mtime = os.path.getmtime(path)
        if uploaded.get(path) != mtime:
            new.append((mtime, path, score, tag))
    return sorted(new)


def checkpoint_metadata(checkpoint_callback: Any, path: str, score: Any, key: str | None = None) -> dict[str, Any]:
    """What the uploaders store with a checkpoint: its score, file name and the callback's settings.

    The settings go under ``key`` (the callback's class name by default).
    """
    settings = ("monitor", "mode", "save_last", "save_top_k", "save_weights_only", "_every_n_train_steps")
    return {
        "score": score.item() if isinstance(score, torch.Tensor) else score,
        "original_filename": os.path.basename(path),
        key or type(checkpoint_callback).__name__: {
            key: getattr(checkpoint_callback, key) for key in settings if hasattr(checkpoint_callback, key)
        },
    }


def upload_policy(log_model: bool | str, checkpoint_callback: Any) -> str:
    """When a saved checkpoint goes up: ``"now"``, ``"at_end"`` or ``"never"`` (Lightning's ``log_model`` rule)."""
    if log_model == "all" or (log_model is True and getattr(checkpoint_callback, "save_top_k", None) == -1):
        return "now"
    return "at_end" if log_model is True else "never"
