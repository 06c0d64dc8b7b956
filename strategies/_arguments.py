"""Checks and conversions of the Trainer's loop arguments (Lightning's meanings, clear errors)."""

from __future__ import annotations

import os
from typing import Any

import torch


def parse_max_time(max_time: Any) -> float | None:
    """Seconds from ``"DD:HH:MM:SS"``, a ``timedelta``, or a dict of ``timedelta`` fields; None for no limit."""
    from strategies.timer import parse_duration

    return parse_duration(max_time, "max_time=...")


def fast_dev_run_batches(fast_dev_run: int | bool) -> int:
    """How many batches ``fast_dev_run`` runs (0: off)."""
    if isinstance(fast_dev_run, bool):
        return int(fast_dev_run)
    if not isinstance(fast_dev_run, int) or fast_dev_run < 0:
        raise ValueError(f"`fast_dev_run={fast_dev_run!r}`: pass True, False or a number of batches >= 0.")
    return fast_dev_run


def check_loop_arguments(
    accumulate_grad_batches: Any,
    val_check_interval: Any,
    num_sanity_val_steps: Any,
    gradient_clip_algorithm: Any,
    check_val_every_n_epoch: Any,
) -> None:
    """Raise on a value Lightning would refuse, naming what to pass instead."""
    if not isinstance(accumulate_grad_batches, int) or accumulate_grad_batches < 1:
        raise ValueError(f"`accumulate_grad_batches={accumulate_grad_batches!r}`: pass an integer >= 1.")
    if isinstance(val_check_interval, int) and val_check_interval < 1:
        raise ValueError(f"`val_check_interval={val_check_interval}`: an integer is a number of batches >= 1.")
    if num_sanity_val_steps != float("inf") and (not isinstance(num_sanity_val_steps, int) or num_sanity_val_steps < 0):
        raise ValueError(f"`num_sanity_val_steps={num_sanity_val_steps!r}`: pass a count >= 0, or -1 for all batches.")
    if gradient_clip_algorithm not in (None, "norm", "value"):
        raise ValueError(f"`gradient_clip_algorithm={gradient_clip_algorithm!r}`: use 'norm' or 'value'.")
    if check_val_every_n_epoch is not None and (
        not isinstance(check_val_every_n_epoch, int) or check_val_every_n_epoch < 1
    ):
        raise ValueError(f"`check_val_every_n_epoch={check_val_every_n_epoch!r}`: pass an integer >= 1, or None.")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def check_steps_and_epochs(max_steps: Any, min_steps: Any, min_epochs: Any) -> None:
    """``max_steps``: -1 (no limit) or a count >= 0; ``min_steps``, ``min_epochs``: None or an integer.

    Lightning 2.6's ranges: it refuses ``max_steps < -1`` and takes any integer minimum (one below 0
    is no minimum).
    """
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < -1:
        raise ValueError(
            f"`max_steps={max_steps!r}`: pass a whole number of optimizer steps (0 or more), or -1 (the default) "
            "for no step limit."
        )
    for name, value in (("min_steps", min_steps), ("min_epochs", min_epochs)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise TypeError(f"`{name}={value!r}`: pass a whole number, or None (the default) for no minimum.")


def batch_limit(value: Any, name: str) -> int | float | None:
    """A ``limit_*_batches`` or ``val_check_interval`` value as Lightning 2.6 reads it.

    A float in [0.0, 1.0] is a fraction of the batches, an integer a number of batches, and a float
    above 1 with no fractional part (``2.0``) that number of batches; None is the default. Anything
    else raises, naming what to pass.
    """
    if value is None:
        return None
    if not _is_number(value):
        raise TypeError(
            f"`{name}={value!r}`: pass a fraction of the batches (a float in [0.0, 1.0]) or a number of batches "
            f"(an int); got `{type(value).__name__}`."
        )
    number: int | float = value
    if 0 <= number <= 1:
        return number
    if number > 1 and number % 1.0 == 0:
        return int(number)
    raise ValueError(
        f"`{name}={value!r}`: pass a fraction of the batches (a float in [0.0, 1.0]) or a number of batches "
        "(an int >= 0)."
    )


def check_val_schedule(val_check_interval: Any, check_val_every_n_epoch: Any) -> None:
    """A fraction of an epoch needs epochs to count in (Lightning's rule)."""
    if check_val_every_n_epoch is None and isinstance(val_check_interval, float):
        raise ValueError(
            f"`val_check_interval={val_check_interval}` is a fraction of an epoch, but `check_val_every_n_epoch=None` "
            "counts validation over epochs: pass `val_check_interval` as a number of batches (an int)."
        )


def check_gradient_clip_val(gradient_clip_val: Any) -> None:
    """None (no clipping) or a number, as Lightning 2.6."""
    if gradient_clip_val is not None and not _is_number(gradient_clip_val):
        raise TypeError(
            f"`gradient_clip_val={gradient_clip_val!r}`: pass a number (the largest gradient norm or value), or "
            "None (the default) for no clipping."
        )


def apply_determinism(deterministic: bool | str | None, benchmark: bool | None) -> None:
    """Set torch's deterministic and cuDNN benchmark flags in this process (Lightning's meanings).

    ``deterministic=True`` uses deterministic algorithms (and cuBLAS's workspace setting);
    ``"warn"`` only warns on a non-deterministic one. ``benchmark=None`` leaves cuDNN as it is,
    except that it is switched off when ``deterministic`` is on.
    """
    if deterministic not in (None, True, False, "warn"):
        raise ValueError(f"`deterministic={deterministic!r}`: pass True, False, 'warn' or None.")
    if deterministic:
        torch.use_deterministic_algorithms(True, warn_only=deterministic == "warn")
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    elif deterministic is False:
        torch.use_deterministic_algorithms(False)
    if benchmark is None and deterministic:
        benchmark = False
    if benchmark is not None:
        torch.backends.cudnn.benchmark = benchmark


_BAREBONES_OFF = (
    " - Checkpointing: `Trainer(enable_checkpointing=True)`",
    " - Progress bar: `Trainer(enable_progress_bar=True)`",
    " - Model summary: `Trainer(enable_model_summary=True)`",
    " - Logging: `Trainer(logger=True)`, `Trainer(log_every_n_steps>0)`, `LightningModule.log(...)`, "
    "`LightningModule.log_dict(...)`",
    " - Sanity checking: `Trainer(num_sanity_val_steps>0)`",
    " - Development run: `Trainer(fast_dev_run=True)`",
    " - Anomaly detection: `Trainer(detect_anomaly=True)`",
    " - Profiling: `Trainer(profiler=...)`",
)


def check_barebones(options: dict[str, Any]) -> None:
    """``Trainer(barebones=True)``: every feature that costs speed must be left off, as Lightning 2.6 says.

    ``options`` holds the Trainer's ``enable_checkpointing``, ``logger``, ``enable_progress_bar``,
    ``log_every_n_steps``, ``enable_model_summary``, ``num_sanity_val_steps``, ``fast_dev_run``,
    ``detect_anomaly`` and ``profiler`` as given; one turned on explicitly is a ``ValueError``
    (Lightning's messages). Then Lightning's note on what is off is logged; the Trainer turns them off.
    """
    why = {
        "enable_checkpointing": "Checkpointing can impact raw speed so it is disabled in barebones mode.",
        "logger": "Logging can impact raw speed so it is disabled in barebones mode.",
        "enable_progress_bar": "The progress bar can impact raw speed so it is disabled in barebones mode.",
        "log_every_n_steps": "Logging can impact raw speed so it is disabled in barebones mode.",
        "enable_model_summary": "Model summary can impact raw speed so it is disabled in barebones mode.",
        "num_sanity_val_steps": "Sanity checking can impact raw speed so it is disabled in barebones mode.",
        "fast_dev_run": "Development run is not meant for raw speed evaluation so it is disabled in barebones mode.",
        "detect_anomaly": "Anomaly detection can impact raw speed so it is disabled in barebones mode.",
        "profiler": "Profiling can impact raw speed so it is disabled in barebones mode.",
    }
    for name, value in options.items():
        explicit = ("logger", "log_every_n_steps", "num_sanity_val_steps", "profiler")
        on = value not in (None, False, 0) if name in explicit else value
        if on:
            raise ValueError(f"`Trainer(barebones=True, {name}={value!r})` was passed. {why[name]}")
    from strategies.utilities import rank_zero_info

    rank_zero_info(
        "You are running in `Trainer(barebones=True)` mode. All features that may impact raw speed have been "
        "disabled to facilitate analyzing the Trainer overhead. Specifically, the following features are "
        f"deactivated:{os.linesep}{os.linesep.join(_BAREBONES_OFF)}"
    )


def check_reload_every(value: Any) -> int:
    """``reload_dataloaders_every_n_epochs``: an int >= 0 (0: load once)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"`reload_dataloaders_every_n_epochs={value!r}`: pass an int >= 0 (0: load the loaders once).")
    return value
