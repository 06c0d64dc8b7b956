"""The built-in loggers: Lightning's folder layout, version numbering, files."""

from __future__ import annotations

import csv
import importlib.util
import json

import pytest

from strategies import CSVLogger, TensorBoardLogger


def test_csv_versions_count_up_from_the_folders_present(tmp_path):
    first = CSVLogger(tmp_path, name="exp")
    assert first.log_dir == str(tmp_path / "exp" / "version_0")
    first.log_metrics({"a": 1.0}, step=0)
    (tmp_path / "exp" / "version_7").mkdir()
    assert CSVLogger(tmp_path, name="exp").version == 8
    assert CSVLogger(tmp_path, name="exp", version="mine").log_dir == str(tmp_path / "exp" / "mine")
    assert CSVLogger(tmp_path, name=None, version=3).log_dir == str(tmp_path / "version_3")


def test_csv_new_columns_rewrite_the_header_and_keep_rows(tmp_path):
    logger = CSVLogger(tmp_path, prefix="train")
    logger.log_metrics({"b": 1.0}, step=0)
    logger.log_metrics({"a": 2.0, "b": 3.0}, step=1)
    with open(logger.metrics_file_path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows == [{"train-a": "", "train-b": "1.0", "step": "0"}, {"train-a": "2.0", "train-b": "3.0", "step": "1"}]
    assert list(rows[0]) == ["step", "train-a", "train-b"]


def test_csv_starts_a_fresh_file_in_a_reused_version(tmp_path):
    CSVLogger(tmp_path, version=0).log_metrics({"old": 1.0}, step=0)
    logger = CSVLogger(tmp_path, version=0)
    logger.log_metrics({"new": 2.0}, step=0)
    with open(logger.metrics_file_path) as f:
        assert f.read().splitlines() == ["new,step", "2.0,0"]


def test_hparams_yaml_is_readable_as_yaml(tmp_path):
    yaml = pytest.importorskip("yaml", reason="pyyaml reads the file back; the logger itself does not need it")
    logger = CSVLogger(tmp_path)
    logger.log_hyperparams({"lr": 0.1, "name": "net: v2", "layers": [4, 2], "opts": {"nesterov": True}, "x": None})
    with open(f"{logger.log_dir}/hparams.yaml") as f:
        assert yaml.safe_load(f) == {
            "lr": 0.1,
            "name": "net: v2",
            "layers": [4, 2],
            "opts": {"nesterov": True},
            "x": None,
        }
    logger.log_hyperparams({})
    with open(f"{logger.log_dir}/hparams.yaml") as f:
        assert json.loads(f.read()) == {}


def test_tensorboard_missing_names_the_install(tmp_path, monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "tensorboard" else find_spec(name, *a)
    )
    with pytest.raises(ModuleNotFoundError, match="pip install tensorboard"):
        TensorBoardLogger(tmp_path)


@pytest.mark.extras
def test_tensorboard_writes_scalars_and_hparams(tmp_path):
    pytest.importorskip("tensorboard", reason="the TensorBoardLogger needs the tensorboard extra")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    logger = TensorBoardLogger(tmp_path, name="tb")
    logger.log_hyperparams({"lr": 0.1})
    logger.log_metrics({"loss": 0.5}, step=3)
    logger.save()
    logger.finalize("success")
    assert logger.log_dir == str(tmp_path / "tb" / "version_0")
    events = EventAccumulator(logger.log_dir)
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("loss")] == [(3, 0.5)]
    assert (tmp_path / "tb" / "version_0" / "hparams.yaml").read_text() == '"lr": 0.1\n'


@pytest.mark.extras
def test_tensorboard_writes_an_empty_hparams_yaml_without_hyperparameters_as_lightning(tmp_path):
    pytest.importorskip("tensorboard", reason="the TensorBoardLogger needs the tensorboard extra")
    logger = TensorBoardLogger(tmp_path, name="tb")
    logger.log_metrics({"loss": 0.5}, step=1)
    logger.save()
    assert (tmp_path / "tb" / "version_0" / "hparams.yaml").read_text() == "{}\n"  # Lightning 2.6's file
    logger.log_hyperparams({"lr": 0.1})  # logged later: replaces it
    logger.save()
    logger.finalize("success")
    assert (tmp_path / "tb" / "version_0" / "hparams.yaml").read_text() == '"lr": 0.1\n'


def test_tensorboard_experiment_off_rank_zero_is_a_dummy_that_writes_nothing(tmp_path, monkeypatch):
    pytest.importorskip("tensorboard", reason="the TensorBoardLogger needs the tensorboard extra")
    from strategies.loggers import DummyExperiment
    from strategies.utilities import rank_zero_only

    monkeypatch.setattr(rank_zero_only, "_rank", 1)  # the field: undoing the property would pin its computed value
    logger = TensorBoardLogger(tmp_path, name="tb")
    experiment = logger.experiment
    assert isinstance(experiment, DummyExperiment)
    experiment.add_image("x", None)  # user code in a module runs on every rank: nothing happens
    experiment["anything"].add_scalar("y", 1.0)
    assert not any(tmp_path.rglob("events.out.tfevents*"))
    monkeypatch.setattr(rank_zero_only, "_rank", 0)
    assert not isinstance(logger.experiment, DummyExperiment)
    logger.finalize("success")
    assert len(list(tmp_path.rglob("events.out.tfevents*"))) == 1
