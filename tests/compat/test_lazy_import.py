"""`import compat` stays torch-free until a shim is touched (PEP 562); `compat.migrate` never imports torch."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, cwd=REPO, timeout=300
    )


def test_import_compat_is_torch_free():
    proc = _run("""
        import sys
        import compat
        assert "torch" not in sys.modules, "import compat imported torch"
        assert compat.CompatDeprecationWarning.__mro__[1] is DeprecationWarning
        import compat.renames, compat.migrate
        assert "torch" not in sys.modules, "compat.migrate imported torch"
        assert "Trainer" in dir(compat)
        compat.Trainer  # touching a shim imports it
        assert "torch" in sys.modules
        assert compat.LightningModule.__name__ == "LightningModule"
        assert compat.plugins.DDPPlugin.__module__ == "compat.plugins.training_type"
        try:
            compat.DoesNotExist
        except AttributeError as err:
            assert "DoesNotExist" in str(err)
        else:
            raise SystemExit("no AttributeError")
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


def test_lazy_names_resolve_to_the_shims():
    proc = _run("""
        import compat
        from compat.trainer import Trainer
        from compat.module import Callback, LightningDataModule, LightningModule
        assert compat.Trainer is Trainer and compat.Callback is Callback
        assert compat.LightningDataModule is LightningDataModule and compat.LightningModule is LightningModule
        print("ok")
    """)
    assert proc.returncode == 0, proc.stderr
