"""Claims of the guides, each checked by running what they describe.

docs/compat.md: `gpus=2` without CUDA is a `TrainerArgumentsError` about `gpus=2`; "nothing is
skipped silently", for `checkpoint_callback=ModelCheckpoint(...)` too (the compat side; the
codemods' side of that argument is checked with the codemods). docs/upgrade.md step 1 on a
project that imports callbacks and loggers: `python -m compat.run train.py` on it unchanged, and
the imports replaced as the step shows. docs/strategies.md: a checkpoint written by
Lightning 2.6 resumes here.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import compat
from compat.trainer import TrainerArgumentsError

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(ROOT / "tests" / "strategies"))
sys.path.insert(0, str(ROOT / "tests" / "compat"))
from _helpers import script_env  # noqa: E402
from _no_lightning import python_without_lightning  # noqa: E402


def _run(cwd: Path, script: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, script], cwd=cwd, env=script_env(), capture_output=True, text=True, timeout=timeout
    )


def _page(name: str) -> str:
    return " ".join((DOCS / name).read_text(encoding="utf-8").split())


def _data() -> DataLoader:
    generator = torch.Generator().manual_seed(0)
    inputs, targets = torch.randn(16, 4, generator=generator), torch.randn(16, 1, generator=generator)
    return DataLoader(TensorDataset(inputs, targets), batch_size=8)


class _Logged(compat.LightningModule):
    """A 1.x module that logs a loss which falls, so a monitored checkpoint has something to rank."""

    def __init__(self) -> None:
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.05)


# -- docs/compat.md ----------------------------------------------------------------------------------


@pytest.mark.skipif(torch.cuda.is_available(), reason="the claim is about a machine without CUDA")
def test_gpus_without_cuda_is_an_arguments_error_about_gpus():
    page = _page("compat.md")
    assert "`gpus=2` where no CUDA device is (the error names `gpus=2`" in page
    assert "`compat.trainer.TrainerArgumentsError`, which is both a `TypeError` and a `ValueError`" in page
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TrainerArgumentsError) as caught:
            compat.Trainer(gpus=2, max_epochs=1)
    message = str(caught.value)
    assert isinstance(caught.value, TypeError) and isinstance(caught.value, ValueError)
    assert "`Trainer(gpus=2)`" in message and "no CUDA device is available" in message
    assert "gpus=0" in message and 'accelerator="cpu", devices=N' in message
    assert "accelerator='cuda'" not in message, "the error names a translation the user never wrote"
    with warnings.catch_warnings():  # 1.x's no-GPU values still run on the CPU
        warnings.simplefilter("ignore")
        assert compat.Trainer(gpus=0, max_epochs=1).strategy.root_device.type == "cpu"


def test_checkpoint_callback_instance_is_kept_and_honoured(tmp_path):
    page = _page("compat.md")
    assert "Nothing is skipped silently." in page
    assert "`checkpoint_callback=ModelCheckpoint(...)` | the callback added to `callbacks=`" in page
    from strategies import ModelCheckpoint

    mine = ModelCheckpoint(dirpath=tmp_path / "mine", monitor="train_loss", save_top_k=3, filename="{epoch}")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trainer = compat.Trainer(
            checkpoint_callback=mine,
            accelerator="cpu",
            devices=1,
            max_epochs=4,
            default_root_dir=tmp_path / "root",
            logger=False,
            enable_progress_bar=False,
        )
    about = [str(w.message) for w in caught if "checkpoint_callback" in str(w.message)]
    assert len(about) == 1 and "callbacks=[ModelCheckpoint(...)]" in about[0], about
    assert "enable_checkpointing" not in about[0]
    assert trainer.checkpoint_callbacks == [mine]
    trainer.fit(_Logged(), _data())
    written = sorted(p.name for p in (tmp_path / "mine").iterdir())
    assert len(written) == 3, written  # save_top_k=3 of four epochs, ranked by the monitored loss
    assert mine.best_model_path and Path(mine.best_model_path).name in written
    assert not (tmp_path / "root").exists() or not any((tmp_path / "root").rglob("*.ckpt")), "a default checkpoint"


@pytest.mark.parametrize(("value", "enabled"), [(True, True), (False, False)])
def test_checkpoint_callback_bool_is_enable_checkpointing(value, enabled):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        trainer = compat.Trainer(checkpoint_callback=value, accelerator="cpu", devices=1, max_epochs=1)
    assert bool(trainer.checkpoint_callbacks) is enabled


def test_checkpoint_callback_of_another_type_is_a_clear_error():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TrainerArgumentsError, match=r"must be True, False or a `ModelCheckpoint` \(got a str\)"):
            compat.Trainer(checkpoint_callback="best", accelerator="cpu", devices=1)


# -- docs/upgrade.md, step 1 -------------------------------------------------------------------------

PROJECT_1_2 = """\
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from pytorch_lightning import LightningModule, Trainer
from pytorch_lightning.callbacks import EarlyStopping, ModelCheckpoint
from pytorch_lightning.loggers import CSVLogger


class Regressor(LightningModule):
    def __init__(self):
        super().__init__()
        self.layer = nn.Linear(4, 1)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = nn.functional.mse_loss(self.layer(x), y)
        self.log("train_loss", loss, on_step=False, on_epoch=True)
        return loss

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=0.1)


if __name__ == "__main__":
    data = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8)
    checkpoint = ModelCheckpoint(dirpath="checkpoints", monitor="train_loss")
    trainer = Trainer(
        gpus=0,
        max_epochs=2,
        callbacks=[checkpoint, EarlyStopping(monitor="train_loss", patience=5)],
        logger=CSVLogger("logs"),
        progress_bar_refresh_rate=0,
    )
    trainer.fit(Regressor(), data)
    print("trained", trainer.current_epoch, "epochs; best:", checkpoint.best_model_path)
"""


def _step_1_imports() -> dict[str, str]:
    """The guide's step 1 import lines: the 1.2 module each `# was:` comment names -> today's."""
    section = (DOCS / "upgrade.md").read_text(encoding="utf-8").split("## 1. Run it on `compat`", 1)[1]
    section = section.split("\n## ", 1)[0]
    block = re.search(r'```python title="imports[^"]*"\n(.*?)```', section, re.S)
    assert block, "step 1 no longer shows the imports that work today"
    moves = dict(
        (old, new) for new, old in re.findall(r"^from (\S+) import .*# was: from (\S+) import", block.group(1), re.M)
    )
    assert moves, block.group(1)
    return moves


def _follow_step_1(source: str, moves: dict[str, str]) -> str:
    def replace(match: re.Match[str]) -> str:
        module = match.group(1)
        # The named modules move as shown; elsewhere "replace the package name" (pytorch_lightning -> compat).
        return f"from {moves.get(module, re.sub(r'^pytorch_lightning', 'compat', module))} import"

    return re.sub(r"^from (pytorch_lightning\S*) import", replace, source, flags=re.M)


def _check_project_ran(project: Path, printed: str) -> None:
    assert "trained 2 epochs; best:" in printed, printed
    assert list((project / "checkpoints").glob("*.ckpt")), "the ModelCheckpoint wrote nothing"
    assert list((project / "logs").rglob("metrics.csv")), "the CSVLogger wrote nothing"


def test_upgrade_step_1_runs_a_project_with_callbacks_and_loggers(tmp_path, monkeypatch, capsys):
    """Step 1's "make the edit yourself": the imports it shows, and the package name replaced elsewhere."""
    moves = _step_1_imports()
    assert moves["pytorch_lightning.callbacks"] == "compat.callbacks"
    assert moves["pytorch_lightning.loggers"] == "compat.loggers"
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(_follow_step_1(PROJECT_1_2, moves))
    monkeypatch.chdir(project)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        runpy.run_path("train.py", run_name="__main__")
    _check_project_ran(project, capsys.readouterr().out)


@pytest.mark.slow  # a fresh interpreter imports torch and trains (~10-30 s on 2 busy cores)
def test_upgrade_step_1_compat_run_runs_the_project_unchanged(tmp_path):
    """Step 1's command runs the 1.2 project, imports untouched, where no pytorch_lightning is installed."""
    page = (DOCS / "upgrade.md").read_text(encoding="utf-8")
    section = page.split("## 1. Run it on `compat`", 1)[1].split("\n## ", 1)[0]
    command = re.search(r"```console\n(python -m compat\.run train\.py)\n```", section)
    assert command, "step 1 no longer starts with `python -m compat.run train.py`"
    python, path = python_without_lightning(tmp_path / "site")
    project = tmp_path / "project"
    project.mkdir()
    (project / "train.py").write_text(PROJECT_1_2)
    env = {k: v for k, v in script_env().items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = ":".join(path)
    args = command.group(1).split()[1:]
    proc = subprocess.run([*python, *args], cwd=project, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-4000:]
    _check_project_ran(project, proc.stdout)
    assert "`pytorch_lightning.callbacks.ModelCheckpoint` is deprecated" in proc.stderr


# -- docs/strategies.md: Lightning's checkpoints ------------------------------------------------------

LIGHTNING_THEN_STRATEGIES = """\
import sys

import lightning.pytorch as pl
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

import strategies


def make(base):
    class Regressor(base):
        def __init__(self):
            super().__init__()
            self.layer = nn.Linear(4, 1)

        def training_step(self, batch, batch_idx):
            x, y = batch
            return nn.functional.mse_loss(self.layer(x), y)

        def configure_optimizers(self):
            return torch.optim.SGD(self.parameters(), lr=0.1, momentum=0.9)

        def on_train_start(self):
            self.momentum_at_start = bool(self.trainer.optimizers[0].state_dict()["state"])

    return Regressor()


torch.manual_seed(0)
data = DataLoader(TensorDataset(torch.randn(32, 4), torch.randn(32, 1)), batch_size=8)
theirs = make(pl.LightningModule)
lightning = pl.Trainer(accelerator="cpu", devices=1, max_epochs=2, logger=False, enable_checkpointing=False,
                       enable_progress_bar=False, enable_model_summary=False)
lightning.fit(theirs, data)
lightning.save_checkpoint("lightning.ckpt")

ours = make(strategies.TrainModule)
trainer = strategies.Trainer(accelerator="cpu", devices=1, max_epochs=2, enable_checkpointing=False,
                             enable_progress_bar=False)
trainer.fit(ours, data, ckpt_path="lightning.ckpt")
same = all(torch.equal(a, b) for a, b in zip(theirs.state_dict().values(), ours.state_dict().values()))
print("resumed", trainer.current_epoch, trainer.global_step, "same weights:", same)

more = strategies.Trainer(accelerator="cpu", devices=1, max_epochs=3, enable_checkpointing=False,
                          enable_progress_bar=False)
again = make(strategies.TrainModule)
more.fit(again, data, ckpt_path="lightning.ckpt")
print("went on to", more.current_epoch, more.global_step, "momentum:", again.momentum_at_start)
"""


@pytest.mark.extras
def test_a_lightning_checkpoint_resumes_with_strategies(tmp_path):
    pytest.importorskip("lightning", reason="Lightning 2.6 is not installed (the lightning extra)")
    assert "**Lightning's checkpoints load here:** `fit(ckpt_path=...)`" in _page("strategies.md")
    (tmp_path / "resume.py").write_text(LIGHTNING_THEN_STRATEGIES)
    result = _run(tmp_path, "resume.py", 240)
    assert result.returncode == 0, result.stdout + result.stderr
    # Two epochs of four batches in Lightning: resumed at its end with the same weights; a longer run goes on
    # from there with the optimizer's state (SGD momentum) restored.
    assert "resumed 2 8 same weights: True" in result.stdout, result.stdout
    assert "went on to 3 12 momentum: True" in result.stdout, result.stdout
