"""Turn what ``configure_optimizers`` returns into optimizers and scheduler configs."""

from __future__ import annotations

import warnings
from typing import Any

import torch


def parse_optimizers(result: Any) -> tuple[list[torch.optim.Optimizer], list[dict[str, Any]]]:
    """Accept an optimizer, a list of them, ``(optimizers, schedulers)``, or a dict/list of dicts.

    A dict has ``"optimizer"`` and optionally ``"lr_scheduler"`` (a scheduler, or a dict with
    ``"scheduler"``, ``"interval"`` of ``"epoch"`` (default) or ``"step"``, ``"frequency"`` (1),
    and for ``ReduceLROnPlateau`` the ``"monitor"``ed metric, ``"strict"`` (True) as in Lightning).
    """
    if result is None:
        raise ValueError(
            "`configure_optimizers()` returned None: return an optimizer, a list of optimizers, or a dict "
            "with an 'optimizer' key (and optionally 'lr_scheduler')."
        )
    if isinstance(result, torch.optim.Optimizer):
        return [result], []
    if isinstance(result, dict):
        return _parse_dicts([result])
    if isinstance(result, (list, tuple)):
        if len(result) == 2 and isinstance(result[0], (list, tuple)):
            optimizers = list(result[0])
            return _check(optimizers), [_scheduler_config(s) for s in result[1]]
        if all(isinstance(item, dict) for item in result):
            return _parse_dicts(list(result))
        return _check(list(result)), []
    raise TypeError(
        f"`configure_optimizers()` returned a `{type(result).__name__}`; return an optimizer, a list of "
        "optimizers, or a dict with 'optimizer' (and optionally 'lr_scheduler')."
    )


def _parse_dicts(items: list[dict[str, Any]]) -> tuple[list[torch.optim.Optimizer], list[dict[str, Any]]]:
    optimizers, schedulers = [], []
    for item in items:
        if "optimizer" not in item:
            raise ValueError(f"A dict from `configure_optimizers()` needs an 'optimizer' key; got {sorted(item)}.")
        extra = set(item) - {"optimizer", "lr_scheduler", "monitor"}
        if extra:  # Lightning 2.6 warns too (1.x's "frequency" is one: it does nothing here)
            warnings.warn(
                f"Found unsupported keys in the optimizer configuration: {extra}", RuntimeWarning, stacklevel=4
            )
        optimizers.append(item["optimizer"])
        if item.get("lr_scheduler") is not None:
            scheduler = item["lr_scheduler"]
            if not isinstance(scheduler, dict) and "monitor" in item:
                scheduler = {"scheduler": scheduler, "monitor": item["monitor"]}
            schedulers.append(_scheduler_config(scheduler))
    return _check(optimizers), schedulers


def _scheduler_config(scheduler: Any) -> dict[str, Any]:
    config = dict(scheduler) if isinstance(scheduler, dict) else {"scheduler": scheduler}
    config.setdefault("interval", "epoch")
    config.setdefault("frequency", 1)
    config.setdefault("strict", True)
    config.setdefault("monitor", None)
    if config["interval"] not in ("epoch", "step"):
        raise ValueError(f"lr_scheduler `interval={config['interval']!r}`: use 'epoch' or 'step'.")
    config["reduce_on_plateau"] = isinstance(config["scheduler"], torch.optim.lr_scheduler.ReduceLROnPlateau)
    if config["reduce_on_plateau"] and config["monitor"] is None:
        raise ValueError(
            "A `ReduceLROnPlateau` scheduler needs the metric it watches: return "
            "`{'optimizer': opt, 'lr_scheduler': {'scheduler': sched, 'monitor': 'val_loss'}}` "
            "from `configure_optimizers`."
        )
    return config


def _check(optimizers: list[Any]) -> list[torch.optim.Optimizer]:
    for optimizer in optimizers:
        if not isinstance(optimizer, torch.optim.Optimizer):
            raise TypeError(f"`configure_optimizers()` gave a `{type(optimizer).__name__}` where an optimizer belongs.")
    return optimizers
