"""MLFlowLogger and WandbLogger: the same store contents as Lightning 2.6's, one run under DDP.

Each fit runs ``scripts/service_logger_run.py`` in its own process (the services' background
threads and wandb's core process end with it), on ``strategies`` and, for the side-by-side
tests, on a real Lightning 2.6. MLflow writes to a local ``file:`` store under ``tmp_path``;
W&B runs offline, its run log read back record by record.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import struct
import sys
from pathlib import Path

import pytest
from _helpers import SCRIPTS, run_script

from strategies import MLFlowLogger, WandbLogger

RUN = SCRIPTS / "service_logger_run.py"


def _needs(*modules: str) -> None:
    for module in modules:
        pytest.importorskip(module, reason=f"needs the {module} extra (pip install strategy-compat[{module}])")


def _fit(side: str, service: str, out: Path, *args: str) -> dict:
    env = {"MLFLOW_ALLOW_FILE_STORE": "true", "WANDB_MODE": "offline", "WANDB_SILENT": "true"}
    env.update({"WANDB_DIR": str(out), "WANDB_CACHE_DIR": str(out / "cache"), "WANDB_CONFIG_DIR": str(out / "cfg")})
    out.mkdir(parents=True, exist_ok=True)
    proc = run_script([sys.executable, str(RUN), side, service, str(out), *args], env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    results = [json.loads(line[len("RESULT ") :]) for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert len(results) == 1, proc.stdout  # printed by global rank 0 only
    return results[0]


# -- errors, without the services ------------------------------------------------------------------


@pytest.mark.parametrize(("cls", "module"), [(MLFlowLogger, "mlflow"), (WandbLogger, "wandb")])
def test_a_missing_service_package_names_the_install(cls, module, monkeypatch):
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else find_spec(name, *a))
    with pytest.raises(ModuleNotFoundError, match=rf"pip install .*strategy-compat\[{module}\]"):
        cls()


# -- MLflow -----------------------------------------------------------------------------------------


def _mlflow_run(result: dict) -> Path:
    run = Path(result["save_dir"]) / result["name"] / result["version"]
    assert run.is_dir(), result
    return run


def _mlflow_contents(run: Path) -> dict:
    """What the store holds for a run, without ids and times: metrics (value, step), params, tags, artifacts."""
    out: dict = {"metrics": {}, "params": {}, "artifacts": {}}
    for path in sorted((run / "metrics").rglob("*")):
        if path.is_file():
            rows = [line.split() for line in path.read_text().splitlines()]
            out["metrics"][str(path.relative_to(run / "metrics"))] = [(float(v), int(s)) for _, v, s in rows]
    for path in sorted((run / "params").rglob("*")):
        if path.is_file():
            out["params"][str(path.relative_to(run / "params"))] = re.sub("0x[0-9a-f]+", "0x", path.read_text())
    out["tags"] = sorted(p.name for p in (run / "tags").iterdir() if not p.name.startswith("mlflow.source.git"))
    out["team"] = (run / "tags" / "team").read_text()
    out["run_name"] = (run / "tags" / "mlflow.runName").read_text()
    for path in sorted((run / "artifacts").rglob("*")):
        if path.is_file() and path.suffix != ".ckpt":
            out["artifacts"][str(path.relative_to(run / "artifacts"))] = path.read_text()
        elif path.is_file():
            out["artifacts"][str(path.relative_to(run / "artifacts"))] = "<checkpoint>"
    return out


@pytest.mark.extras
def test_mlflow_store_holds_what_lightning_writes(tmp_path):
    _needs("mlflow", "lightning")
    ours = _fit("strategies", "mlflow", tmp_path / "ours", "--log-model", "true")
    theirs = _fit("lightning", "mlflow", tmp_path / "theirs", "--log-model", "true")
    mine, reference = _mlflow_contents(_mlflow_run(ours)), _mlflow_contents(_mlflow_run(theirs))
    assert mine == reference
    # what that is, so an empty comparison cannot pass
    assert [s for _, s in mine["metrics"]["train_loss_step"]] == list(range(8))
    assert [s for _, s in mine["metrics"]["val/acc1"]] == [3, 7]  # '@' dropped, as MLflow needs
    assert mine["params"]["nested/opts/1/b"] == "2" and "method tanh" in mine["params"]["act"]
    assert mine["team"] == "compat" and mine["run_name"] == "run-a"
    assert "['latest', 'best']" in mine["artifacts"].values()
    for result in (ours, theirs):
        assert result["dirpath"] == str(_mlflow_run(result) / "checkpoints")


@pytest.mark.extras
def test_mlflow_under_ddp_makes_one_run_and_uploads_every_save(tmp_path):
    _needs("mlflow")
    result = _fit("strategies", "mlflow", tmp_path, "--devices", "2", "--log-model", "all")
    store = Path(result["save_dir"])
    experiments = [p for p in store.iterdir() if p.is_dir() and p.name not in ("0", ".trash")]
    assert [p.name for p in experiments] == [result["name"]]
    runs = [p for p in experiments[0].iterdir() if p.is_dir()]
    assert [p.name for p in runs] == [result["version"]]  # rank 1 created nothing
    contents = _mlflow_contents(runs[0])
    assert [s for _, s in contents["metrics"]["val_loss"]] == [3, 7]  # 4 batches of 4 an epoch on each rank
    checkpoints = sorted(p.name for p in (runs[0] / "checkpoints").iterdir())
    assert checkpoints == ["epoch=0-step=4.ckpt", "epoch=1-step=8.ckpt", "last.ckpt"]
    uploaded = sorted(p.name for p in (runs[0] / "artifacts").iterdir())
    assert uploaded == ["epoch=0-step=4", "epoch=1-step=8", "last"]


@pytest.mark.extras
def test_mlflow_file_store_refused_names_the_fix(tmp_path, monkeypatch):
    _needs("mlflow")
    import mlflow

    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    major = int(mlflow.__version__.split(".")[0])
    if major < 3:
        pytest.skip(f"mlflow {mlflow.__version__} still allows the file store")
    with pytest.raises(RuntimeError, match="MLFLOW_ALLOW_FILE_STORE=true"):
        MLFlowLogger(save_dir=str(tmp_path / "mlruns"))


@pytest.mark.extras
def test_mlflow_logger_methods_without_a_trainer(tmp_path, monkeypatch):
    _needs("mlflow")
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    logger = MLFlowLogger(experiment_name="e", save_dir=str(tmp_path / "mlruns"), prefix="p")
    logger.log_hyperparams({"long": "x" * 300, "fn": len})
    with pytest.warns(RuntimeWarning, match="Replacing p-a:b with p-ab"):
        logger.log_metrics({"a:b": 1.0, "text": "dropped"}, step=2)  # type: ignore[dict-item]
    logger.finalize("failed")
    run = _mlflow_run({"save_dir": logger.save_dir, "name": logger.name, "version": logger.version})
    assert (run / "params" / "long").read_text() == "x" * 250  # Lightning's truncation
    assert (run / "params" / "fn").read_text() == "<built-in function len>"  # str(), as Lightning's
    assert (run / "metrics" / "p-ab").read_text().split()[1:] == ["1.0", "2"]
    assert not (run / "metrics" / "p-text").exists()
    assert "status: 4" in (run / "meta.yaml").read_text()  # FAILED


# -- Weights & Biases (offline) ----------------------------------------------------------------------


def _wandb_records(run_file: Path):
    """The protobuf records of an offline run's ``.wandb`` file (a block-framed record log)."""
    from wandb.proto import wandb_internal_pb2

    data = run_file.read_bytes()
    assert data[:4] == b":W&B", run_file
    pos, block, pending = 7, 32768, b""
    while pos + 7 <= len(data):
        room = block - pos % block
        if room < 7:  # a block's tail too short for a header is padding
            pos += room
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if length == 0 and kind == 0:
            pos += room
            continue
        chunk = data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # a whole record, or a record's last part
            record = wandb_internal_pb2.Record()
            record.ParseFromString(pending + chunk)
            pending = b""
            yield record
        else:
            pending = chunk if kind == 2 else pending + chunk


def _wandb_contents(save_dir: Path) -> dict:
    (run_dir,) = (save_dir / "wandb").glob("offline-run-*")
    (run_file,) = run_dir.glob("run-*.wandb")
    history, config = [], {}
    for record in _wandb_records(run_file):
        kind = record.WhichOneof("record_type")
        if kind == "history":
            row = {"/".join(i.nested_key) or i.key: json.loads(i.value_json) for i in record.history.item}
            history.append({k: v for k, v in row.items() if not k.startswith("_")})
        elif kind == "config":
            config.update({i.key: json.loads(i.value_json) for i in record.config.update if i.key != "_wandb"})
    return {"history": history, "config": config, "run_dir": run_dir.name}


@pytest.mark.extras
def test_wandb_offline_run_holds_what_lightning_logs(tmp_path):
    _needs("wandb", "lightning")
    ours = _fit("strategies", "wandb", tmp_path / "ours")
    theirs = _fit("lightning", "wandb", tmp_path / "theirs")
    mine, reference = _wandb_contents(tmp_path / "ours"), _wandb_contents(tmp_path / "theirs")
    assert mine["history"] == reference["history"]
    assert mine["config"] == reference["config"]
    assert len(mine["history"]) == 12 and mine["history"][0]["trainer/global_step"] == 0
    assert mine["config"]["nested"] == {"depth": 2, "opts": [{"a": 1}, {"b": 2}]}
    assert mine["config"]["act"] == "tanh"
    assert mine["run_dir"].endswith(ours["version"])
    for side, result in (("ours", ours), ("theirs", theirs)):
        assert result["name"] == "compare"  # the project
        assert result["dirpath"] == str(tmp_path / side / "compare" / result["version"] / "checkpoints")


@pytest.mark.extras
def test_wandb_under_ddp_logs_from_rank_zero_only(tmp_path):
    _needs("wandb")
    result = _fit("strategies", "wandb", tmp_path, "--devices", "2")
    contents = _wandb_contents(tmp_path)  # exactly one offline run (the unpacking fails otherwise)
    assert contents["run_dir"].endswith(result["version"])
    steps = [row["trainer/global_step"] for row in contents["history"] if "train_loss_step" in row]
    assert steps == list(range(8))
    assert sorted(os.listdir(result["dirpath"])) == ["epoch=0-step=4.ckpt", "epoch=1-step=8.ckpt", "last.ckpt"]


def test_wandb_offline_with_log_model_is_refused_before_any_run(tmp_path):
    if importlib.util.find_spec("wandb") is None:
        pytest.skip("needs the wandb extra (pip install strategy-compat[wandb])")
    with pytest.raises(ValueError, match="offline"):
        WandbLogger(save_dir=str(tmp_path), offline=True, log_model=True)
    assert not (tmp_path / "wandb").exists()
