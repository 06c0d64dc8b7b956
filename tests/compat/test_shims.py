"""compat.Trainer's old arguments and attributes, beyond the generated per-entry tests."""

from __future__ import annotations

import warnings

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import compat
import strategies
from compat._warnings import CompatDeprecationWarning


def _trainer(**kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return compat.Trainer(**kwargs)


def test_ddp_cpu_with_num_processes_spawns_two_cpu_processes():
    """1.x ran ``ddp_cpu`` with the spawn plugin (issue 11, class 3): compat does the same."""
    trainer = _trainer(accelerator="ddp_cpu", num_processes=2)
    assert isinstance(trainer.strategy, strategies.DDPSpawnStrategy)
    assert isinstance(trainer.strategy.accelerator, strategies.CPUAccelerator)
    assert trainer.num_devices == 2
    assert isinstance(trainer.strategy.launcher, strategies.MultiprocessingLauncher)


def test_accelerator_ddp_num_processes_and_plugin_instance():
    plugin = _trainer(strategy="ddp", accelerator="cpu", devices=1).strategy
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        env = compat.plugins.LightningEnvironment()
        ddp = compat.plugins.DDPPlugin()
    trainer = _trainer(accelerator="ddp", num_processes=2, plugins=[ddp, env])
    assert trainer.strategy is ddp and trainer.strategy.cluster_environment is env
    assert trainer.num_devices == 2
    assert isinstance(plugin, compat.plugins.DDPPlugin)  # names build bridged strategies
    env.teardown()


def test_a_plugin_instance_wins_over_the_backend_accelerator_names_as_in_1x():
    """1.x's accelerator connector took a training-type plugin in ``plugins=`` as the strategy,
    whatever ``accelerator=`` named; ``ddp_cpu`` still chose the CPU (NeMo-style projects
    pass their DDP plugin this way). It warns once, naming the new spelling."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        single = compat.plugins.SingleDevicePlugin("cpu")
        ddp = compat.plugins.DDPPlugin()
    assert _trainer(accelerator="ddp", plugins=[single], devices=1).strategy is single
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer = compat.Trainer(accelerator="ddp_cpu", num_processes=2, plugins=[ddp])
    assert trainer.strategy is ddp and not isinstance(ddp, strategies.DDPSpawnStrategy)
    assert isinstance(trainer.strategy.accelerator, strategies.CPUAccelerator) and trainer.num_devices == 2
    said = [str(w.message) for w in caught if "the plugin is the strategy" in str(w.message)]
    assert len(said) == 1 and "Trainer(strategy=DDPPlugin(...), accelerator='cpu')" in said[0], said


def test_plugin_of_the_wrong_kind_for_an_explicit_strategy_name():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        single = compat.plugins.SingleDevicePlugin("cpu")
    with pytest.raises(TypeError, match="both"):
        _trainer(strategy="ddp", plugins=[single], devices=1)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"distributed_backend": "ddp", "accelerator": "ddp_spawn"},
        {"accelerator": "ddp", "strategy": "ddp_spawn"},
        {"gpus": 2, "devices": 1},
        {"num_processes": 2, "devices": 1},
    ],
)
def test_old_keyword_with_its_new_one_is_a_type_error(kwargs):
    """An old keyword and the new one it maps to, with different values (the same value is accepted)."""
    with pytest.raises(TypeError, match="both"):
        _trainer(**kwargs)


def test_ddp2_is_refused_with_the_hint():
    with pytest.raises(ValueError, match="ddp2.*DDPStrategy|ddp2.*ddp"):
        _trainer(accelerator="ddp2")


def test_gpus_zero_is_cpu_and_gpus_string_is_parsed():
    from compat._arguments import parse_gpus

    assert parse_gpus("0,1") == [0, 1]
    assert parse_gpus("2") == 2
    assert parse_gpus("-1") == -1
    trainer = _trainer(gpus=0)
    assert trainer.strategy.root_device.type == "cpu"


def test_gpus_with_cpu_accelerator_is_an_error():
    with pytest.raises(ValueError, match="accelerator='cpu'"):
        _trainer(gpus=1, accelerator="cpu")


def test_tpu_cores_is_refused():
    with pytest.raises(ValueError, match="TPU"):
        _trainer(tpu_cores=8)


def test_new_arguments_alone_do_not_warn_beyond_the_class():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        compat.Trainer(strategy="ddp", accelerator="cpu", devices=2)
    ours = [str(w.message) for w in rec if issubclass(w.category, CompatDeprecationWarning)]
    assert len(ours) == 1 and ours[0].startswith("`Trainer`")


def test_container_with_a_new_style_strategy_is_refused():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        container = compat.accelerators.Accelerator(training_type_plugin=strategies.DDPStrategy())
    with pytest.raises(TypeError, match="container"):
        _trainer(accelerator=container, devices=1)


def test_trainer_attributes():
    trainer = _trainer(accelerator="cpu", devices=1)
    with pytest.warns(CompatDeprecationWarning, match="training_type_plugin"):
        assert trainer.training_type_plugin is trainer.strategy
    with pytest.raises(AttributeError, match="run_train"):
        trainer.run_train()
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = trainer.nope


def test_old_module_layout():
    from compat.plugins.environments import LightningEnvironment
    from compat.plugins.precision import NativeMixedPrecisionPlugin
    from compat.plugins.training_type import DDPPlugin

    assert compat.plugins.DDPPlugin is DDPPlugin
    assert compat.plugins.NativeMixedPrecisionPlugin is NativeMixedPrecisionPlugin
    assert compat.plugins.LightningEnvironment is LightningEnvironment
    assert compat.accelerators.GPUAccelerator._compat_new == "strategies.CUDAAccelerator"


class _Tiny(strategies.TrainModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(2, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.layer(x), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("style", ["gpus", "container"])
def test_old_gpu_arguments_train_on_cuda(style):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if style == "gpus":
            trainer = compat.Trainer(gpus=1, max_epochs=1, enable_progress_bar=False)
        else:
            container = compat.accelerators.GPUAccelerator(
                precision_plugin=compat.plugins.NativeMixedPrecisionPlugin(),
                training_type_plugin=compat.plugins.SingleDevicePlugin("cuda:0"),
            )
            trainer = compat.Trainer(accelerator=container, gpus=1, max_epochs=1, enable_progress_bar=False)
    assert trainer.strategy.root_device.type == "cuda"
    x = torch.randn(8, 2)
    module = _Tiny()
    trainer.fit(module, DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=4))
    assert trainer.state.global_step == 2
    if style == "container":
        assert trainer.strategy.precision.precision == "16-mixed"
