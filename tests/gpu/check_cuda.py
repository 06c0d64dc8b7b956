"""CUDA/NCCL paths, run on a machine with a GPU (not collected by pytest: no test_ prefix).

    python tests/gpu/check_cuda.py

Checks: single-device CUDA, `ddp` with one NCCL rank, and `bf16-mixed`, each a short fit whose
weights must move, with the process group live (NCCL) in `setup`. Exits non-zero on failure.
"""

from __future__ import annotations

import sys

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from strategies import Trainer, TrainModule


class Model(TrainModule):
    def setup(self, stage):
        self.backend = dist.get_backend() if dist.is_initialized() else None
        torch.manual_seed(0)
        self.layer = nn.Linear(16, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        out = self.layer(x)
        self.dtype_seen = out.dtype
        return nn.functional.mse_loss(out.float(), y)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _fit(**kwargs) -> Model:
    data = TensorDataset(torch.randn(64, 16), torch.randn(64, 1))
    model = Model()
    trainer = Trainer(accelerator="cuda", devices=1, max_steps=4, enable_progress_bar=False, **kwargs)
    trainer.fit(model, DataLoader(data, batch_size=16))
    assert trainer.strategy.root_device.type == "cuda", trainer.strategy.root_device
    trainer.strategy.close()
    return model


def main() -> int:
    if not torch.cuda.is_available():
        print("SKIP: no CUDA device here")
        return 0
    single = _fit(strategy="single_device")
    assert single.backend is None
    print("single-device CUDA: ok")
    ddp = _fit(strategy="ddp")
    assert ddp.backend == "nccl", ddp.backend
    print("ddp, one NCCL rank: ok (process group live in setup, backend nccl)")
    bf16 = _fit(strategy="single_device", precision="bf16-mixed")
    assert bf16.dtype_seen == torch.bfloat16, bf16.dtype_seen
    print("bf16-mixed autocast on CUDA: ok")
    fp16 = _fit(strategy="single_device", precision="16-mixed")
    assert fp16.dtype_seen == torch.float16, fp16.dtype_seen
    print("16-mixed with grad scaler on CUDA: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
