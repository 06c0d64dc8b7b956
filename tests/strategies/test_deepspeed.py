"""DeepSpeedStrategy: config building and the missing-extra error (always), and 2 real ranks of ZeRO
stage 2 and 3 on CPU/gloo against DDP (where ``deepspeed`` is installed).

The 2-rank checks share one run of ``scripts/deepspeed_run.py`` (DDP reference, then per stage an
uninterrupted run that saves an engine checkpoint at step 3 and a run resumed from it). The script
patches out DeepSpeed's one-time C++ JIT build of its shared-memory collective (about 2 minutes).
"""

from __future__ import annotations

import datetime
import importlib.util
import json
import sys

import pytest
import torch
from _helpers import SCRIPTS, run_script

from strategies import DeepSpeedStrategy, Trainer
from strategies.deepspeed import build_config

HAS_DEEPSPEED = importlib.util.find_spec("deepspeed") is not None
_skip_without_deepspeed = pytest.mark.skipif(
    not HAS_DEEPSPEED, reason='deepspeed is not installed (optional extra: pip install "strategy-compat[deepspeed]")'
)


def needs_deepspeed(test):
    """Marks ``test`` for CI's extras step (``pytest -m extras``); skips it where deepspeed is missing."""
    return pytest.mark.extras(_skip_without_deepspeed(test))


TOL = dict(rtol=1e-5, atol=1e-6)


# -- config and errors: no deepspeed needed ------------------------------------------------------------


def test_build_config_from_stage_shortcut_has_the_defaults():
    config = build_config(stage=3, offload_optimizer=True, offload_parameters=True, reduce_bucket_size=1000)
    assert config["zero_optimization"] == {
        "stage": 3,
        "offload_optimizer": {"device": "cpu", "pin_memory": True},
        "offload_param": {"device": "cpu", "pin_memory": True},
        "reduce_bucket_size": 1000,
    }
    assert config["train_micro_batch_size_per_gpu"] == 1 and config["zero_allow_untested_optimizer"] is True
    assert build_config()["zero_optimization"]["stage"] == 2  # Lightning's "deepspeed" default


def test_build_config_from_dict_and_json_path(tmp_path):
    user = {"zero_optimization": {"stage": 1}, "train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": True}}
    config = build_config(user)
    assert config["zero_optimization"]["stage"] == 1 and config["train_micro_batch_size_per_gpu"] == 4
    assert user == {"zero_optimization": {"stage": 1}, "train_micro_batch_size_per_gpu": 4, "bf16": {"enabled": True}}
    path = tmp_path / "ds.json"
    path.write_text(json.dumps(user))
    assert build_config(str(path)) == config
    assert build_config(path, stage=3)["zero_optimization"]["stage"] == 3  # an explicit stage wins


def test_unknown_stage_is_a_clear_error():
    with pytest.raises(ValueError, match=r"Unknown DeepSpeed ZeRO stage 4: valid stages are 0, 1, 2 and 3"):
        DeepSpeedStrategy(stage=4)
    with pytest.raises(ValueError, match=r"Unknown DeepSpeed ZeRO stage 'two'"):
        build_config({"zero_optimization": {"stage": "two"}})
    with pytest.raises(ValueError, match="offload_parameters=True` needs ZeRO stage 3"):
        build_config(stage=2, offload_parameters=True)


def test_missing_config_file_and_bad_type_are_clear_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="does not exist"):
        build_config(str(tmp_path / "nope.json"))
    with pytest.raises(TypeError, match="dict or a JSON file path"):
        build_config(42)


@pytest.mark.parametrize("name", ["deepspeed", "deepspeed_stage_2", "deepspeed_stage_3"])
def test_missing_deepspeed_names_the_extra(monkeypatch, name):
    monkeypatch.setitem(sys.modules, "deepspeed", None)  # as if not installed
    with pytest.raises(ModuleNotFoundError, match=r'pip install "strategy-compat\[deepspeed\]"') as err:
        Trainer(strategy=name, accelerator="cpu", devices=1)
    assert repr(name) in str(err.value)
    with pytest.raises(ModuleNotFoundError, match="strategy-compat"):
        DeepSpeedStrategy(config={"zero_optimization": {"stage": 2}})


@needs_deepspeed
def test_registry_names_set_the_stage():
    for name, stage in [("deepspeed", 2), ("deepspeed_stage_2", 2), ("deepspeed_stage_3", 3)]:
        trainer = Trainer(strategy=name, accelerator="cpu", devices=1)
        assert isinstance(trainer.strategy, DeepSpeedStrategy) and trainer.strategy.zero_stage == stage


@needs_deepspeed
def test_precision_and_clipping_go_into_the_engine_config():
    strategy = DeepSpeedStrategy(stage=2)
    trainer = Trainer(strategy=strategy, accelerator="cpu", devices=1, precision="bf16-mixed", gradient_clip_val=0.5)
    config = strategy._final_config(trainer)
    assert config["bf16"] == {"enabled": True} and config["gradient_clipping"] == 0.5
    assert "bf16" not in strategy.config  # the strategy's own config is not mutated


@pytest.fixture
def no_shm_build(monkeypatch):
    """Stop DeepSpeed's one-time C++ JIT build of its CPU shared-memory collective (~2 min; gloo is used)."""
    import deepspeed  # noqa: F401

    monkeypatch.setattr(sys.modules["deepspeed.comm.torch"], "build_shm_op", lambda *args, **kwargs: None)


@needs_deepspeed
def test_configure_model_that_creates_no_parameters_is_a_clear_error(no_shm_build):
    from strategies import TrainModule

    class Empty(TrainModule):
        def training_step(self, batch, batch_idx):
            return batch[0].sum()

    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(4, 2)), batch_size=2)
    strategy = DeepSpeedStrategy(stage=2, timeout=datetime.timedelta(seconds=30))
    try:
        with pytest.raises(ValueError, match=r"DeepSpeed found no parameters in `Empty`.*configure_model"):
            Trainer(strategy=strategy, accelerator="cpu", devices=1, max_steps=1).fit(Empty(), loader)
    finally:
        strategy.close()  # the rank variables DeepSpeed needed are gone again (the conftest checks)


@needs_deepspeed
def test_evaluation_without_an_optimizer_builds_an_inference_engine(no_shm_build):
    """validate/test/predict need no ``configure_optimizers``: ZeRO 1-2 would refuse to build without one.

    (A second engine after ``strategy.close()`` works: see the test below.)
    """
    from strategies import TrainModule

    class Net(TrainModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def forward(self, x):
            return self.layer(x)

        def validation_step(self, batch, batch_idx):
            self.log("val_loss", self.layer(batch[0]).pow(2).mean())

        def test_step(self, batch, batch_idx):
            self.log("test_loss", self.layer(batch[0]).pow(2).mean())

    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 2)), batch_size=4)
    strategy = DeepSpeedStrategy(stage=2, timeout=datetime.timedelta(seconds=30))
    trainer = Trainer(strategy=strategy, accelerator="cpu", devices=1, logger=False, enable_progress_bar=False)
    try:
        model = Net()
        expected = sum(model.layer(x).pow(2).mean().item() for (x,) in loader) / 2
        (validated,) = trainer.validate(model, loader)
        (tested,) = trainer.test(model, loader)
        predictions = trainer.predict(model, torch.utils.data.DataLoader(torch.randn(4, 2), batch_size=2))
    finally:
        strategy.close()
    assert validated["val_loss"] == pytest.approx(expected, rel=1e-5)
    assert tested["test_loss"] == pytest.approx(expected, rel=1e-5)
    assert [p.shape for p in predictions] == [torch.Size([2, 1])] * 2


@needs_deepspeed
def test_a_new_engine_after_close_in_the_same_process_trains(no_shm_build):
    """``close()`` destroys the group through DeepSpeed, which forgets the groups it cached on it; before,
    the second engine failed inside DeepSpeed with "Group ... is not registered" (issue 15)."""
    from strategies import TrainModule

    class Net(TrainModule):
        def __init__(self):
            super().__init__()
            self.layer = torch.nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).pow(2).mean()

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 2)), batch_size=4)
    steps = []
    for _ in range(2):
        strategy = DeepSpeedStrategy(stage=2, timeout=datetime.timedelta(seconds=30))
        trainer = Trainer(
            strategy=strategy,
            accelerator="cpu",
            devices=1,
            max_steps=2,
            logger=False,
            enable_progress_bar=False,
            enable_checkpointing=False,
            enable_model_summary=False,
        )
        try:
            trainer.fit(Net(), loader)
            steps.append(trainer.global_step)
        finally:
            strategy.close()
    assert steps == [2, 2]


# -- 2 ranks -----------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    if not HAS_DEEPSPEED:
        pytest.skip('deepspeed is not installed (optional extra: pip install "strategy-compat[deepspeed]")')
    out = tmp_path_factory.mktemp("deepspeed")
    proc = run_script([sys.executable, str(SCRIPTS / "deepspeed_run.py"), str(out), "2", "3"], timeout=300)
    assert proc.returncode == 0, f"deepspeed_run.py failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    return [torch.load(out / f"rank{r}.pt", weights_only=True) for r in (0, 1)]


@needs_deepspeed
@pytest.mark.parametrize("stage", [2, 3])
def test_zero_matches_ddp_loss_and_weights(ranks, stage):
    for r in ranks:
        run = r[f"stage{stage}"]
        assert run["seen"]["setup_pg"] == [True, 2]
        assert run["losses"] == pytest.approx(r["ddp"]["losses"], rel=1e-5, abs=1e-6)
        for key, value in r["ddp"]["weights"].items():
            torch.testing.assert_close(run["weights"][key], value, **TOL)


@needs_deepspeed
@pytest.mark.parametrize("stage", [2, 3])
def test_engine_checkpoint_resume_matches_uninterrupted_run(ranks, stage):
    for r in ranks:
        run = r[f"stage{stage}"]
        assert run["global_step"] == 6
        assert run["resumed_losses"] == pytest.approx(run["losses"][3:], rel=1e-6, abs=1e-7)
        for key, value in run["weights"].items():
            torch.testing.assert_close(run["resumed_weights"][key], value, rtol=0, atol=1e-7)
    # DeepSpeed needs LOCAL_RANK/RANK/WORLD_SIZE while it runs; those we set are gone after teardown.
    assert ranks[0][f"stage{stage}"]["env_after"] == []
    assert ranks[1][f"stage{stage}"]["env_after"] == ["LOCAL_RANK", "WORLD_SIZE"]  # set by the launcher


@needs_deepspeed
def test_stage3_partitions_parameters_created_in_configure_model(ranks):
    numel = [r["stage3"]["numel"] for r in ranks]
    full = numel[0][1]
    for module_numel, ds_numel, partition in numel:
        assert module_numel == 0 and ds_numel == full  # the module's tensors are empty; each rank a partition
        assert abs(partition - full / 2) <= 2
    assert ranks[0]["stage2"]["numel"][0] == full  # stage 2 keeps whole parameters


@needs_deepspeed
@pytest.mark.parametrize("stage", [2, 3])
def test_lifecycle_record(ranks, stage):
    for rank, r in enumerate(ranks):
        names = [n for rr, _, n in r[f"stage{stage}"]["record"] if rr == rank]
        i = names.index
        assert i("process_group.reuse") < i("deepspeed.init_distributed") < i("module.setup")
        assert (
            i("strategy.model_sharded_context.enter")
            < i("module.configure_model")
            < i("strategy.model_sharded_context.exit")
            < i("strategy.setup")
        )
        # DeepSpeed takes the optimizer into the engine: optimizers come before the wrap (as in Lightning).
        assert i("strategy.setup") < i("module.configure_optimizers") < i("strategy.wrap") < i("module.on_fit_start")
        resumed = [n for rr, _, n in r[f"stage{stage}"]["resumed_record"] if rr == rank]
        assert (
            resumed.index("strategy.wrap")
            < resumed.index("strategy.load_checkpoint")
            < resumed.index("module.on_fit_start")
        )
