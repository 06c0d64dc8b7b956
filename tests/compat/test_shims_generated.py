"""One test per entry of ``compat.renames.RENAMES`` (generated from the table).

For an entry with a runtime shim: the old name works, warns exactly once with
``CompatDeprecationWarning`` at this file's line, the message names the old name, the new name,
the removal version and ``python -m compat.migrate``, and it behaves as the new name.
For an entry with no runtime equivalent: the documented error, carrying the table's hint.

Every entry must have an exercise below (``EXERCISES``); a new table entry without one fails
``test_every_entry_has_an_exercise`` until someone writes it.
"""

from __future__ import annotations

import importlib
import os
import warnings
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import pytest
import torch
import trainer_exercises
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import compat
import strategies
from compat import renames
from compat._warnings import CompatDeprecationWarning
from compat.renames import RENAMES, Kind, Rename


@contextmanager
def recorded():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        yield rec


def ours(rec: list) -> list:
    return [w for w in rec if issubclass(w.category, CompatDeprecationWarning)]


def check_one(rec: list, entry: Rename, needle: str | None = None, where: str = __file__) -> warnings.WarningMessage:
    """Exactly one of our warnings about ``entry`` (``needle`` in it), at ``where``, with the parts."""
    mine = ours(rec)
    short = entry.old.rsplit(".", 1)[-1]
    needle = needle or (entry.member or short)
    hits = [w for w in mine if needle in str(w.message)]
    assert len(hits) == 1, f"expected one warning mentioning {needle!r}, got {[str(w.message) for w in mine]}"
    w = hits[0]
    text = str(w.message)
    assert os.path.samefile(w.filename, where), f"attributed to {w.filename}:{w.lineno}, not the caller"
    assert entry.removed_in in text
    assert "python -m compat.migrate <path>" in text
    if entry.strategies and entry.kind in (Kind.CLASS, Kind.METHOD, Kind.PROPERTY, Kind.ATTRIBUTE, Kind.HOOK):
        assert entry.strategies in text, text
    return w


def resolve(path: str) -> Any:
    module, _, name = path.rpartition(".")
    return getattr(importlib.import_module(module), name)


def compat_obj(entry: Rename) -> Any:
    return resolve(renames.compat_path(entry.old))


class Tiny(strategies.TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def loader() -> DataLoader:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 2, generator=g)
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4)


def fit(trainer: Any, module: Any = None) -> Any:
    module = module or Tiny()
    try:
        trainer.fit(module, loader())
    finally:
        trainer.strategy.close()
    return module


def quiet(factory: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory()


def new_trainer(**kwargs: Any) -> Any:
    return quiet(
        lambda: compat.Trainer(accelerator="cpu", devices=1, enable_progress_bar=False, max_epochs=1, **kwargs)
    )


# -- classes --------------------------------------------------------------------------------------


def _env_subclass(base: type) -> type:
    class Env(base):  # an old-style environment
        def creates_children(self):
            return False

        def master_address(self):
            return "127.0.0.1"

        def master_port(self):
            return 12345

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

    return Env


def _subclass(base: type) -> type:
    return type("UserSub", (base,), {"__module__": __name__})


CLASS_FACTORIES: dict[str, Callable[[type], Any]] = {
    "TrainingTypePlugin": lambda c: type(
        "UserTTP", (c,), {"root_device": property(lambda s: torch.device("cpu")), "__module__": __name__}
    ),
    "ParallelPlugin": lambda c: c(),
    "SingleDevicePlugin": lambda c: c("cpu"),
    "DDPPlugin": lambda c: c(),
    "DDPSpawnPlugin": lambda c: c(),
    "DeepSpeedPlugin": lambda c: c(),
    "DataParallelPlugin": lambda c: c(),
    "Accelerator": lambda c: c(),
    "CPUAccelerator": lambda c: c(),
    "GPUAccelerator": lambda c: c(),
    "NativeMixedPrecisionPlugin": lambda c: c("bf16", "cpu"),
    "MixedPrecisionPlugin": lambda c: c("bf16", "cpu"),
    "PrecisionPlugin": lambda c: c(),
    "ClusterEnvironment": _env_subclass,
    "LightningEnvironment": lambda c: c(),
    "TorchElasticEnvironment": lambda c: c(),
    "SLURMEnvironment": lambda c: c(),
    "Trainer": lambda c: c(accelerator="cpu", devices=1),
    "LightningModule": _subclass,
    "LightningDataModule": _subclass,
    "Callback": _subclass,
    # compat.callbacks hands out the class itself (no shim class): its warning is at the name's use
    "ProgressBar": lambda c: importlib.import_module("compat.callbacks").ProgressBar(refresh_rate=5),
    "ProgressBarBase": lambda c: _subclass(importlib.import_module("compat.callbacks").ProgressBarBase),
}
UNAVAILABLE_CLASSES = {
    "Plugin",
    "DDP2Plugin",
    "DDPShardedPlugin",
    "DDPSpawnShardedPlugin",
    "DDPFullyShardedPlugin",
    "HorovodPlugin",
    "TPUSpawnPlugin",
    "SingleTPUPlugin",
    "RPCPlugin",
    "RPCSequentialPlugin",
    "TPUAccelerator",
    "ApexMixedPrecisionPlugin",
    "ShardedNativeMixedPrecisionPlugin",
    "FullyShardedNativeMixedPrecisionPlugin",
    "TPUHalfPrecisionPlugin",
    "DeepSpeedPrecisionPlugin",
}


def exercise_class(entry: Rename) -> None:
    short = entry.old.rsplit(".", 1)[-1]
    cls = compat_obj(entry)
    if short in UNAVAILABLE_CLASSES:
        with pytest.raises(NotImplementedError) as err:
            cls()
        assert short in str(err.value) and "python -m compat.migrate" in str(err.value)
        if entry.hint:
            assert entry.hint.rstrip(".") in str(err.value)
        return
    with recorded() as rec:
        obj = CLASS_FACTORIES[short](cls)
    w = check_one(rec, entry, needle=f"{short}`")
    assert w.category is CompatDeprecationWarning
    new = resolve(entry.strategies)
    if isinstance(obj, type):
        assert issubclass(obj, new)
    else:
        assert isinstance(obj, new)
        assert isinstance(obj, cls)


def exercise_module(entry: Rename) -> None:
    module = importlib.import_module(renames.compat_path(entry.old))
    with recorded() as rec:
        env = module.LightningEnvironment()
    check_one(rec, entry, needle="LightningEnvironment")
    assert isinstance(env, strategies.LocalEnvironment)


# -- members: Trainer -----------------------------------------------------------------------------


def exercise_trainer_internal(entry: Rename) -> None:
    trainer = new_trainer()
    with pytest.raises(AttributeError) as err:
        getattr(trainer, entry.member)
    assert entry.member in str(err.value) and "compat.migrate" in str(err.value)
    if entry.hint:
        assert entry.hint.rstrip(".") in str(err.value)


TRAINER_ATTRIBUTES: dict[str, Callable[[Any, Any], None]] = {
    "accelerator_backend": lambda t, v: v is t.strategy or pytest.fail("not the strategy"),
    "training_type_plugin": lambda t, v: v is t.strategy or pytest.fail("not the strategy"),
    "on_gpu": lambda t, v: v is False or pytest.fail(),
    "on_cpu": lambda t, v: v is True or pytest.fail(),
    "on_tpu": lambda t, v: v is False or pytest.fail(),
    "use_tpu": lambda t, v: v is False or pytest.fail(),
    "use_dp": lambda t, v: v is False or pytest.fail(),
    "use_ddp": lambda t, v: v is False or pytest.fail(),
    "use_ddp2": lambda t, v: v is False or pytest.fail(),
    "use_horovod": lambda t, v: v is False or pytest.fail(),
    "use_single_gpu": lambda t, v: v is False or pytest.fail(),
}


def exercise_trainer_attribute(entry: Rename) -> None:
    trainer = new_trainer()
    with recorded() as rec:
        value = getattr(trainer, entry.member)
    check_one(rec, entry, needle=f"Trainer.{entry.member}")
    TRAINER_ATTRIBUTES[entry.member](trainer, value)


def _trainer_kwargs_for_value(member: str, value: str) -> dict[str, Any]:
    return {member: value, "devices": 1}


def exercise_argument_value(entry: Rename) -> None:
    kwargs = _trainer_kwargs_for_value(entry.member, entry.value)
    if entry.strategies is None or not entry.automatic:  # a person decides: refused with the hint
        with pytest.raises(ValueError) as err:
            quiet(lambda: compat.Trainer(**kwargs))
        assert repr(entry.value) in str(err.value)
        if entry.hint:
            assert entry.hint.rstrip(".") in str(err.value)
        return
    expected = {
        "ddp": strategies.DDPStrategy,
        "ddp_spawn": strategies.DDPSpawnStrategy,
        "ddp_cpu": strategies.DDPSpawnStrategy,
        "dp": strategies.DataParallelStrategy,
        "deepspeed": strategies.DeepSpeedStrategy,
        "fsdp": strategies.FSDPStrategy,
    }[entry.value]
    with recorded() as rec:
        try:
            trainer = compat.Trainer(**kwargs)
        except (RuntimeError, ImportError) as err:  # dp needs CUDA, deepspeed its package
            trainer = None
            assert "cuda" in str(err).lower() or "deepspeed" in str(err).lower(), err
    check_one(rec, entry, needle=f"{entry.member}={entry.value!r}")
    if trainer is not None:
        assert isinstance(trainer.strategy, expected)
        if entry.value == "ddp_cpu":
            assert isinstance(trainer.strategy.accelerator, strategies.CPUAccelerator)
    # the old keyword with a different new one is a TypeError (the same value is accepted)
    with pytest.raises(TypeError, match="both"):
        quiet(lambda: compat.Trainer(**kwargs, strategy="ddp_spawn" if entry.value == "ddp" else "ddp"))


def _check_in_exercises(rec: list, entry: Rename, needle: str) -> None:
    check_one(rec, entry, needle=needle, where=trainer_exercises.__file__)


def exercise_trainer_argument(entry: Rename) -> None:
    member = entry.member
    if member == "distributed_backend":
        with recorded() as rec:
            trainer = compat.Trainer(distributed_backend="ddp", devices=1, accelerator="cpu")
        check_one(rec, entry, needle="distributed_backend")
        assert isinstance(trainer.strategy, strategies.DDPStrategy)
        with pytest.raises(TypeError, match="both"):
            quiet(lambda: compat.Trainer(distributed_backend="ddp", strategy="ddp_spawn"))
    elif member == "plugins":
        plugin = quiet(lambda: compat.plugins.DDPPlugin())
        with recorded() as rec:
            trainer = compat.Trainer(plugins=[plugin], accelerator="cpu", devices=1)
        check_one(rec, entry, needle="plugins")
        assert trainer.strategy is plugin
        with pytest.raises(TypeError, match="both"):
            quiet(lambda: compat.Trainer(plugins=[compat.plugins.DDPPlugin()], strategy=strategies.DDPStrategy()))
    elif member == "gpus":
        with recorded() as rec:
            trainer = compat.Trainer(gpus=0)
        check_one(rec, entry, needle="gpus")
        assert trainer.strategy.root_device.type == "cpu"
        with pytest.raises(TypeError, match="both"):
            quiet(lambda: compat.Trainer(gpus=1, devices=2))
    elif member == "num_processes":
        with recorded() as rec:
            trainer = compat.Trainer(num_processes=1)
        check_one(rec, entry, needle="num_processes")
        assert isinstance(trainer.strategy, strategies.SingleDeviceStrategy)
        assert isinstance(trainer.strategy.accelerator, strategies.CPUAccelerator)
        with pytest.raises(TypeError, match="both"):
            quiet(lambda: compat.Trainer(num_processes=1, devices=2))
    elif member in trainer_exercises.EXERCISES:
        trainer_exercises.EXERCISES[member](entry, _check_in_exercises, fit)
    else:  # pragma: no cover
        pytest.fail(f"no exercise for Trainer({member}=...)")


def exercise_plugin_argument(entry: Rename) -> None:
    cls = compat_obj(entry)
    with recorded() as rec:
        plugin = cls(**{entry.member: 1 if entry.member == "num_nodes" else True})
    check_one(rec, entry, needle=f"{entry.member}=")
    if entry.member == "num_nodes":
        assert plugin.num_nodes == 1
        trainer = new_trainer(strategy=plugin)
        assert trainer.strategy.num_nodes == 1
    else:
        assert plugin._compat_sync_batchnorm is True


# -- members: Accelerator container ------------------------------------------------------------------

ACCELERATOR_FORWARDS = {
    "barrier": ("barrier", ()),
    "broadcast": ("broadcast", (1,)),
    "all_gather": ("all_gather", (torch.ones(1),)),
    "training_step": ("training_step", (1, 2)),
    "validation_step": ("validation_step", (1, 2)),
    "test_step": ("test_step", (1, 2)),
    "predict": ("predict_step", (1, 2)),
    "backward": ("backward", (1,)),
    "optimizer_step": ("optimizer_step", (1,)),
    "setup_optimizers": ("setup_optimizers", (1,)),
    "model_sharded_context": ("model_sharded_context", ()),
    "connect": ("connect", (1,)),
}


def _container() -> tuple[Any, Any]:
    plugin = quiet(lambda: compat.plugins.SingleDevicePlugin("cpu"))
    container = quiet(lambda: compat.accelerators.CPUAccelerator(training_type_plugin=plugin))
    return container, plugin


def exercise_accelerator_forward(entry: Rename) -> None:
    container, plugin = _container()
    target, args = ACCELERATOR_FORWARDS[entry.member]
    calls = []
    setattr(plugin, target, lambda *a, **k: calls.append(a) or "result")
    with recorded() as rec:
        result = getattr(container, entry.member)(*args)
    check_one(rec, entry, needle=f"Accelerator.{entry.member}")
    assert calls == [args] and result == "result"


def exercise_accelerator_other(entry: Rename) -> None:
    container, plugin = _container()
    member = entry.member
    with recorded() as rec:
        if member == "connect_training_type_plugin":
            module = Tiny()
            container.connect_training_type_plugin(plugin, module)
            assert plugin.module is module
        elif member == "connect_precision_plugin":
            precision = strategies.Precision()
            container.connect_precision_plugin(precision)
            assert plugin.precision is precision
        elif member == "setup_environment":
            container.setup_environment()
        elif member == "training_type_plugin":
            assert container.training_type_plugin is plugin
        elif member == "precision_plugin":
            assert container.precision_plugin is None
        elif member in ("model", "lightning_module"):
            module = Tiny()
            plugin.connect(module)
            assert getattr(container, member) is module
        elif member == "root_device":
            assert container.root_device == torch.device("cpu")
        elif member == "call_configure_sharded_model_hook":
            assert container.call_configure_sharded_model_hook is True
        else:  # pragma: no cover
            pytest.fail(member)
    check_one(rec, entry, needle=f"Accelerator.{member}")


def exercise_accelerator_setup(entry: Rename) -> None:
    calls = []
    with recorded() as rec:

        class MyAccelerator(compat.accelerators.CPUAccelerator):
            def setup(self, trainer, model):
                calls.append(("setup", trainer.state.stage, type(trainer.strategy.model).__name__))
                super().setup(trainer, model)
                calls.append(("after", type(trainer.strategy.optimizers[0]).__name__))

    check_one(rec, entry, needle="MyAccelerator.setup")
    trainer = new_trainer_with(
        accelerator=quiet(
            lambda: MyAccelerator(training_type_plugin=quiet(lambda: compat.plugins.SingleDevicePlugin()))
        )
    )
    fit(trainer)
    assert calls == [("setup", "fit", "Tiny"), ("after", "SGD")]


def new_trainer_with(**kwargs: Any) -> Any:
    return quiet(lambda: compat.Trainer(enable_progress_bar=False, max_epochs=1, **kwargs))


def exercise_unsupported_override(entry: Rename) -> None:
    """An override with no bridge: warned at the class, refused when the Trainer is built."""
    owner = compat_obj(entry)
    if owner is compat.plugins.TrainingTypePlugin:
        owner = compat.plugins.SingleDevicePlugin
    with recorded() as rec:
        cls = type("UserOverride", (owner,), {entry.member: lambda self, *a: None, "__module__": __name__})
    check_one(rec, entry, needle=f"UserOverride.{entry.member}")
    # defining the class broke nothing; building a Trainer with it is the error, naming the method
    obj = quiet(cls) if owner is not compat.plugins.SingleDevicePlugin else quiet(lambda: cls("cpu"))
    if isinstance(obj, compat.accelerators.Accelerator):
        obj._training_type_plugin = quiet(lambda: compat.plugins.SingleDevicePlugin())
        kwargs = {"accelerator": obj}
    elif isinstance(obj, strategies.Precision):
        kwargs = {"plugins": [obj], "accelerator": "cpu"}
    else:
        kwargs = {"strategy": obj, "accelerator": "cpu"}
    with pytest.raises(TypeError) as err:
        new_trainer_with(devices=1, **kwargs)
    assert entry.member in str(err.value)
    if entry.hint:
        assert entry.hint.rstrip(".") in str(err.value)


def exercise_removed_call(entry: Rename) -> None:
    """Calling a removed loop method by name raises with the hint."""
    exercise_unsupported_override(entry)
    owner = compat_obj(entry)
    container, plugin = _container()
    obj = container if owner is compat.accelerators.Accelerator else plugin
    if hasattr(type(obj), entry.member):
        with pytest.raises(NotImplementedError):
            getattr(obj, entry.member)(None)


def exercise_dispatch_override(entry: Rename) -> None:
    """``pre_dispatch``/``post_dispatch`` overrides are called at the matching steps."""
    owner = compat_obj(entry)
    calls: list[tuple[str, Any]] = []

    def hook(self, *args):
        trainer = trainer_ref[0]
        calls.append(
            (entry.member, type(trainer.strategy.model).__name__ if trainer.strategy._model is not None else None)
        )

    with recorded() as rec:
        cls = type("UserDispatch", (owner,), {entry.member: hook, "__module__": __name__})
    check_one(rec, entry, needle=f"UserDispatch.{entry.member}")
    trainer_ref: list[Any] = []
    if owner is compat.accelerators.Accelerator:
        acc = quiet(lambda: cls(training_type_plugin=quiet(lambda: compat.plugins.SingleDevicePlugin())))
        trainer = new_trainer_with(accelerator=acc)
    elif issubclass(owner, strategies.Precision):
        trainer = new_trainer_with(plugins=[quiet(cls)], accelerator="cpu", devices=1)
    else:
        trainer = (
            new_trainer_with(
                strategy=quiet(
                    lambda: type("P", (cls, compat.plugins.SingleDevicePlugin), {"__module__": __name__})("cpu")
                ),
                accelerator="cpu",
                devices=1,
            )
            if owner is compat.plugins.TrainingTypePlugin
            else new_trainer_with(strategy=quiet(cls))
        )
    trainer_ref.append(trainer)
    fit(trainer)
    assert [c[0] for c in calls] == [entry.member]
    if entry.member == "pre_dispatch":
        assert calls[0][1] is not None  # after the model was set up (wrapped where the strategy wraps)


def exercise_init_ddp_connection(entry: Rename) -> None:
    import torch.distributed as dist

    owner = compat_obj(entry)
    seen = []
    with recorded() as rec:

        class UserDDP(owner):
            def init_ddp_connection(self, global_rank=None, world_size=None):
                seen.append(("before", dist.is_initialized(), global_rank, world_size))
                super().init_ddp_connection(global_rank, world_size)
                seen.append(("after", dist.is_initialized()))

    check_one(rec, entry, needle="UserDDP.init_ddp_connection")
    trainer = new_trainer_with(strategy=quiet(UserDDP), accelerator="cpu", devices=1)
    try:
        trainer.strategy.setup_environment()
    finally:
        trainer.strategy.close()
    assert seen == [("before", False, 0, 1), ("after", True)]


def exercise_legacy_setup(entry: Rename) -> None:
    seen = []
    with recorded() as rec:

        class OldSetup(compat.plugins.SingleDevicePlugin):
            def setup(self, model):
                seen.append(type(model).__name__)
                super().setup(model)

    check_one(rec, entry, needle="OldSetup.setup(model)")
    fit(new_trainer_with(strategy=quiet(lambda: OldSetup("cpu")), accelerator="cpu", devices=1))
    assert seen == ["Tiny"]


def exercise_init_optimizers(entry: Rename) -> None:
    seen = []
    with recorded() as rec:

        class OldOpt(compat.plugins.SingleDevicePlugin):
            def init_optimizers(self, trainer, model):
                seen.append(type(model).__name__)
                return super().init_optimizers(trainer, model)

    check_one(rec, entry, needle="OldOpt.init_optimizers")
    trainer = new_trainer_with(strategy=quiet(lambda: OldOpt("cpu")), accelerator="cpu", devices=1)
    fit(trainer)
    assert seen == ["Tiny"]


def exercise_ttp_predict(entry: Rename) -> None:
    _, plugin = _container()
    plugin.predict_step = lambda *a: ("predict_step", a)
    with recorded() as rec:
        assert plugin.predict(1) == ("predict_step", (1,))
    check_one(rec, entry, needle="predict")


def exercise_master_params(entry: Rename) -> None:
    precision = quiet(compat.plugins.PrecisionPlugin)
    opt = torch.optim.SGD(nn.Linear(1, 1).parameters(), lr=0.1)
    with recorded() as rec:
        params = list(precision.master_params(opt))
    check_one(rec, entry, needle="master_params")
    assert params == list(precision.main_params(opt))


def exercise_precision_checkpoint(entry: Rename) -> None:
    with recorded() as rec:

        class P(compat.plugins.PrecisionPlugin):
            def on_save_checkpoint(self, checkpoint):
                checkpoint["mine"] = 1

            def on_load_checkpoint(self, checkpoint):
                self.loaded = checkpoint

    check_one(rec, entry, needle=f"P.{entry.member}")
    p = quiet(P)
    assert p.state_dict() == {"mine": 1}
    p.load_state_dict({"mine": 2})
    assert p.loaded == {"mine": 2}


def exercise_environment_method(entry: Rename) -> None:
    new = {
        "creates_children": "creates_processes_externally",
        "master_address": "main_address",
        "master_port": "main_port",
    }[entry.member]
    env = quiet(compat.plugins.LightningEnvironment)
    with recorded() as rec:
        value = getattr(env, entry.member)()
    check_one(rec, entry, needle=entry.member)
    assert value == getattr(env, new)
    env.teardown()
    # an old-style subclass: the new property serves the old method
    with recorded() as rec:
        Env = _env_subclass(compat.plugins.ClusterEnvironment)
    check_one(rec, entry, needle=f"Env.{entry.member}")
    assert (
        getattr(quiet(Env), new)
        == {"creates_children": False, "master_address": "127.0.0.1", "master_port": 12345}[entry.member]
    )


def exercise_is_using_torchelastic(entry: Rename) -> None:
    with recorded() as rec:
        value = compat.plugins.TorchElasticEnvironment.is_using_torchelastic()
    check_one(rec, entry, needle="is_using_torchelastic")
    assert value is strategies.TorchElasticEnvironment.detect()


# -- properties / attributes -------------------------------------------------------------------------


def exercise_plugin_property(entry: Rename) -> None:
    member = entry.member
    _, plugin = _container()
    expected: dict[str, Callable[[Any], Any]] = {
        "on_gpu": lambda v: v is False,
        "on_tpu": lambda v: v is False,
        "setup_optimizers_in_pre_dispatch": lambda v: v is False,
        "call_configure_sharded_model_hook": lambda v: v is True,
        "lightning_module": lambda v: v is plugin.module,
    }
    if member == "lightning_module":
        plugin.connect(Tiny())
    if member in ("torch_distributed_backend", "task_idx"):
        plugin = quiet(compat.plugins.DDPPlugin)
        expected[member] = (lambda v: v == "gloo") if member == "torch_distributed_backend" else (lambda v: v == 0)
    if member in ("results", "mp_spawn_kwargs", "mp_queue"):
        plugin = quiet(compat.plugins.DDPSpawnPlugin) if member != "results" else plugin
        with pytest.raises(AttributeError) as err:
            getattr(plugin, member)
        assert member in str(err.value) and "compat.migrate" in str(err.value)
        return
    with recorded() as rec:
        value = getattr(plugin, member)
    check_one(rec, entry, needle=member)
    assert expected[member](value), value


def exercise_accelerator_results(entry: Rename) -> None:
    container, _ = _container()
    with pytest.raises(AttributeError) as err:
        _ = container.results
    assert "results" in str(err.value)


def exercise_not_importable(entry: Rename) -> None:
    """No runtime shim: the old module path does not exist under compat; the table has the hint."""
    with pytest.raises(ImportError):
        importlib.import_module(renames.compat_path(entry.old))
    assert entry.hint or entry.strategies


# -- hooks --------------------------------------------------------------------------------------------


def exercise_module_hook(entry: Rename) -> None:
    seen = []
    with recorded() as rec:

        class M(compat.LightningModule):
            def __init__(self):
                super().__init__()
                self.layer = nn.Linear(2, 1)

            def configure_sharded_model(self):
                seen.append("configure_sharded_model")

            def training_step(self, batch, batch_idx):
                x, y = batch
                return nn.functional.mse_loss(self.layer(x), y)

            def configure_optimizers(self):
                return torch.optim.SGD(self.parameters(), lr=0.1)

    check_one(rec, entry, needle="M.configure_sharded_model")
    fit(new_trainer(record_hooks=True), quiet(M))
    assert seen == ["configure_sharded_model"]
    with pytest.raises(TypeError, match="both"):
        quiet(
            lambda: type(
                "Both",
                (compat.LightningModule,),
                {"configure_sharded_model": lambda s: None, "configure_model": lambda s: None, "__module__": __name__},
            )
        )


def exercise_callback_hook(entry: Rename) -> None:
    import torch.distributed as dist

    seen = []
    with recorded() as rec:
        cb_cls = type(
            "CB",
            (compat.Callback,),
            {
                entry.member: lambda self, trainer, module: seen.append((entry.member, trainer.state.stage)),
                "setup": lambda self, trainer, module, stage: seen.append(("setup", stage)),
                "__module__": __name__,
            },
        )
    check_one(rec, entry, needle=f"CB.{entry.member}")
    fit(new_trainer(callbacks=[quiet(cb_cls)]))
    assert seen == [("setup", "fit"), (entry.member, "fit")]
    assert not dist.is_initialized()


# -- the table -> exercise map ----------------------------------------------------------------------


def _short(path: str) -> str:
    return path.rsplit(".", 1)[-1]


def exercise_for(entry: Rename) -> Callable[[Rename], None] | None:
    owner, member, kind = _short(entry.old), entry.member, entry.kind
    if kind is Kind.CLASS:
        return exercise_class if owner in CLASS_FACTORIES or owner in UNAVAILABLE_CLASSES else None
    if kind is Kind.MODULE:
        return exercise_module if entry.old.endswith("plugins.environments") else None
    if kind is Kind.ARGUMENT_VALUE:
        return exercise_argument_value
    if kind is Kind.ARGUMENT:
        return exercise_trainer_argument if owner == "Trainer" else exercise_plugin_argument
    if kind is Kind.HOOK:
        return exercise_module_hook if owner == "LightningModule" else exercise_callback_hook
    if owner == "Trainer":
        if member in TRAINER_ATTRIBUTES:
            return exercise_trainer_attribute
        return exercise_trainer_internal
    if owner == "AcceleratorConnector":
        return exercise_not_importable
    if owner == "Accelerator":
        if member in ACCELERATOR_FORWARDS:
            return exercise_accelerator_forward
        if member == "setup":
            return exercise_accelerator_setup
        if member in ("pre_dispatch", "post_dispatch"):
            return exercise_dispatch_override
        if member in ("start_training", "start_evaluating", "start_predicting", "start_testing", "dispatch"):
            return exercise_removed_call
        if member == "results":
            return exercise_accelerator_results
        return exercise_accelerator_other
    if member in (
        "start_training",
        "start_evaluating",
        "start_predicting",
        "start_testing",
        "dispatch",
        "new_process",
        "get_mp_spawn_kwargs",
        "transfer_distrib_spawn_state_on_fit_end",
    ):
        return exercise_removed_call
    if member in ("pre_dispatch", "post_dispatch"):
        return exercise_dispatch_override
    table: dict[str, Callable[[Rename], None]] = {
        "init_ddp_connection": exercise_init_ddp_connection,
        "setup": exercise_legacy_setup,
        "init_optimizers": exercise_init_optimizers,
        "predict": exercise_ttp_predict,
        "master_params": exercise_master_params,
        "on_save_checkpoint": exercise_precision_checkpoint,
        "on_load_checkpoint": exercise_precision_checkpoint,
        "creates_children": exercise_environment_method,
        "master_address": exercise_environment_method,
        "master_port": exercise_environment_method,
        "is_using_torchelastic": exercise_is_using_torchelastic,
    }
    if member in table:
        return table[member]
    if kind in (Kind.PROPERTY, Kind.ATTRIBUTE):
        return exercise_plugin_property
    return None


def _id(entry: Rename) -> str:
    value = f"={entry.value}" if entry.value else ""
    return f"{entry.kind.value}:{entry.old_name}{value}".replace(" ", "_")


def test_every_entry_has_an_exercise():
    missing = [_id(e) for e in RENAMES if exercise_for(e) is None]
    assert not missing, f"table entries with no shim exercise: {missing}"


def _needs_deepspeed(entry: Rename) -> bool:
    """Exercises that construct a ``DeepSpeedPlugin``, whose strategy imports ``deepspeed``."""
    return entry.old.rsplit(".", 1)[-1] == "DeepSpeedPlugin" and entry.kind in (Kind.CLASS, Kind.ARGUMENT)


_ENTRIES = [pytest.param(e, id=_id(e), marks=[pytest.mark.extras] if _needs_deepspeed(e) else []) for e in RENAMES]


@pytest.mark.parametrize("entry", _ENTRIES)
def test_entry(entry: Rename):
    if _needs_deepspeed(entry):
        pytest.importorskip(
            "deepspeed", reason='the deepspeed extra is not installed (pip install "strategy-compat[deepspeed]")'
        )
    exercise = exercise_for(entry)
    if exercise is None:
        pytest.fail(f"no exercise for {_id(entry)}")
    exercise(entry)
