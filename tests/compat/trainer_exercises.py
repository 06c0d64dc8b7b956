"""The exercises of the rename table's ``Trainer`` argument entries (used by test_shims_generated.py).

Each one runs ``compat.Trainer`` with the old argument and checks what it became, or that it is
refused with the table's hint; ``check`` asserts the one deprecation warning (from the caller).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import pytest

import compat
import strategies
from compat._arguments import TrainerArgumentsError, accepted_arguments, translate
from compat.renames import Rename

Check = Callable[[list, Rename, str], Any]


def _quiet(factory: Callable[[], Any]) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory()


def _build(entry: Rename, check: Check, **kwargs: Any) -> Any:
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        trainer = compat.Trainer(accelerator="cpu", devices=1, **kwargs)
    check(rec, entry, f"{entry.member}=")
    return trainer


def _refused(entry: Rename, **kwargs: Any) -> TrainerArgumentsError:
    with pytest.raises(TrainerArgumentsError) as err:
        _quiet(lambda: compat.Trainer(accelerator="cpu", devices=1, **kwargs))
    assert f"{entry.member}=" in str(err.value)
    return err.value


def _refused_with_hint(entry: Rename, **kwargs: Any) -> None:
    assert entry.hint.rstrip(".") in str(_refused(entry, **kwargs))


def _takes(name: str) -> bool:
    return name in accepted_arguments(strategies.Trainer)


def tpu_cores(entry: Rename, check: Check, fit: Callable) -> None:
    _build(entry, check, tpu_cores=0)  # 1.x "no TPU": nothing to do
    _refused_with_hint(entry, tpu_cores=8)


def checkpoint_callback(entry: Rename, check: Check, fit: Callable) -> None:
    _build(entry, check, checkpoint_callback=False)
    for value in (False, True):
        out = translate({"checkpoint_callback": value}, accepted_arguments(strategies.Trainer))
        if _takes("enable_checkpointing"):
            assert out.kwargs == {"enable_checkpointing": value} and not out.problems
        elif value:  # strategies writes no checkpoints of its own: True cannot run
            assert "enable_checkpointing=True" in str(_refused(entry, checkpoint_callback=True))


def replace_sampler_ddp(entry: Rename, check: Check, fit: Callable) -> None:
    assert _build(entry, check, replace_sampler_ddp=False).use_distributed_sampler is False
    assert _quiet(lambda: compat.Trainer(replace_sampler_ddp=True)).use_distributed_sampler is True


def resume_from_checkpoint(entry: Rename, check: Check, fit: Callable, tmp_path: Any = None) -> None:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        first = _quiet(lambda: compat.Trainer(accelerator="cpu", devices=1, max_epochs=1, enable_progress_bar=False))
        module = fit(first)
        path = f"{tmp}/last.ckpt"
        first.save_checkpoint(path)
        trainer = _build(entry, check, resume_from_checkpoint=path, max_epochs=2, enable_progress_bar=False)
        fit(trainer, module)
        assert trainer.state.epoch == 2 and trainer.state.global_step == 2 * first.state.global_step
        # 1.2: a file that does not exist yet starts from scratch, with a warning
        missing = _quiet(
            lambda: compat.Trainer(
                accelerator="cpu",
                devices=1,
                max_epochs=1,
                enable_progress_bar=False,
                resume_from_checkpoint=f"{tmp}/no.ckpt",
            )
        )
        with pytest.warns(UserWarning, match="starts from scratch"):
            fit(missing)
        assert missing.state.global_step == first.state.global_step


def progress_bar_refresh_rate(entry: Rename, check: Check, fit: Callable) -> None:
    assert _build(entry, check, progress_bar_refresh_rate=0).enable_progress_bar is False
    assert _quiet(lambda: compat.Trainer(progress_bar_refresh_rate=5)).enable_progress_bar is True


def weights_summary(entry: Rename, check: Check, fit: Callable) -> None:
    _build(entry, check, weights_summary=None)
    if not _takes("enable_model_summary"):  # strategies prints no summary: only None can run
        assert "enable_model_summary=True" in str(_refused(entry, weights_summary="top"))


def reload_dataloaders_every_epoch(entry: Rename, check: Check, fit: Callable) -> None:
    assert _build(entry, check, reload_dataloaders_every_epoch=True).reload_dataloaders_every_n_epochs == 1
    assert _quiet(lambda: compat.Trainer(reload_dataloaders_every_epoch=False)).reload_dataloaders_every_n_epochs == 0


def amp_backend(entry: Rename, check: Check, fit: Callable) -> None:
    _build(entry, check, amp_backend="native")
    _refused_with_hint(entry, amp_backend="apex")


def refused(entry: Rename, check: Check, fit: Callable) -> None:
    value = {"amp_level": "O2", "flush_logs_every_n_steps": 50}[entry.member]
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with pytest.raises(TrainerArgumentsError) as err:
            compat.Trainer(accelerator="cpu", devices=1, **{entry.member: value})
    check(rec, entry, f"{entry.member}=")
    assert entry.hint.rstrip(".") in str(err.value)


EXERCISES: dict[str, Callable[..., None]] = {
    "tpu_cores": tpu_cores,
    "checkpoint_callback": checkpoint_callback,
    "replace_sampler_ddp": replace_sampler_ddp,
    "resume_from_checkpoint": resume_from_checkpoint,
    "progress_bar_refresh_rate": progress_bar_refresh_rate,
    "weights_summary": weights_summary,
    "reload_dataloaders_every_epoch": reload_dataloaders_every_epoch,
    "amp_backend": amp_backend,
    "amp_level": refused,
    "flush_logs_every_n_steps": refused,
}
