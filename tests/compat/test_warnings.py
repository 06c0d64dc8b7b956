"""The deprecation warnings: category, message, once per call site, rank 0 only, stacklevel, errors."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import pytest

import compat
from compat import _warnings
from compat._warnings import CompatDeprecationWarning

REPO = Path(__file__).resolve().parents[2]
_RANK_VARS = ("RANK", "LOCAL_RANK", "SLURM_PROCID", "STRATEGY_COMPAT_DEPRECATION")


def _ours(rec):
    return [w for w in rec if issubclass(w.category, CompatDeprecationWarning)]


def _run(code: str, *args: str, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k not in _RANK_VARS and k != "PYTHONWARNINGS"}
    full_env["PYTHONPATH"] = str(REPO) + os.pathsep + full_env.get("PYTHONPATH", "")
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, *args, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd or REPO,
        timeout=300,  # a fresh interpreter imports torch: seconds, many on a busy machine
    )


def test_category_is_a_deprecation_warning():
    assert issubclass(CompatDeprecationWarning, DeprecationWarning)
    assert compat.CompatDeprecationWarning is CompatDeprecationWarning
    with pytest.deprecated_call(match="DDPPlugin"):
        compat.plugins.DDPPlugin()


def test_message_has_old_new_removal_and_migrate():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        compat.plugins.DDPPlugin()
    (w,) = _ours(rec)
    text = str(w.message)
    assert "`DDPPlugin`" in text
    assert "strategies.DDPStrategy" in text
    assert "lightning.pytorch.strategies.DDPStrategy" in text
    assert "strategy-compat 1.0" in text
    assert "python -m compat.migrate <path>" in text


def test_once_per_call_site():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")  # pytest's default for DeprecationWarning: "once" is ours anyway
        for _ in range(3):
            compat.plugins.DDPPlugin()  # one site
        compat.plugins.DDPPlugin()  # another site
    lines = [w.lineno for w in _ours(rec)]
    assert len(lines) == 2 and lines[0] != lines[1]
    assert all(os.path.samefile(w.filename, __file__) for w in _ours(rec))


def test_stacklevel_points_at_the_callers_line():
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        compat.plugins.SingleDevicePlugin("cpu")
    (w,) = _ours(rec)
    assert (os.path.realpath(w.filename), w.lineno) == (os.path.realpath(__file__), line)


def test_stacklevel_through_abc_metaclass():
    """Subclassing an ABC shim: the warning is at the class statement, not `<frozen abc>`."""
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 2  # the class statement below (the formatter keeps a blank line)

        class Env(compat.plugins.ClusterEnvironment):  # noqa: E306
            def master_address(self):
                return "127.0.0.1"

    mine = _ours(rec)
    assert len(mine) == 2  # the class, the old method
    for w in mine:
        assert (os.path.realpath(w.filename), w.lineno) == (os.path.realpath(__file__), line), w


def test_stacklevel_through_our_internal_calls():
    """An old name reached through several compat/strategies frames still points here."""
    plugin = _quiet(lambda: compat.plugins.SingleDevicePlugin("cpu"))
    container = _quiet(lambda: compat.accelerators.CPUAccelerator(training_type_plugin=plugin))
    trainer = _quiet(lambda: compat.Trainer(accelerator=container, devices=1))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        line = sys._getframe().f_lineno + 1
        backend = trainer.accelerator_backend  # property on a subclass of strategies.Trainer
        backend.barrier()  # container -> plugin
    lines = sorted(w.lineno for w in _ours(rec))
    assert lines == [line, line + 1]
    assert all(os.path.samefile(w.filename, __file__) for w in _ours(rec))


def _quiet(factory):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return factory()


def test_only_rank_zero_warns(monkeypatch):
    monkeypatch.setenv("LOCAL_RANK", "1")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        compat.plugins.DDPPlugin()
    assert _ours(rec) == []
    monkeypatch.setenv("RANK", "0")  # the global rank wins over the local one
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        compat.plugins.DDPPlugin()
    assert len(_ours(rec)) == 1


@pytest.mark.parametrize("var", ["RANK", "SLURM_PROCID", "LOCAL_RANK"])
def test_error_filters_raise_on_every_rank(monkeypatch, var):
    """`error` filters raise on non-zero ranks too (rank 0 must not fail alone)."""
    monkeypatch.setenv(var, "1")
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        with pytest.raises(CompatDeprecationWarning, match="DDPPlugin"):
            compat.plugins.DDPPlugin()


def test_env_var_error_raises_everywhere(monkeypatch):
    monkeypatch.setenv("STRATEGY_COMPAT_DEPRECATION", "error")
    monkeypatch.setenv("RANK", "3")
    with pytest.raises(CompatDeprecationWarning, match="python -m compat.migrate"):
        compat.plugins.DDPPlugin()
    # every time, not once
    with pytest.raises(CompatDeprecationWarning):
        compat.plugins.DDPPlugin()


def test_env_var_ignore(monkeypatch):
    monkeypatch.setenv("STRATEGY_COMPAT_DEPRECATION", "ignore")
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        compat.plugins.DDPPlugin()
    assert _ours(rec) == []


def test_error_filter_raises_each_time():
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompatDeprecationWarning)
        for _ in range(2):
            with pytest.raises(CompatDeprecationWarning):
                compat.plugins.DDPPlugin()


def test_pep702_marker_and_runtime_warning_is_ours_once():
    from compat.plugins import DDPPlugin

    assert "strategies.DDPStrategy" in DDPPlugin.__deprecated__
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        DDPPlugin()
    assert len(rec) == 1 and rec[0].category is CompatDeprecationWarning


def test_unpickling_does_not_warn():
    blob = pickle.dumps(_quiet(compat.plugins.DDPPlugin))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        pickle.loads(blob)
    assert _ours(rec) == []


_USER_MODULE = """
from compat.plugins import DDPPlugin

def build():
    return DDPPlugin()
"""


def _user_project(tmp_path: Path) -> Path:
    (tmp_path / "userlib.py").write_text(_USER_MODULE)
    return tmp_path


def test_visible_by_default_outside_main(tmp_path):
    """DeprecationWarning is hidden outside __main__ by default; ours is shown."""
    cwd = _user_project(tmp_path)
    proc = _run("import sys; sys.path.insert(0, '.'); import userlib; userlib.build()", cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("CompatDeprecationWarning") == 1, proc.stderr
    assert "userlib.py:5" in proc.stderr


def test_user_filters_win(tmp_path):
    cwd = _user_project(tmp_path)
    proc = _run(
        "import sys; sys.path.insert(0, '.'); import userlib; userlib.build()",
        "-W",
        "ignore::DeprecationWarning",
        cwd=cwd,
    )
    assert proc.returncode == 0 and "CompatDeprecationWarning" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("rank_env", [{}, {"LOCAL_RANK": "1"}])
def test_dash_w_error_turns_them_into_errors(tmp_path, rank_env):
    cwd = _user_project(tmp_path)
    proc = _run(
        "import sys; sys.path.insert(0, '.'); import userlib; userlib.build()",
        "-W",
        "error::DeprecationWarning",
        cwd=cwd,
        env=rank_env,
    )
    assert proc.returncode != 0
    assert "CompatDeprecationWarning" in proc.stderr and "DDPPlugin" in proc.stderr


def test_env_var_error_in_a_fresh_process(tmp_path):
    cwd = _user_project(tmp_path)
    proc = _run(
        "import sys; sys.path.insert(0, '.'); import userlib; userlib.build()",
        cwd=cwd,
        env={"STRATEGY_COMPAT_DEPRECATION": "error", "LOCAL_RANK": "1"},
    )
    assert proc.returncode != 0 and "CompatDeprecationWarning" in proc.stderr


def test_global_rank_reads_env_without_torch(monkeypatch):
    monkeypatch.setenv("SLURM_PROCID", "2")
    assert _warnings.global_rank() == 2
    monkeypatch.setenv("RANK", "0")
    assert _warnings.global_rank() == 0


def test_stacklevel_helper_counts_out_of_our_package():
    def inner():
        return _warnings.stacklevel()

    assert inner() == 1  # this test file is user code
