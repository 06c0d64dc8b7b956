"""Helpers Lightning programs import from ``lightning.pytorch.utilities``, and tools around runs.

The same names as Lightning 2.6 (``from lightning.pytorch.utilities import rank_zero_only``
becomes ``from strategies.utilities import rank_zero_only``):

- ``rank_zero_only``, ``rank_zero_info``, ``rank_zero_debug``, ``rank_zero_warn``,
  ``rank_zero_deprecation`` (``strategies.utilities.rank_zero``);
- ``grad_norm``: each parameter's gradient norm and their total, ready for ``self.log_dict``;
- ``is_overridden`` (``strategies.utilities.model_helpers``), ``seed_everything``,
  ``AttributeDict`` and ``move_data_to_device``.

``strategies.utilities.types``: the type aliases hooks are annotated with (``STEP_OUTPUT``,
``OptimizerLRScheduler``, ``EVAL_DATALOADERS``, ...).

``strategies.utilities.argparse``: command-line flags from a class's ``__init__`` for scripts
that keep their own ``ArgumentParser`` (``add_argparse_args(Trainer, parser)``,
``from_argparse_args(Trainer, args)``: 1.x's classmethods, which Lightning 2.0 removed).

And ``upgrade_checkpoint``: convert checkpoint files on disk (Lightning 1.2-1.5, older files of
this library) to the current format: ``python -m strategies.utilities.upgrade_checkpoint PATH...``.

Each name and submodule is imported on first use (``import strategies`` stays light).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the same names, for type checkers (``X as X`` marks a re-export)
    from strategies._data import move_data_to_device as move_data_to_device
    from strategies._seed import seed_everything as seed_everything
    from strategies.module import AttributeDict as AttributeDict
    from strategies.utilities._grads import grad_norm as grad_norm
    from strategies.utilities.model_helpers import is_overridden as is_overridden
    from strategies.utilities.rank_zero import rank_zero_debug as rank_zero_debug
    from strategies.utilities.rank_zero import rank_zero_deprecation as rank_zero_deprecation
    from strategies.utilities.rank_zero import rank_zero_info as rank_zero_info
    from strategies.utilities.rank_zero import rank_zero_only as rank_zero_only
    from strategies.utilities.rank_zero import rank_zero_warn as rank_zero_warn

_SUBMODULES = ("argparse", "model_helpers", "rank_zero", "types", "upgrade_checkpoint")
#: public name -> the module that defines it
_HOMES = {
    **{
        name: "strategies.utilities.rank_zero"
        for name in ("rank_zero_only", "rank_zero_info", "rank_zero_debug", "rank_zero_warn", "rank_zero_deprecation")
    },
    "grad_norm": "strategies.utilities._grads",
    "is_overridden": "strategies.utilities.model_helpers",
    "seed_everything": "strategies._seed",
    "AttributeDict": "strategies.module",
    "move_data_to_device": "strategies._data",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_SUBMODULES, *_HOMES])
