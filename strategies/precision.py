"""Precision: fp32, and bf16/fp16 mixed precision through ``torch.autocast``."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

__all__ = ["Precision", "MixedPrecision", "PRECISION_VALUES"]

PRECISION_VALUES = ("32-true", "bf16-mixed", "16-mixed")


class Precision:
    """Full fp32 precision (``"32-true"``): the base every precision extends."""

    precision = "32-true"

    def forward_context(self) -> contextlib.AbstractContextManager:
        """The context the forward/step functions run in."""
        return contextlib.nullcontext()

    def module_init_context(self) -> contextlib.AbstractContextManager:
        """The context ``configure_model`` runs in (dtype of new parameters)."""
        return contextlib.nullcontext()

    def backward(self, loss: torch.Tensor, model: torch.nn.Module | None = None) -> None:
        """Back-propagate ``loss``."""
        loss.backward()

    def optimizer_step(self, optimizer: torch.optim.Optimizer, model: torch.nn.Module | None = None) -> Any:
        """Step ``optimizer``."""
        return optimizer.step()

    def unscale_gradients(self, optimizer: torch.optim.Optimizer) -> None:
        """Bring gradients back to their true scale before clipping (no-op without a scaler)."""

    def main_params(self, optimizer: torch.optim.Optimizer) -> Iterator[torch.nn.Parameter]:
        """The parameters the optimizer updates."""
        for group in optimizer.param_groups:
            yield from group["params"]

    def state_dict(self) -> dict[str, Any]:
        """What a checkpoint keeps of the precision (the grad scaler's state)."""
        return {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        """Restore what :meth:`state_dict` returned."""

    def teardown(self) -> None:
        """Release what the precision holds."""


class MixedPrecision(Precision):
    """Mixed precision with ``torch.autocast``: ``"bf16-mixed"``, or ``"16-mixed"`` with a grad scaler.

    Args:
        precision: ``"bf16-mixed"`` or ``"16-mixed"``.
        device_type: ``"cpu"`` or ``"cuda"``; fp16 autocast needs CUDA.
    """

    def __init__(self, precision: str, device_type: str) -> None:
        if precision not in ("bf16-mixed", "16-mixed"):
            raise ValueError(f"`MixedPrecision(precision={precision!r})`: expected 'bf16-mixed' or '16-mixed'.")
        if precision == "16-mixed" and device_type != "cuda":
            raise ValueError(
                f"`precision='16-mixed'` needs CUDA (fp16 autocast with a grad scaler); on `{device_type}` "
                "use `precision='bf16-mixed'` instead."
            )
        self.precision = precision
        self.device_type = device_type
        self._dtype = torch.bfloat16 if precision == "bf16-mixed" else torch.float16
        self.scaler = torch.amp.GradScaler("cuda") if precision == "16-mixed" else None

    def forward_context(self) -> contextlib.AbstractContextManager:
        return torch.autocast(self.device_type, dtype=self._dtype)

    def backward(self, loss: torch.Tensor, model: torch.nn.Module | None = None) -> None:
        if self.scaler is not None:
            loss = self.scaler.scale(loss)
        loss.backward()

    def optimizer_step(self, optimizer: torch.optim.Optimizer, model: torch.nn.Module | None = None) -> Any:
        if self.scaler is None:
            return optimizer.step()
        result = self.scaler.step(optimizer)
        self.scaler.update()
        return result

    def unscale_gradients(self, optimizer: torch.optim.Optimizer) -> None:
        if self.scaler is not None:
            self.scaler.unscale_(optimizer)

    def state_dict(self) -> dict[str, Any]:
        return self.scaler.state_dict() if self.scaler is not None else {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if self.scaler is not None and state:
            self.scaler.load_state_dict(state)
