"""DataParallelStrategy ("dp"): one process over several CUDA devices; without CUDA a clear error."""

from __future__ import annotations

import pytest
import torch
from torch import nn

from strategies import DataParallelStrategy, Trainer, TrainModule
from strategies.dp import _mean_over_devices

no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error raised without CUDA")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (DataParallel)")


@no_cuda
@pytest.mark.parametrize("kwargs", [{}, {"accelerator": "cpu"}, {"accelerator": "cpu", "devices": 2}])
def test_dp_without_cuda_fails_when_the_trainer_is_built(kwargs):
    with pytest.raises(RuntimeError, match=r"strategy='dp'.*several CUDA devices.*no CUDA device.*strategy='ddp'"):
        Trainer(strategy="dp", **kwargs)
    with pytest.raises(RuntimeError, match="strategy='dp'"):
        Trainer(strategy=DataParallelStrategy(), **kwargs)


def test_dp_has_no_process_group_and_one_rank():
    strategy = DataParallelStrategy(parallel_devices=[torch.device("cuda", 0), torch.device("cuda", 1)])
    assert strategy.root_device == torch.device("cuda", 0)
    assert (strategy.global_rank, strategy.world_size, strategy.distributed_sampler_kwargs) == (0, 1, None)
    assert strategy.launcher is None
    strategy.check_process_group()  # nothing to check, never raises


def test_outputs_gathered_from_devices_are_averaged():
    assert _mean_over_devices(torch.tensor([1.0, 3.0])) == 2.0
    out = _mean_over_devices({"loss": torch.tensor([2.0, 4.0]), "n": 1})
    assert out["loss"] == 3.0 and out["n"] == 1
    scalar = torch.tensor(5.0)
    assert _mean_over_devices(scalar) is scalar


class _Model(TrainModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        return self.layer(batch[0]).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


@needs_cuda
@pytest.mark.gpu
def test_dp_fits_on_cuda():
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(16, 4)), batch_size=8)
    trainer = Trainer(
        strategy="dp", accelerator="cuda", devices=torch.cuda.device_count(), max_steps=2, enable_progress_bar=False
    )
    model = _Model()
    trainer.fit(model, loader)
    assert trainer.state.global_step == 2
