"""The API catalogs (compat/_catalog) against the releases and against the rename table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from compat import _catalog
from compat.renames import RENAMES, Kind, Rename

ROOT = Path(__file__).resolve().parents[2]

sys.path.insert(0, str(ROOT / "tools"))
import build_catalog as _build  # noqa: E402  (a repository script, not part of the package)

sys.path.remove(str(ROOT / "tools"))

# Old paths in the table that no release exported: compat re-exports these classes from
# ``compat.plugins`` for convenience, so the table names them there (their aliases are real).
NOT_IN_ANY_RELEASE = frozenset(
    {
        "pytorch_lightning.plugins.MixedPrecisionPlugin",
        "pytorch_lightning.plugins.LightningEnvironment",
        "pytorch_lightning.plugins.TorchElasticEnvironment",
        "pytorch_lightning.plugins.SLURMEnvironment",
    }
)

_CLASS_ENTRIES = {r.old: r for r in RENAMES if r.kind is Kind.CLASS}


def _owner_paths(entry: Rename) -> tuple[str, ...]:
    owner = _CLASS_ENTRIES.get(entry.old)
    return (entry.old, *owner.aliases) if owner else (entry.old,)


def _old_has_member(entry: Rename) -> bool:
    for path in _owner_paths(entry):
        for catalog in _catalog.old_with(path):
            if entry.kind in (Kind.ARGUMENT, Kind.ARGUMENT_VALUE):
                signature = catalog.signature(path)
                if signature is not None and signature.accepts(entry.member or ""):
                    return True
            elif catalog.has_member(path, entry.member or ""):
                return True
    return False


def _target_problems(entry: Rename, target: str) -> list[str]:
    """What of ``entry``'s ``target`` column the target's catalog does not have."""
    new = entry.target(target)
    catalog = _catalog.target(target)
    if new is None:
        return []
    if entry.kind in (Kind.CLASS, Kind.MODULE, Kind.FUNCTION):
        return [] if catalog.has(new) else [f"{entry.old_name} -> `{new}`: no such name in {catalog}"]
    if entry.kind in (Kind.ARGUMENT, Kind.ARGUMENT_VALUE):
        trainer = catalog.signature(catalog.trainer)
        assert trainer is not None
        problems = []
        for part in new.split(","):
            key, _, value = part.strip().partition("=")
            if not trainer.accepts(key):
                problems.append(f"{entry.old_name} -> `{key}=`: the {target} Trainer takes no such keyword")
            if key == "strategy" and value and value.strip("'\"") not in catalog.strategy_names:
                problems.append(f"{entry.old_name} -> `{part.strip()}`: {catalog} registers no such strategy")
        return problems
    owner = _CLASS_ENTRIES.get(entry.old)
    owner_new = owner.target(target) if owner else None
    if owner_new is None:
        return [f"{entry.old_name} -> `{new}`: its owner has no {target} replacement to carry it"]
    if catalog.has_member(owner_new, new):
        return []
    if not entry.automatic_for(target) and catalog.subclasses_defining(owner_new, new):
        return []  # a person moves it to the subclass that has it (the hint says which)
    return [f"{entry.old_name} -> `{owner_new}.{new}`: no such member in {catalog}"]


# ----------------------------------------------------------------------------------------------
# The loader


def test_old_constructor_order_is_read_from_the_release():
    old = _catalog.load("pytorch_lightning-1.2")
    signature = old.signature("pytorch_lightning.plugins.DDPPlugin")
    assert signature is not None
    assert signature.positional() == ("parallel_devices", "num_nodes", "cluster_environment", "sync_batchnorm")
    assert signature.get("num_nodes").default == "1"
    assert signature.var_keyword and not signature.var_positional
    assert signature.bind_positional(2) == ("parallel_devices", "num_nodes")
    assert signature.bind_positional(5) is None


def test_enum_defaults_compare_by_their_value():
    """``Timer(interval=Interval.step)`` (1.5) and ``Timer(interval="step")`` (strategies) agree:
    the catalog keeps an enum's member values, so no TODO says the default changed."""
    old = _catalog.load("pytorch_lightning-1.5")
    assert old.default_value("pytorch_lightning.callbacks.timer", "Interval.step") == "'step'"
    assert old.default_value("pytorch_lightning.trainer.states", "RunningStage.TRAINING") == "'train'"
    assert old.default_value("pytorch_lightning.callbacks.timer", "Interval.hourly") == "Interval.hourly"
    assert old.default_value("pytorch_lightning.callbacks.timer", "torch.float32") == "torch.float32"
    assert old.default_value("pytorch_lightning.callbacks.timer", "'step'") == "'step'"
    from codemods import _homes

    timer = "pytorch_lightning.callbacks.timer.Timer"
    assert _homes.call_changes("strategies", timer, "strategies.timer.Timer", 0, []) == []
    assert _homes.call_changes("lightning", timer, "lightning.pytorch.callbacks.timer.Timer", 0, []) == []


def test_an_enum_default_whose_value_changed_is_still_reported(monkeypatch):
    from codemods import _homes

    target = _catalog.target("strategies")
    real = target.signature

    def epoch_default(path, method="__init__"):
        text = "(self, duration=None, interval='epoch', verbose=True)"
        return _catalog.Signature.parse(text) if path == "strategies.timer.Timer" else real(path, method)

    monkeypatch.setattr(target, "signature", epoch_default)
    changes = _homes.call_changes(
        "strategies", "pytorch_lightning.callbacks.timer.Timer", "strategies.timer.Timer", 0, []
    )
    assert changes == ["`interval` defaults to 'epoch' now (was Interval.step)"]


def test_hierarchies_differ_between_old_and_new():
    old = _catalog.load("pytorch_lightning-1.5")
    new = _catalog.target("lightning")
    # In 1.x the spawn plugin was not a DDPPlugin; in 2.x DDP covers spawn with start_method.
    assert not old.is_subclass("pytorch_lightning.plugins.DDPSpawnPlugin", "pytorch_lightning.plugins.DDPPlugin")
    assert old.is_subclass("pytorch_lightning.plugins.DDPSpawnPlugin", "pytorch_lightning.plugins.ParallelPlugin")
    assert new.is_subclass("lightning.pytorch.strategies.DDPStrategy", "lightning.pytorch.strategies.Strategy")


def test_hooks_the_trainer_calls():
    old = _catalog.load("pytorch_lightning-1.5")
    new = _catalog.target("lightning")
    assert "training_epoch_end" in old.hooks("pytorch_lightning.LightningModule")
    assert "training_epoch_end" not in new.hooks("lightning.pytorch.LightningModule")
    assert "on_train_epoch_end" in new.hooks("lightning.pytorch.LightningModule")
    for name in ("_call_children_scripts", "init_ddp_connection"):
        assert name in _catalog.load("pytorch_lightning-1.2").hooks("pytorch_lightning.plugins.DDPPlugin")
        assert name not in new.members("lightning.pytorch.strategies.DDPStrategy")


def test_trainer_members_include_what_connectors_assign():
    old = _catalog.load("pytorch_lightning-1.2")
    assert old.has_member(old.trainer, "accelerator_backend")
    signature = old.signature("pytorch_lightning.Trainer")
    assert signature is not None and signature.accepts("distributed_backend")
    new = _catalog.target("lightning")
    assert not new.signature("lightning.pytorch.Trainer").accepts("gpus")


def test_strategies_catalog_matches_the_import():
    import strategies

    catalog = _catalog.target("strategies")
    for name in strategies.__all__:
        if isinstance(getattr(strategies, name), type):
            assert catalog.has(f"strategies.{name}"), name
    assert catalog.strategy_names == frozenset(strategies.STRATEGY_REGISTRY.names())


def test_unknown_catalog_names_the_valid_ones():
    with pytest.raises(ValueError, match="pytorch_lightning-1.2"):
        _catalog.load("pytorch_lightning-0.9")
    with pytest.raises(ValueError, match="lightning, strategies"):
        _catalog.target("fabric")


def test_loader_does_not_import_torch():
    code = "import sys; from compat import _catalog; _catalog.target('lightning'); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------------------------
# The rename table against the releases


@pytest.mark.parametrize(
    "entry", [r for r in RENAMES if r.kind in (Kind.CLASS, Kind.MODULE, Kind.FUNCTION)], ids=lambda r: r.old_name
)
def test_old_names_existed(entry):
    for path in (entry.old, *entry.aliases):
        if path in NOT_IN_ANY_RELEASE:
            assert not _catalog.old_with(path), f"`{path}` is in a release after all: drop the exception"
            continue
        assert _catalog.old_with(path), f"no release 1.2-1.5 has `{path}`"


@pytest.mark.parametrize("entry", [r for r in RENAMES if r.member is not None], ids=lambda r: r.old_name)
def test_old_members_existed(entry):
    assert _old_has_member(entry), f"no release 1.2-1.5 has `{entry.old_name}` ({entry.kind.value})"


@pytest.mark.parametrize("entry", RENAMES, ids=lambda r: f"{r.kind.value}:{r.old_name}")
def test_strategies_targets_exist(entry):
    assert _target_problems(entry, "strategies") == []


@pytest.mark.parametrize("entry", RENAMES, ids=lambda r: f"{r.kind.value}:{r.old_name}")
def test_lightning_targets_exist(entry):
    assert _target_problems(entry, "lightning") == []


def _lightning_objects():
    return sorted({r.lightning for r in RENAMES if r.lightning and r.kind in (Kind.CLASS, Kind.MODULE, Kind.FUNCTION)})


@pytest.mark.extras
@pytest.mark.parametrize("path", _lightning_objects())
def test_lightning_targets_import_from_installed_lightning(path):
    """Each name the Lightning column writes imports from the installed Lightning 2.x, and is
    not one of the deprecated aliases Lightning keeps only for old checkpoints (``_graveyard``)."""
    import importlib
    import warnings

    pytest.importorskip("lightning", reason="needs the lightning extra: pip install 'lightning==2.6.*'")
    module_name, _, name = path.rpartition(".")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecated alias warns when it is touched
        try:
            obj = importlib.import_module(path)
        except ModuleNotFoundError:
            obj = getattr(importlib.import_module(module_name), name)
    assert "_graveyard" not in getattr(obj, "__module__", obj.__name__)
    if isinstance(obj, type):
        assert obj.__name__ == name, f"`{path}` is an alias of {obj.__module__}.{obj.__qualname__}"


# ----------------------------------------------------------------------------------------------
# The committed catalogs against a fresh build


def test_strategies_catalog_is_current():
    committed = (_build.CATALOG_DIR / "strategies.json").read_text("utf-8")
    assert committed == _build.render(_build.build("strategies")), (
        "compat/_catalog/strategies.json is stale: run `python tools/build_catalog.py --only strategies`"
    )


@pytest.mark.extras
@pytest.mark.parametrize("name", list(_build.RELEASES))
def test_release_catalog_is_current(name):
    try:
        fresh = _build.render(_build.build_release(name))
    except RuntimeError as err:  # no network and no cached wheel
        pytest.skip(f"cannot fetch the wheel: {err}")
    committed = (_build.CATALOG_DIR / f"{name}.json").read_text("utf-8")
    assert committed == fresh, f"compat/_catalog/{name}.json is stale: run `python tools/build_catalog.py`"
