"""2-rank FSDP vs DDP scenarios on CPU/gloo, run as a script (the "fsdp"/"ddp" launcher re-runs it).

    python tests/strategies/scripts/fsdp_run.py OUT_DIR

Every rank writes ``OUT_DIR/rank{r}.pt`` (plain tensors and lists, ``weights_only``-loadable):

* ``ddp``: losses and final weights of a DDP run (seeded init, gradient clipping);
* ``fsdp``: the same with FSDP (``meta_init=False`` for the same init, per-Linear units): losses,
  the full state dict gathered on rank 0, and outputs of the sharded model on fixed inputs;
  ``setup_pg``: the process group as seen in ``setup``; ``shards``: local/global numel per
  parameter after ``setup``; the hook record;
* ``full_ckpt``: the rank-0 full checkpoint's path (loaded into an unwrapped module by the test);
* ``resume``: an uninterrupted meta-init run of 6 steps that writes a sharded checkpoint at step 3
  (mid-epoch), and a run resumed from it; the final full weights of both; the resumed run's record;
* ``bf16``: a short ``bf16-mixed`` run (policy dtypes and loss).
"""

from __future__ import annotations

import os
import sys
import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))

from strategies import (  # noqa: E402
    Callback,
    DDPStrategy,
    FSDPStrategy,
    Trainer,
    TrainModule,
    _fsdp,
)

TIMEOUT = __import__("datetime").timedelta(seconds=60)


def data() -> DataLoader:
    g = torch.Generator().manual_seed(1)
    x = torch.randn(64, 16, generator=g)
    y = x[:, :1] * 2 - x[:, 1:2] + 0.1 * torch.randn(64, 1, generator=g)
    return DataLoader(TensorDataset(x, y), batch_size=8, shuffle=True)


PROBE = torch.randn(5, 16, generator=torch.Generator().manual_seed(7))


class Net(TrainModule):
    """Layers created in ``configure_model`` (inside the strategy's sharded context)."""

    def __init__(self, seed: int | None = 0) -> None:
        super().__init__()
        self.seed = seed
        self.net: nn.Module | None = None
        self.losses: list[float] = []
        self.seen: dict = {}

    def configure_model(self) -> None:
        if self.net is not None:
            return
        if self.seed is not None:
            torch.manual_seed(self.seed)
        self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 1))
        self.seen["param_device_in_configure_model"] = str(next(self.net.parameters()).device)

    def setup(self, stage: str) -> None:
        import torch.distributed as dist

        self.seen["setup_pg"] = [dist.is_initialized(), dist.get_world_size() if dist.is_initialized() else 0]

    def forward(self, x):
        return self.net(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self(x), y)
        self.losses.append(float(loss.detach()))
        return loss

    def configure_optimizers(self):
        opt = torch.optim.AdamW(self.parameters(), lr=0.02, weight_decay=0.01)
        return {
            "optimizer": opt,
            "lr_scheduler": {"scheduler": torch.optim.lr_scheduler.StepLR(opt, 2, 0.5), "interval": "step"},
        }


class Probe(Callback):
    """Looks at the sharded parameters after setup and the sharded model's outputs at the end."""

    def __init__(self) -> None:
        self.shards: dict[str, list[int]] = {}
        self.outputs: torch.Tensor | None = None

    def on_fit_start(self, trainer, module):
        for name, p in module.named_parameters():
            local = p._local_tensor if _fsdp.is_dtensor(p) else p
            self.shards[name] = [local.numel(), p.numel(), int(_fsdp.is_dtensor(p))]

    def on_train_end(self, trainer, module):  # before strategy.teardown (on_fit_end is after it)
        if isinstance(trainer.strategy, FSDPStrategy):  # through the FSDP root: every rank all-gathers
            with torch.no_grad():
                self.outputs = trainer.strategy.model("forward", PROBE).detach().clone()


class SaveAt(Callback):
    """Save a checkpoint before the batch that follows optimizer step ``k`` (loop state is consistent there)."""

    def __init__(self, step: int, path: str) -> None:
        self.step, self.path, self.done = step, path, False

    def on_train_batch_start(self, trainer, module, batch, batch_idx):
        if trainer.state.global_step == self.step and not self.done:
            self.done = True
            trainer.save_checkpoint(self.path)


def main(out: str) -> None:
    t0 = time.time()
    result: dict = {}
    common = dict(
        accelerator="cpu",
        devices=2,
        max_steps=6,
        enable_progress_bar=False,
        gradient_clip_val=0.5,
        enable_checkpointing=False,
        logger=False,
    )

    # DDP reference.
    ddp_model = Net()
    trainer = Trainer(strategy=DDPStrategy(timeout=TIMEOUT), **common)
    trainer.fit(ddp_model, data())
    result["ddp"] = {
        "losses": ddp_model.losses,
        "weights": {k: v.clone() for k, v in ddp_model.state_dict().items()},
        "outputs": ddp_model(PROBE).detach(),
    }
    rank = trainer.global_rank

    # FSDP, same init (meta_init=False + seed), one unit per Linear, full-state checkpoint.
    probe = Probe()
    fsdp_model = Net()
    strategy = FSDPStrategy(timeout=TIMEOUT, auto_wrap_policy={nn.Linear}, meta_init=False, state_dict_type="full")
    trainer = Trainer(strategy=strategy, callbacks=[probe], record_hooks=True, **common)
    trainer.fit(fsdp_model, data())
    full_ckpt = os.path.join(out, "full.ckpt")
    trainer.save_checkpoint(full_ckpt)
    result["fsdp"] = {
        "losses": fsdp_model.losses,
        "weights": strategy.full_state_dict(),
        "outputs": probe.outputs,
        "shards": probe.shards,
        "seen": fsdp_model.seen,
        "record": [tuple(c) for c in trainer.hook_record],
    }
    result["full_ckpt"] = full_ckpt

    # Sharded checkpoint at step 3 (mid-epoch) of an uninterrupted meta-init run, then a resumed run.
    sharded = os.path.join(out, "sharded_step3")
    probe = Probe()
    first = Net(seed=None)
    trainer = Trainer(
        strategy=FSDPStrategy(timeout=TIMEOUT, auto_wrap_policy={nn.Linear}, state_dict_type="sharded"),
        callbacks=[SaveAt(3, sharded), probe],
        record_hooks=True,
        **common,
    )
    trainer.fit(first, data())
    uninterrupted = trainer.strategy.full_state_dict()
    result["meta"] = {"shards": probe.shards, "seen": first.seen, "record": [tuple(c) for c in trainer.hook_record]}
    resumed = Net(seed=123)  # a different init: the checkpoint must overwrite it
    trainer = Trainer(strategy=FSDPStrategy(timeout=TIMEOUT, auto_wrap_policy={nn.Linear}), record_hooks=True, **common)
    trainer.fit(resumed, data(), ckpt_path=sharded)
    result["resume"] = {
        "uninterrupted": uninterrupted,
        "resumed": trainer.strategy.full_state_dict(),
        "global_step": trainer.state.global_step,
        "record": [tuple(c) for c in trainer.hook_record],
        "losses_uninterrupted": first.losses[3:],
        "losses_resumed": resumed.losses,
        "files": sorted(os.listdir(sharded)),
    }

    # bf16-mixed: the MixedPrecisionPolicy comes from the Trainer's precision.
    bf16 = Net()
    trainer = Trainer(strategy=FSDPStrategy(timeout=TIMEOUT), precision="bf16-mixed", **{**common, "max_steps": 2})
    trainer.fit(bf16, data())
    policy = trainer.strategy.mixed_precision_policy()
    # The default state_dict_type ("full"): module_state_dict() is the full, plain state dict on rank 0.
    result["default_state_dict"] = {
        "type": trainer.strategy.state_dict_type,
        "entries": {k: (type(v).__name__, tuple(v.shape)) for k, v in trainer.strategy.module_state_dict().items()},
        "full_shapes": {k: tuple(v.shape) for k, v in bf16.state_dict().items()},
    }
    result["bf16"] = {
        "param_dtype": str(policy.param_dtype),
        "reduce_dtype": str(policy.reduce_dtype),
        "losses": bf16.losses,
        "stored_dtypes": sorted({str(p.dtype) for p in bf16.parameters()}),
    }
    result["seconds"] = time.time() - t0
    torch.save(result, os.path.join(out, f"rank{rank}.pt"))
    trainer.strategy.close()


if __name__ == "__main__":
    main(sys.argv[1])
