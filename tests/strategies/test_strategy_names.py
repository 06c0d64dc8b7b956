"""``Trainer(strategy="...")`` takes the names Lightning 2.6 registers, each building what Lightning builds.

Lightning's own advice when a parameter goes unused is ``strategy="ddp_find_unused_parameters_true"``,
and notebooks use ``"ddp_notebook"``; programs written for Lightning pass those names as they are.
The table below is compared with Lightning's registry where Lightning is installed (CI's second
step), so a name Lightning adds fails here until it is added or listed in ``NOT_PROVIDED``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from strategies import STRATEGY_REGISTRY, DDPSpawnStrategy, DDPStrategy, FSDPStrategy

#: name -> (class, attributes and DistributedDataParallel keywords it must have)
NAMES = {
    "ddp": (DDPStrategy, {}),
    "ddp_find_unused_parameters_true": (DDPStrategy, {"find_unused_parameters": True}),
    "ddp_find_unused_parameters_false": (DDPStrategy, {"find_unused_parameters": False}),
    "ddp_spawn": (DDPSpawnStrategy, {"start_method": "spawn"}),
    "ddp_fork": (DDPSpawnStrategy, {"start_method": "fork"}),
    "ddp_notebook": (DDPSpawnStrategy, {"start_method": "fork"}),
    **{
        f"{name}_find_unused_parameters_{str(flag).lower()}": (
            DDPSpawnStrategy,
            {"start_method": method, "find_unused_parameters": flag},
        )
        for name, method in (("ddp_spawn", "spawn"), ("ddp_fork", "fork"), ("ddp_notebook", "fork"))
        for flag in (True, False)
    },
    "fsdp": (FSDPStrategy, {"cpu_offload": False}),
    "fsdp_cpu_offload": (FSDPStrategy, {"cpu_offload": True}),
}

#: Lightning's names that are not here, and why.
NOT_PROVIDED = {
    "xla": "no XLA/TPU support in strategies",
    "xla_debug": "no XLA/TPU support in strategies",
    "single_xla": "no XLA/TPU support in strategies",
    "single_tpu": "no XLA/TPU support in strategies",
    "deepspeed_stage_3_offload_nvme": "NVMe offload needs an NVMe path: pass DeepSpeedStrategy(config=...) with it",
}


def _value(strategy, key):
    if key == "find_unused_parameters":
        return strategy._ddp_kwargs.get(key)
    return getattr(strategy, key)


@pytest.mark.parametrize("name", sorted(NAMES))
def test_each_name_builds_its_strategy(name: str) -> None:
    cls, expected = NAMES[name]
    built = STRATEGY_REGISTRY.create(name)
    assert type(built) is cls
    assert {key: _value(built, key) for key in expected} == expected


@pytest.mark.extras
def test_the_names_are_lightnings() -> None:
    """Every name Lightning 2.6 registers is here with the same settings, or listed with its reason."""
    registry = pytest.importorskip("lightning.pytorch.strategies", reason="needs Lightning 2.6").StrategyRegistry
    theirs = {name: registry[name] for name in registry.available_strategies()}
    ours = set(STRATEGY_REGISTRY.names()) - {"auto"}
    assert set(theirs) - set(NOT_PROVIDED) <= ours, sorted(set(theirs) - set(NOT_PROVIDED) - ours)
    for name, entry in theirs.items():
        if name in NOT_PROVIDED:
            continue
        params = dict(entry["init_params"])
        start = params.pop("start_method", None)
        built = STRATEGY_REGISTRY.create(name)
        if start is not None:  # Lightning's one DDPStrategy class; here "popen" is DDPStrategy
            assert (type(built) is DDPStrategy) == (start == "popen"), name
            if start != "popen":
                assert built.start_method == start, name
        for key, value in params.items():
            if type(built).__name__ == "DeepSpeedStrategy":
                zero = built.config["zero_optimization"]
                got = {"stage": zero["stage"], "offload_optimizer": "offload_optimizer" in zero}
                got["offload_parameters"] = "offload_param" in zero
                assert got[key] == value, (name, key)
            else:
                assert _value(built, key) == value, (name, key)


SCRIPT = """\
import json, sys
import torch
from torch import nn
from torch.utils.data import DataLoader
from strategies import Trainer, TrainModule


class Model(TrainModule):
    def __init__(self):
        super().__init__()
        torch.manual_seed(0)
        self.used = nn.Linear(4, 1)
        self.unused = nn.Linear(4, 1)  # never in the graph: plain DDP fails at the second step

    def training_step(self, batch, batch_idx):
        self.log("world", float(torch.distributed.get_world_size()))
        return self.used(batch).pow(2).mean()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        torch.manual_seed(1)
        return DataLoader(torch.randn(16, 4), batch_size=4)


if __name__ == "__main__":
    model = Model()
    trainer = Trainer(strategy=sys.argv[1], accelerator="cpu", devices=2, max_steps=3, logger=False,
                      enable_checkpointing=False, enable_progress_bar=False)
    trainer.strategy.timeout = __import__("datetime").timedelta(seconds=240)
    trainer.fit(model)
    if trainer.global_rank == 0:
        print("RESULT " + json.dumps({"world": trainer.callback_metrics["world"].item(),
                                      "weight": model.used.weight.flatten().tolist()}))
"""


@pytest.mark.slow  # three two-rank runs (~20 s each on 2 cores): CI's second step
def test_fork_and_find_unused_names_train_on_two_ranks(tmp_path: Path) -> None:
    """``ddp_fork`` trains like ``ddp_spawn`` (same weights), and a module with an unused
    parameter trains under ``ddp_find_unused_parameters_true``, where ``ddp`` stops."""
    (tmp_path / "train.py").write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[2]), *sys.path])}

    def run(name: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "train.py", name], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )

    results = {}
    for name in ("ddp_spawn_find_unused_parameters_true", "ddp_fork_find_unused_parameters_true",
                 "ddp_find_unused_parameters_true"):  # fmt: skip
        proc = run(name)
        assert proc.returncode == 0, (name, proc.stderr[-3000:])
        [line] = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
        results[name] = json.loads(line[len("RESULT ") :])
        assert results[name]["world"] == 2.0, name
    weights = [r["weight"] for r in results.values()]
    assert weights[0] == pytest.approx(weights[1]) and weights[0] == pytest.approx(weights[2])
    plain = run("ddp")
    assert plain.returncode != 0 and "find_unused_parameters" in plain.stderr, plain.stderr[-3000:]
