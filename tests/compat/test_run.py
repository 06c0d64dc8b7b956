"""`python -m compat.run train.py`: a 1.x script with `pytorch_lightning` imports runs unchanged on compat.

Real processes. "No pytorch_lightning installed" is a real interpreter where it cannot be
imported: `python -S` with a copy of site-packages made of links, less `pytorch_lightning`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _no_lightning import python_without_lightning

REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 300  # generous: two ranks each import torch on busy cores

# A PyTorch Lightning 1.4-style script, as a 2021 user wrote it (not one edit for compat).
SCRIPT_1X = '''
"""Regression on random data with PyTorch Lightning 1.4."""
import argparse
import json
import os

import torch
from torch.utils.data import DataLoader, TensorDataset

import pytorch_lightning as pl
from pytorch_lightning.callbacks import ModelCheckpoint
from pytorch_lightning.loggers import CSVLogger
from pytorch_lightning.utilities import rank_zero_only
from packaging.version import Version


class Regression(pl.LightningModule):
    def __init__(self, lr=0.1):
        super().__init__()
        self.lr = lr
        self.layer = torch.nn.Linear(4, 1)

    def forward(self, x):
        return self.layer(x)

    def training_step(self, batch, batch_idx):
        x, y = batch
        loss = torch.nn.functional.mse_loss(self(x), y)
        self.log("train_loss", loss)
        return loss

    def validation_step(self, batch, batch_idx):
        x, y = batch
        self.log("val_loss", torch.nn.functional.mse_loss(self(x), y), sync_dist=True)

    def configure_optimizers(self):
        return torch.optim.SGD(self.parameters(), lr=self.lr)


def loader():
    x = torch.randn(32, 4, generator=torch.Generator().manual_seed(0))
    return DataLoader(TensorDataset(x, x.sum(1, keepdim=True)), batch_size=8)


@rank_zero_only
def report(out, trainer, model):
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump({"world_size": trainer.world_size, "best": trainer.checkpoint_callback.best_model_path,
                   "weight": model.layer.weight.detach().flatten().tolist(), "module": type(model).__module__,
                   "version": pl.__version__, "gated": Version(pl.__version__) >= Version("1.4")}, f)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--mode", default="single")
    args = parser.parse_args()
    pl.seed_everything(1)
    kwargs = {"gpus": 0}
    if args.mode == "ddp":
        kwargs = {"accelerator": "ddp_cpu", "num_processes": 2}
    elif args.mode == "spawn":
        kwargs = {"accelerator": "ddp_spawn", "num_processes": 2}
    model = Regression()
    trainer = pl.Trainer(
        max_epochs=2,
        default_root_dir=args.out,
        logger=CSVLogger(args.out, name="logs"),
        callbacks=[ModelCheckpoint(dirpath=os.path.join(args.out, "ckpt"), monitor="val_loss")],
        progress_bar_refresh_rate=0,
        weights_summary=None,
        **kwargs,
    )
    trainer.fit(model, loader(), loader())
    report(args.out, trainer, model)
'''


@pytest.fixture(scope="module")
def no_lightning(tmp_path_factory) -> tuple[list[str], list[str]]:
    """An interpreter command that cannot import `pytorch_lightning` but has everything else."""
    return python_without_lightning(tmp_path_factory.mktemp("site-without-pytorch-lightning"))


def _run(python, args, cwd, *, pythonpath=(), env=None):
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "COMPAT_RUN_TARGET")}
    environment["PYTHONPATH"] = os.pathsep.join([*pythonpath] or [str(REPO)])
    environment.update(env or {})
    return subprocess.run(
        [*python, *args], cwd=cwd, env=environment, capture_output=True, text=True, timeout=TIMEOUT, check=False
    )


def _train(no_lightning, tmp_path, mode):
    python, path = no_lightning
    (tmp_path / "train.py").write_text(SCRIPT_1X)
    proc = _run(python, ["-m", "compat.run", "train.py", "--out", "out", "--mode", mode], tmp_path, pythonpath=path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    out = tmp_path / "out"
    result = json.loads((out / "result.json").read_text())
    assert Path(result["best"]).is_file() and Path(result["best"]).parent == out / "ckpt"
    metrics = (out / "logs" / "version_0" / "metrics.csv").read_text()
    assert "val_loss" in metrics  # (train_loss: every 50 steps, as in 1.x; this run has 8)
    return result, proc.stderr


def test_no_pytorch_lightning_in_the_test_interpreter(no_lightning, tmp_path):
    python, path = no_lightning
    proc = _run(
        python, ["-c", "import importlib.util as u; print(u.find_spec('pytorch_lightning'))"], tmp_path, pythonpath=path
    )
    assert proc.stdout.strip() == "None", proc.stderr


def test_single_process(no_lightning, tmp_path):
    from compat import _catalog

    result, stderr = _train(no_lightning, tmp_path, "single")
    assert result["world_size"] == 1
    # pytorch_lightning.__version__ is the newest 1.x catalog's (1.5.x): version-gated 1.x code
    # takes the 1.4+/1.5 branches, which compat runs
    newest = _catalog.load(_catalog.OLD[-1]).version
    assert newest.startswith("1.5.") and result["version"] == newest and result["gated"] is True
    assert result["module"] == "__main__"
    # each old name warns once, at the script's line, with what to use instead
    assert stderr.count("`pytorch_lightning.callbacks.ModelCheckpoint` is deprecated") == 1
    assert "use `strategies.ModelCheckpoint` instead" in stderr
    assert "train.py:11: CompatDeprecationWarning" in stderr
    assert "`pytorch_lightning.utilities.rank_zero_only`" in stderr
    assert stderr.count("runs on compat here") == 1


@pytest.mark.slow  # two ranks, each importing torch (~30-60 s on 2 busy cores): run by CI's second step
def test_ddp_two_processes_rerun_under_compat_run(no_lightning, tmp_path):
    result, stderr = _train(no_lightning, tmp_path, "ddp")
    assert result["world_size"] == 2
    # rank 1 ran the script again through compat.run (else `import pytorch_lightning` fails) and stayed silent
    assert stderr.count("`pytorch_lightning.callbacks.ModelCheckpoint` is deprecated") == 1


@pytest.mark.slow  # two spawned workers, each importing torch: run by CI's second step
def test_ddp_spawn_workers_unpickle_the_scripts_classes(no_lightning, tmp_path):
    result, stderr = _train(no_lightning, tmp_path, "spawn")
    assert result["world_size"] == 2
    # the parent's module came back trained (weights sent back from the workers)
    assert result["weight"] != [0.0, 0.0, 0.0, 0.0]
    assert "Traceback" not in stderr, stderr[-4000:]


def test_missing_name_fails_on_its_import_line(no_lightning, tmp_path):
    python, path = no_lightning
    (tmp_path / "lr.py").write_text(
        "import pytorch_lightning as pl\nfrom pytorch_lightning.callbacks import ModelPruning\n"
    )
    proc = _run(python, ["-m", "compat.run", "lr.py"], tmp_path, pythonpath=path)
    assert proc.returncode == 1
    assert 'lr.py", line 2' in proc.stderr
    assert "MissingNameError: `pytorch_lightning.callbacks.ModelPruning` (pytorch_lightning 1.x)" in proc.stderr
    assert "lightning.pytorch.callbacks.ModelPruning" in proc.stderr


def test_runpy_semantics_and_module_form(no_lightning, tmp_path):
    python, path = no_lightning
    code = textwrap.dedent(
        """
        import sys, pytorch_lightning, pytorch_lightning.callbacks, compat
        assert pytorch_lightning is compat and pytorch_lightning.callbacks is compat.callbacks
        assert compat.__spec__.name == "compat"
        print(__name__, sys.argv, sys.path[0], __file__, sep="|")
        raise SystemExit(3)
        """
    )
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "show.py").write_text(code)
    proc = _run(python, ["-m", "compat.run", "sub/show.py", "a", "--b"], tmp_path, pythonpath=path)
    assert proc.returncode == 3, proc.stderr
    name, argv, first, file = proc.stdout.strip().split("|")
    assert name == "__main__" and argv == "['sub/show.py', 'a', '--b']"
    assert first == str(tmp_path / "sub") and file == str(tmp_path / "sub" / "show.py")

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "show.py").write_text(code)
    proc = _run(python, ["-m", "compat.run", "-m", "pkg.show", "x"], tmp_path, pythonpath=[*path, str(tmp_path)])
    assert proc.returncode == 3, proc.stderr
    name, argv, first, file = proc.stdout.strip().split("|")
    assert name == "__main__" and argv == "['pkg.show', 'x']" and file == str(tmp_path / "pkg" / "show.py")


def test_a_checkout_on_sys_path_0_stays_importable(no_lightning, tmp_path):
    python, path = no_lightning
    (tmp_path / "find.py").write_text(
        "import importlib.util, sys\nprint(importlib.util.find_spec('strategies') is not None)\n"
    )
    # run from the repository root, as `python -m` in a checkout: compat and strategies come from sys.path[0]
    proc = _run(python, ["-m", "compat.run", str(tmp_path / "find.py")], REPO, pythonpath=path[1:])
    assert proc.returncode == 0 and proc.stdout.strip() == "True", proc.stderr


def test_bad_command_lines(no_lightning, tmp_path):
    python, path = no_lightning
    proc = _run(python, ["-m", "compat.run"], tmp_path, pythonpath=path)
    assert proc.returncode != 0 and "usage: python -m compat.run" in proc.stderr
    proc = _run(python, ["-m", "compat.run", "nope.py"], tmp_path, pythonpath=path)
    assert proc.returncode != 0 and "cannot open 'nope.py'" in proc.stderr


def _need_real_lightning() -> None:
    if importlib.util.find_spec("pytorch_lightning") is None:  # (importing it would cost seconds)
        pytest.skip("needs a real pytorch_lightning installed (Lightning 2.x ships one)")


@pytest.mark.extras
def test_with_a_real_pytorch_lightning_it_says_so_and_exits_2(tmp_path):
    pytest.importorskip(
        "pytorch_lightning", reason="needs a real pytorch_lightning installed (Lightning 2.x ships one)"
    )
    (tmp_path / "train.py").write_text("raise SystemExit('must not run')\n")
    proc = _run([sys.executable], ["-m", "compat.run", "train.py"], tmp_path)
    assert proc.returncode == 2
    assert "a real pytorch_lightning is installed here" in proc.stderr and "--shadow" in proc.stderr
    assert "must not run" not in proc.stderr


@pytest.mark.extras
@pytest.mark.slow  # imports torch and trains (~15-30 s on 2 busy cores)
def test_shadow_runs_on_compat_although_pytorch_lightning_is_installed(tmp_path):
    pytest.importorskip(
        "pytorch_lightning", reason="needs a real pytorch_lightning installed (Lightning 2.x ships one)"
    )
    (tmp_path / "train.py").write_text(SCRIPT_1X)
    proc = _run([sys.executable], ["-m", "compat.run", "--shadow", "train.py", "--out", "out"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    assert json.loads((tmp_path / "out" / "result.json").read_text())["world_size"] == 1
    assert "runs on compat here" in proc.stderr


@pytest.mark.parametrize(
    ("orig", "argv", "expected"),
    [
        # a runner and interpreter options are kept; the script path becomes absolute
        (
            ["py", "-X", "dev", "-m", "compat.run", "t.py", "--a"],
            ["t.py", "--a"],
            ["-X", "dev", "-m", "compat.run", "/abs/t.py", "--a"],
        ),
        (["py", "t.py"], ["t.py"], ["/abs/t.py"]),
        # the script rewrote its arguments, or ran from -c: the old rule
        (["py", "t.py", "--a"], ["t.py", "--b"], None),
        (["py", "-c", "code"], ["-c"], None),
    ],
)
def test_ddp_launcher_reruns_the_original_command_line(monkeypatch, orig, argv, expected):
    from strategies.launchers import subprocess_script

    monkeypatch.setattr(sys, "orig_argv", orig)
    monkeypatch.setattr(sys, "argv", argv)
    monkeypatch.setattr(os.path, "abspath", lambda p: "/abs/t.py" if p == "/here/t.py" else p)
    command = subprocess_script._same_command_line("/here/t.py")
    assert command == (None if expected is None else [sys.executable, *expected])
