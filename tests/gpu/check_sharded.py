"""GPU check for the sharded strategies (not collected by pytest): run it on a CUDA machine.

    python tests/gpu/check_sharded.py          # ~1 minute on one GPU; exit status 0 = all passed/skipped

Checks, each printed as PASS/SKIP/FAIL with its time:

1. FSDP, one NCCL rank, ``bf16-mixed``: the group is NCCL, parameters are DTensor shards on the GPU,
   the first layer computes in bf16 (MixedPrecisionPolicy from the precision), losses are finite and
   fall, and the rank-0 full checkpoint loads into a plain module with the same weights.
2. FSDP with ``cpu_offload=True`` (CPUOffloadPolicy): the shards live on the CPU, training runs.
3. ``dp`` (torch.nn.DataParallel) over all visible GPUs.
4. DeepSpeed ZeRO stage 2 on CUDA (fp32 and bf16), with an engine checkpoint resumed; skipped
   with the reason when ``deepspeed`` is not installed (``pip install "strategy-compat[deepspeed]"``).

Without CUDA every check is skipped with the reason.
"""

from __future__ import annotations

import math
import os
import sys
import tempfile
import time
import traceback

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..")))

from strategies import Callback, FSDPStrategy, Trainer, TrainModule  # noqa: E402

RESULTS: list[tuple[str, str, float, str]] = []


def data(n: int = 256) -> DataLoader:
    g = torch.Generator().manual_seed(0)
    x = torch.randn(n, 64, generator=g)
    return DataLoader(TensorDataset(x, x[:, :1] * 3 - x[:, 1:2]), batch_size=32, shuffle=True)


class Net(TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.net: nn.Module | None = None
        self.losses: list[float] = []
        self.compute_dtypes: set[str] = set()
        self.backend = None

    def setup(self, stage):
        import torch.distributed as dist

        self.backend = dist.get_backend() if dist.is_initialized() else None

    def configure_model(self):
        if self.net is None:
            self.net = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 1))
            self.net[0].register_forward_hook(lambda m, i, o: self.compute_dtypes.add(str(o.dtype)))

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.net(x).float(), y.float())
        self.losses.append(float(loss.detach()))
        return loss

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=3e-3)


def check(name):
    def wrap(fn):
        start = time.time()
        try:
            skip = fn()
            status, note = ("SKIP", skip) if isinstance(skip, str) else ("PASS", "")
        except Exception:  # noqa: BLE001 - report and go on
            status, note = "FAIL", traceback.format_exc()
        RESULTS.append((name, status, time.time() - start, note))
        print(f"{status} {name} ({time.time() - start:.1f} s) {note}", flush=True)
        return fn

    return wrap


def _falls(losses):
    assert all(math.isfinite(v) for v in losses), losses
    assert min(losses[-3:]) < losses[0], losses


def run_all(tmp: str) -> None:
    @check("fsdp: 1 NCCL rank, bf16-mixed, full checkpoint")
    def _():
        model = Net()
        strategy = FSDPStrategy(auto_wrap_policy={nn.Linear}, state_dict_type="full")
        trainer = Trainer(
            strategy=strategy,
            accelerator="cuda",
            devices=1,
            precision="bf16-mixed",
            max_steps=12,
            enable_progress_bar=False,
        )
        trainer.fit(model, data())
        assert model.backend == "nccl", model.backend
        params = list(model.parameters())
        assert all(hasattr(p, "placements") and p.device.type == "cuda" for p in params)
        assert {str(p.dtype) for p in params} == {"torch.float32"}  # sharded master weights stay fp32
        assert model.compute_dtypes == {"torch.bfloat16"}, model.compute_dtypes
        _falls(model.losses)
        path = os.path.join(tmp, "fsdp_full.ckpt")
        trainer.save_checkpoint(path)
        full = strategy.full_state_dict()
        plain = Net()
        plain.configure_model()
        plain.load_state_dict(torch.load(path, weights_only=True)["state_dict"])
        for key, value in plain.state_dict().items():
            torch.testing.assert_close(value, full[key].cpu())

    @check("fsdp: cpu_offload=True (CPUOffloadPolicy)")
    def _():
        model = Net()
        trainer = Trainer(
            strategy=FSDPStrategy(cpu_offload=True),
            accelerator="cuda",
            devices=1,
            max_steps=6,
            enable_progress_bar=False,
        )
        trainer.fit(model, data())
        assert all(p._local_tensor.device.type == "cpu" for p in model.parameters())
        _falls(model.losses)

    @check("dp: DataParallel over all GPUs")
    def _():
        model = Net()
        model.configure_model()
        trainer = Trainer(
            strategy="dp", accelerator="cuda", devices=torch.cuda.device_count(), max_steps=6, enable_progress_bar=False
        )
        trainer.fit(model, data())
        _falls(model.losses)

    for precision in ("32-true", "bf16-mixed"):

        @check(f"deepspeed: ZeRO stage 2 on CUDA, {precision}, engine checkpoint resume")
        def _(precision=precision):
            try:
                import deepspeed  # noqa: F401
            except ImportError:
                return 'deepspeed is not installed (pip install "strategy-compat[deepspeed]")'
            path = os.path.join(tmp, f"ds_{precision}")

            class SaveAt(Callback):
                def on_train_batch_start(self, trainer, module, batch, batch_idx):
                    if trainer.state.global_step == 3 and not os.path.exists(path):
                        trainer.save_checkpoint(path)

            torch.manual_seed(0)
            model = Net()
            trainer = Trainer(
                strategy="deepspeed_stage_2",
                accelerator="cuda",
                devices=1,
                precision=precision,
                max_steps=6,
                callbacks=[SaveAt()],
                enable_progress_bar=False,
            )
            trainer.fit(model, data())
            _falls(model.losses)
            resumed = Net()
            trainer = Trainer(
                strategy="deepspeed_stage_2",
                accelerator="cuda",
                devices=1,
                precision=precision,
                max_steps=6,
                enable_progress_bar=False,
            )
            trainer.fit(resumed, data(), ckpt_path=path)
            assert trainer.state.global_step == 6
            # same data order after the resume: the same losses as the uninterrupted run
            assert len(resumed.losses) == 3
            assert all(
                abs(a - b) <= 1e-3 * max(1.0, abs(b)) for a, b in zip(resumed.losses, model.losses[3:], strict=False)
            )


def main() -> int:
    if not torch.cuda.is_available():
        print("SKIP all: no CUDA device here (torch.cuda.is_available() is False); run this on a GPU machine.")
        return 0
    print(f"torch {torch.__version__}, {torch.cuda.device_count()} x {torch.cuda.get_device_name(0)}", flush=True)
    with tempfile.TemporaryDirectory() as tmp:
        run_all(tmp)
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()
    failed = [r for r in RESULTS if r[1] == "FAIL"]
    print(f"\n{len(RESULTS) - len(failed)} passed or skipped, {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
