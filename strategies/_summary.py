"""The model summary a fit prints on rank 0 (``Trainer(enable_model_summary=True)``, as Lightning)."""

from __future__ import annotations

from torch import nn


def _count(params: int) -> str:
    for unit, size in (("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if params >= size:
            return f"{params / size:.1f} {unit}"
    return str(params)


def summary_rows(module: nn.Module, max_depth: int = 1) -> tuple[list[tuple[str, ...]], list[tuple[str, str]]]:
    """The rows of ``module``'s summary (index, name, type, parameters, mode) and its totals
    (``(count, "Trainable params")``, ...): ``max_depth`` levels of nesting (1: the direct children;
    -1: all), named as ``named_modules`` names them (``encoder.0``), as Lightning lists them; sizes
    are counted on this rank (a sharded module shows its local shard)."""
    chosen = [
        (name, child)
        for name, child in module.named_modules()
        if name and (max_depth < 0 or name.count(".") < max_depth)
    ]
    rows: list[tuple[str, ...]] = [
        (
            str(index),
            name,
            type(child).__name__,
            _count(sum(p.numel() for p in child.parameters())),
            "train" if child.training else "eval",
        )
        for index, (name, child) in enumerate(chosen)
    ]
    trainable = sum(p.numel() for p in module.parameters() if p.requires_grad)
    total = sum(p.numel() for p in module.parameters())
    totals = [
        (_count(trainable), "Trainable params"),
        (_count(total - trainable), "Non-trainable params"),
        (_count(total), "Total params"),
    ]
    return rows, totals


def model_summary(module: nn.Module, max_depth: int = 1) -> str:
    """``summary_rows`` as a plain-text table, as Lightning prints it without rich."""
    body, totals = summary_rows(module, max_depth)
    rows = [("", "Name", "Type", "Params", "Mode"), *body]
    widths = [max(len(row[i]) for row in rows) for i in range(5)]
    lines = [" | ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip() for row in rows]
    rule = "-" * max(len(line) for line in lines)
    return "\n".join([lines[0], rule, *lines[1:], rule, *(f"{count:<10}{label}" for count, label in totals)])
