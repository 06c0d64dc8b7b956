"""2-rank DeepSpeed ZeRO vs DDP on CPU/gloo, run as a script (the launcher re-runs it).

    python tests/strategies/scripts/deepspeed_run.py OUT_DIR [STAGE ...]

DeepSpeed's one-time C++ JIT build of its shared-memory collective (``deepspeed_shm_comm``, about
2 minutes on a cold cache) is patched out: gloo does the collectives. Every rank writes
``OUT_DIR/rank{r}.pt``: a DDP reference (losses, final weights), then per stage the losses and the
full final weights of an uninterrupted run that saves an engine checkpoint at step 3, and of a run
resumed from it; the process group seen in ``setup``, and the hook record.
"""

from __future__ import annotations

import os
import sys
import time

os.environ.setdefault("DS_ACCELERATOR", "cpu")

import torch  # noqa: E402

sys.path.insert(0, os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "..")))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from fsdp_run import TIMEOUT, Net, SaveAt, data  # noqa: E402

from strategies import Callback, DDPStrategy, DeepSpeedStrategy, Trainer  # noqa: E402


class Inspect(Callback):
    """Partition sizes after setup, and the full weights at the end (stage 3 gathers: every rank calls)."""

    def __init__(self) -> None:
        self.numel: list[int] = []
        self.weights: dict | None = None

    def on_fit_start(self, trainer, module):
        params = list(module.parameters())
        self.numel = [  # in the module's tensors, in full, in this rank's ZeRO-3 partitions
            sum(p.numel() for p in params),
            sum(int(getattr(p, "ds_numel", p.numel())) for p in params),
            sum(p.ds_tensor.numel() for p in params if hasattr(p, "ds_tensor")),
        ]

    def on_train_end(self, trainer, module):  # before strategy.teardown (on_fit_end is after it)
        self.weights = trainer.strategy.module_state_dict()


def _no_shm_build() -> None:
    import deepspeed  # noqa: F401

    sys.modules["deepspeed.comm.torch"].build_shm_op = lambda *args, **kwargs: None


def main(out: str, stages: list[int]) -> None:
    _no_shm_build()
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

    ddp_model = Net()
    trainer = Trainer(strategy=DDPStrategy(timeout=TIMEOUT), **common)
    trainer.fit(ddp_model, data())
    rank = trainer.global_rank
    result["ddp"] = {"losses": ddp_model.losses, "weights": {k: v.clone() for k, v in ddp_model.state_dict().items()}}

    for stage in stages:
        path = os.path.join(out, f"ds_stage{stage}")
        model, inspect = Net(), Inspect()
        trainer = Trainer(
            strategy=DeepSpeedStrategy(stage=stage, timeout=TIMEOUT),
            callbacks=[SaveAt(3, path), inspect],
            record_hooks=True,
            **common,
        )
        trainer.fit(model, data())
        resumed, inspect2 = Net(seed=123), Inspect()
        trainer2 = Trainer(
            strategy=DeepSpeedStrategy(stage=stage, timeout=TIMEOUT), callbacks=[inspect2], record_hooks=True, **common
        )
        trainer2.fit(resumed, data(), ckpt_path=path)
        result[f"stage{stage}"] = {
            "losses": model.losses,
            "weights": inspect.weights,
            "seen": model.seen,
            "numel": inspect.numel,
            "record": [tuple(c) for c in trainer.hook_record],
            "resumed_losses": resumed.losses,
            "resumed_record": [tuple(c) for c in trainer2.hook_record],
            "resumed_weights": inspect2.weights,
            "global_step": trainer2.state.global_step,
            "env_after": [k for k in ("LOCAL_RANK", "RANK", "WORLD_SIZE") if k in os.environ],
        }
    result["seconds"] = time.time() - t0
    result["ds_version"] = __import__("deepspeed").__version__
    torch.save(result, os.path.join(out, f"rank{rank}.pt"))
    trainer.strategy.close()


if __name__ == "__main__":
    main(sys.argv[1], [int(s) for s in sys.argv[2:]] or [2])
