"""compat.Trainer's table-driven argument translation, the one refusal that lists every problem,
and the 1.2-style program of issue 8 (``precision=16``/``32``, ``checkpoint_callback=False``,
``resume_from_checkpoint=``, ``gpus=0``). Each old argument's own case is generated from the table
(test_shims_generated.py with trainer_exercises.py)."""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pytest

import compat
import strategies
from compat._arguments import TrainerArgumentsError, accepted_arguments, translate
from compat._warnings import CompatDeprecationWarning
from compat.renames import RENAMES, Kind

sys.path.insert(0, str(Path(__file__).resolve().parent / "scripts"))
import legacy_program as lp

ACCEPTED = accepted_arguments(strategies.Trainer)


def quiet(factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory()


def test_every_old_trainer_argument_of_the_table_is_translated_or_refused():
    """No argument entry falls through to strategies.Trainer unread (translate knows them all)."""
    for entry in RENAMES:
        if entry.old != "pytorch_lightning.Trainer" or entry.kind is not Kind.ARGUMENT:
            continue
        value = {"plugins": [], "resume_from_checkpoint": "x.ckpt"}.get(entry.member, 1)
        out = translate({entry.member: value}, ACCEPTED)
        assert out.messages, entry.member  # it warned
        assert entry.member not in out.kwargs, entry.member  # it was not passed on under its old name


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ({"gpus": 2}, {"accelerator": "cuda", "devices": 2}),
        ({"gpus": "0,1"}, {"accelerator": "cuda", "devices": [0, 1]}),
        ({"gpus": 0}, {"accelerator": "cpu"}),
        ({"gpus": "0"}, {"accelerator": "cpu"}),
        ({"gpus": None}, {}),
        # 1.x spawned several CPU processes when no backend was named; one process is no launch at all.
        ({"num_processes": 2}, {"strategy": "ddp_spawn", "accelerator": "cpu", "devices": 2}),
        ({"num_processes": 1}, {"accelerator": "cpu", "devices": 1}),
        ({"accelerator": "ddp", "num_processes": 2}, {"strategy": "ddp", "accelerator": "cpu", "devices": 2}),
        ({"accelerator": "ddp_cpu", "num_processes": 2}, {"strategy": "ddp_spawn", "accelerator": "cpu", "devices": 2}),
        ({"distributed_backend": "ddp_spawn"}, {"strategy": "ddp_spawn"}),
        ({"accelerator": "gpu", "gpus": 2}, {"accelerator": "gpu", "devices": 2}),  # the 1.5 idiom agrees
        ({"checkpoint_callback": False}, {"enable_checkpointing": False}),
        ({"replace_sampler_ddp": False}, {"use_distributed_sampler": False}),
        ({"progress_bar_refresh_rate": 0}, {"enable_progress_bar": False}),
        ({"weights_summary": None}, {"enable_model_summary": False}),
        ({"weights_summary": "top"}, {"enable_model_summary": True}),
        ({"amp_backend": "native", "precision": 32}, {"precision": 32}),
        ({"tpu_cores": None}, {}),
        ({"accelerator": "fsdp"}, {"strategy": "fsdp"}),
    ],
)
def test_translation(given, expected):
    out = translate(given, ACCEPTED)
    assert out.problems == []
    assert out.kwargs == expected


def test_a_refresh_rate_adds_1xs_bar_at_that_rate():
    out = translate({"progress_bar_refresh_rate": 20, "callbacks": []}, ACCEPTED)
    assert out.problems == [] and out.kwargs["enable_progress_bar"] is True
    (bar,) = out.kwargs["callbacks"]
    assert type(bar) is strategies.TQDMProgressBar and bar.refresh_rate == 20


def test_resume_from_checkpoint_becomes_fits_ckpt_path():
    out = translate({"resume_from_checkpoint": "last.ckpt"}, ACCEPTED)
    assert out.ckpt_path == "last.ckpt" and out.kwargs == {} and out.problems == []


def test_every_problem_is_listed_in_one_error_with_its_replacement():
    with pytest.raises(TrainerArgumentsError) as err:
        quiet(
            lambda: compat.Trainer(
                tpu_cores=8,
                amp_backend="apex",
                amp_level="O2",
                flush_logs_every_n_steps=10,
                accelerator="ddp2",
                gpus=2,
                devices=1,
                log_gpu_memory=True,
            )
        )
    text = str(err.value)
    assert "(8 problems)" in text  # the 7 below, and strategies.Trainer's own: gpus=2 asks for CUDA
    assert "CUDA" in text
    for part in (
        "tpu_cores=8",
        "amp_backend='apex'",
        "amp_level='O2'",
        "flush_logs_every_n_steps=10",
        "accelerator='ddp2'",
        "got both `gpus=2`",
        "log_gpu_memory=",
    ):
        assert part in text, part
    assert "CSVLogger(flush_logs_every_n_steps=N)" in text and "strategy='ddp'" in text  # the replacements
    assert isinstance(err.value, TypeError) and isinstance(err.value, ValueError)


def test_the_new_trainers_own_refusal_joins_the_list():
    with pytest.raises(TrainerArgumentsError) as err:
        quiet(lambda: compat.Trainer(accelerator="cpu", precision=16, amp_level="O2"))
    assert "(2 problems)" in str(err.value) and "16-mixed" in str(err.value)


def test_gpus_zero_is_cpu_even_when_cuda_is_available(monkeypatch):
    from strategies._connector import resolve_accelerator

    monkeypatch.setattr(strategies.CUDAAccelerator, "is_available", staticmethod(lambda: True))
    assert isinstance(resolve_accelerator("auto"), strategies.CUDAAccelerator)  # what gpus=0 used to get
    for gpus in (0, "0", []):
        trainer = quiet(lambda value=gpus: compat.Trainer(gpus=value))
        assert isinstance(trainer.strategy.accelerator, strategies.CPUAccelerator), gpus
        assert trainer.strategy.root_device.type == "cpu"


def _issue_program(tmp_path, precision, **extra):
    """The 1.2-style program of issue 8's "Done when"."""
    model = lp.LegacyModel()
    trainer = compat.Trainer(
        gpus=0,
        precision=precision,
        checkpoint_callback=False,
        max_epochs=2,
        resume_from_checkpoint=str(tmp_path / "last.ckpt"),
        progress_bar_refresh_rate=0,
        callbacks=[lp.LegacyCallback(model)],
        limit_train_batches=2,
        **extra,
    )
    return model, trainer


def test_the_1_2_program_with_precision_16_on_cpu_is_refused_at_construction(tmp_path):
    with pytest.raises(TrainerArgumentsError) as err:
        quiet(lambda: _issue_program(tmp_path, 16))
    assert "precision='16-mixed'" in str(err.value) and "CUDA" in str(err.value)


def test_the_1_2_program_with_precision_32_runs_resumes_and_warns_once_per_old_name(tmp_path):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        model, trainer = _issue_program(tmp_path, 32, max_steps=2)
        with pytest.warns(UserWarning, match="starts from scratch"):
            trainer.fit(model)  # last.ckpt does not exist yet: 1.2 started from scratch
    trainer.save_checkpoint(tmp_path / "last.ckpt")
    assert trainer.state.global_step == 2 and trainer.strategy.root_device.type == "cpu"
    ours = [str(w.message) for w in rec if issubclass(w.category, CompatDeprecationWarning)]
    for old in ("gpus", "checkpoint_callback", "resume_from_checkpoint", "progress_bar_refresh_rate"):
        assert sum(f"`Trainer({old}=...)`" in m for m in ours) == 1, old
    assert not list(tmp_path.glob("**/*.ckpt"))[1:], "checkpoint_callback=False wrote checkpoints"
    # the second run resumes from last.ckpt (fit(ckpt_path=...)) and trains the second epoch
    model, trainer = quiet(lambda: _issue_program(tmp_path, 32))
    trainer.fit(model)
    assert trainer.state.global_step == 4
    assert ("m", "training_epoch_end", [(["loss", "n"], False, 4)] * 2) in model.events
    assert ("m", "on_pretrain_routine_start", None) in model.events
