"""Objects built from old names pickle and load; isinstance holds both ways for the class aliases."""

from __future__ import annotations

import pickle
import warnings

import pytest
import torch

import compat
import strategies
from compat._warnings import CompatDeprecationWarning


@pytest.fixture(autouse=True)
def _reset():
    compat._reset_warned()


def _quiet(factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory()


with warnings.catch_warnings():
    warnings.simplefilter("ignore")

    class UserDDP(compat.plugins.DDPPlugin):
        def init_ddp_connection(self, global_rank=None, world_size=None):
            super().init_ddp_connection(global_rank, world_size)

    class UserEnv(compat.plugins.LightningEnvironment):
        def master_port(self):
            return 4242


OLD_NEW = [
    (lambda: compat.plugins.DDPPlugin(find_unused_parameters=True), strategies.DDPStrategy, strategies.DDPStrategy),
    (lambda: compat.plugins.DDPSpawnPlugin(), strategies.DDPSpawnStrategy, lambda: strategies.DDPSpawnStrategy()),
    (
        lambda: compat.plugins.SingleDevicePlugin("cpu"),
        strategies.SingleDeviceStrategy,
        lambda: strategies.SingleDeviceStrategy("cpu"),
    ),
    (lambda: compat.plugins.LightningEnvironment(), strategies.LocalEnvironment, strategies.LocalEnvironment),
    (lambda: compat.plugins.PrecisionPlugin(), strategies.Precision, strategies.Precision),
    (
        lambda: compat.plugins.MixedPrecisionPlugin("bf16", "cpu"),
        strategies.MixedPrecision,
        lambda: strategies.MixedPrecision("bf16-mixed", "cpu"),
    ),
    (lambda: compat.accelerators.CPUAccelerator(), strategies.CPUAccelerator, strategies.CPUAccelerator),
]


@pytest.mark.parametrize("make_old, new_cls, make_new", OLD_NEW, ids=lambda v: getattr(v, "__name__", "f"))
def test_pickle_roundtrip_and_isinstance_both_ways(make_old, new_cls, make_new):
    old = _quiet(make_old)
    old_cls = type(old)
    loaded = pickle.loads(pickle.dumps(old))
    assert type(loaded) is old_cls
    assert isinstance(loaded, new_cls) and isinstance(loaded, old_cls)
    # the other way: an object built with the new API passes an isinstance check against the old name
    new = make_new()
    assert isinstance(new, old_cls)
    assert issubclass(new_cls, old_cls) and issubclass(old_cls, new_cls)


def test_unrelated_new_objects_are_not_instances_of_old_names():
    assert not isinstance(strategies.SingleDeviceStrategy("cpu"), compat.plugins.DDPPlugin)
    assert not isinstance(strategies.Precision(), compat.plugins.MixedPrecisionPlugin)
    assert isinstance(strategies.DDPStrategy(), compat.plugins.ParallelPlugin)
    assert isinstance(strategies.DDPStrategy(), compat.plugins.TrainingTypePlugin)


def test_user_subclasses_keep_ordinary_isinstance():
    plugin = _quiet(UserDDP)
    assert isinstance(plugin, UserDDP) and isinstance(plugin, strategies.DDPStrategy)
    assert not isinstance(strategies.DDPStrategy(), UserDDP)


def test_user_subclass_pickles_with_state_and_bridges():
    plugin = _quiet(UserDDP)
    loaded = pickle.loads(pickle.dumps(plugin))
    assert type(loaded) is UserDDP
    # the bridge installed at class definition is on the class, so it survives pickling
    assert type(loaded).setup_distributed is type(plugin).setup_distributed
    env = _quiet(UserEnv)
    loaded_env = pickle.loads(pickle.dumps(env))
    assert loaded_env.main_port == 4242


def test_unpickling_is_silent():
    blobs = [pickle.dumps(_quiet(make)) for make, _, _ in OLD_NEW]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        for blob in blobs:
            pickle.loads(blob)
    assert not [w for w in rec if issubclass(w.category, CompatDeprecationWarning)]


def test_module_state_dict_of_old_module_loads_into_new():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class Old(compat.LightningModule):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(2, 2)

    class New(strategies.TrainModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(2, 2)

    old = Old()
    new = New()
    new.load_state_dict(old.state_dict())
    assert torch.equal(new.layer.weight, old.layer.weight)
    assert isinstance(new, compat.LightningModule)
