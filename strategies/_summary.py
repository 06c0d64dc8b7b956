"""The model summary a fit prints on rank 0 (``Trainer(enable_model_summary=True)``, as Lightning)."""

from __future__ import annotations

from torch import nn


def _count(params: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if params >= size:
            return f"{params / size:.1f} {unit}"
    return str(params)


def model_summary(module: nn.Module, max_depth: int = 1) -> str:
    """A table of ``module``'s submodules (name, type, parameters, mode) and the totals.

    ``max_depth`` levels of nesting (1: the direct children; -1: all), named as
    ``named_modules`` names them (``encoder.0``), as Lightning's ``ModelSummary(max_depth=...)``
    lists them; sizes are counted on this rank (a sharded module shows its local shard).
    """
    rows = [("", "Name", "Type", "Params", "Mode")]
    chosen = [
        (name, child)
        for name, child in module.named_modules()
        if name and (max_depth < 0 or name.count(".") < max_depth)
    ]
    for index, (name, child) in enumerate(chosen):
        params = sum(p.numel() for p in child.parameters())
        rows.append((str(index), name, type(child).__name__, _count(params), "train" if child.training else "eval"))
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [" | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    rule = "-" * max(len(line) for line in lines)
    trainable = sum(p.numel() for p in module.parameters() if p.requires_grad)
    total = sum(p.numel() for p in module.parameters())
    totals = [
        f"{_count(trainable):<10}Trainable params",
        f"{_count(total - trainable):<10}Non-trainable params",
        f"{_count(total):<10}Total params",
    ]
    return "\n".join([lines[0], rule, *lines[1:], rule, *totals])
