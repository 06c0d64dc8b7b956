"""What two runs of one program leave behind, compared: files, checkpoints, CSV rows, TensorBoard scalars.

Shared by the side-by-side tests of real programs (tests/compat/test_real_programs.py: 1.x under
compat and after migrate; tests/strategies/test_lightning_programs.py: Lightning 2.6 and
strategies). Values agree at ``rtol=1e-5, atol=1e-7``: the same arithmetic in another order.
"""

from __future__ import annotations

import csv
import math
import pickle
import re
import types
from pathlib import Path
from typing import Any

RTOL, ATOL = 1e-5, 1e-7


def normalized(rel: str) -> str:
    """A file's path with what differs between any two runs (host, pid, time in event files) taken out."""
    return re.sub(r"events\.out\.tfevents\..*", "events.out.tfevents", rel)


def files(out: Path) -> dict[str, Path]:
    """Every file under ``out``, by its normalized relative path.

    Several event files in one folder (one per ``fit``/``test`` of a logger) are numbered in the
    order of their names (which start with the time), so none hides another.
    """
    found: dict[str, Path] = {}
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = normalized(str(path.relative_to(out)))
        key, count = rel, 1
        while key in found:
            count += 1
            key = f"{rel}.{count}"
        found[key] = path
    return found


class _StandIn:
    """What a pickled object of a class the test process cannot import (one defined in the
    program's own file, kept in its hyperparameters) is loaded as: its state, for comparing."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.args = args

    def __setstate__(self, state: object) -> None:
        self.state = state


class _Unpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        try:
            return super().find_class(module, name)
        except (AttributeError, ModuleNotFoundError):
            return type(name, (_StandIn,), {"__module__": module})


_TOLERANT_PICKLE = types.SimpleNamespace(**{**vars(pickle), "Unpickler": _Unpickler})


def load(path: Path) -> dict:
    """A file ``torch.save`` wrote, on the CPU; classes the test process lacks load as stand-ins."""
    import torch

    # our own runs' output, not a downloaded file: it may hold hyperparameter objects
    return torch.load(path, map_location="cpu", weights_only=False, pickle_module=_TOLERANT_PICKLE)


def state(path: Path) -> dict:
    """A checkpoint's ``state_dict``."""
    return dict(load(path).get("state_dict", {}))


def rows(path: Path) -> list[dict[str, str]]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def same_value(a: str, b: str) -> bool:
    """Two CSV cells: equal, or numbers within the tolerance."""
    if a == b:
        return True
    try:
        return math.isclose(float(a), float(b), rel_tol=RTOL, abs_tol=ATOL)
    except ValueError:
        return False


def assert_same_tensors(a: dict, b: dict, where: str) -> None:
    import torch

    assert a.keys() == b.keys(), f"{where}: keys differ: {sorted(set(a) ^ set(b))}"
    for key in a:
        torch.testing.assert_close(a[key], b[key], rtol=RTOL, atol=ATOL, msg=lambda d, k=key: f"{where}: {k}: {d}")


def assert_same_rows(left: Path, right: Path, where: str) -> None:
    rows_a, rows_b = rows(left), rows(right)
    assert len(rows_a) == len(rows_b), f"{where}: {len(rows_a)} rows != {len(rows_b)}"
    for ra, rb in zip(rows_a, rows_b, strict=True):
        assert ra.keys() == rb.keys(), f"{where}: columns {sorted(ra)} != {sorted(rb)}"
        assert all(same_value(ra[k], rb[k]) for k in ra), (where, ra, rb)


def scalars(event_file: Path) -> dict[str, list[tuple[int, float]]]:
    """TensorBoard scalars of one event file: tag -> [(step, value)], read by TensorBoard itself."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    events = EventAccumulator(str(event_file))
    events.Reload()
    return {tag: [(e.step, e.value) for e in events.Scalars(tag)] for tag in events.Tags()["scalars"]}


def assert_same_scalars(left: Path, right: Path, where: str) -> None:
    a, b = scalars(left), scalars(right)
    assert a.keys() == b.keys(), f"{where}: tags differ: {sorted(set(a) ^ set(b))}"
    for tag in a:
        steps_a, steps_b = [s for s, _ in a[tag]], [s for s, _ in b[tag]]
        assert steps_a == steps_b, f"{where}: {tag}: steps {steps_a} != {steps_b}"
        for (_, va), (_, vb) in zip(a[tag], b[tag], strict=True):
            assert math.isclose(va, vb, rel_tol=RTOL, abs_tol=ATOL), f"{where}: {tag}: {va} != {vb}"
