"""``strategies.utilities``: the helpers Lightning programs import from ``lightning.pytorch.utilities``.

What ranks see under real DDP is checked in ``test_ddp_integration`` (``rank_zero_only.rank`` on
both ranks); here: the names, ``grad_norm``'s values (and, with Lightning installed, that they
equal Lightning's), ``rank_zero_only`` from the environment and around a run, ``is_overridden``.
"""

from __future__ import annotations

import json
import logging
import pathlib
import warnings

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader

import strategies
from strategies import utilities
from strategies.utilities import grad_norm, is_overridden, rank_zero_only

LIGHTNING_NAMES = (
    "rank_zero_only",
    "rank_zero_info",
    "rank_zero_debug",
    "rank_zero_warn",
    "rank_zero_deprecation",
    "grad_norm",
    "AttributeDict",
    "move_data_to_device",
)


def test_lightnings_names_are_here() -> None:
    for name in (*LIGHTNING_NAMES, "seed_everything", "is_overridden"):
        assert callable(getattr(utilities, name)), name
    assert utilities.model_helpers.is_overridden is is_overridden
    assert utilities.seed_everything is strategies.seed_everything
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        utilities.nope  # noqa: B018


CATALOG = pathlib.Path(__file__).resolve().parents[2] / "compat" / "_catalog" / "lightning-2.6.json"
#: Public names of Lightning 2.6's ``utilities.types`` not in ``strategies.utilities.types``, and why.
TYPES_NOT_PROVIDED = {
    "DistributedDataParallel": "a Protocol Lightning types its own wrappers with; programs annotate with torch's class",
}


def test_every_type_alias_of_lightnings_types_module_is_here_or_listed_with_the_reason() -> None:
    catalog = json.loads(CATALOG.read_text())
    prefix = "lightning.pytorch.utilities.types."
    public = {
        path[len(prefix) :]
        for path in (*catalog["names"], *catalog["classes"])
        if path.startswith(prefix) and not path[len(prefix) :].startswith("_")
    }
    assert len(public) > 10, "the catalog lists too few names: is it the 2.6 catalog?"
    missing = sorted(name for name in public if not hasattr(utilities.types, name))
    assert missing == sorted(TYPES_NOT_PROVIDED), (
        "add these to strategies.utilities.types, or list them with the reason"
    )
    assert sorted(utilities.types.__all__) == sorted(public - set(TYPES_NOT_PROVIDED))


def _with_grads() -> nn.Module:
    module = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1, bias=False))
    with torch.no_grad():
        for index, param in enumerate(module.parameters()):
            param.grad = torch.arange(param.numel(), dtype=torch.float32).reshape(param.shape) - index
    return module


def test_grad_norm_values_and_keys() -> None:
    module = _with_grads()
    norms = grad_norm(module, norm_type=2)
    grads = {name: p.grad for name, p in module.named_parameters()}
    assert list(norms) == [*(f"grad_2.0_norm/{name}" for name in grads), "grad_2.0_norm_total"]
    for name, grad in grads.items():
        assert norms[f"grad_2.0_norm/{name}"].item() == pytest.approx(grad.pow(2).sum().sqrt().item())
    every = torch.cat([g.flatten() for g in grads.values()])
    assert norms["grad_2.0_norm_total"].item() == pytest.approx(every.pow(2).sum().sqrt().item(), rel=1e-6)
    assert grad_norm(module, "inf")["grad_inf_norm_total"].item() == every.abs().max().item()
    assert grad_norm(nn.Linear(2, 2), 2) == {}  # no gradients yet
    with pytest.raises(ValueError, match="positive"):
        grad_norm(module, 0)


@pytest.mark.extras
def test_grad_norm_equals_lightnings() -> None:
    theirs = pytest.importorskip("lightning.pytorch.utilities", reason="needs Lightning 2.6").grad_norm
    module = _with_grads()
    for norm_type in (1, 2, 2.5, "inf"):
        ours, expected = grad_norm(module, norm_type, group_separator="."), theirs(module, norm_type, ".")
        assert list(ours) == list(expected)
        assert all(ours[k].item() == pytest.approx(expected[k].item(), rel=1e-6) for k in expected)


def test_rank_zero_only_follows_the_environment_until_a_strategy_sets_it(monkeypatch) -> None:
    calls = []
    first = rank_zero_only(calls.append)
    monkeypatch.setenv("RANK", "1")
    assert rank_zero_only.rank == 1 and first("rank 1") is None
    monkeypatch.setenv("RANK", "0")
    first("rank 0")
    assert calls == ["rank 0"]
    rank_zero_only.rank = 3  # a program may set it, as in Lightning
    try:
        assert first("set to 3") is None
    finally:
        rank_zero_only.rank = None


def test_the_messages_go_to_rank_zero_only(monkeypatch, caplog) -> None:
    caplog.set_level(logging.DEBUG, logger="strategies")
    for rank, said in (("1", False), ("0", True)):
        monkeypatch.setenv("RANK", rank)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            utilities.rank_zero_warn("careful")
            utilities.rank_zero_deprecation("old")
            utilities.rank_zero_info("info %s", rank)
            utilities.rank_zero_debug("debug")
        kinds = [w.category for w in caught]
        assert kinds == ([UserWarning, DeprecationWarning] if said else []), kinds
    assert [r.getMessage() for r in caplog.records] == ["info 0", "debug"]


class _Ranked(strategies.TrainModule):
    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(2, 1)
        self.seen: list[int | None] = []

    def training_step(self, batch, batch_idx):
        self.seen.append(rank_zero_only._rank)
        return self.layer(batch).sum()

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)

    def train_dataloader(self):
        return DataLoader(torch.randn(4, 2), batch_size=2)


def test_a_parallel_strategy_sets_the_rank_and_close_forgets_it(monkeypatch) -> None:
    monkeypatch.setenv("RANK", "1")  # e.g. left by an outer launcher; the run's own rank wins
    module = _Ranked()
    trainer = strategies.Trainer(
        strategy="ddp", accelerator="cpu", devices=1, max_steps=2, logger=False,
        enable_checkpointing=False, enable_progress_bar=False,
    )  # fmt: skip
    try:
        trainer.fit(module)
        assert module.seen == [0, 0]
        assert rank_zero_only._rank == 0  # the process group lives on between stages, and so does the rank
    finally:
        trainer.strategy.close()
    assert rank_zero_only._rank is None


def test_is_overridden() -> None:
    class Hooked(strategies.Callback):
        def on_train_start(self, trainer, module):
            pass

    assert is_overridden("on_train_start", Hooked())
    assert not is_overridden("on_train_end", Hooked())
    assert is_overridden("training_step", _Ranked())
    assert not is_overridden("validation_step", _Ranked())
    assert not is_overridden("training_step", None)
    data = strategies.DataModule.from_datasets(train_dataset=torch.randn(4, 2))
    assert is_overridden("train_dataloader", data)  # set on the instance, as Lightning counts it
    assert is_overridden("forward", nn.Linear(1, 1), parent=nn.Module)
    with pytest.raises(ValueError, match="parent="):
        is_overridden("forward", nn.Linear(1, 1))
