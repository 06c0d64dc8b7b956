"""Dataloaders: the distributed sampler, limits, and moving batches to the device."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sized
from dataclasses import dataclass
from typing import Any, cast

import torch
from torch.utils.data import (
    BatchSampler,
    DataLoader,
    DistributedSampler,
    IterableDataset,
    RandomSampler,
    SequentialSampler,
)


def inject_distributed_sampler(loader: Any, sampler_kwargs: Mapping[str, Any] | None, train: bool) -> Any:
    """Give a plain DataLoader a DistributedSampler so each rank sees its own share, as Lightning does.

    Training loaders always shuffle (seeded with ``PL_GLOBAL_SEED``, 0 by default; the loop calls
    ``set_epoch`` every epoch); evaluation loaders shuffle only if they did. Loaders with their own
    sampler or batch sampler, iterable datasets, and non-DataLoader iterables are returned as they are.
    """
    if sampler_kwargs is None or not isinstance(loader, DataLoader) or isinstance(loader.dataset, IterableDataset):
        return loader
    if isinstance(loader.sampler, DistributedSampler):
        return loader
    if type(loader.sampler) not in (SequentialSampler, RandomSampler) or type(loader.batch_sampler) is not BatchSampler:
        return loader
    shuffle = train or isinstance(loader.sampler, RandomSampler)
    seed = int(os.environ.get("PL_GLOBAL_SEED", "0"))
    sampler: DistributedSampler[Any] = DistributedSampler(loader.dataset, shuffle=shuffle, seed=seed, **sampler_kwargs)
    options = loader_options(loader, batch_size=loader.batch_size, sampler=sampler, drop_last=loader.drop_last)
    return DataLoader(loader.dataset, **options)


def sequential(loader: Any, kind: str) -> Any:
    """``loader`` reading its dataset in order (``overfit_batches``): a plain DataLoader that shuffles
    is rebuilt with a ``SequentialSampler``, with Lightning's warning; any other loader is kept."""
    if not isinstance(loader, DataLoader) or isinstance(loader.sampler, SequentialSampler):
        return loader
    if isinstance(loader.dataset, IterableDataset) or type(loader.batch_sampler) is not BatchSampler:
        return loader
    from strategies.utilities import rank_zero_warn

    rank_zero_warn(
        f"You requested to overfit but enabled {kind} dataloader shuffling. "
        f"We are turning off the {kind} dataloader shuffling for you."
    )
    options = loader_options(
        loader,
        batch_size=loader.batch_size,
        sampler=SequentialSampler(cast("Sized", loader.dataset)),
        drop_last=loader.drop_last,
    )
    return DataLoader(loader.dataset, **options)


def loader_options(loader: DataLoader[Any], **sampling: Any) -> dict[str, Any]:
    """The arguments that rebuild ``loader`` (workers, collation, memory, ...) with new ``sampling`` ones
    (``sampler``/``batch_size``/``drop_last``, or a ``batch_sampler``)."""
    options: dict[str, Any] = dict(
        sampling,
        num_workers=loader.num_workers,
        collate_fn=loader.collate_fn,
        pin_memory=loader.pin_memory,
        timeout=loader.timeout,
        worker_init_fn=loader.worker_init_fn,
        multiprocessing_context=loader.multiprocessing_context,
        generator=loader.generator,
        persistent_workers=loader.persistent_workers,
    )
    if loader.num_workers > 0:
        options["prefetch_factor"] = loader.prefetch_factor
    return options


def set_sampler_epoch(loader: Any, epoch: int) -> None:
    """Tell the loader's sampler (and its batch sampler's) which epoch it is, so shuffling changes."""
    samplers: tuple[Any, ...] = (
        getattr(loader, "sampler", None),
        getattr(getattr(loader, "batch_sampler", None), "sampler", None),
    )
    for sampler in samplers:
        if hasattr(sampler, "set_epoch"):
            sampler.set_epoch(epoch)


def limit_batches(loader: Any, limit: float | None) -> int | None:
    """The number of batches to run: an int is a count, a float a fraction; None is all."""
    if limit is None:
        return None
    if isinstance(limit, float) and 0.0 <= limit <= 1.0:
        try:
            return int(len(loader) * limit)
        except TypeError:
            raise ValueError("A fractional `limit_*_batches` needs a dataloader with a length.") from None
    if isinstance(limit, int) and limit >= 0:
        return limit
    raise ValueError(f"`limit_*_batches={limit!r}`: pass a count >= 0 or a fraction in [0.0, 1.0].")


def batch_count(loader: Any, limit: float | None) -> int | float:
    """The number of batches to run: the limit, capped by the loader's length (inf without one)."""
    try:
        length: int | float = len(loader)
    except TypeError:
        length = float("inf")
    limited = limit is not None and not (length == float("inf") and isinstance(limit, float))
    count = limit_batches(loader, limit) if limited else None
    return length if count is None else min(count, length)


@dataclass
class EvalLoaders:
    """The loaders of one evaluation kind (``"val"``, ``"test"``, ``"predict"``) as the loop runs them.

    Attributes:
        loaders: every loader, flattened in Lightning's order (``dataloader_idx`` is the index).
        limits: the batches to run from each (``limit_*_batches`` capped by its length).
        iterables: what was given, in its shape, holding the loaders the loop runs
            (``trainer.val_dataloaders``: one loader, or the list/dict of them).
    """

    loaders: list[Any]
    limits: list[int | float]
    iterables: Any


def apply_to_tensors(data: Any, fn: Callable[[torch.Tensor], torch.Tensor]) -> Any:
    """``data`` with ``fn`` applied to every tensor in it, through lists, tuples, namedtuples and dicts."""
    if isinstance(data, torch.Tensor):
        return fn(data)
    if isinstance(data, dict):
        return {k: apply_to_tensors(v, fn) for k, v in data.items()}
    if isinstance(data, tuple) and hasattr(data, "_fields"):
        return type(data)(*(apply_to_tensors(v, fn) for v in data))
    if isinstance(data, (list, tuple)):
        return type(data)(apply_to_tensors(v, fn) for v in data)
    return data


def move_to_device(batch: Any, device: torch.device) -> Any:
    """``batch`` with every tensor in it on ``device``."""
    return apply_to_tensors(batch, lambda t: t.to(device, non_blocking=True))


def move_data_to_device(batch: Any, device: torch.device | str | int) -> Any:
    """``move_to_device`` under Lightning's name (``strategies.utilities.move_data_to_device``);
    ``device`` may also be a string (``"cpu"``, ``"cuda:1"``) or a CUDA index."""
    return move_to_device(batch, device if isinstance(device, torch.device) else torch.device(device))


def flatten_loaders(loaders: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """The loaders in an evaluation argument (one loader, or a list, tuple or dict of them, nested),
    in Lightning's order (dict values in insertion order), and a function that puts a list of
    that length back in the same shape (``trainer.val_dataloaders`` shows what was given)."""
    if isinstance(loaders, Mapping):
        keys = list(loaders)
        parts = [flatten_loaders(loaders[key]) for key in keys]
        return _joined(parts, lambda rebuilt: dict(zip(keys, rebuilt, strict=True)))
    if isinstance(loaders, (list, tuple)) and not hasattr(loaders, "_fields"):
        kind = type(loaders)
        parts = [flatten_loaders(item) for item in loaders]
        return _joined(parts, lambda rebuilt: kind(rebuilt))
    return [loaders], lambda rebuilt: rebuilt[0]


def _joined(
    parts: list[tuple[list[Any], Callable[[list[Any]], Any]]], wrap: Callable[[list[Any]], Any]
) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    flat = [loader for found, _ in parts for loader in found]

    def rebuild(items: list[Any]) -> Any:
        rebuilt, start = [], 0
        for found, inner in parts:
            rebuilt.append(inner(items[start : start + len(found)]))
            start += len(found)
        return wrap(rebuilt)

    return flat, rebuild
