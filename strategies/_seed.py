"""``seed_everything``: one seed for Python, NumPy and torch, inherited by launched processes."""

from __future__ import annotations

import os
import random
import sys


def seed_everything(seed: int = 0, workers: bool = False) -> int:
    """Seed ``random``, NumPy (if imported) and torch on every device, as Lightning's function does.

    The seed is also put in ``PL_GLOBAL_SEED`` (Lightning's variable), so processes the launchers
    start and the training ``DistributedSampler`` use it; ``workers=True`` sets ``PL_SEED_WORKERS``.
    Returns the seed.
    """
    import torch

    if not isinstance(seed, int):
        raise TypeError(f"`seed_everything({seed!r})`: pass an integer.")
    os.environ["PL_GLOBAL_SEED"] = str(seed)
    os.environ["PL_SEED_WORKERS"] = str(int(workers))
    random.seed(seed)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    return seed


def reset_seed() -> None:
    """Seed again with what ``seed_everything`` set (``PL_GLOBAL_SEED``; nothing when it was never called).

    The parallel strategies call it in every process when they set up the process group, as
    Lightning's do, so each rank's random stream in the loops starts from the seed, whatever the
    program drew before ``fit`` (the model's initialisation, a launcher's re-execution).
    """
    seed = os.environ.get("PL_GLOBAL_SEED")
    if seed is None:
        return
    seed_everything(int(seed), workers=bool(int(os.environ.get("PL_SEED_WORKERS", "0"))))
