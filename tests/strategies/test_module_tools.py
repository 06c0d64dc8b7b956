"""TrainModule's Lightning 2.6 helpers outside ``fit``: loading, freezing, exporting, its loggers.

The names come from the Lightning 2.6 catalog (``compat/_catalog/lightning-2.6.json``): the first
test fails when a public name of ``LightningModule`` is missing here and not listed, with the
reason, in ``NOT_PROVIDED``.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import warnings

import pytest
import torch
from torch.utils.data import DataLoader, TensorDataset

from strategies import CSVLogger, DataModule, Trainer, TrainModule

CATALOG = pathlib.Path(__file__).resolve().parents[2] / "compat" / "_catalog" / "lightning-2.6.json"

#: Public names of Lightning 2.6's ``LightningModule`` that ``TrainModule`` does not have, and why.
NOT_PROVIDED = {
    "device_mesh": "ModelParallelStrategy (tensor parallelism) is not one of our strategies",
    "fabric": "there is no Lightning Fabric here: a module runs under a Trainer",
    "to_tensorrt": "needs torch_tensorrt and a CUDA device; Lightning 2.6 marks it experimental",
}


class Net(TrainModule):
    def __init__(self, hidden: int = 3, lr: float = 0.1) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.inner = torch.nn.Linear(2, hidden)
        self.out = torch.nn.Linear(hidden, 1)
        self.example_input_array = torch.randn(1, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.inner(x)))

    def training_step(self, batch, batch_idx):
        return self(batch[0]).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.hparams.lr)


def _fit(tmp_path: pathlib.Path, module: Net, **kwargs) -> Trainer:
    defaults = {"logger": False, "enable_checkpointing": False}
    trainer = Trainer(max_steps=2, enable_progress_bar=False, default_root_dir=tmp_path, **{**defaults, **kwargs})
    trainer.fit(module, DataLoader(TensorDataset(torch.randn(8, 2)), batch_size=4))
    return trainer


@pytest.fixture
def saved(tmp_path: pathlib.Path) -> tuple[Net, pathlib.Path]:
    module = Net(hidden=5)
    path = tmp_path / "net.ckpt"
    _fit(tmp_path, module).save_checkpoint(path)
    return module, path


def _missing(lightning_class: str, ours: object, besides: set[str] = set()) -> list[str]:  # noqa: B006
    """Public names of a Lightning 2.6 class (from the catalog) that ``ours`` lacks."""
    entry = json.loads(CATALOG.read_text())["classes"][lightning_class]
    names = {*entry["methods"], *entry.get("properties", ()), *entry.get("attributes", ())} - besides
    return sorted(n for n in names if not n.startswith("_") and not hasattr(ours, n))


def test_every_public_name_of_lightnings_module_is_here_or_listed_with_the_reason():
    missing = _missing("lightning.pytorch.core.module.LightningModule", TrainModule)
    assert missing == sorted(NOT_PROVIDED), "add these to TrainModule, or to NOT_PROVIDED with the reason"


def test_load_from_checkpoint_builds_the_module_from_its_hyperparameters_with_its_weights(saved):
    module, path = saved
    loaded = Net.load_from_checkpoint(path)
    assert type(loaded) is Net and loaded.hparams == {"hidden": 5, "lr": 0.1}
    for key, value in module.state_dict().items():
        assert torch.equal(loaded.state_dict()[key], value), key
    assert Net.load_from_checkpoint(path, lr=0.5).hparams.lr == 0.5  # keyword arguments win


def test_load_from_checkpoint_on_an_instance_raises_as_in_lightning_2(saved):
    module, path = saved
    with pytest.raises(TypeError, match=r"classmethod `Net.load_from_checkpoint` cannot be called on an instance"):
        module.load_from_checkpoint(path)


def test_an_hparams_file_replaces_the_saved_hyperparameters(saved, tmp_path):
    _, path = saved
    (tmp_path / "hparams.yaml").write_text("hidden: 5\nlr: 0.25\n")
    loaded = Net.load_from_checkpoint(path, hparams_file=tmp_path / "hparams.yaml")
    assert loaded.hparams == {"hidden": 5, "lr": 0.25}
    (tmp_path / "hparams.txt").write_text("x")
    with pytest.raises(ValueError, match=r"\.yaml or \.yml"):
        Net.load_from_checkpoint(path, hparams_file=tmp_path / "hparams.txt")


def test_strict_none_follows_the_modules_strict_loading(saved):
    _, path = saved

    class Wider(Net):
        def __init__(self, **kwargs) -> None:
            super().__init__(**kwargs)
            self.extra = torch.nn.Linear(1, 1)

    with pytest.raises(RuntimeError, match="Missing key"):
        Wider.load_from_checkpoint(path)

    class Lenient(Wider):
        def __init__(self, **kwargs) -> None:
            super().__init__(**kwargs)
            self.strict_loading = False

    assert Lenient.load_from_checkpoint(path).strict_loading is False


def test_freeze_and_unfreeze():
    module = Net()
    module.freeze()
    assert not module.training and not any(p.requires_grad for p in module.parameters())
    module.unfreeze()
    assert module.training and all(p.requires_grad for p in module.parameters())


def test_toggled_optimizer_freezes_the_other_parameters_for_the_block():
    module = Net()
    optimizer = torch.optim.SGD(module.inner.parameters(), lr=0.1)
    with module.toggled_optimizer(optimizer):
        assert all(p.requires_grad for p in module.inner.parameters())
        assert not any(p.requires_grad for p in module.out.parameters())
    assert all(p.requires_grad for p in module.parameters())


def test_logger_and_loggers_are_the_trainers(tmp_path):
    module = Net()
    assert module.logger is None and module.loggers == [] and module.on_gpu is False
    trainer = _fit(tmp_path, module, logger=CSVLogger(tmp_path))
    assert module.logger is trainer.logger and module.loggers == trainer.loggers and module.loggers


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("method", ["script", "trace"])
def test_to_torchscript_gives_the_same_outputs_and_saves_the_file(method, tmp_path):
    module = Net()
    module.train()
    scripted = module.to_torchscript(file_path=tmp_path / "net.pt", method=method)
    assert module.training, "the module's mode is restored"
    x = torch.randn(3, 2)
    assert torch.allclose(scripted(x), module(x))
    assert torch.allclose(torch.jit.load(str(tmp_path / "net.pt"))(x), module(x))


def test_to_torchscript_warns_as_lightning_26_and_refuses_a_trace_without_an_input():
    module = Net()
    module.example_input_array = None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with pytest.raises(ValueError, match="example_inputs"):
            module.to_torchscript(method="trace")
    assert any("torch.export.export" in str(w.message) for w in caught)
    with pytest.raises(ValueError, match="'script' or 'trace'"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module.to_torchscript(method="compile")


@pytest.mark.skipif(
    importlib.util.find_spec("onnx") is not None and importlib.util.find_spec("onnxscript") is not None,
    reason="onnx and onnxscript are installed (the extras test below exports)",
)
def test_to_onnx_without_onnx_says_what_to_install():
    with pytest.raises(ModuleNotFoundError, match="pip install onnx onnxscript"):
        Net().to_onnx("net.onnx")


@pytest.mark.extras
def test_to_onnx_exports_a_model_that_onnx_checks(tmp_path):
    onnx = pytest.importorskip("onnx", reason="needs the onnx extra: pip install onnx onnxscript")
    pytest.importorskip("onnxscript", reason="needs the onnx extra: pip install onnx onnxscript")
    module = Net()
    module.train()
    module.to_onnx(tmp_path / "net.onnx")
    assert module.training
    onnx.checker.check_model(onnx.load(str(tmp_path / "net.onnx")))


# -- the datamodule --------------------------------------------------------------------------

#: Public names of Lightning 2.6's ``LightningDataModule`` that ``DataModule`` does not have, and why.
DATAMODULE_NOT_PROVIDED: dict[str, str] = {}


class Data(DataModule):
    def __init__(self, size: int = 8, batch_size: int = 4) -> None:
        super().__init__()
        self.save_hyperparameters()
        self.seen_state: dict | None = None

    def train_dataloader(self):
        return DataLoader(TensorDataset(torch.randn(self.hparams.size, 2)), batch_size=self.hparams.batch_size)

    def state_dict(self):
        return {"epochs_served": 3}

    def load_state_dict(self, state_dict):
        self.seen_state = state_dict


def test_every_public_name_of_lightnings_datamodule_is_here_or_listed_with_the_reason():
    # `available` and `length` are attributes of a helper class inside LightningDataModule.__str__.
    missing = _missing("lightning.pytorch.core.datamodule.LightningDataModule", DataModule(), {"available", "length"})
    assert missing == sorted(DATAMODULE_NOT_PROVIDED), "add these to DataModule, or list them with the reason"


def test_a_datamodules_hyperparameters_and_state_come_back_from_the_checkpoint(tmp_path):
    trainer = Trainer(max_steps=1, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    trainer.fit(Net(), datamodule=Data(size=12, batch_size=3))
    trainer.save_checkpoint(tmp_path / "run.ckpt")
    checkpoint = torch.load(tmp_path / "run.ckpt", weights_only=True)
    assert checkpoint["datamodule_hyper_parameters"] == {"size": 12, "batch_size": 3}  # Lightning's keys
    loaded = Data.load_from_checkpoint(tmp_path / "run.ckpt", batch_size=6)
    assert loaded.hparams == {"size": 12, "batch_size": 6} and loaded.seen_state == {"epochs_served": 3}
    with pytest.raises(TypeError, match="cannot be called on an instance"):
        loaded.load_from_checkpoint(tmp_path / "run.ckpt")


def test_from_datasets_serves_the_datasets_and_fits():
    train = TensorDataset(torch.randn(8, 2))
    data = DataModule.from_datasets(train, val_dataset=[train, train], batch_size=4)
    assert len(data.train_dataloader()) == 2 and [len(d) for d in data.val_dataloader()] == [2, 2]
    assert Data.from_datasets(train, batch_size=2).hparams.batch_size == 2  # forwarded to __init__
    trainer = Trainer(max_epochs=1, logger=False, enable_checkpointing=False, enable_progress_bar=False)
    trainer.fit(Net(), datamodule=DataModule.from_datasets(train, batch_size=4))
    assert trainer.global_step == 2


def test_save_hyperparameters_takes_a_namespace_or_a_dict_whole_as_lightning_does():
    from argparse import Namespace

    class Data(DataModule):
        def __init__(self, args):
            super().__init__()
            self.save_hyperparameters(args)

    class Module(TrainModule):
        def __init__(self, config):
            super().__init__()
            self.save_hyperparameters(config)

    assert dict(Data(Namespace(batch_size=8, root="x")).hparams) == {"batch_size": 8, "root": "x"}
    assert dict(Module({"lr": 0.1}).hparams) == {"lr": 0.1}
    with pytest.raises(ValueError, match="one dict or `argparse.Namespace`"):
        Module(3)
