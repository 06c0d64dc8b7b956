"""Bad input: each a clear error that says what to do."""

from __future__ import annotations

import datetime
import os

import pytest
import torch
import torch.distributed as dist
from probe import ProbeData, ProbeModule

from strategies import LocalEnvironment, Trainer, TrainModule
from strategies._distributed import RENDEZVOUS, ProcessGroupError


def test_unknown_strategy_lists_the_valid_names():
    with pytest.raises(ValueError, match=r"Unknown strategy 'dpp'.*'auto', 'ddp',.*'ddp_spawn'.*'single_device'"):
        Trainer(strategy="dpp")


def test_more_devices_than_exist():
    with pytest.raises(ValueError, match=rf"`devices=999` but this machine has only {os.cpu_count()} cpu"):
        Trainer(accelerator="cpu", devices=999)


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the error on a machine without CUDA")
@pytest.mark.parametrize("name", ["cuda", "gpu"])
def test_cuda_without_cuda(name):
    with pytest.raises(RuntimeError, match=r"no CUDA device is available.*accelerator='cpu'"):
        Trainer(accelerator=name)


def test_num_nodes_without_a_cluster_environment():
    with pytest.raises(ValueError, match=r"`num_nodes=2` but no cluster environment.*torchrun.*SLURM"):
        Trainer(strategy="ddp", accelerator="cpu", devices=1, num_nodes=2)


def test_module_without_training_step_cannot_fit():
    class NoStep(TrainModule):
        pass

    with pytest.raises(NotImplementedError, match=r"`NoStep` has no `training_step`.*define"):
        Trainer(accelerator="cpu", enable_progress_bar=False).fit(NoStep())


def test_incompatible_existing_process_group():
    env = LocalEnvironment()
    RENDEZVOUS.init_process_group(env, "gloo", 0, 1, datetime.timedelta(seconds=20))
    try:
        trainer = Trainer(strategy="ddp", accelerator="cpu", devices=2, enable_progress_bar=False)
        with pytest.raises(ProcessGroupError, match=r"world size 1.*world size 2.*strategy.close\(\)"):
            trainer.fit(ProbeModule(), datamodule=ProbeData(4))
    finally:
        RENDEZVOUS.close()
        env.teardown()
    assert not dist.is_initialized()


def test_sixteen_bit_mixed_on_cpu_points_to_bf16():
    with pytest.raises(ValueError, match="use `precision='bf16-mixed'`"):
        Trainer(accelerator="cpu", precision="16-mixed")


def test_unknown_precision_and_accelerator():
    with pytest.raises(ValueError, match="Valid values: '32-true', '16-mixed', 'bf16-mixed', '16-true'"):
        Trainer(accelerator="cpu", precision="8-true")
    with pytest.raises(ValueError, match="Valid values: 'auto', 'cpu', 'cuda'"):
        Trainer(accelerator="tpu")


def test_single_device_with_several_devices():
    with pytest.raises(ValueError, match="Use `strategy='ddp'`"):
        Trainer(strategy="single_device", accelerator="cpu", devices=2)


def test_ddp_cannot_rerun_pytest():
    trainer = Trainer(strategy="ddp", accelerator="cpu", devices=2, enable_progress_bar=False)
    # under pytest-xdist a worker runs from `python -c`, which the launcher reports as an interactive session
    with pytest.raises(
        RuntimeError, match="cannot re-run|not possible from (pytest|an interactive session).*ddp_spawn"
    ):
        trainer.fit(ProbeModule(), datamodule=ProbeData(4))
    trainer.strategy.cluster_environment.teardown()


def test_missing_training_data():
    trainer = Trainer(accelerator="cpu", enable_progress_bar=False)
    with pytest.raises(ValueError, match="No training data: pass `train_dataloaders`"):
        trainer.fit(ProbeModule())


def test_existing_group_with_another_backend():
    env = LocalEnvironment()
    RENDEZVOUS.init_process_group(env, "gloo", 0, 1, datetime.timedelta(seconds=20))
    try:
        trainer = Trainer(strategy="ddp", accelerator="cpu", devices=1, enable_progress_bar=False)
        trainer.strategy._process_group_backend = "nccl"
        with pytest.raises(ProcessGroupError, match=r"backend `gloo`.*needs backend `nccl`"):
            trainer.fit(ProbeModule(), datamodule=ProbeData(4))
    finally:
        RENDEZVOUS.close()
        env.teardown()


def test_a_string_of_indices_is_a_list_of_cuda_devices_as_in_lightning():
    from strategies import CPUAccelerator, CUDAAccelerator
    from strategies._connector import resolve_devices

    class TwoGpus(CUDAAccelerator):
        @staticmethod
        def max_device_count() -> int:
            return 2

    env = LocalEnvironment()
    assert resolve_devices("0,1", TwoGpus(), env, 1) == [0, 1]
    assert resolve_devices("1,", TwoGpus(), env, 1) == [1]
    with pytest.raises(ValueError, match="needs `accelerator='cuda'`"):
        resolve_devices("0,1", CPUAccelerator(), env, 1)
    with pytest.raises(ValueError, match="pass a positive count"):
        resolve_devices("0", CPUAccelerator(), env, 1)  # 1.x's gpus="0" (no GPU) fails loudly here
