"""Overrides of old hook names: detected at class definition, warned once, called at the matching step."""

from __future__ import annotations

import datetime
import warnings

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import compat
import strategies
from compat._warnings import CompatDeprecationWarning


def _quiet(factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory()


def _ours(rec):
    return [w for w in rec if issubclass(w.category, CompatDeprecationWarning)]


class Recorder(strategies.TrainModule):
    """A module that records, in a list shared with the test, what happened when."""

    def __init__(self, log: list) -> None:
        super().__init__()
        self.events = log
        self.layer = None

    def setup(self, stage: str) -> None:
        self.events.append(("module.setup", dist.is_initialized()))
        if self.layer is None:
            self.layer = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader() -> DataLoader:
    x = torch.randn(8, 2, generator=torch.Generator().manual_seed(0))
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def _fit(trainer, module) -> None:
    try:
        trainer.fit(module, _loader())
    finally:
        trainer.strategy.close()


def _trainer(**kwargs):
    return _quiet(lambda: compat.Trainer(max_epochs=1, enable_progress_bar=False, **kwargs))


# -- DDPPlugin: init_ddp_connection / pre_dispatch / post_dispatch ------------------------------------


def _legacy_ddp(events: list):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")

        class LegacyDDP(compat.plugins.DDPPlugin):
            def init_ddp_connection(self, global_rank=None, world_size=None):
                events.append(("init_ddp_connection", dist.is_initialized()))
                super().init_ddp_connection(global_rank, world_size)
                events.append(("init_ddp_connection.after_super", dist.is_initialized()))

            def pre_dispatch(self):
                events.append(("pre_dispatch", type(self.model).__name__, len(self.optimizers)))
                super().pre_dispatch()

            def post_dispatch(self):
                events.append(("post_dispatch", type(self.model).__name__))
                super().post_dispatch()

    return LegacyDDP, rec


def test_ddp_overrides_are_called_in_the_new_order():
    events: list = []
    LegacyDDP, rec = _legacy_ddp(events)
    names = [str(w.message).split("`")[1] for w in _ours(rec)]
    assert names == ["DDPPlugin", "LegacyDDP.init_ddp_connection", "LegacyDDP.pre_dispatch", "LegacyDDP.post_dispatch"]
    trainer = _trainer(strategy=_quiet(LegacyDDP), accelerator="cpu", devices=1, record_hooks=True)
    _fit(trainer, Recorder(events))
    assert events == [
        ("init_ddp_connection", False),  # the override is what initialises the process group ...
        ("init_ddp_connection.after_super", True),
        ("module.setup", True),  # ... before the user's setup hooks
        ("pre_dispatch", "DistributedDataParallel", 1),  # after move, wrap and optimizers
        ("post_dispatch", "DistributedDataParallel"),  # before the wrapper is released
    ]
    record = [c.name for c in trainer.hook_record]
    assert record.index("process_group.init") < record.index("module.setup")


def test_subclass_of_a_user_plugin_is_not_warned_again():
    LegacyDDP, _ = _legacy_ddp([])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")

        class Child(LegacyDDP):
            pass

    assert _ours(rec) == []
    assert Child.setup_distributed is LegacyDDP.setup_distributed


def test_old_name_on_a_new_style_subclass_reaches_the_new_override():
    calls = []

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class NewStyleOnOld(compat.plugins.DDPPlugin):
            def setup_distributed(self):
                calls.append("setup_distributed")

        plugin = NewStyleOnOld()
    with pytest.warns(CompatDeprecationWarning, match="init_ddp_connection"):
        plugin.init_ddp_connection()
    assert calls == ["setup_distributed"]


def test_super_from_a_legacy_override_does_not_recurse():
    """`super().init_ddp_connection()` reaches the base behaviour, never the bridge back to the override."""
    events: list = []
    LegacyDDP, _ = _legacy_ddp(events)
    trainer = _trainer(strategy=_quiet(LegacyDDP), accelerator="cpu", devices=1)
    try:
        trainer.strategy.setup_environment()
        assert dist.is_initialized()
    finally:
        trainer.strategy.close()
    assert [e[0] for e in events] == ["init_ddp_connection", "init_ddp_connection.after_super"]


def test_defining_old_and_new_name_is_a_type_error():
    with pytest.raises(TypeError, match="both `init_ddp_connection`.*`setup_distributed`"):
        _quiet(
            lambda: type(
                "Both",
                (compat.plugins.DDPPlugin,),
                {
                    "init_ddp_connection": lambda self, *a: None,
                    "setup_distributed": lambda self: None,
                    "__module__": __name__,
                },
            )
        )


def test_override_that_forgets_the_process_group_is_a_clear_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class Forgetful(compat.plugins.DDPPlugin):
            def init_ddp_connection(self, global_rank=None, world_size=None):
                pass

    trainer = _trainer(strategy=_quiet(Forgetful), accelerator="cpu", devices=1)
    with pytest.raises(RuntimeError, match="without initialising the process group"):
        trainer.strategy.setup_environment()
    trainer.strategy.close()


# -- overrides with no bridge -----------------------------------------------------------------------


def test_start_training_override_errors_only_when_used():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")

        class Looping(compat.plugins.DDPPlugin):
            def start_training(self, trainer):
                trainer.run_train()

    (msg,) = [str(w.message) for w in _ours(rec) if "Looping.start_training" in str(w.message)]
    assert "NOT called" in msg
    plugin = _quiet(Looping)  # defining and building it breaks nothing
    with pytest.raises(TypeError, match="start_training") as err:
        _trainer(strategy=plugin, accelerator="cpu", devices=1)
    assert "launcher" in str(err.value) or "setup" in str(err.value)
    # the plain Trainer refuses it too, before any process group exists
    trainer = strategies.Trainer(strategy=plugin, accelerator="cpu", devices=1)
    with pytest.raises(TypeError, match="start_training"):
        trainer.fit(Recorder([]), _loader())
    assert not dist.is_initialized()


def test_new_process_override_on_spawn_plugin():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class Spawner(compat.plugins.DDPSpawnPlugin):
            def new_process(self, process_idx, trainer, mp_queue):
                pass

    with pytest.raises(TypeError, match="new_process"):
        _trainer(strategy=_quiet(Spawner), accelerator="cpu", devices=1)


# -- ClusterEnvironment ------------------------------------------------------------------------------


def test_environment_old_methods_serve_the_new_properties_and_super_works():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")

        class Env(compat.plugins.LightningEnvironment):
            def master_address(self):
                return "10.0.0.1"

            def master_port(self):
                return super().master_port() + 0  # reaches LocalEnvironment.main_port, no recursion

            def creates_children(self):
                return True

    assert len(_ours(rec)) == 4  # the class + 3 methods
    env = _quiet(Env)
    try:
        assert env.main_address == "10.0.0.1"
        assert env.main_port == strategies.LocalEnvironment.main_port.fget(env)
        assert env.creates_processes_externally is True
        assert env.master_address() == "10.0.0.1"  # the user's own method still works
    finally:
        env.teardown()


def test_old_method_on_a_new_environment_forwards():
    env = compat.plugins.TorchElasticEnvironment.__mro__[1]  # strategies.TorchElasticEnvironment
    assert env is strategies.TorchElasticEnvironment
    local = _quiet(compat.plugins.LightningEnvironment)
    with pytest.warns(CompatDeprecationWarning, match="master_address"):
        assert local.master_address() == local.main_address


def test_abstract_old_method_through_super_is_explained():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class Env(compat.plugins.ClusterEnvironment):
            def master_address(self):
                return super().master_address()

            main_port = 1
            creates_processes_externally = False

            def world_size(self):
                return 1

            def set_world_size(self, size):
                pass

            def global_rank(self):
                return 0

            def set_global_rank(self, rank):
                pass

            def local_rank(self):
                return 0

            def node_rank(self):
                return 0

    with pytest.raises(NotImplementedError, match="abstract"):
        _ = Env().main_address


# -- Accelerator container ---------------------------------------------------------------------------


def test_accelerator_setup_override_runs_after_setup_hooks():
    events: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class Acc(compat.accelerators.CPUAccelerator):
            def setup(self, trainer, model):
                events.append(("accelerator.setup", model.layer is not None, len(trainer.strategy.optimizers)))
                super().setup(trainer, model)
                events.append(("accelerator.setup.after_super", len(trainer.strategy.optimizers)))

            def post_dispatch(self):
                events.append(("accelerator.post_dispatch",))

        acc = Acc(
            precision_plugin=compat.plugins.PrecisionPlugin(),
            training_type_plugin=compat.plugins.SingleDevicePlugin("cpu"),
        )
    trainer = _trainer(accelerator=acc)
    assert isinstance(trainer.strategy, compat.plugins.SingleDevicePlugin)
    assert isinstance(trainer.strategy.precision, compat.plugins.PrecisionPlugin)
    _fit(trainer, Recorder(events))
    assert events == [
        ("module.setup", False),
        ("accelerator.setup", True, 0),
        ("accelerator.setup.after_super", 1),
        ("accelerator.post_dispatch",),
    ]


def test_accelerator_container_without_plugin_uses_the_trainer_arguments():
    events: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class Acc(compat.accelerators.CPUAccelerator):
            def setup(self, trainer, model):
                events.append("setup")  # no super(): the strategy's setup still happens afterwards

        trainer = compat.Trainer(accelerator=Acc(), num_processes=1, max_epochs=1, enable_progress_bar=False)
    _fit(trainer, Recorder(events))
    assert events == [("module.setup", False), "setup"]


# -- module and callbacks ----------------------------------------------------------------------------


def test_configure_sharded_model_and_callback_hooks():
    events: list = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class Module(compat.LightningModule):
            def __init__(self):
                super().__init__()
                self.layer = nn.Linear(2, 1)

            def configure_sharded_model(self):
                events.append("configure_sharded_model")

            def training_step(self, batch, batch_idx):
                x, y = batch
                return nn.functional.mse_loss(self.layer(x), y)

            def configure_optimizers(self):
                return torch.optim.SGD(self.parameters(), lr=0.1)

        class Base(compat.Callback):
            def on_before_accelerator_backend_setup(self, trainer, pl_module):
                events.append("on_before_accelerator_backend_setup")

        class CB(Base):  # a new-style setup on a subclass of a legacy callback calling super()
            def setup(self, trainer, module, stage):
                events.append("setup")
                super().setup(trainer, module, stage)

            def on_configure_sharded_model(self, trainer, pl_module):
                events.append("on_configure_sharded_model")

    trainer = _trainer(accelerator="cpu", devices=1, callbacks=[CB(), Base()], record_hooks=True)
    _fit(trainer, Module())
    assert events == [
        "setup",
        "on_before_accelerator_backend_setup",
        "on_configure_sharded_model",
        "on_before_accelerator_backend_setup",
        "configure_sharded_model",
    ]
    # calling the old name on a module reaches configure_model
    module = Module()
    assert module.configure_model() is None
    assert events[-1] == "configure_sharded_model"


def test_precision_master_params_override_is_main_params():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")

        class P(compat.plugins.PrecisionPlugin):
            def master_params(self, optimizer):
                return ["mine", *super().master_params(optimizer)]

    opt = torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1)
    assert P().main_params(opt)[0] == "mine"
    assert len(P().main_params(opt)) == 3


# -- two real processes: DDP-spawn ----------------------------------------------------------------------


class SpawnModule(strategies.TrainModule):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.layer = nn.Linear(2, 1)

    def setup(self, stage):
        self.group_in_setup = float(dist.is_initialized() and dist.get_world_size() == 2)
        self.override_before_setup = float(getattr(self.trainer.strategy, "called", False))

    def on_train_start(self):  # Lightning refuses self.log in setup
        self.log("group_in_setup", self.group_in_setup)
        self.log("override_before_setup", self.override_before_setup)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


with warnings.catch_warnings():
    warnings.simplefilter("ignore")

    class SpawnDDP(compat.plugins.DDPSpawnPlugin):
        def init_ddp_connection(self, global_rank=None, world_size=None):
            assert not dist.is_initialized()
            super().init_ddp_connection(global_rank, world_size)
            self.called = dist.is_initialized() and dist.get_world_size() == 2


def test_spawn_plugin_init_ddp_connection_in_two_processes():
    trainer = _trainer(strategy=_quiet(SpawnDDP), accelerator="cpu", devices=2, max_steps=1)
    trainer.strategy.timeout = datetime.timedelta(seconds=120)
    trainer.fit(SpawnModule(), _loader())
    assert trainer.callback_metrics["group_in_setup"].item() == 1.0
    assert trainer.callback_metrics["override_before_setup"].item() == 1.0
    assert not dist.is_initialized()
