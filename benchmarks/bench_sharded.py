"""Peak memory per rank and step time: FSDP vs DDP, 2 ranks on CPU (gloo), same model, same data.

    python benchmarks/bench_sharded.py [--layers 8] [--width 1024] [--steps 8] [--batch 32]

Runs one 2-rank fit per strategy (each in its own processes, so their memory does not mix) and
prints, per rank and as FSDP/DDP ratios:

* ``state MiB``: parameters + gradients + optimizer state (AdamW) held by the rank after a step,
  counted from the tensors themselves (for FSDP, the local shards). This is the number the
  sharding is about (target: FSDP <= 0.6x DDP with 2 ranks).
* ``peak RSS growth MiB``: the process's peak resident memory (``ru_maxrss``) minus the resident
  memory measured before ``configure_model``; it also counts activations, the all-gather buffers
  of FSDP and the allocator's slack, so it is noisier.
* ``step ms``: the median wall time of a training step (after 2 warm-up steps).

The workers run with ``MALLOC_MMAP_THRESHOLD_=131072`` (``--glibc-default`` to drop it): glibc
otherwise raises its mmap threshold after the first large free and keeps freed buffers in the heap,
so the peak RSS of FSDP (which allocates and frees an all-gather buffer per layer) shows the
allocator's retention, not live memory (measured: 1.5x DDP with the default, 0.5x with the fixed
threshold; the tensor counts are the same either way).

The layers are created in ``configure_model``: with FSDP on the meta device (never whole on any
rank), with DDP for real on every rank.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..")))

from strategies import Callback, DDPStrategy, FSDPStrategy, Trainer, TrainModule  # noqa: E402

MiB = 2**20


def _rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / MiB


def _local(t: torch.Tensor) -> torch.Tensor:
    return t._local_tensor if hasattr(t, "_local_tensor") else t


class Model(TrainModule):
    def __init__(self, layers: int, width: int) -> None:
        super().__init__()
        self.layers, self.width = layers, width
        self.net: nn.Module | None = None
        self.rss_before = 0.0

    def configure_model(self) -> None:
        self.rss_before = _rss_mib()
        if self.net is None:
            blocks = []
            for _ in range(self.layers):
                blocks += [nn.Linear(self.width, self.width), nn.ReLU()]
            self.net = nn.Sequential(*blocks, nn.Linear(self.width, 1))

    def training_step(self, batch, batch_idx):
        x, y = batch
        return nn.functional.mse_loss(self.net(x), y)

    def configure_optimizers(self):
        return torch.optim.AdamW(self.parameters(), lr=1e-4)


class Measure(Callback):
    def __init__(self) -> None:
        self.state_bytes: dict[str, int] = {}
        self.times: list[float] = []
        self._t = 0.0

    def on_train_batch_start(self, trainer, module, batch, batch_idx):
        self._t = time.perf_counter()

    def on_train_batch_end(self, trainer, module, outputs, batch, batch_idx):
        self.times.append(time.perf_counter() - self._t)
        if not self.state_bytes:
            params = list(module.parameters())
            opt_state = [
                v
                for opt in trainer.strategy.optimizers
                for s in opt.state.values()
                for v in s.values()
                if isinstance(v, torch.Tensor) and v.numel() > 1
            ]
            self.state_bytes = {
                "params": sum(_local(p).nbytes for p in params),
                "grads": sum(_local(p.grad).nbytes for p in params if p.grad is not None),
                "optimizer": sum(_local(v).nbytes for v in opt_state),
            }


def worker(kind: str, args: argparse.Namespace) -> None:
    # Import what either strategy imports lazily, so the RSS baseline does not count module code.
    import torch._dynamo  # noqa: F401  (the first DDP() imports it)
    import torch.distributed.checkpoint.state_dict  # noqa: F401
    import torch.distributed.fsdp  # noqa: F401
    import torch.distributed.tensor  # noqa: F401

    torch.manual_seed(0)
    n = args.batch * 2 * (args.steps + 1)
    data = DataLoader(TensorDataset(torch.randn(n, args.width), torch.randn(n, 1)), batch_size=args.batch)
    strategy = DDPStrategy() if kind == "ddp" else FSDPStrategy(auto_wrap_policy={nn.Linear})
    measure = Measure()
    model = Model(args.layers, args.width)
    trainer = Trainer(
        strategy=strategy,
        accelerator="cpu",
        devices=2,
        max_steps=args.steps,
        callbacks=[measure],
        enable_progress_bar=False,
    )
    trainer.fit(model, data)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    result = {
        "state_mib": sum(measure.state_bytes.values()) / MiB,
        "parts_mib": {k: v / MiB for k, v in measure.state_bytes.items()},
        "peak_rss_growth_mib": peak - model.rss_before,
        "step_ms": statistics.median(measure.times[2:] or measure.times) * 1000,
        "params": sum(p.numel() for p in model.parameters()),
    }
    with open(os.path.join(args.out, f"{kind}_rank{trainer.global_rank}.json"), "w") as f:
        json.dump(result, f)
    strategy.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--glibc-default", action="store_true", help="keep glibc's dynamic mmap threshold")
    parser.add_argument("--worker", choices=["ddp", "fsdp"])
    parser.add_argument("--out")
    args = parser.parse_args()
    if args.worker:
        return worker(args.worker, args)
    with tempfile.TemporaryDirectory() as out:
        for kind in ("ddp", "fsdp"):
            cmd = [sys.executable, os.path.abspath(__file__), *sys.argv[1:], "--worker", kind, "--out", out]
            env = dict(os.environ)
            if not args.glibc_default:
                env.setdefault("MALLOC_MMAP_THRESHOLD_", "131072")
            subprocess.run(cmd, check=True, timeout=600, env=env)
        res = {(k, r): json.load(open(os.path.join(out, f"{k}_rank{r}.json"))) for k in ("ddp", "fsdp") for r in (0, 1)}
    n_params = res[("ddp", 0)]["params"]
    print(
        f"\nmodel: {args.layers} x Linear({args.width}, {args.width}) + head = {n_params / 1e6:.1f} M parameters, "
        f"AdamW, batch {args.batch}/rank, 2 ranks (gloo, CPU), torch {torch.__version__}, "
        f"MALLOC_MMAP_THRESHOLD_={'(glibc default)' if args.glibc_default else '131072'}"
    )
    print(f"{'':14}{'state MiB':>11}{'(p/g/opt)':>22}{'peak RSS growth MiB':>22}{'step ms':>10}")
    for (kind, rank), r in res.items():
        parts = "/".join(f"{v:.0f}" for v in r["parts_mib"].values())
        print(
            f"{kind} rank {rank:<6}{r['state_mib']:>11.1f}{parts:>22}{r['peak_rss_growth_mib']:>22.1f}"
            f"{r['step_ms']:>10.1f}"
        )
    for metric, label in [
        ("state_mib", "params+grads+optimizer per rank"),
        ("peak_rss_growth_mib", "peak RSS growth per rank"),
        ("step_ms", "step time"),
    ]:
        ratio = max(res[("fsdp", r)][metric] for r in (0, 1)) / max(res[("ddp", r)][metric] for r in (0, 1))
        print(f"FSDP / DDP {label}: {ratio:.2f}x")


if __name__ == "__main__":
    main()
