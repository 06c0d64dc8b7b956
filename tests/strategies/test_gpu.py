"""CUDA/NCCL paths: skipped here without a GPU, with the reason; tests/gpu/ has the device script."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from _helpers import ROOT, script_env

needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device (CPU-only machine)")


@needs_cuda
def test_cuda_nccl_and_bf16_script():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "gpu" / "check_cuda.py")],
        env=script_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr


@needs_cuda
def test_sharded_strategies_script():
    result = subprocess.run(
        [sys.executable, str(ROOT / "tests" / "gpu" / "check_sharded.py")],
        env=script_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
