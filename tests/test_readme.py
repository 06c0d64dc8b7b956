"""The README's quickstart and the shipped DDP example run as written (2 real processes)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "strategies"))
from _helpers import ROOT, run_script  # noqa: E402


def test_readme_quickstart_runs_as_written(tmp_path):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    assert 'strategy="ddp"' in code and "devices=2" in code
    script = tmp_path / "train.py"
    script.write_text(code)
    result = run_script([sys.executable, str(script)])
    assert result.returncode == 0, result.stderr


def test_example_train_ddp_trains_on_two_processes():
    result = run_script([sys.executable, str(ROOT / "examples" / "train_ddp.py")])
    assert result.returncode == 0, result.stderr
    loss = float(re.search(r"final train_loss ([\d.]+)", result.stdout).group(1))
    assert loss < 1.0, "the example should learn the sum of its inputs"
