"""``strategies.cli.LightningCLI`` on jsonargparse: config files, subcommands, saved configs, checkpoints.

The program (scripts/cli_program.py) is run as a user runs it, in its own process; with the
``lightning`` extra the same program with Lightning's imports runs on Lightning 2.6 and writes
the same ``metrics.csv``.
"""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from _helpers import ROOT, SCRIPTS, run_script

pytestmark = pytest.mark.extras
jsonargparse = pytest.importorskip("jsonargparse", reason="the `cli` extra (jsonargparse) is not installed")
yaml = pytest.importorskip("yaml", reason="jsonargparse's YAML support (PyYAML) is not installed")

PROGRAM = SCRIPTS / "cli_program.py"
STRATEGIES_IMPORTS = (
    "from strategies import DataModule as LightningDataModule\n"
    "from strategies import TrainModule as LightningModule\n"
    "from strategies.cli import LightningCLI\n"
)
LIGHTNING_IMPORTS = (
    "from lightning.pytorch import LightningDataModule, LightningModule\n"  # one import a line
    "from lightning.pytorch.cli import LightningCLI\n"
)


def _config(tmp_path: Path, lightning: bool = False, **trainer: object) -> Path:
    """A config in the shape of Lightning's docs: a logger, a callback, an optimizer and a scheduler."""
    prefix = "lightning.pytorch" if lightning else "strategies"
    config = {
        "trainer": {
            "max_epochs": 2,
            "enable_progress_bar": False,
            "logger": {"class_path": f"{prefix}.loggers.CSVLogger", "init_args": {"save_dir": str(tmp_path / "logs")}},
            "callbacks": [
                {"class_path": f"{prefix}.callbacks.ModelCheckpoint", "init_args": {"monitor": "val_loss"}},
            ],
            **trainer,
        },
        "model": {"hidden": 16},
        "optimizer": {"class_path": "torch.optim.Adam", "init_args": {"lr": 0.01}},
        "lr_scheduler": {"class_path": "torch.optim.lr_scheduler.StepLR", "init_args": {"step_size": 1, "gamma": 0.5}},
    }
    path = tmp_path / "input.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _cli(tmp_path: Path, *args: str, lightning: bool = False, timeout: float = 150) -> subprocess.CompletedProcess:
    script = tmp_path / "cli_program.py"
    if not script.exists():
        source = PROGRAM.read_text()
        assert STRATEGIES_IMPORTS in source, "the program's import block changed: update the test's copy"
        script.write_text(source.replace(STRATEGIES_IMPORTS, LIGHTNING_IMPORTS) if lightning else source)
    return run_script([sys.executable, str(script), *args], timeout=timeout)


def _ok(done: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert done.returncode == 0, done.stdout + done.stderr
    return done


def _run_dir(tmp_path: Path, version: int = 0) -> Path:
    return tmp_path / "logs" / "lightning_logs" / f"version_{version}"


def test_fit_from_a_config_file_builds_logger_callbacks_optimizer_and_saves_the_config(tmp_path: Path) -> None:
    _ok(_cli(tmp_path, "fit", "--config", str(_config(tmp_path)), "--seed_everything", "7"))
    run = _run_dir(tmp_path)
    saved = yaml.safe_load((run / "config.yaml").read_text())
    assert saved["seed_everything"] == 7
    assert saved["model"] == {"hidden": 16, "lr": 0.1}
    assert saved["optimizer"]["class_path"] == "torch.optim.Adam"
    (checkpoint,) = (run / "checkpoints").glob("*.ckpt")
    assert checkpoint.name == "epoch=1-step=16.ckpt"
    state = torch.load(checkpoint, weights_only=False)
    # the CLI's Adam and StepLR(gamma=0.5), not the module's SGD: two epochs halve lr twice
    assert "exp_avg" in state["optimizer_states"][0]["state"][0]
    assert state["optimizer_states"][0]["param_groups"][0]["lr"] == pytest.approx(0.01 * 0.5**2)
    assert state["hyper_parameters"] == {"hidden": 16, "lr": 0.1, "_instantiator": "strategies.cli.instantiate_module"}
    assert state["state_dict"]["net.0.weight"].shape == (16, 4)
    with open(run / "metrics.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert [row["val_loss"] != "" for row in rows].count(True) == 2


def test_print_config_prints_the_merged_config_and_runs_nothing(tmp_path: Path) -> None:
    done = _ok(_cli(tmp_path, "fit", "--config", str(_config(tmp_path)), "--model.hidden", "5", "--print_config"))
    printed = yaml.safe_load(done.stdout)
    assert printed["model"]["hidden"] == 5 and printed["trainer"]["max_epochs"] == 2
    assert not (tmp_path / "logs").exists()


def test_the_saved_config_is_not_overwritten_by_a_second_run(tmp_path: Path) -> None:
    args = ["fit", "--trainer.max_epochs", "1", "--trainer.logger", "false", "--trainer.enable_progress_bar", "false"]
    root = ["--trainer.default_root_dir", str(tmp_path / "root")]
    _ok(_cli(tmp_path, *args, *root))
    assert (tmp_path / "root" / "config.yaml").is_file()
    second = _cli(tmp_path, *args, *root)
    assert second.returncode != 0
    assert "expected" in second.stderr and "not to exist" in second.stderr and "overwrite" in second.stderr


def test_test_with_ckpt_path_rebuilds_the_model_from_the_checkpoint_hyperparameters(tmp_path: Path) -> None:
    _ok(_cli(tmp_path, "fit", "--config", str(_config(tmp_path))))
    (checkpoint,) = (_run_dir(tmp_path) / "checkpoints").glob("*.ckpt")
    # no --model.hidden: the 16 of the checkpoint, not the class default 8 (else the weights do not load)
    args = ["--ckpt_path", str(checkpoint), "--trainer.logger", "false", "--trainer.default_root_dir", str(tmp_path)]
    done = _ok(_cli(tmp_path, "test", *args))
    assert "test_loss" in done.stdout


def test_a_subclass_chosen_on_the_command_line_loads_back_with_load_from_checkpoint(tmp_path: Path) -> None:
    import cli_program  # noqa: F401 - load_from_checkpoint builds only classes already imported

    from strategies import TrainModule

    _ok(
        run_script(
            [sys.executable, str(PROGRAM), "--any-model", "fit", "--model", "cli_program.WideRegressor"]
            + ["--model.depth", "3", "--trainer.max_epochs", "1", "--trainer.enable_progress_bar", "false"]
            + ["--trainer.default_root_dir", str(tmp_path)],
            env={"PYTHONPATH": f"{ROOT}:{SCRIPTS}"},
        )
    )
    (checkpoint,) = tmp_path.glob("lightning_logs/version_0/checkpoints/*.ckpt")
    hparams = torch.load(checkpoint, weights_only=False)["hyper_parameters"]
    assert hparams["_class_path"] == "cli_program.WideRegressor"
    model = TrainModule.load_from_checkpoint(checkpoint)
    assert type(model).__qualname__ == "WideRegressor" and model.hparams.depth == 3
    assert model.net[0].weight.shape == (32, 4)


def test_a_checkpoint_cannot_choose_code_to_run(tmp_path: Path) -> None:
    import cli_program

    from strategies import TrainModule

    module = cli_program.Regressor()
    path = tmp_path / "evil.ckpt"
    base = {"state_dict": module.state_dict(), "pytorch-lightning_version": "2.6.0"}
    torch.save({**base, "hyper_parameters": {"_instantiator": "os.system", "hidden": 8}}, path)
    with pytest.raises(ValueError, match="not one of"):
        cli_program.Regressor.load_from_checkpoint(path)
    not_imported = {"_instantiator": "strategies.cli.instantiate_module", "_class_path": "nowhere.Evil"}
    torch.save({**base, "hyper_parameters": not_imported}, path)
    with pytest.raises(ValueError, match="not an imported subclass"):
        TrainModule.load_from_checkpoint(path)


def test_run_false_builds_the_objects_and_runs_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cli_program

    from strategies.cli import LightningCLI

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "argv", ["program.py"])
    cli = LightningCLI(
        cli_program.Regressor,
        cli_program.RandomData,
        run=False,
        args=["--model.hidden", "3", "--data.batch_size", "4", "--trainer.max_epochs", "1"],
        seed_everything_default=11,
    )
    assert cli.subcommand is None and cli.config["seed_everything"] == 11
    assert cli.model.net[0].out_features == 3 and cli.datamodule.hparams.batch_size == 4
    assert cli.trainer.max_epochs == 1 and cli.trainer.global_step == 0
    cli.trainer.fit(cli.model, datamodule=cli.datamodule)
    assert cli.trainer.global_step == 16  # 64 samples / 4 per batch


def test_reduce_lr_on_plateau_from_the_command_line_monitors_its_metric(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cli_program

    from strategies.cli import LightningCLI, ReduceLROnPlateau

    monkeypatch.setattr(sys, "argv", ["program.py"])  # only `args` (pytest's own arguments would warn)
    with pytest.warns(UserWarning, match="configure_optimizers` will be overridden"):
        cli = LightningCLI(
            cli_program.Regressor,
            cli_program.RandomData,
            run=False,
            args=["--optimizer", "SGD", "--optimizer.lr", "0.2"]
            + ["--lr_scheduler", "strategies.cli.ReduceLROnPlateau", "--lr_scheduler.monitor", "val_loss"]
            + ["--trainer.default_root_dir", str(tmp_path)],
        )
    configured = cli.model.configure_optimizers()
    assert isinstance(configured["optimizer"], torch.optim.SGD)
    assert isinstance(configured["lr_scheduler"]["scheduler"], ReduceLROnPlateau)
    assert configured["lr_scheduler"]["monitor"] == "val_loss"


def test_non_lightning_classes_are_refused_with_what_to_give() -> None:
    from strategies.cli import LightningArgumentParser

    with pytest.raises(TypeError, match="subclass of Trainer"):
        LightningArgumentParser().add_lightning_class_args(dict, "thing")


def test_two_process_ddp_from_the_command_line_writes_one_config(tmp_path: Path) -> None:
    config = _config(tmp_path, strategy="ddp", devices=2, accelerator="cpu")
    _ok(_cli(tmp_path, "fit", "--config", str(config), timeout=170))
    run = _run_dir(tmp_path)
    assert yaml.safe_load((run / "config.yaml").read_text())["trainer"]["strategy"] == "ddp"
    assert [p.name for p in (run / "checkpoints").glob("*.ckpt")] == ["epoch=1-step=8.ckpt"]  # 2 ranks share 64


def test_same_metrics_as_lightning_for_the_same_program_and_config(tmp_path: Path) -> None:
    pytest.importorskip("lightning", reason="the `lightning` extra is not installed")
    ours, theirs = tmp_path / "ours", tmp_path / "lightning"
    ours.mkdir()
    theirs.mkdir()
    _ok(_cli(ours, "fit", "--config", str(_config(ours)), "--seed_everything", "3"))
    _ok(_cli(theirs, "fit", "--config", str(_config(theirs, lightning=True)), "--seed_everything", "3", lightning=True))
    assert (_run_dir(ours) / "metrics.csv").read_text() == (_run_dir(theirs) / "metrics.csv").read_text()
    names = sorted(p.name for p in (_run_dir(ours) / "checkpoints").iterdir())
    assert names == sorted(p.name for p in (_run_dir(theirs) / "checkpoints").iterdir())
    mine, lightning = (yaml.safe_load((_run_dir(d) / "config.yaml").read_text()) for d in (ours, theirs))
    for key in ("seed_everything", "model", "data", "optimizer", "lr_scheduler"):
        assert mine[key] == lightning[key], key


def test_without_jsonargparse_the_import_says_what_to_install() -> None:
    code = (
        "import sys; sys.modules['jsonargparse'] = None\n"
        "try:\n    import strategies.cli\nexcept ModuleNotFoundError as e:\n    print(e)\n"
    )
    done = run_script([sys.executable, "-c", code])
    assert "pip install 'strategy-compat[cli]'" in done.stdout, done.stdout + done.stderr
