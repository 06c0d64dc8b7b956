"""Checks made in the calling process before anything is launched: bad input fails once, early.

A rank started by a launcher fails alone and late (seconds in, after imports and the
rendezvous); these checks run when the Trainer is built (``check_max_epochs``) or before
the launch (``check_checkpoint``), so the error is one clear line in the caller.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import torch
from torch import nn

from strategies import _atomic

# Where a DeepSpeed checkpoint directory keeps its files, and the file a torch.distributed.checkpoint
# (FSDP "sharded") directory always has.
_DEEPSPEED_TAG = "checkpoint"
_DCP_METADATA = ".metadata"
_SHOWN = 8


class CheckpointError(ValueError):
    """``ckpt_path`` names a file that is not a usable checkpoint for this model."""


def check_max_epochs(max_epochs: Any) -> None:
    """``max_epochs`` is ``None`` (the default), ``-1`` (no limit) or a count >= 0 (Lightning 2.6's rule).

    ``0`` is accepted as in Lightning 2.6: ``fit`` then trains no epoch and returns at once.
    """
    if max_epochs is None:
        return
    if isinstance(max_epochs, bool) or not isinstance(max_epochs, int) or max_epochs < -1:
        raise ValueError(
            f"`max_epochs={max_epochs!r}`: pass a whole number of epochs (0 or more), -1 for no limit, or None "
            "(the default: 1000 epochs, or no epoch limit when `max_steps` is set)."
        )


def check_checkpoint(ckpt_path: str | os.PathLike[str] | None, module: nn.Module) -> None:
    """Before the launch: ``ckpt_path`` exists and is a checkpoint (this library's, Lightning 2.x's or
    1.2-1.5's) for ``module``.

    A file must load with ``torch.load(weights_only=True)`` (unless ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD=1``)
    and hold a ``state_dict`` whose tensors fit the parameters ``module`` already has (layers created
    later, in ``setup`` or ``configure_model``, are checked when the checkpoint is restored). A directory must be a
    sharded FSDP or a DeepSpeed checkpoint directory.
    """
    if ckpt_path is None:
        return
    path = _atomic.complete_checkpoint(Path(ckpt_path))  # a kill mid-swap leaves the old one aside
    if not path.exists():
        raise FileNotFoundError(
            f"`ckpt_path={str(ckpt_path)!r}` does not exist (looked for {path.resolve()}). Pass the path of a "
            "checkpoint written by `trainer.save_checkpoint(path)`, or `ckpt_path=None` to start from scratch."
        )
    if path.is_dir():
        if not ((path / _DCP_METADATA).is_file() or (path / _DEEPSPEED_TAG).is_dir()):
            raise CheckpointError(
                f"{path} is a directory but not a checkpoint written by this library (a sharded FSDP checkpoint "
                f"has a `{_DCP_METADATA}` file, a DeepSpeed one a `{_DEEPSPEED_TAG}/` folder)."
            )
        return
    state_dict = _read_state_dict(path)
    _check_keys(path, state_dict, module)


def _read_state_dict(path: Path) -> dict[str, Any]:
    from strategies._checkpoint import read_file

    # weights_only=True (1.x's class-keyed callback states included); never torch's advice to unpickle
    checkpoint = read_file(path, mmap=True)
    if not isinstance(checkpoint, dict) or not isinstance(checkpoint.get("state_dict"), dict):
        found = sorted(map(str, checkpoint))[:_SHOWN] if isinstance(checkpoint, dict) else type(checkpoint).__name__
        raise CheckpointError(
            f"{path} is not a checkpoint written by this library: it has no `state_dict` entry (found: {found}). "
            "A bare `module.state_dict()` file loads with `module.load_state_dict(torch.load(path))` before `fit`."
        )
    state_dict: dict[str, Any] = checkpoint["state_dict"]
    return state_dict


def _check_keys(path: Path, saved: dict[str, Any], module: nn.Module) -> None:
    expected = module.state_dict()
    missing = [k for k in expected if k not in saved]
    shapes = [
        f"{k} {tuple(saved[k].shape)} in the file, {tuple(v.shape)} in the model"
        for k, v in expected.items()
        if k in saved
        and isinstance(saved[k], torch.Tensor)
        and isinstance(v, torch.Tensor)
        and not v.is_meta
        and saved[k].shape != v.shape
    ]
    if missing or shapes:
        raise CheckpointError(mismatch_message(path, module, missing, [k for k in saved if k not in expected], shapes))


def mismatch_message(
    path: str | os.PathLike[str],
    module: nn.Module,
    missing: list[str],
    unexpected: list[str],
    shapes: list[str] | None = None,
) -> str:
    """The error for a checkpoint of another model: the file and the keys that do not match."""
    parts = []
    if missing:
        parts.append(f"missing from the file: {_first(missing)}")
    if unexpected:
        parts.append(f"in the file but not in the model: {_first(unexpected)}")
    if shapes:
        parts.append(f"different shapes: {_first(shapes)}")
    return (
        f"{path} is a checkpoint of another model: its `state_dict` does not match `{type(module).__name__}` "
        f"({'; '.join(parts)}). Resume from a checkpoint of this model, or load the matching weights yourself "
        "with `module.load_state_dict(torch.load(path, weights_only=True)['state_dict'], strict=False)`."
    )


def _first(keys: list[str]) -> str:
    shown = ", ".join(keys[:_SHOWN])
    return shown + (f" and {len(keys) - _SHOWN} more" if len(keys) > _SHOWN else "")
