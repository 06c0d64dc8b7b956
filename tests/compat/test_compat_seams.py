"""compat extends ``strategies.Trainer`` only through its documented seams (DESIGN.md, Layout)."""

from __future__ import annotations

import ast
import warnings
from pathlib import Path

import pytest

import compat
import strategies
from compat._strategies import CompatRegistry
from compat.trainer import CompatHookCaller

COMPAT = Path(compat.__file__).resolve().parent


def _private_names(cls: type) -> set[str]:
    return {name for name in dir(cls) if name.startswith("_") and not name.startswith("__")}


def test_compat_trainer_defines_no_private_method_of_the_new_trainer():
    # Every class in compat/trainer.py (the Trainer shim and its hook caller): a method named like a
    # private member of strategies.Trainer or of strategies.HookCaller would override its internals.
    private = _private_names(strategies.Trainer) | _private_names(strategies.HookCaller)
    tree = ast.parse((COMPAT / "trainer.py").read_text())
    defined = {
        (cls.name, node.name)
        for cls in ast.walk(tree)
        if isinstance(cls, ast.ClassDef)
        for node in cls.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    assert ("Trainer", "fit") in defined  # the walk finds the methods
    clashes = sorted(f"{cls}.{name}" for cls, name in defined if name in private)
    assert clashes == [], f"compat overrides private methods of the new Trainer: {clashes}"


def test_compat_trainer_plugs_in_through_the_class_attributes():
    assert compat.Trainer.hooks_class is CompatHookCaller
    assert issubclass(CompatHookCaller, strategies.HookCaller)
    assert compat.Trainer.metrics_class is strategies.Trainer.metrics_class
    assert issubclass(compat.Trainer.optimization_class, strategies.AutomaticOptimization)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = compat.Trainer(accelerator="cpu", devices=1, logger=False, enable_checkpointing=False)
    assert type(trainer.hooks) is CompatHookCaller


def test_compat_never_reads_the_registrys_entries():
    readers = [p.name for p in COMPAT.rglob("*.py") if "._entries" in p.read_text()]
    assert readers == []


def test_the_compat_registry_is_a_live_view_with_the_bridged_classes():
    base = strategies.Trainer.registry.copy()
    view = CompatRegistry(base)
    assert type(view.create("ddp")).__module__ == "compat._strategies"
    assert type(base.create("ddp")) is strategies.DDPStrategy
    assert view.names() == base.names() and view.description("ddp") == base.description("ddp")
    base.register("later", strategies.SingleDeviceStrategy, "registered after the view was made")
    assert "later" in view and type(view.create("later")) is strategies.SingleDeviceStrategy
    view.register("through_view", strategies.SingleDeviceStrategy, "added through the view")
    assert "through_view" in base

    class Mine(strategies.SingleDeviceStrategy):
        pass

    view.replace("single_device", Mine)
    assert type(view.create("single_device")) is Mine
    assert type(base.create("single_device")) is strategies.SingleDeviceStrategy
    copied = view.copy()
    view.replace("single_device", strategies.SingleDeviceStrategy)
    assert type(copied.create("single_device")) is Mine  # a copy does not follow the view
    with pytest.raises(ValueError, match="not registered"):
        view.replace("nope", Mine)
