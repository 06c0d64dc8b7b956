"""What the example's overrides record: every call, and whether the process group was live."""

from __future__ import annotations

import torch.distributed as dist

CALLS: list[dict] = []


def record(name: str, **extra) -> None:
    CALLS.append({"name": name, "process_group": dist.is_initialized(), **extra})
