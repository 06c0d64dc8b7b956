"""Precision: every name Lightning 2.6 accepts: fp32/fp64, bf16/fp16 mixed (``torch.autocast``) and true half."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Generator, Iterator
from typing import Any, ClassVar

import torch

__all__ = ["PRECISION_VALUES", "DoublePrecision", "HalfPrecision", "MixedPrecision", "Precision", "precision_for"]

PRECISION_VALUES = ("32-true", "16-mixed", "bf16-mixed", "16-true", "bf16-true", "64-true")
# Lightning's short names: 16 and "bf16" are mixed precision (and warned about), 32 and 64 are "true".
_ALIASES = {"16": "16-mixed", "bf16": "bf16-mixed", "32": "32-true", "64": "64-true"}


class Precision:
    """Full fp32 precision (``"32-true"``): the base every precision extends."""

    precision = "32-true"

    def forward_context(self) -> contextlib.AbstractContextManager[Any]:
        """The context the forward/step functions run in."""
        return contextlib.nullcontext()

    def module_init_context(self) -> contextlib.AbstractContextManager[Any]:
        """The context ``configure_model`` runs in (dtype of new parameters)."""
        return contextlib.nullcontext()

    def convert_module(self, module: torch.nn.Module) -> torch.nn.Module:
        """Cast the module's parameters for this precision (before it is wrapped); fp32 keeps them."""
        return module

    def convert_input(self, data: Any) -> Any:
        """Cast the floating-point tensors of a batch for this precision (before it is moved)."""
        return data

    def backward(self, loss: torch.Tensor, model: torch.nn.Module | None = None) -> None:
        """Back-propagate ``loss``."""
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated

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
        """Restore what ``state_dict`` returned."""

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
                f"`precision='16-mixed'` (also `16`, `'16'`) needs CUDA (fp16 autocast with a grad scaler); on "
                f"`{device_type}` use `precision='bf16-mixed'`. (Lightning 2.6 switches to 'bf16-mixed' with a "
                "warning; here the choice is yours.)"
            )
        self.precision = precision
        self.device_type = device_type
        self._dtype = torch.bfloat16 if precision == "bf16-mixed" else torch.float16
        self.scaler = torch.amp.GradScaler("cuda") if precision == "16-mixed" else None

    def forward_context(self) -> contextlib.AbstractContextManager[Any]:
        return torch.autocast(self.device_type, dtype=self._dtype)

    def backward(self, loss: torch.Tensor, model: torch.nn.Module | None = None) -> None:
        if self.scaler is not None:
            loss = self.scaler.scale(loss)
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated

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


class _CastPrecision(Precision):
    """Weights, new parameters and floating-point inputs all in one dtype."""

    _dtypes: ClassVar[dict[str, torch.dtype]] = {}

    def __init__(self, precision: str) -> None:
        if precision not in self._dtypes:
            raise ValueError(
                f"`{type(self).__name__}(precision={precision!r})`: expected one of {sorted(self._dtypes)}."
            )
        self.precision = precision
        self._dtype = self._dtypes[precision]

    def module_init_context(self) -> contextlib.AbstractContextManager[Any]:
        return _default_dtype(self._dtype)

    def forward_context(self) -> contextlib.AbstractContextManager[Any]:
        return _default_dtype(self._dtype)

    def convert_module(self, module: torch.nn.Module) -> torch.nn.Module:
        return module.to(dtype=self._dtype)

    def convert_input(self, data: Any) -> Any:
        from strategies._data import apply_to_tensors

        return apply_to_tensors(data, lambda t: t.to(self._dtype) if t.is_floating_point() else t)


class HalfPrecision(_CastPrecision):
    """All weights and inputs in fp16 (``"16-true"``) or bf16 (``"bf16-true"``): no fp32 master copy.

    Args:
        precision: ``"16-true"`` or ``"bf16-true"``.
    """

    _dtypes: ClassVar[dict[str, torch.dtype]] = {"16-true": torch.float16, "bf16-true": torch.bfloat16}

    def __init__(self, precision: str = "bf16-true") -> None:
        super().__init__(precision)


class DoublePrecision(_CastPrecision):
    """All weights and inputs in fp64 (``"64-true"``)."""

    _dtypes: ClassVar[dict[str, torch.dtype]] = {"64-true": torch.float64}

    def __init__(self, precision: str = "64-true") -> None:
        super().__init__(precision)


@contextlib.contextmanager
def _default_dtype(dtype: torch.dtype) -> Generator[None, None, None]:
    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def precision_for(precision: Any, device_type: str) -> Precision:
    """The precision for a Trainer's ``precision=`` on ``device_type`` ("cpu"/"cuda"), as Lightning 2.6 names them.

    An unknown name, or one this device cannot run, is a ``ValueError`` naming what to pass.
    """
    name = str(precision)
    if name in _ALIASES:
        if name in ("16", "bf16"):
            warnings.warn(
                f"`precision={precision!r}` is Lightning's old name for {_ALIASES[name]!r}; pass "
                f"`precision={_ALIASES[name]!r}`.",
                UserWarning,
                stacklevel=5,
            )
        name = _ALIASES[name]
    if name not in PRECISION_VALUES:
        valid = ", ".join(map(repr, (*PRECISION_VALUES, 16, "16", "bf16", 32, "32", 64, "64")))
        raise ValueError(f"Unknown `precision={precision!r}`. Valid values: {valid}.")
    if name.startswith("bf16") and device_type == "cuda" and not torch.cuda.is_bf16_supported():
        raise ValueError(f"`precision={precision!r}`: this GPU has no bf16; use '16-mixed' or '32-true'.")
    if name == "32-true":
        return Precision()
    if name in ("16-mixed", "bf16-mixed"):
        return MixedPrecision(name, device_type)
    if name == "64-true":
        return DoublePrecision()
    return HalfPrecision(name)
