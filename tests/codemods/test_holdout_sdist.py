"""``benchmarks/holdout.py`` reads sdist-only releases (``.tar.gz`` and ``.zip``) from the cache.

No network: the archives are built here, in a cache folder the code is pointed at, so
``fetch_sdist`` finds them without calling pip.
"""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("holdout", REPO / "benchmarks" / "holdout.py")
assert _spec is not None and _spec.loader is not None
holdout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(holdout)

FILES = {
    "setup.py": "from setuptools import setup\nsetup(name='toy')\n",
    "toy/__init__.py": "",
    "toy/model.py": "import pytorch_lightning as pl\n\nclass M(pl.LightningModule):\n    pass\n",
    "toy/plain.py": "import torch\n",
    "toy.egg-info/PKG-INFO": "Name: toy\n",
}


def _tar(path: Path, root: str) -> None:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in FILES.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{root}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def _zip(path: Path, root: str) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        for name, text in FILES.items():
            archive.writestr(f"{root}/{name}", text)


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("STRATEGY_COMPAT_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "cache" / "wheels"
    folder.mkdir(parents=True)

    def no_wheel(requirement: str) -> Path:
        raise RuntimeError(f"no wheel for `{requirement}`")

    monkeypatch.setattr(holdout, "fetch_wheel", no_wheel)
    return folder


@pytest.mark.parametrize(("build", "suffix"), [(_tar, ".tar.gz"), (_zip, ".zip")])
def test_extract_reads_an_sdist_when_there_is_no_wheel(cache: Path, tmp_path: Path, build, suffix: str) -> None:
    build(cache / f"toy-pkg-1.0{suffix}", "toy-pkg-1.0")
    files, missing = holdout.extract(("toy-pkg==1.0",), tmp_path / "out")
    assert missing == []
    # only the file that imports pytorch_lightning, under the release's folder, without the sdist's root
    assert files == [tmp_path / "out" / "toy-pkg-1.0" / "toy" / "model.py"]
    assert files[0].read_text() == FILES["toy/model.py"]


def test_python_files_of_an_sdist_drop_its_root_and_metadata(cache: Path) -> None:
    _tar(cache / "toy-1.0.tar.gz", "toy-1.0")
    names = [name for name, _ in holdout.python_files(cache / "toy-1.0.tar.gz")]
    assert names == ["setup.py", "toy/__init__.py", "toy/model.py", "toy/plain.py"]


def test_a_release_with_neither_is_reported_not_raised(cache: Path, tmp_path: Path, monkeypatch) -> None:
    # pip's answer when there is no sdist either (stood in for, so the test needs no network)
    calls = []

    def pip(args, **kwargs):
        calls.append(args)
        return subprocess.CompletedProcess(args, 1, "", "ERROR: No matching distribution found for toy-absent==1.0")

    monkeypatch.setattr(holdout.subprocess, "run", pip)
    files, missing = holdout.extract(("toy-absent==1.0",), tmp_path / "out")
    assert files == []
    assert (
        "--no-binary=toy-absent" in calls[0] and "--ignore-requires-python" in calls[0] and str(cache) in calls[0]
    )  # into the wheel cache
    assert len(missing) == 1 and "no wheel for `toy-absent==1.0`" in missing[0]
    assert "No matching distribution found for toy-absent==1.0" in missing[0]


def test_the_wheel_path_is_unchanged(cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheel = cache / "toy-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("toy/model.py", FILES["toy/model.py"])
        archive.writestr("toy-1.0.dist-info/METADATA", "Name: toy\n")
    monkeypatch.setattr(holdout, "fetch_wheel", lambda requirement: wheel)
    files, missing = holdout.extract(("toy==1.0",), tmp_path / "out")
    assert (files, missing) == ([tmp_path / "out" / "toy-1.0" / "toy" / "model.py"], [])


def test_cached_archives_are_found_in_any_case(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # pip keeps the project's own spelling (Gammalearn-0.7a2-py3-none-any.whl, Toy_Pkg-1.0.tar.gz)
    monkeypatch.setattr(holdout.subprocess, "run", lambda *a, **k: pytest.fail("the cache was not used"))
    wheel = cache / "Toy-1.0-py3-none-any.whl"
    zipfile.ZipFile(wheel, "w").close()
    sys.path.insert(0, str(REPO / "tools"))
    from build_catalog import fetch_wheel

    assert fetch_wheel("toy==1.0") == wheel
    _tar(cache / "Toy_Pkg-2.0.tar.gz", "Toy_Pkg-2.0")
    assert holdout.fetch_sdist("toy-pkg==2.0") == cache / "Toy_Pkg-2.0.tar.gz"


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
