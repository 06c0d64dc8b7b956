"""FSDPStrategy: 2 real ranks (gloo, CPU) against DDP, checkpoints both ways, lifecycle, bad input.

The 2-rank checks share one run of ``scripts/fsdp_run.py`` (the "fsdp"/"ddp" launcher re-runs the
script for rank 1, which it cannot do for pytest); each test below asserts one guarantee on what
the ranks wrote. Single-process checks run in this process with a 1-rank group.
"""

from __future__ import annotations

import datetime
import sys

import pytest
import torch
from _helpers import SCRIPTS, expected_order, observed_order, run_script
from torch import nn

from strategies import Callback, FSDPStrategy, Trainer, TrainModule

TIMEOUT = datetime.timedelta(seconds=30)
TOL = dict(rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    out = tmp_path_factory.mktemp("fsdp")
    proc = run_script([sys.executable, str(SCRIPTS / "fsdp_run.py"), str(out)], timeout=300)
    assert proc.returncode == 0, f"fsdp_run.py failed:\n{proc.stdout[-4000:]}\n{proc.stderr[-8000:]}"
    return [torch.load(out / f"rank{r}.pt", weights_only=True) for r in (0, 1)]


def _names(record, rank=0):
    return [name for r, _, name in record if r == rank]


def test_process_group_is_live_in_setup(ranks):
    for r in ranks:
        assert r["fsdp"]["seen"]["setup_pg"] == [True, 2]
        assert r["meta"]["seen"]["setup_pg"] == [True, 2]


def test_configure_model_params_are_on_meta_then_sharded_in_half(ranks):
    assert ranks[0]["meta"]["seen"]["param_device_in_configure_model"] == "meta"
    for name, (local0, full, is_dtensor) in ranks[0]["meta"]["shards"].items():
        local1 = ranks[1]["meta"]["shards"][name][0]
        assert is_dtensor == 1, name
        assert local0 + local1 == full, name  # every element is on exactly one rank
        if name not in ("net.4.weight", "net.4.bias"):  # (1, 64) and (1,): one row, cannot be split in two
            assert local0 == local1 == full // 2, (name, local0, local1, full)
    total = sum(v[1] for v in ranks[0]["meta"]["shards"].values())
    held = sum(v[0] for v in ranks[0]["meta"]["shards"].values())
    assert 0.45 * total <= held <= 0.55 * total


def test_loss_and_gathered_weights_match_ddp(ranks):
    for r in ranks:
        assert r["fsdp"]["losses"] == pytest.approx(r["ddp"]["losses"], rel=1e-5, abs=1e-6)
    full, ddp = ranks[0]["fsdp"]["weights"], ranks[0]["ddp"]["weights"]
    assert full.keys() == ddp.keys()
    for key in ddp:
        assert not hasattr(full[key], "placements"), "the full state dict must hold plain tensors"
        torch.testing.assert_close(full[key], ddp[key], **TOL)
    torch.testing.assert_close(ranks[0]["fsdp"]["outputs"], ranks[0]["ddp"]["outputs"], **TOL)
    assert ranks[1]["fsdp"]["weights"] == {}  # the full state lives on rank 0 only


def test_full_checkpoint_loads_into_an_unwrapped_module(ranks):
    import fsdp_run

    checkpoint = torch.load(ranks[0]["full_ckpt"], weights_only=True)
    plain = fsdp_run.Net(seed=99)
    plain.configure_model()
    plain.load_state_dict(checkpoint["state_dict"], strict=True)
    with torch.no_grad():
        torch.testing.assert_close(plain(fsdp_run.PROBE), ranks[0]["fsdp"]["outputs"], **TOL)
    assert checkpoint["global_step"] == 6
    # The optimizer state is in `Optimizer.state_dict()` form, so a single-device run resumes from it.
    resumed = fsdp_run.Net(seed=99)
    trainer = Trainer(strategy="single_device", accelerator="cpu", max_steps=7, enable_progress_bar=False)
    trainer.fit(resumed, fsdp_run.data(), ckpt_path=ranks[0]["full_ckpt"])
    assert trainer.state.global_step == 7 and len(resumed.losses) == 1


def test_sharded_checkpoint_resume_matches_uninterrupted_run(ranks):
    for r in ranks:
        res = r["resume"]
        assert res["global_step"] == 6
        assert res["losses_resumed"] == pytest.approx(res["losses_uninterrupted"], rel=1e-6, abs=1e-7)
    res = ranks[0]["resume"]
    assert {"meta.pt", ".metadata"} <= set(res["files"]) and sum(f.endswith(".distcp") for f in res["files"]) == 2
    for key, value in res["uninterrupted"].items():
        torch.testing.assert_close(res["resumed"][key], value, rtol=0, atol=1e-7)


def test_lifecycle_record_configure_model_in_sharded_context_and_wrap_before_optimizers(ranks):
    for rank, r in enumerate(ranks):
        names = _names(r["meta"]["record"], rank)
        i = names.index
        assert i("process_group.reuse") < i("module.setup")  # the group exists before the setup hooks
        assert (
            i("module.setup")
            < i("strategy.model_sharded_context.enter")
            < i("module.configure_model")
            < i("strategy.model_sharded_context.exit")
            < i("strategy.setup")
        )
        assert (
            i("strategy.setup")
            < i("strategy.model_to_device")
            < i("strategy.materialize_meta")
            < i("strategy.wrap")
            < i("module.configure_optimizers")
            < i("module.on_fit_start")
        )
        resumed = _names(r["resume"]["record"], rank)
        j = resumed.index
        assert (
            j("strategy.wrap")
            < j("module.configure_optimizers")
            < j("strategy.load_checkpoint")
            < j("module.on_fit_start")
        )  # restore after setup


def test_lifecycle_record_matches_the_documented_contract(ranks):
    # docs/lifecycle.md's table, less the datamodule rows (this run has none); two callbacks record twice.
    for rank, r in enumerate(ranks):
        observed = observed_order(r["meta"]["record"], "fit")
        observed = [n for i, n in enumerate(observed) if i == 0 or n != observed[i - 1]]
        expected = [n for n in expected_order("fit", parallel=True, local_rank=rank) if not n.startswith("datamodule.")]
        assert observed == expected


def test_default_module_state_dict_is_the_full_state_dict_on_rank_zero(ranks):
    """Like Lightning's Trainer: `state_dict_type="full"` by default, and the contract says full."""
    rank0, rank1 = ranks[0]["default_state_dict"], ranks[1]["default_state_dict"]
    assert rank0["type"] == "full"
    assert rank0["entries"] and {t for t, _ in rank0["entries"].values()} == {"Tensor"}
    # The module's own parameters are DTensors with full logical shapes; the state dict has them whole.
    assert {k: shape for k, (_, shape) in rank0["entries"].items()} == rank0["full_shapes"]
    assert rank1["entries"] == {}


def test_bf16_mixed_gives_a_bf16_policy_with_fp32_master_weights(ranks):
    bf16 = ranks[0]["bf16"]
    assert bf16["param_dtype"] == "torch.bfloat16" and bf16["reduce_dtype"] == "torch.float32"
    assert bf16["stored_dtypes"] == ["torch.float32"]
    assert len(bf16["losses"]) == 2 and all(loss == loss for loss in bf16["losses"])


# -- single process (1-rank gloo group, in this process) ---------------------------------------------------


class _Tiny(TrainModule):
    def __init__(self, create: bool = True) -> None:
        super().__init__()
        self.create = create
        self.layer: nn.Module | None = None

    def configure_model(self):
        if self.create and self.layer is None:
            self.layer = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 1))

    def training_step(self, batch, batch_idx):
        return self.layer(batch[0]).pow(2).mean()

    def test_step(self, batch, batch_idx):
        self.log("test_loss", self.layer(batch[0]).pow(2).mean())

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


def _loader():
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(8, 4)), batch_size=4)


def _trainer(strategy, **kwargs):
    return Trainer(strategy=strategy, accelerator="cpu", devices=1, enable_progress_bar=False, **kwargs)


class _Capture(Callback):
    def __init__(self):
        self.weights = None

    def on_fit_start(self, trainer, module):
        self.weights = trainer.strategy.full_state_dict()


def test_one_rank_refit_reuses_the_sharding_and_loads_a_full_checkpoint_in_place(tmp_path):
    strategy = FSDPStrategy(timeout=TIMEOUT, state_dict_type="full")
    model = _Tiny()
    try:
        trainer = _trainer(strategy, max_steps=2, gradient_clip_val=1e-3)
        trainer.fit(model, _loader())
        assert all(hasattr(p, "placements") for p in model.parameters())
        trainer.save_checkpoint(tmp_path / "full.ckpt")
        weights = torch.load(tmp_path / "full.ckpt", weights_only=True)["state_dict"]
        assert set(weights) == {"layer.0.weight", "layer.0.bias", "layer.2.weight", "layer.2.bias"}
        with torch.no_grad():
            for p in model.parameters():
                p.zero_()
        capture = _Capture()  # sees the weights right after the restore (which runs after setup)
        trainer = _trainer(strategy, max_steps=3, callbacks=[capture])
        trainer.fit(model, _loader(), ckpt_path=tmp_path / "full.ckpt")
        assert trainer.state.global_step == 3
        for key, value in capture.weights.items():
            torch.testing.assert_close(value, weights[key])
        # test on a fresh module: sharded in setup (no optimizers), then the full checkpoint is loaded
        fresh = _Tiny()
        with torch.no_grad():
            expected = weights["layer.0.bias"].sum().item()
        (result,) = _trainer(FSDPStrategy(timeout=TIMEOUT), record_hooks=False).test(
            fresh, _loader(), ckpt_path=tmp_path / "full.ckpt"
        )
        assert all(hasattr(p, "placements") for p in fresh.parameters()) and "test_loss" in result
        assert fresh.layer[0].bias.full_tensor().sum().item() == pytest.approx(expected)
    finally:
        strategy.close()


def test_meta_init_materialises_like_eager_init_children_first():
    class Encoder(_Tiny):
        def configure_model(self):
            if self.layer is None:
                self.layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, batch_first=True)

    capture = _Capture()
    strategy = FSDPStrategy(timeout=TIMEOUT, auto_wrap_policy={nn.TransformerEncoderLayer})
    model = Encoder()
    try:
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.randn(4, 3, 16)), batch_size=2)
        _trainer(strategy, max_steps=1, callbacks=[capture]).fit(model, loader)
    finally:
        strategy.close()
    w = capture.weights  # right after setup, before any step
    # MultiheadAttention._reset_parameters (run after its out_proj's Linear init) zeroes these, as eagerly
    assert w["layer.self_attn.in_proj_bias"].abs().max() == 0 and w["layer.self_attn.out_proj.bias"].abs().max() == 0
    assert torch.equal(w["layer.norm1.weight"], torch.ones(16)) and torch.equal(w["layer.norm1.bias"], torch.zeros(16))
    for key in ("layer.self_attn.in_proj_weight", "layer.linear1.weight", "layer.linear2.bias"):
        assert 0.01 < w[key].std() < 1, key  # initialised, not left as uninitialised memory


def test_clip_grad_norm_matches_torch_on_plain_gradients():
    from strategies import _fsdp

    params = [nn.Parameter(torch.randn(6, 3)), nn.Parameter(torch.randn(4))]
    for p in params:
        p.grad = torch.randn_like(p) * 10
    reference = [nn.Parameter(p.detach().clone()) for p in params]
    for r, p in zip(reference, params, strict=False):
        r.grad = p.grad.clone()
    torch.testing.assert_close(_fsdp.clip_grad_norm(params, 1.0), torch.nn.utils.clip_grad_norm_(reference, 1.0))
    for p, r in zip(params, reference, strict=False):
        torch.testing.assert_close(p.grad, r.grad)


def test_optimizer_state_round_trips_between_fqn_and_index_forms():
    from strategies import _fsdp

    model = nn.Sequential(nn.Linear(2, 3), nn.Linear(3, 1))
    opt = torch.optim.Adam([{"params": [model[1].weight]}, {"params": [model[0].weight, model[0].bias]}], lr=0.1)
    model(torch.randn(4, 2)).sum().backward()
    opt.step()
    indexed = opt.state_dict()
    fqns = _fsdp.optimizer_fqns(model, opt)
    assert fqns == ["1.weight", "0.weight", "0.bias"]
    as_fqn = _fsdp.indexed_to_fqn(indexed, fqns)
    assert set(as_fqn["state"]) == {"1.weight", "0.weight", "0.bias"}
    back = _fsdp.fqn_to_indexed(as_fqn)
    assert back["param_groups"] == indexed["param_groups"]
    assert back["state"].keys() == indexed["state"].keys()


# -- bad input --------------------------------------------------------------------------------------------


def test_fsdp_missing_from_torch_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.distributed.fsdp", None)
    monkeypatch.setitem(sys.modules, "torch.distributed._composable.fsdp", None)
    with pytest.raises(RuntimeError, match=r"needs FSDP2 .*fully_shard.*torch >= 2.6.*pip install"):
        FSDPStrategy()
    with pytest.raises(RuntimeError, match="needs FSDP2"):
        Trainer(strategy="fsdp", accelerator="cpu", devices=1)


def test_configure_model_that_creates_no_parameters_is_a_clear_error():
    strategy = FSDPStrategy(timeout=TIMEOUT)
    try:
        with pytest.raises(ValueError, match=r"FSDP found no parameters in `_Tiny`.*configure_model"):
            _trainer(strategy, max_steps=1).fit(_Tiny(create=False), _loader())
    finally:
        strategy.close()


def test_meta_module_without_reset_parameters_is_a_clear_error():
    class NoReset(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(torch.ones(4, 1))

        def forward(self, x):
            return x @ self.w

    class Model(_Tiny):
        def configure_model(self):
            if self.layer is None:
                self.layer = NoReset()

    strategy = FSDPStrategy(timeout=TIMEOUT)
    try:
        with pytest.raises(ValueError, match=r"no `reset_parameters\(\)`.*layer \(NoReset\)"):
            _trainer(strategy, max_steps=1).fit(Model(), _loader())
    finally:
        strategy.close()


def test_cpu_offload_on_a_cpu_only_run_is_a_clear_error():
    with pytest.raises(ValueError, match=r"cpu_offload=True.*needs an accelerator.*CPUOffloadPolicy"):
        _trainer(FSDPStrategy(cpu_offload=True))


def test_bad_options_are_clear_errors():
    with pytest.raises(ValueError, match="state_dict_type"):
        FSDPStrategy(state_dict_type="local")
    with pytest.raises(TypeError, match="auto_wrap_policy"):
        FSDPStrategy(auto_wrap_policy={"Linear"})
    with pytest.raises(TypeError, match="auto_wrap_policy"):
        FSDPStrategy(auto_wrap_policy=3)


def test_sharded_checkpoint_cannot_load_into_an_unsharded_module(tmp_path):
    (tmp_path / "ckpt").mkdir()
    strategy = FSDPStrategy()
    strategy.connect(_Tiny())
    with pytest.raises(ValueError, match="sharded checkpoint.*state_dict_type='full'"):
        strategy.load_checkpoint(tmp_path / "ckpt")


def test_registry_name_builds_the_strategy():
    trainer = Trainer(strategy="fsdp", accelerator="cpu", devices=1)
    assert isinstance(trainer.strategy, FSDPStrategy)
    assert trainer.strategy.state_dict_type == "full" and trainer.strategy.meta_init
