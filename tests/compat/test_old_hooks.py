"""The Lightning 1.x hooks Lightning 2.0 removed: each called by compat.Trainer at its 1.x step.

The program is tests/compat/scripts/legacy_program.py (a 1.2-style module and callback that note
every hook they get, with its arguments). The expected order is Lightning 1.5's (compat/_hooks.py).
"""

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

import compat
import strategies
from compat._warnings import CompatDeprecationWarning

SCRIPTS = Path(__file__).resolve().parent / "scripts"
sys.path.insert(0, str(SCRIPTS))
import legacy_program as lp  # noqa: E402 (found through the sys.path line above)

REPO = Path(__file__).resolve().parents[2]


def quiet(factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory()


def train_batch(idx: int) -> list[tuple]:
    return [
        ("cb", "on_batch_start", None),
        ("m", "on_batch_start", None),
        ("m", "on_train_batch_start", (idx, 0)),  # 1.2 signature: dataloader_idx is passed
        ("m", "training_step", idx),
        ("m", "training_step_end", ["loss", "n"]),
        ("cb", "on_train_batch_end", (idx, 0)),
        ("cb", "on_batch_end", None),
        ("m", "on_batch_end", None),
    ]


def validation_epoch() -> list[tuple]:
    return [
        ("cb", "on_epoch_start", None),
        ("m", "on_epoch_start", None),
        ("m", "validation_step", 0),
        ("m", "validation_step_end", "Tensor"),
        ("m", "validation_epoch_end", [["val_loss"]]),  # before the callbacks' on_validation_epoch_end
        ("cb", "on_validation_epoch_end", None),
        ("cb", "on_epoch_end", None),
        ("m", "on_epoch_end", None),
    ]


def expected_fit(train_batches: int) -> list[tuple]:
    steps = [(["loss", "n"], False, 4)] * train_batches  # step outputs after training_step_end, loss detached
    return [
        ("cb", "on_init_start", None),
        ("cb", "on_init_end", None),
        ("m", "on_fit_start", None),
        ("cb", "on_pretrain_routine_start", None),
        ("m", "on_pretrain_routine_start", None),
        ("m", "on_pretrain_routine_end", None),
        *validation_epoch(),  # the sanity check
        ("m", "on_train_dataloader", None),
        ("m", "train_dataloader", None),
        ("cb", "on_epoch_start", None),
        ("m", "on_epoch_start", None),
        *[event for idx in range(train_batches) for event in train_batch(idx)],
        *validation_epoch(),
        ("m", "training_epoch_end", steps),
        ("cb", "on_train_epoch_end", train_batches),
        ("m", "on_train_epoch_end", train_batches),  # 1.2 (outputs)
        ("cb", "on_epoch_end", None),
        ("m", "on_epoch_end", None),
    ]


def _fit(model, **kwargs):
    trainer = quiet(
        lambda: compat.Trainer(
            accelerator="cpu",
            devices=1,
            max_epochs=1,
            enable_progress_bar=False,
            callbacks=[lp.LegacyCallback(model)],
            **kwargs,
        )
    )
    trainer.fit(model)
    return trainer


def test_each_old_hook_is_called_at_its_1x_step_with_1x_arguments():
    model = lp.LegacyModel()
    _fit(model, limit_train_batches=2)
    assert model.events == expected_fit(2)


def test_old_hooks_around_validate_and_test():
    model = lp.LegacyModel()
    trainer = _fit(model, limit_train_batches=1)
    model.events.clear()
    trainer.validate(model)
    assert model.events == validation_epoch()
    model.events.clear()
    trainer.test(model)
    assert model.events == [
        ("cb", "on_epoch_start", None),
        ("m", "on_epoch_start", None),
        ("m", "test_step", 0),
        ("m", "test_epoch_end", [0]),
        ("cb", "on_epoch_end", None),
        ("m", "on_epoch_end", None),
    ]


def test_the_hook_record_shows_the_old_hooks():
    model = lp.LegacyModel()
    trainer = _fit(model, limit_train_batches=1, record_hooks=True)
    names = [c.name for c in trainer.hook_record]
    i = names.index("module.training_epoch_end")
    epoch_end = names[i + 1 : names.index("callback.on_train_end", i)]
    assert epoch_end[:2] == ["callback.on_train_epoch_end", "module.on_train_epoch_end"]
    j = epoch_end.index("callback.on_epoch_end")
    assert epoch_end[j:] == ["callback.on_epoch_end", "module.on_epoch_end"]
    # The default ModelCheckpoint's on_train_epoch_end (monitoring callbacks run after the module's) and
    # its save come before the old on_epoch_end, as 1.x's checkpoint save came before on_epoch_end.
    assert "callback.on_train_epoch_end" in epoch_end[2:j] and "module.on_save_checkpoint" in epoch_end[2:j]


class _Doubled(compat.LightningModule):
    def __init__(self, scale_in_step_end: bool):
        super().__init__()
        torch.manual_seed(0)
        self.layer = nn.Linear(2, 1)
        self.scale_in_step_end = scale_in_step_end

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        return loss if self.scale_in_step_end else loss * 10

    def training_step_end(self, loss):
        return loss * 10 if self.scale_in_step_end else loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.01)


def test_training_step_end_return_is_what_is_backpropagated():
    weights = []
    for in_step_end in (True, False):
        model = quiet(lambda flag=in_step_end: _Doubled(flag))
        trainer = quiet(
            lambda: compat.Trainer(
                accelerator="cpu",
                devices=1,
                max_epochs=1,
                enable_progress_bar=False,
                limit_train_batches=1,
                num_sanity_val_steps=0,
            )
        )
        trainer.fit(model, lp.data())
        weights.append(model.layer.weight.detach().clone())
    untouched = quiet(lambda: _Doubled(True)).layer.weight.detach()
    assert torch.equal(weights[0], weights[1])
    assert not torch.equal(weights[0], untouched)


def test_each_old_hook_warns_once_when_its_class_is_defined():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")

        class Module(compat.LightningModule):
            def training_epoch_end(self, outputs):
                pass

            def on_epoch_start(self):
                pass

        class Child(Module):  # inherits the overrides: no second warning
            pass

        quiet(Child)
    ours = [w for w in rec if issubclass(w.category, CompatDeprecationWarning)]
    hooks = [str(w.message) for w in ours if "Module." in str(w.message)]
    assert len(hooks) == 2, hooks
    assert "`Module.training_epoch_end`" in hooks[0] and "use `on_train_epoch_end`" in hooks[0]
    assert "`Module.on_epoch_start`" in hooks[1] and "use `on_train_epoch_start`" in hooks[1]
    assert all(os.path.samefile(w.filename, __file__) for w in ours)


def test_hooks_that_cannot_run_are_refused_together_when_the_class_is_defined():
    with pytest.raises(TypeError) as err:

        class Module(compat.LightningModule):
            def optimizer_zero_grad(self, epoch, batch_idx, optimizer, optimizer_idx):
                pass

            def tbptt_split_batch(self, batch, split_size):
                pass

    text = str(err.value)
    assert "`Module.optimizer_zero_grad` takes `optimizer_idx`" in text and "drop `optimizer_idx`" in text
    assert "`Module.tbptt_split_batch`" in text


def test_a_callbacks_1x_checkpoint_state_is_saved_and_given_back(tmp_path):
    loaded = []

    class Counter(compat.Callback):
        def on_save_checkpoint(self, trainer, pl_module, checkpoint):
            return {"seen": trainer.state.global_step}  # 1.x: the returned dict is the state

        def on_load_checkpoint(self, trainer, pl_module, callback_state):
            loaded.append(callback_state)

    def run(**kwargs):
        model = quiet(lp.LegacyModel)
        trainer = quiet(
            lambda: compat.Trainer(
                accelerator="cpu",
                devices=1,
                max_epochs=1,
                enable_progress_bar=False,
                limit_train_batches=1,
                callbacks=[quiet(Counter)],
                default_root_dir=tmp_path,
                **kwargs,
            )
        )
        trainer.fit(model)
        return trainer

    # The default ModelCheckpoint's save at the epoch end is the first call: it warns (once per class).
    with pytest.warns(CompatDeprecationWarning, match="on_save_checkpoint returning the state"):
        first = run()
    first.save_checkpoint(tmp_path / "a.ckpt")
    run(resume_from_checkpoint=str(tmp_path / "a.ckpt"))
    assert loaded == [{"seen": 1}]


def test_a_module_with_old_hooks_is_refused_by_another_trainer():
    model = quiet(lp.LegacyModel)
    trainer = strategies.Trainer(accelerator="cpu", devices=1, max_epochs=1, enable_progress_bar=False)
    with pytest.raises(TypeError, match="compat.Trainer"):
        trainer.fit(model)


def test_epoch_end_returning_a_value_is_an_error():
    class Module(compat.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).sum()

        def training_epoch_end(self, outputs):
            return outputs

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = quiet(lambda: compat.Trainer(accelerator="cpu", devices=1, max_epochs=1, enable_progress_bar=False))
    with pytest.raises(TypeError, match="returned a value"):
        trainer.fit(quiet(Module), lp.data())


def test_keyboard_interrupt_calls_the_old_callback_hook_and_ends_the_run():
    seen = []

    class Module(compat.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            raise KeyboardInterrupt

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    class Callback(compat.Callback):
        def on_keyboard_interrupt(self, trainer, pl_module):
            seen.append(type(pl_module).__name__)

    trainer = quiet(
        lambda: compat.Trainer(
            accelerator="cpu", devices=1, max_epochs=1, enable_progress_bar=False, callbacks=[quiet(Callback)]
        )
    )
    assert trainer.fit(quiet(Module), lp.data()) is None
    assert seen == ["Module"]


@pytest.mark.slow  # 2 ranks (~20 s on 2 busy cores); tests/compat/test_legacy_example.py runs a 1.x program
# on two ranks in the default run: CI's second step runs this one
@pytest.mark.timeout(240)
def test_the_1_2_program_runs_on_two_ddp_processes(tmp_path):
    """Real processes, real gloo: every old hook at its step on both ranks (``ddp_cpu`` spawns them, as
    in 1.x, so each rank writes its events from ``on_fit_end``)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT", "PYTHONWARNINGS")
    }
    env["PYTHONPATH"] = str(REPO)
    out = tmp_path / "events.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPTS / "legacy_program.py"), str(out)],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=200,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-4000:]
    # 8 samples over 2 ranks in batches of 4: one training batch per rank; the validation set likewise
    expected = [[who, hook, repr(detail)] for who, hook, detail in expected_fit(1)]
    for rank in (0, 1):
        assert json.loads(Path(f"{out}.rank{rank}").read_text()) == expected, f"rank {rank}"
    assert proc.stderr.count("`LegacyModel.training_epoch_end` is deprecated") == 1  # rank 0 only, once


def test_an_evaluation_epoch_end_return_is_ignored_with_a_warning_as_in_1_3():
    class Module(compat.LightningModule):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(2, 1)

        def training_step(self, batch, batch_idx):
            return self.layer(batch[0]).sum()

        def validation_step(self, batch, batch_idx):
            return {"val_loss": self.layer(batch[0]).sum()}

        def validation_epoch_end(self, outputs):
            loss = torch.stack([o["val_loss"] for o in outputs]).mean()
            return {"val_loss": loss, "log": {"val_loss": loss}}

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1)

    trainer = quiet(
        lambda: compat.Trainer(
            accelerator="cpu", devices=1, max_epochs=1, enable_progress_bar=False, logger=False, num_sanity_val_steps=0
        )
    )
    with pytest.warns(compat.CompatDeprecationWarning, match="returning a value.*ignored"):
        trainer.fit(quiet(Module), lp.data(), lp.data())
    assert "val_loss" not in trainer.callback_metrics  # not logged, as 1.3-1.5 did not
