"""1.x's automatic optimization over several optimizers (``training_step(..., optimizer_idx)``)
under ``compat.Trainer``: one process in-process, and 2 real gloo processes (1.x's ``ddp_cpu``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import compat

SCRIPT = Path(__file__).resolve().parent / "scripts" / "several_optimizers.py"
REPO = Path(__file__).resolve().parents[2]


def _quiet(factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory()


def _data(n=16):
    return DataLoader(TensorDataset(torch.randn(n, 4, generator=torch.Generator().manual_seed(0))), batch_size=4)


def _trainer(tmp_path, **kwargs):
    return _quiet(
        lambda: compat.Trainer(
            default_root_dir=str(tmp_path),
            logger=False,
            enable_progress_bar=False,
            checkpoint_callback=False,
            **{"max_epochs": 1, **kwargs},
        )
    )


class Gan(compat.LightningModule):
    def __init__(self, optimizers=None):
        super().__init__()
        self.generator = nn.Linear(4, 4)
        self.discriminator = nn.Linear(4, 1)
        self.calls: list[tuple[int, int]] = []
        self.epoch_outputs = None
        self._optimizers = optimizers

    def training_step(self, batch, batch_idx, optimizer_idx):
        (x,) = batch
        self.calls.append((batch_idx, optimizer_idx))
        if optimizer_idx == 0:
            return {"loss": -self.discriminator(self.generator(x)).mean(), "which": "g"}
        return {"loss": (self.discriminator(self.generator(x).detach()) - self.discriminator(x)).mean(), "which": "d"}

    def training_epoch_end(self, outputs):
        self.epoch_outputs = outputs

    def configure_optimizers(self):
        opt_g = torch.optim.SGD(self.generator.parameters(), lr=0.1)
        opt_d = torch.optim.SGD(self.discriminator.parameters(), lr=0.1)
        if self._optimizers == "frequencies":
            return {"optimizer": opt_g, "frequency": 2}, {"optimizer": opt_d, "frequency": 1}
        return [opt_g, opt_d], [torch.optim.lr_scheduler.StepLR(opt_d, 1, 0.5)]


def test_each_optimizer_steps_its_own_parameters_in_turn_once_per_batch(tmp_path):
    model = _quiet(Gan)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    trainer = _trainer(tmp_path, max_epochs=2)
    trainer.fit(model, _data())
    assert model.calls == [(b, o) for b in range(4) for o in (0, 1)] * 2
    assert trainer.global_step == 8  # 1.x counted batches, not optimizer steps
    assert [opt.param_groups[0]["lr"] for opt in trainer.optimizers] == [0.1, 0.025]  # stepped per epoch
    for name in ("generator.weight", "discriminator.weight"):  # (the discriminator's bias cancels out)
        assert not torch.equal(before[name], dict(model.named_parameters())[name]), name
    # training_epoch_end: outputs[optimizer_idx][batch], as 1.x passed them
    assert [[o["which"] for o in per_optimizer] for per_optimizer in model.epoch_outputs] == [["g"] * 4, ["d"] * 4]
    assert all(p.requires_grad for p in model.parameters()), "a toggle was not undone"


def test_the_other_optimizers_parameters_are_frozen_during_a_step(tmp_path):
    frozen = []

    class Watch(Gan):
        def training_step(self, batch, batch_idx, optimizer_idx):
            other = self.discriminator if optimizer_idx == 0 else self.generator
            frozen.append(not any(p.requires_grad for p in other.parameters()))
            return super().training_step(batch, batch_idx, optimizer_idx)

    _trainer(tmp_path).fit(_quiet(Watch), _data())
    assert frozen and all(frozen)


def test_frequencies_give_each_optimizer_its_run_of_batches(tmp_path):
    model = _quiet(lambda: Gan("frequencies"))
    trainer = _trainer(tmp_path, max_epochs=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no "unsupported key: frequency" here
        trainer.fit(model, _data(24))
    assert [o for _, o in model.calls] == [0, 0, 1, 0, 0, 1]
    assert trainer.global_step == 6


def test_one_optimizer_and_a_default_optimizer_idx_is_called_with_two_arguments(tmp_path):
    seen = []

    class One(compat.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(4, 1)

        def training_step(self, batch, batch_idx, optimizer_idx=None):
            seen.append(optimizer_idx)
            return self.layer(batch[0]).sum()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    _trainer(tmp_path).fit(_quiet(One), _data(8))
    assert seen == [None, None]


def test_strategies_trainer_still_refuses_several_optimizers_without_manual_optimization(tmp_path):
    import strategies

    class NewGan(strategies.TrainModule):
        def __init__(self):
            super().__init__()
            self.generator, self.discriminator = nn.Linear(4, 4), nn.Linear(4, 1)

        training_step = Gan.training_step
        configure_optimizers = Gan.configure_optimizers
        _optimizers = None

    trainer = strategies.Trainer(
        accelerator="cpu", max_epochs=1, logger=False, enable_progress_bar=False, enable_checkpointing=False
    )
    with pytest.raises(RuntimeError, match="manual optimization"):
        trainer.fit(NewGan(), _data())


def _run(out: Path, devices: int) -> dict[int, dict]:
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT")}
    env["PYTHONPATH"] = str(REPO)
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), str(out), str(devices)], env=env, capture_output=True, text=True, timeout=240
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    return {r: json.loads((out / f"rank{r}.json").read_text()) for r in range(devices)}


@pytest.mark.slow  # one spawn launch of 2 processes
def test_two_gloo_processes_run_the_1x_loop_with_1xs_find_unused_parameters(tmp_path):
    ranks = _run(tmp_path, 2)
    for result in ranks.values():
        # 16 samples on 2 ranks: 2 batches of 4 each per epoch, both optimizers on each
        assert result["calls"] == [[b, o] for b in range(2) for o in (0, 1)] * 2
        assert result["global_step"] == 4
        assert result["lrs"] == [0.025, 0.05]
    assert ranks[0]["weights"] == ranks[1]["weights"], "the ranks' weights differ after the all-reduce"
