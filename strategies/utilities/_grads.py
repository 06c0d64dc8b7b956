"""``grad_norm``: the gradient norms a training step logs to watch for exploding gradients."""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["grad_norm"]


def grad_norm(module: nn.Module, norm_type: float | int | str, group_separator: str = "/") -> dict[str, torch.Tensor]:
    """The ``norm_type``-norm of each parameter's gradient, and of all of them as one vector.

    Keys as Lightning 2.6 writes them (so dashboards keep their panels):
    ``grad_2.0_norm/layer.weight`` for each parameter with a gradient and ``grad_2.0_norm_total``;
    parameters without a gradient are left out, and no gradient at all gives ``{}``. Typical use,
    in ``on_before_optimizer_step``: ``self.log_dict(grad_norm(self, norm_type=2))``.

    Args:
        module: the module whose parameters are read.
        norm_type: p of the p-norm (a number, or ``"inf"``).
        group_separator: between the group and the parameter name (loggers group on it).

    Raises:
        ValueError: ``norm_type`` is not a positive number.
    """
    p = float(norm_type)
    if not p > 0:
        raise ValueError(f"`norm_type` must be a positive number or 'inf', got {norm_type!r}")
    prefix = f"grad_{p}_norm"
    norms = {
        f"{prefix}{group_separator}{name}": torch.linalg.vector_norm(param.grad.detach(), ord=p)
        for name, param in module.named_parameters()
        if param.grad is not None
    }
    if norms:
        norms[f"{prefix}_total"] = torch.linalg.vector_norm(torch.stack(list(norms.values())), ord=p)
    return norms
