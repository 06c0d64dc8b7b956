"""``python -m compat.migrate`` options: config, rule selection, file discovery, output."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import codemods
from codemods.cli._files import discover, module_name
from compat import migrate

REPO = Path(__file__).resolve().parents[2]
OLD_USE = "from pytorch_lightning.plugins import DDPPlugin\n\nplugin = DDPPlugin()\n"
RULE_IDS = sorted(str(getattr(r, "value", r)) for r in codemods.RULES)


def cli(*args: str) -> int:
    return migrate.main([*args, "--jobs", "1"])


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def run_python(code: str, cwd: Path = REPO) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_help_does_not_import_torch() -> None:
    proc = run_python(
        "import runpy, sys\n"
        "sys.argv = ['compat.migrate', '--help']\n"
        "try:\n    runpy.run_module('compat.migrate', run_name='__main__')\n"
        "except SystemExit as e:\n    assert e.code == 0, e.code\n"
        # codemods/__init__ is lazy (PEP 562): the CLI package is imported, the rules are not
        "heavy = ('torch', 'libcst', 'codemods._api', 'codemods._rule', 'strategies')\n"
        "heavy = sorted(m for m in heavy if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "usage: python -m compat.migrate" in proc.stdout
    assert "HEAVY []" in proc.stdout


def test_a_run_never_imports_torch(tmp_path: Path) -> None:
    write(tmp_path / "p.py", OLD_USE)
    proc = run_python(
        "import sys\nfrom compat import migrate\n"
        f"rc = migrate.main([{str(tmp_path)!r}, '--jobs', '1', '-q'])\n"
        "print('RC', rc, 'torch' in sys.modules)\n"
    )
    assert proc.returncode == 0, proc.stderr
    assert "RC 0 False" in proc.stdout
    assert "DDPPlugin" not in (tmp_path / "p.py").read_text()


def test_list_rules(capsys) -> None:
    assert migrate.main(["--list-rules"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines] == RULE_IDS
    assert all(len(line.split(maxsplit=1)) == 2 for line in lines)


def test_unknown_rule_is_a_usage_error(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli(str(tmp_path), "--select", "CM999")
    assert exit_info.value.code == 2
    assert "unknown rule `CM999` in --select; valid rules: CM" in capsys.readouterr().err


def test_select_and_ignore(tmp_path: Path) -> None:
    f = write(tmp_path / "p.py", OLD_USE)
    assert cli(str(tmp_path), "--check", "--ignore", ",".join(RULE_IDS)) == 0
    assert cli(str(tmp_path), "--check", "--select", "CM") == 1
    assert f.read_text() == OLD_USE


def test_pyproject_config(tmp_path: Path, capsys) -> None:
    project = tmp_path / "project"
    write(project / "pyproject.toml", '[tool.compat.migrate]\nexclude = ["legacy/"]\nignore = ["CM"]\n')
    write(project / "legacy" / "a.py", OLD_USE)
    write(project / "b.py", OLD_USE)
    assert cli(str(project), "--check", "--report", str(tmp_path / "r.json")) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["rules"] == []
    assert report["skipped"] == [{"path": f"{project}/legacy/", "reason": "pyproject exclude: legacy/"}]
    # The command line wins over the config, key by key.
    assert cli(str(project), "--check", "--select", "CM") == 0
    assert cli(str(project), "--check", "--ignore", "") == 1
    capsys.readouterr()


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ('[tool.compat.migrate]\nselct = ["CM001"]\n', "unknown key `selct`"),
        ('[tool.compat.migrate]\nexclude = "x" \nselect = 3\n', "`select` must be a list of strings"),
        ('[tool.compat.migrate]\ntarget = "pl"\n', "`target` must be one of strategies, lightning"),
        ("[tool.compat.migrate\n", "cannot read it as TOML"),
    ],
)
def test_bad_config_is_a_usage_error(tmp_path: Path, capsys, toml: str, message: str) -> None:
    write(tmp_path / "pyproject.toml", toml)
    with pytest.raises(SystemExit) as exit_info:
        cli(str(tmp_path))
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err


def test_missing_path_and_empty_tree(tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as exit_info:
        cli(str(tmp_path / "nope"))
    assert exit_info.value.code == 2
    assert "does not exist" in capsys.readouterr().err
    assert cli(str(tmp_path)) == 0
    assert "Nothing to migrate" in capsys.readouterr().err


def test_discovery_rules(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    write(root / ".git" / "HEAD", "")
    write(root / ".gitignore", "*.gen.py\n/top_only/\n!keep.gen.py\n")
    write(root / "app" / ".gitignore", "local.py\n")
    for rel in [
        "a.py",
        "x.gen.py",
        "keep.gen.py",
        "top_only/t.py",
        "app/top_only/t.py",
        "app/local.py",
        "app/ok.pyi",
        "node_modules/n.py",
        "__pycache__/c.py",
        "site-packages/s.py",
        ".tox/t.py",
        "conda/conda-meta/x",
        "conda/lib/c.py",
        "notes.txt",
    ]:
        write(root / rel, "")
    found = discover([str(root / "app"), str(root)], [], None)
    names = [os.path.relpath(f.path, root.resolve()) for f in found.files]
    assert names == ["app/ok.pyi", "app/top_only/t.py", "a.py", "keep.gen.py"]
    excluded = discover([str(root)], ["app/*.pyi", "keep*"], None)
    assert [f.rel for f in excluded.files] == ["a.py", "app/top_only/t.py"]
    skipped = {os.path.relpath(s.display, root): s.reason for s in found.skipped}
    assert skipped["x.gen.py"] == ".gitignore: *.gen.py"
    assert skipped["top_only"] == ".gitignore: /top_only/"
    assert skipped["app/local.py"] == ".gitignore: local.py"
    assert "virtualenv" in skipped["conda"] and "virtualenv" in skipped["site-packages"]
    assert "virtualenv" in skipped[".tox"]


def test_explicit_file_is_processed_even_if_ignored(tmp_path: Path) -> None:
    write(tmp_path / ".gitignore", "*.py\n")
    f = write(tmp_path / "p.py", OLD_USE)
    assert [x.path for x in discover([str(f)], [], None).files] == [str(f.resolve())]
    assert discover([str(tmp_path)], [], None).files == []


def test_module_names(tmp_path: Path) -> None:
    for rel in ["src/pkg/__init__.py", "src/pkg/sub/__init__.py", "src/pkg/sub/m.py", "scripts/run.py", "top.py"]:
        write(tmp_path / rel, "")
    real = tmp_path.resolve()
    assert module_name(str(real / "src/pkg/sub/m.py"), str(real)) == "pkg.sub.m"
    assert module_name(str(real / "src/pkg/sub/__init__.py"), str(real / "src/pkg")) == "pkg.sub.__init__"
    assert module_name(str(real / "src/pkg/__init__.py"), str(real)) == "pkg.__init__"
    assert module_name(str(real / "scripts/run.py"), str(real)) == "scripts.run"
    assert module_name(str(real / "top.py"), str(real)) == "top"


def test_a_projects_own_pytorch_lightning_folder_is_not_the_library(tmp_path: Path) -> None:
    """ai2-tango's `tango/integrations/pytorch_lightning/` (its parents without `__init__.py`):
    `from .data import LightningDataModule` there is the project's class, left as it is."""
    package = tmp_path / "tango" / "integrations" / "pytorch_lightning"
    write(
        package / "data.py",
        "import pytorch_lightning as pl\n\n\nclass LightningDataModule(pl.LightningDataModule):\n    pass\n",
    )
    init = write(
        package / "__init__.py", 'from .data import LightningDataModule\n\n__all__ = ["LightningDataModule"]\n'
    )
    real = tmp_path.resolve()
    assert module_name(str(real / "tango/integrations/pytorch_lightning/data.py"), str(real)) == (
        "integrations.pytorch_lightning.data"
    )
    write(tmp_path / "pytorch_lightning" / "helpers.py", "")
    assert module_name(str(real / "pytorch_lightning/helpers.py"), str(real)) == "_project.pytorch_lightning.helpers"
    before = init.read_text()
    result = subprocess.run([sys.executable, "-m", "compat.migrate", str(tmp_path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert init.read_text() == before
    assert "from strategies import DataModule" in (package / "data.py").read_text()


def test_inward_symlinks_are_processed_once(tmp_path: Path) -> None:
    write(tmp_path / "real.py", OLD_USE)
    (tmp_path / "alias.py").symlink_to(tmp_path / "real.py")
    (tmp_path / "dirlink").symlink_to(tmp_path)
    found = discover([str(tmp_path)], [], None)
    assert [f.rel for f in found.files] == ["real.py"] and found.skipped == []
    assert cli(str(tmp_path)) == 0
    assert os.path.islink(tmp_path / "alias.py") and "DDPPlugin" not in (tmp_path / "real.py").read_text()


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize("tty", [True, False])
def test_progress_bar_only_on_a_terminal(tmp_path: Path, monkeypatch, tty: bool) -> None:
    write(tmp_path / "p.py", OLD_USE)
    err = _Tty() if tty else io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert cli(str(tmp_path), "--check") == 1
    assert ("scanning" in err.getvalue() and "\r" in err.getvalue()) is tty
    assert "would change: 1" in err.getvalue()


def test_gitignore_edge_cases_follow_git(tmp_path: Path) -> None:
    """``**`` forms, middle-slash anchoring, escapes and negation, as git reads them."""
    root = tmp_path / "repo"
    write(root / ".git" / "HEAD", "")
    write(root / ".gitignore", "a/**/deep.py\ndoc/*.py\n\\#hash.py\n**/gen/\n*.py[io]\n!keep.pyi\n")
    rels = [
        "a/deep.py",
        "a/x/y/deep.py",
        "doc/d.py",
        "sub/doc/d.py",
        "#hash.py",
        "x/gen/g.py",
        "m.pyi",
        "keep.pyi",
        "ok.py",
    ]
    for rel in rels:
        write(root / rel, "")
    found = discover([str(root)], [], None)
    assert sorted(f.rel for f in found.files) == ["keep.pyi", "ok.py", "sub/doc/d.py"]
