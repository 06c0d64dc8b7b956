"""Accelerators: devices only."""

from strategies.accelerators.accelerator import Accelerator
from strategies.accelerators.cpu import CPUAccelerator
from strategies.accelerators.cuda import CUDAAccelerator

__all__ = ["Accelerator", "CPUAccelerator", "CUDAAccelerator"]
