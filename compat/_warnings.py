"""The one deprecation category of ``compat`` and the function every shim warns through.

Standard library only (``import compat`` must not import torch).

Behaviour (docs/compat.md has the user-facing version):

* category ``CompatDeprecationWarning``, a ``DeprecationWarning`` subclass, so
  ``pytest.deprecated_call`` and ``-W error::DeprecationWarning`` work;
* shown by default: at import a ``default`` filter is added *for our category only*, unless the
  user configured warning filters themselves (``-W``/``PYTHONWARNINGS``, i.e. ``sys.warnoptions``);
* ``STRATEGY_COMPAT_DEPRECATION=error`` raises every one of them, on every rank;
  ``=ignore`` silences them;
* once per call site (``(message, file, line)``), whatever the filters say, except when the
  filters turn it into an error: then it raises every time;
* only on global rank 0; other ranks still raise when the filters (or the environment variable)
  say "error", so every rank fails the same way instead of rank 0 raising while the others wait
  in a collective;
* attributed to the user's line: the frame is found by walking out of ``compat``/``strategies``
  (and ``<frozen ...>``/``abc`` frames such as ``ABCMeta.__new__``), not by counting levels.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import warnings
from collections.abc import Iterator
from types import FrameType
from typing import Any

__all__ = ["CompatDeprecationWarning", "ENV_VAR", "deprecation_message", "warn_deprecated", "reset_warned"]

ENV_VAR = "STRATEGY_COMPAT_DEPRECATION"
MIGRATE_COMMAND = "python -m compat.migrate <path>"
# Every warning's text ends with this pointer to the deprecation schedule (generated from the table).
SCHEDULE = "docs/deprecations.md"


class CompatDeprecationWarning(DeprecationWarning):
    """An old PyTorch Lightning name was used through ``compat``; the message says what to use."""


# Shown by default (DeprecationWarning is hidden outside __main__), unless the user set filters.
if not sys.warnoptions:
    warnings.filterwarnings("default", category=CompatDeprecationWarning)

_PACKAGE_DIRS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name) + os.sep
    for name in ("compat", "strategies")
)
_ABC_FILES = {os.path.normcase(getattr(sys.modules.get("abc"), "__file__", "") or "")}
try:  # typing_extensions wrappers (deprecated/override) add frames too
    import typing_extensions as _te

    _ABC_FILES.add(os.path.normcase(_te.__file__))
except Exception:  # pragma: no cover - typing_extensions is a dependency
    pass

# (message, filename, lineno), or ("key", once_key) for a caller-given deduplication key.
_warned: set[tuple[Any, ...]] = set()
_lock = threading.Lock()
_state = threading.local()


def reset_warned() -> None:
    """Forget which call sites were warned (tests call it between cases)."""
    with _lock:
        _warned.clear()


@contextlib.contextmanager
def internal() -> Iterator[None]:
    """Suppress our warnings while ``compat`` itself builds old-style objects."""
    depth = getattr(_state, "depth", 0)
    _state.depth = depth + 1
    try:
        yield
    finally:
        _state.depth = depth


def _is_internal_file(filename: str) -> bool:
    if filename.startswith("<frozen"):
        return True
    path = os.path.abspath(filename)
    return path.startswith(_PACKAGE_DIRS) or os.path.normcase(path) in _ABC_FILES


def user_frame(start: FrameType | None = None) -> FrameType | None:
    """The innermost frame outside ``compat``/``strategies``/``abc``/``<frozen ...>``."""
    frame: FrameType | None = start if start is not None else sys._getframe(1)
    while frame is not None and _is_internal_file(frame.f_code.co_filename):
        frame = frame.f_back
    return frame


def stacklevel() -> int:
    """The ``stacklevel`` for a ``warnings.warn`` made by the caller that points at user code."""
    frame: FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and _is_internal_file(frame.f_code.co_filename):
        frame = frame.f_back
        level += 1
    return level


def global_rank() -> int:
    """This process's global rank, without importing torch (-1: a spawned worker not yet told its rank).

    A ``ddp_spawn`` worker re-imports the user's main module before it learns its rank; the parent
    already showed the warnings of that import, so the worker stays silent until then.
    """
    if os.environ.get("STRATEGIES_SPAWNED_WORKER") == "1" and "LOCAL_RANK" not in os.environ:
        return -1
    dist = sys.modules.get("torch.distributed")
    if dist is not None:
        try:
            if dist.is_available() and dist.is_initialized():
                return int(dist.get_rank())
        except Exception:
            pass
    for name in ("RANK", "SLURM_PROCID", "LOCAL_RANK"):
        value = os.environ.get(name)
        if value is not None:
            try:
                return int(value)
            except ValueError:
                continue
    return 0


def _filter_action(message: str, category: type[Warning], module: str, lineno: int) -> str:
    """The action Python's current filters give this warning (``warnings`` logic, read-only)."""
    for action, msg, cat, mod, ln in warnings.filters:
        if (
            (msg is None or msg.match(message))
            and issubclass(category, cat)
            and (mod is None or mod.match(module))
            and (ln == 0 or lineno == ln)
        ):
            return action
    return warnings.defaultaction  # type: ignore[attr-defined]  # documented, missing from typeshed


def _lookup(old: str, member: str | None, value: str | None) -> Any:
    try:
        from compat import renames
    except Exception:  # pragma: no cover - the table is standard library only
        return None
    for entry in getattr(renames, "RENAMES", ()):
        paths = {entry.old, renames.compat_path(entry.old), *entry.aliases, *map(renames.compat_path, entry.aliases)}
        if old in paths and entry.member == member and (value is None or entry.value == value):
            return entry
    return None


def _removal(entry: Any) -> str:
    if entry is not None:
        return entry.removed_in
    try:
        from compat.renames import PACKAGE_REMOVAL
    except Exception:  # pragma: no cover
        return "1.0"
    return PACKAGE_REMOVAL


def deprecation_message(
    old: str,
    new: str | None,
    *,
    member: str | None = None,
    value: str | None = None,
    old_display: str | None = None,
    lightning: str | None = None,
    hint: str = "",
    detail: str = "",
    replacement: str | None = None,
) -> str:
    """The message for one old name: old name, new name, removal version, the migrate command.

    ``old`` is the ``pytorch_lightning.`` (or ``compat.``) path of the old object (or of the
    member's owner); the table entry for it, when there is one, supplies the new names, the
    removal version and the hint; the arguments are the fallback. ``replacement`` names what to
    use instead of the entry's targets, for one use of the old name the table does not describe
    (`checkpoint_callback=ModelCheckpoint(...)` rather than a bool).
    """
    entry = _lookup(old, member, value)
    if replacement is not None:
        new, lightning = replacement, None
    elif entry is not None:
        new = entry.strategies or new
        lightning = entry.lightning or lightning
    if entry is not None:
        hint = hint or entry.hint
    short = old.rsplit(".", 1)[-1]
    if old_display is None:
        if value is not None:
            old_display = f"{short}({member}={value!r})"
        else:
            old_display = f"{short}.{member}" if member else short
    parts = [f"`{old_display}` is deprecated and will be removed in strategy-compat {_removal(entry)}"]
    if detail:
        parts[0] += f" ({detail})"
    if new:
        target = f"use `{new}` instead"
        if lightning and lightning != new:
            target += f" (Lightning 2.x: `{lightning}`)"
        parts.append(target)
    text = "; ".join(parts) + "."
    if hint:
        text += f" {hint.strip().rstrip('.')}."
    text += f" Run `{MIGRATE_COMMAND}` to update your code."
    return text


def warn_deprecated(message: str, *, once_key: Any = None, frame: FrameType | None = None) -> None:
    """Warn with ``CompatDeprecationWarning`` at the user's line, once per call site.

    ``once_key``, when given, deduplicates on it instead of the call site (class-definition and
    hook-override warnings: once per class and hook).
    """
    if getattr(_state, "depth", 0):
        return
    if SCHEDULE not in message:
        message = f"{message} Removal schedule: strategy-compat's {SCHEDULE}."
    mode = os.environ.get(ENV_VAR, "").strip().lower()
    if mode in ("ignore", "off", "0", "false"):
        return
    if mode == "error":
        raise CompatDeprecationWarning(message)
    user = frame if frame is not None else user_frame(sys._getframe(1))
    if user is not None:
        filename, lineno, globals_ = user.f_code.co_filename, user.f_lineno, user.f_globals
    else:  # pragma: no cover - only when called from inside our own package with no caller
        filename, lineno, globals_ = "<unknown>", 0, {}
    module = globals_.get("__name__", "<unknown>")
    action = _filter_action(message, CompatDeprecationWarning, module, lineno)
    if action == "ignore":
        return
    if action == "error":
        raise CompatDeprecationWarning(message)
    if global_rank() != 0:
        return
    key = ("key", once_key) if once_key is not None else (message, filename, lineno)
    with _lock:
        if key in _warned:
            return
        _warned.add(key)
    registry = globals_.setdefault("__warningregistry__", {}) if user is not None else None
    warnings.warn_explicit(
        message,
        CompatDeprecationWarning,
        filename,
        lineno,
        module=module,
        registry=registry,
    )
