"""Dataloaders: the distributed sampler, limits, and moving batches to the device."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

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
