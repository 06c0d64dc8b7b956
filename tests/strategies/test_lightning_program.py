"""A Lightning 2.6 program runs on ``strategies.Trainer`` with only its imports changed (2 CPU processes).

The program (scripts/lightning_program.py) uses a DataModule, ``self.log(prog_bar=True,
sync_dist=True)``, ``ModelCheckpoint(monitor=...)``, ``EarlyStopping``, ``accumulate_grad_batches=2``
and ``precision="bf16-mixed"``. These tests check the checkpoints, ``metrics.csv`` and the
per-rank results it leaves; with the ``lightning`` extra, they compare them with Lightning's own run.
"""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest
import torch
from _helpers import SCRIPTS, run_script

PROGRAM = SCRIPTS / "lightning_program.py"
LIGHTNING_IMPORTS = (
    "from lightning.pytorch import LightningDataModule, LightningModule, Trainer, seed_everything\n"
    "from lightning.pytorch.callbacks import EarlyStopping, ModelCheckpoint\n"
    "from lightning.pytorch.loggers import CSVLogger\n"
)
STRATEGIES_IMPORTS = (
    "from strategies import DataModule as LightningDataModule, TrainModule as LightningModule, Trainer, "
    "seed_everything\n"
    "from strategies.callbacks import EarlyStopping, ModelCheckpoint\n"
    "from strategies.loggers import CSVLogger\n"
)
COLUMNS = ["epoch", "step", "train_loss_epoch", "train_loss_step", "val_loss", "val_max", "weight_norm"]
STEPS_PER_EPOCH = 3  # 96 samples / 2 ranks / batch 8 = 6 batches, 2 per optimizer step


def _run(tmp_path: Path, imports: str) -> Path:
    source = PROGRAM.read_text()
    assert LIGHTNING_IMPORTS in source, "the program's import block changed: update the test's copy"
    script = tmp_path / "program.py"
    script.write_text(source.replace(LIGHTNING_IMPORTS, imports))
    out = tmp_path / "out"
    out.mkdir()
    done = run_script([sys.executable, str(script), str(out)], timeout=400)
    assert done.returncode == 0, done.stdout + done.stderr
    return out


def _ranks(out: Path) -> list[dict]:
    return [json.loads((out / f"rank{r}.json").read_text()) for r in (0, 1)]


def _rows(out: Path) -> tuple[list[str], list[dict[str, str]]]:
    with open(out / "csv" / "version_0" / "metrics.csv", newline="") as f:
        reader = csv.DictReader(f)
        return list(reader.fieldnames or []), list(reader)


def _stop_epoch(val_losses: list[float], min_delta: float, patience: int) -> int | None:
    """Where EarlyStopping(min_delta, patience, mode="min") must stop for these per-epoch values."""
    best, wait = float("inf"), 0
    for epoch, value in enumerate(val_losses):
        if value < best - min_delta:
            best, wait = value, 0
        else:
            wait += 1
            if wait >= patience:
                return epoch
    return None


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _run(tmp_path_factory.mktemp("strategies"), STRATEGIES_IMPORTS)


def test_both_ranks_end_alike_and_stop_at_the_same_epoch(ours):
    rank0, rank1 = _ranks(ours)
    assert rank0["rank"] == 0 and rank1["rank"] == 1
    for key in (
        "current_epoch",
        "global_step",
        "should_stop",
        "stopped_epoch",
        "best_model_path",
        "best_k_models",
        "last_model_path",
        "log_dir",
        "logged_metrics",
        "progress_bar_metrics",
    ):
        assert rank0[key] == rank1[key], key
    assert rank0["callback_metrics"] == pytest.approx(rank1["callback_metrics"])  # sync_dist=True everywhere
    assert rank0["should_stop"] and rank0["log_dir"] == "csv/version_0"
    assert rank0["logged_metrics"] == ["train_loss_epoch", "train_loss_step", "val_loss", "val_max", "weight_norm"]
    assert rank0["progress_bar_metrics"] == ["train_loss_epoch", "train_loss_step", "val_loss"]


def test_metrics_csv_has_lightnings_rows(ours):
    columns, rows = _rows(ours)
    assert columns == COLUMNS
    stopped = _ranks(ours)[0]["stopped_epoch"]
    step_rows = [(int(r["epoch"]), int(r["step"])) for r in rows if r["train_loss_step"]]
    # log_every_n_steps=2: every 2nd optimizer step, at Lightning's step (optimizer steps before the batch).
    assert step_rows == [((s - 1) // STEPS_PER_EPOCH, s - 1) for s in range(2, STEPS_PER_EPOCH * (stopped + 1) + 1, 2)]
    for epoch in range(stopped + 1):
        last_step = STEPS_PER_EPOCH * (epoch + 1) - 1
        val = [r for r in rows if r["val_loss"] and int(r["epoch"]) == epoch]
        train = [r for r in rows if r["train_loss_epoch"] and int(r["epoch"]) == epoch]
        assert [int(r["step"]) for r in val + train] == [last_step, last_step]
        assert float(val[0]["val_max"]) >= float(val[0]["val_loss"])
        assert train[0]["weight_norm"] and not val[0]["weight_norm"]


def test_early_stopping_and_checkpoints_follow_the_logged_val_loss(ours):
    rank0 = _ranks(ours)[0]
    _, rows = _rows(ours)
    val_losses = [float(r["val_loss"]) for r in rows if r["val_loss"]]
    assert rank0["stopped_epoch"] == _stop_epoch(val_losses, min_delta=0.05, patience=2) == len(val_losses) - 1
    assert rank0["best_model_score"] == pytest.approx(min(val_losses))
    ckpt_dir = ours / "csv" / "version_0" / "checkpoints"
    best_two = sorted(range(len(val_losses)), key=val_losses.__getitem__)[:2]
    expected = {f"epoch={e}-step={STEPS_PER_EPOCH * (e + 1)}.ckpt" for e in best_two}
    assert {p.name for p in ckpt_dir.iterdir()} == expected | {"last.ckpt"}
    assert {Path(p).name for p in rank0["best_k_models"]} == expected
    best = torch.load(ours / rank0["best_model_path"], weights_only=True)
    last = torch.load(ckpt_dir / "last.ckpt", weights_only=True)
    assert set(best["state_dict"]) == {"net.0.weight", "net.0.bias", "net.2.weight", "net.2.bias"}
    assert last["global_step"] == rank0["global_step"] == STEPS_PER_EPOCH * (rank0["stopped_epoch"] + 1)


@pytest.mark.extras
def test_lightning_leaves_the_same_files_and_numbers(ours, tmp_path):
    """Lightning's own run of the same program: the same files, rows and values (to float32 rounding)."""
    pytest.importorskip("lightning", reason="the comparison runs the program on Lightning 2.6 itself")
    theirs = _run(tmp_path, LIGHTNING_IMPORTS)

    def files(run: Path) -> list[str]:
        return sorted(p.relative_to(run).as_posix() for p in run.rglob("*") if p.is_file())

    assert files(ours) == files(theirs)
    ours_cols, ours_rows = _rows(ours)
    theirs_cols, theirs_rows = _rows(theirs)
    assert ours_cols == theirs_cols and len(ours_rows) == len(theirs_rows)
    for mine, lightning in zip(ours_rows, theirs_rows, strict=False):
        assert {k for k, v in mine.items() if v} == {k for k, v in lightning.items() if v}
        assert {k: float(v) for k, v in mine.items() if v} == pytest.approx(
            {k: float(v) for k, v in lightning.items() if v}, rel=1e-5
        )
    for rank in (0, 1):
        mine, lightning = _ranks(ours)[rank], _ranks(theirs)[rank]
        assert mine.pop("callback_metrics") == pytest.approx(lightning.pop("callback_metrics"), rel=1e-5)
        assert mine.pop("best_model_score") == pytest.approx(lightning.pop("best_model_score"), rel=1e-5)
        assert mine == lightning
