"""The comparison the side-by-side tests share (run_outputs): what it reads and what it tells apart."""

from __future__ import annotations

import subprocess
import sys

import pytest
import run_outputs


def test_a_checkpoint_holding_a_class_of_the_programs_own_file_still_loads(tmp_path):
    script = (
        "import torch\n"
        "class Net(torch.nn.Module):\n"
        "    def __init__(self):\n"
        "        super().__init__()\n"
        "        self.layer = torch.nn.Linear(2, 2)\n"
        "saved = {'state_dict': {'w': torch.ones(2)}, 'hyper_parameters': {'net': Net()}}\n"
        f"torch.save(saved, {str(tmp_path / 'a.ckpt')!r})\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    assert run_outputs.state(tmp_path / "a.ckpt")["w"].tolist() == [1.0, 1.0]


def test_several_event_files_in_one_folder_are_all_kept(tmp_path):
    (tmp_path / "v0").mkdir()
    for name in ("events.out.tfevents.100.host.1", "events.out.tfevents.200.host.1", "hparams.yaml"):
        (tmp_path / "v0" / name).write_text("")
    assert sorted(run_outputs.files(tmp_path)) == [
        "v0/events.out.tfevents",
        "v0/events.out.tfevents.2",
        "v0/hparams.yaml",
    ]


def test_tensors_and_rows_that_differ_are_told_apart(tmp_path):
    import torch

    run_outputs.assert_same_tensors({"w": torch.ones(2)}, {"w": torch.ones(2) + 1e-9}, "same")
    with pytest.raises(AssertionError, match="w"):
        run_outputs.assert_same_tensors({"w": torch.ones(2)}, {"w": torch.ones(2) * 1.01}, "differs")
    left, right = tmp_path / "a.csv", tmp_path / "b.csv"
    left.write_text("step,loss\n1,0.5\n")
    right.write_text("step,loss\n1,0.6\n")
    with pytest.raises(AssertionError):
        run_outputs.assert_same_rows(left, right, "metrics.csv")
    run_outputs.assert_same_rows(left, left, "metrics.csv")
