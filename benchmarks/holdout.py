"""A second corpus, in halves: one to develop against, and two held out (read at different times).

Twenty-two releases (eighteen projects) from 2021-2022 that depended on pytorch-lightning
before 1.6 and are not in ``benchmarks/corpus.py``. The projects (all releases of one project on
the same side) were shuffled with ``secrets.SystemRandom`` and cut in two *before* any of their
code was read: ``DEV`` is what the codemods were developed against; ``HOLDOUT`` was only
run at the end, to measure. Their wheels are fetched like the corpus's (``pip download
--no-deps`` into the cache); nothing of them is committed.

Recall counts old-API sites from the catalogs (``old_api_sites``): every use of a name that
the 1.2-1.5 catalogs have for an owner (Trainer and its mixins and connectors, LightningModule,
Callback, the plugins, the accelerators) and the class it maps to on the target lacks, plus the
corpus's old-only classes, table members and Trainer keywords (``corpus.old_api_sites``); the
only exclusion is a name the file binds itself. A site counts as covered when the migrated file
no longer has it there or has a ``# TODO(compat.migrate)`` within three lines.

A third half, ``HOLDOUT2``, was gathered on 2026-12-01, after the first two had been read
(issue 17 asks for figures on code nobody has looked at): fourteen releases of fourteen other
projects, chosen from PyPI metadata only (a pure-Python wheel from 2021-2022 whose METADATA
requires a ``pytorch-lightning`` that allows a 1.2-1.5 version, and that has files containing
``pytorch_lightning``, counted, not opened). None of its code has been read or migrated; run it
once, last, after the final rule change.

A fourth, ``HOLDOUT3``, was gathered on 2026-12-02 the same way, after all three had been read:
eleven releases of eleven more projects, three of them sdist-only (``extract`` falls back to the
sdist when a release has no wheel). None of its code has been read or migrated.

A fifth, ``HOLDOUT4``, was gathered on 2026-12-02 the same way, after HOLDOUT3 had been looked at:
ten releases of ten more projects (one sdist-only), chosen by metadata only. None of its code
has been read or migrated.

A sixth, ``HOLDOUT5``, was gathered on 2026-12-04 the same way, after HOLDOUT4 had been looked at:
ten releases of ten more projects (two sdist-only: gt4sd and horovod), chosen by metadata only.
It was run once, on 2026-12-04 after the last rule change of that session (recall 95.7% on both
targets, 0 crashes, 0 not idempotent), and its hunks were then read by hand; it is seen now.

    python benchmarks/holdout.py dev        # the development half, both targets
    python benchmarks/holdout.py holdout    # the held-out half (run it last)
    python benchmarks/holdout.py holdout2   # the unseen half (run it once, after every rule change)
    python benchmarks/holdout.py holdout3   # the fourth unseen half (run it once)
    python benchmarks/holdout.py holdout4   # the fifth half (run)
    python benchmarks/holdout.py holdout5   # the sixth half (run, then read)
    python benchmarks/holdout.py holdout --keep DIR   # also keep the trees and diffs in DIR
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib.util
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from compat import _catalog  # noqa: E402
from compat.renames import RENAMES, Kind  # noqa: E402

sys.path.insert(0, str(REPO / "tools"))
from build_catalog import cache_dir, fetch_wheel, pip_download  # noqa: E402

_spec = importlib.util.spec_from_file_location("corpus", REPO / "benchmarks" / "corpus.py")
assert _spec is not None and _spec.loader is not None
corpus = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(corpus)

#: The development half (read while building the safety net).
DEV: tuple[str, ...] = (
    "lightning-flash==0.3.2",
    "lightning-flash==0.4.0",
    "neuralprophet==0.3.2",
    "nni==2.5",
    "pykale==0.1.0",
    "pytorch-ie==0.5.0",
    "pytorch-lightning-bolts==0.2.5",
    "pytorch-lightning-spells==0.0.4",
    "scArches==0.4.0",
    "torchdyn==1.0.1",
)
#: The held-out half (run once, at the end).
HOLDOUT: tuple[str, ...] = (
    "anomalib==0.2.4",
    "anomalib==0.2.6",
    "deepforest==1.1.3",
    "lightly==1.1.22",
    "mlflow==1.20.2",
    "nemo_toolkit==1.0.2",
    "optuna==2.10.0",
    "scvi-tools==0.13.0",
    "scvi-tools==0.14.6",
    "torchgeo==0.1.1",
    "torchgeo==0.2.1",
    "u8darts==0.16.0",
)
#: The unseen half: gathered on 2026-12-01 by metadata only, after DEV and HOLDOUT had been read.
#: Each is a pure-Python wheel from 2021-2022 whose METADATA's ``Requires-Dist`` allows a
#: pytorch-lightning 1.2-1.5 (in brackets: that requirement, and the wheel's files that contain
#: ``pytorch_lightning``, counted without opening them); no project is in ``corpus.py``, DEV or HOLDOUT.
HOLDOUT2: tuple[str, ...] = (
    "deepethogram==0.1.3",  # 2022-02-22, pytorch-lightning>=1.5.10, 2 files
    "disent==0.4.0",  # 2022-03-31, pytorch-lightning>=1.4.0, 12 files
    "fastmri==0.2.0",  # 2022-06-17, pytorch-lightning>=1.4, 2 files
    "icevision==0.12.0",  # 2022-02-10, pytorch-lightning>=1.4.5 (extra "all"), 14 files
    "keytotext==1.5.2",  # 2021-09-28, pytorch_lightning (any), 1 file
    "neuralforecast==0.0.7",  # 2022-03-19, pytorch-lightning>=1.3.0, 9 files
    "openspeech-core==0.3.0",  # 2021-07-21, pytorch-lightning (any), 6 files
    "pycave==3.0.1",  # 2021-11-27, pytorch-lightning>=1.4.9,<1.5.0, 6 files
    "pytorch-adapt==0.0.61",  # 2022-03-02, pytorch-lightning (any; extra "lightning"), 1 file
    "quickvision==0.2.1",  # 2021-04-06, pytorch-lightning==1.2.6, 4 files
    "solo-learn==1.0.2",  # 2021-11-19, pytorch-lightning==1.4.7, 24 files
    "torch-spatiotemporal==0.1.0",  # 2022-03-17, pytorch-lightning>=1.5, 4 files
    "torchsynth==1.0.1",  # 2021-06-29, pytorch-lightning (any), 2 files
    "yolort==0.6.1",  # 2022-03-08, pytorch-lightning>=1.3.1, 2 files
)
#: A fourth half, gathered on 2026-12-02 the same way (metadata only, after DEV, HOLDOUT and HOLDOUT2
#: had all been read): releases from 2021-2022 whose declared dependencies (a wheel's METADATA, or an
#: sdist's setup.py / egg-info ``requires.txt`` requirement lines) allow a pytorch-lightning 1.2-1.5;
#: the sdist-only ones (simplet5, aitextgen, pytorch-lifestream) come through ``fetch_sdist``. In
#: brackets: upload date, that requirement, and the files containing ``pytorch_lightning`` (counted,
#: not opened). No project is in ``corpus.py``, DEV, HOLDOUT or HOLDOUT2. Not read, not migrated yet.
HOLDOUT3: tuple[str, ...] = (
    "aitextgen==0.5.2",  # 2021-05-17, pytorch-lightning>=1.3.1 (sdist), 2 files
    "deepchain-apps==0.1.12",  # 2022-03-18, pytorch-lightning>=1.3.3, 2 files
    "gammalearn==0.7a2",  # 2021-09-02, pytorch-lightning>=1.2, 5 files
    "hi-ml==0.1.12",  # 2021-11-26, pytorch-lightning>=1.4.9, 2 files
    "nowcasting-dataloader==1.8.34",  # 2022-02-08, pytorch-lightning (any), 1 file
    "pytorch-lifestream==0.1.2",  # 2022-02-04, pytorch-lightning==1.3.* (sdist), 19 files
    "rul-datasets==0.3.2",  # 2022-12-19, pytorch-lightning>=1.4.4,<2.0.0, 4 files
    "simplet5==0.1.4",  # 2022-02-15, pytorch-lightning==1.5.10 (sdist), 1 file
    "skillful-nowcasting==1.2.3",  # 2022-01-06, pytorch-lightning (any), 1 file
    "torchts==0.1.1",  # 2021-08-31, pytorch-lightning>=1.2,<2.0, 1 file
    "unbabel-comet==1.0.0",  # 2021-11-19, pytorch-lightning==1.3.5, 5 files
)
#: A fifth half, gathered on 2026-12-02 by metadata only, after DEV, HOLDOUT, HOLDOUT2 and HOLDOUT3 had
#: all been looked at. Candidates were found with the code search (setup.py / pyproject lines requiring a
#: ``pytorch-lightning`` 1.x), then kept when PyPI had a release uploaded 2021-01-01..2022-03-28 (before
#: pytorch-lightning 1.6) whose declared dependencies (a wheel's ``Requires-Dist``, or the sdist's egg-info
#: ``requires.txt``) allow a pytorch-lightning 1.2-1.5 and that ships files containing ``pytorch_lightning``
#: (counted by a script that printed only counts; no file was opened). In brackets: upload date, that
#: requirement, the file count. No project is in ``corpus.py``, DEV, HOLDOUT, HOLDOUT2 or HOLDOUT3.
#: Rejected for no declared pytorch-lightning dependency: baal, gradsflow, pysentimiento, rl-warp-drive;
#: for no file importing it: research-utils, scgen, bigdl-orca. Not read, not migrated yet.
HOLDOUT4: tuple[str, ...] = (
    "backprop==0.1.3",  # 2021-04-20, pytorch-lightning>=1.2.0,<1.3.0, 8 files
    "bio-transformers==0.1.17",  # 2022-03-01, pytorch-lightning>=1.3.3, 3 files
    "chitra==0.2.0",  # 2021-11-26, pytorch-lightning (any; extra "nn"), 1 file
    "fastface==0.1.3",  # 2021-09-23, pytorch-lightning>=1.1.*, 6 files
    "hugsvision==0.75.3",  # 2021-12-19, pytorch-lightning (any), 2 files
    "lit-saint==0.3.3",  # 2021-10-27, pytorch-lightning>=1.3.0,<2, 3 files
    "prototorch-models==0.4.1",  # 2022-01-11, pytorch-lightning>=1.3.5, 3 files
    "pyrelational==0.1.5",  # 2022-03-28, pytorch-lightning>=1.5, 3 files
    "ratsnlp==1.0.1",  # 2022-01-16, pytorch-lightning==1.3.4, 5 files
    "spock==1.5.2",  # 2021-07-01, pytorch_lightning>=1.0.0 (sdist), 3 files
)
#: A sixth half, gathered on 2026-12-04 by metadata only, after HOLDOUT4 had been looked at (DEV, HOLDOUT,
#: HOLDOUT2 and HOLDOUT3 had been before). Candidates were named from knowledge of 2021-2022 PyPI projects
#: built on Lightning (a code search for setup.py lines requiring ``pytorch-lightning`` named none on PyPI),
#: then kept by the HOLDOUT4 rule: a release uploaded 2021-01-01..2022-03-28 (its newest version there) whose
#: declared dependencies (a wheel's ``Requires-Dist``, or the sdist's egg-info ``requires.txt``) allow a
#: pytorch-lightning 1.2-1.5 and that ships files containing ``pytorch_lightning`` (counted by a script that
#: printed only counts; no file was opened). In brackets: upload date, that requirement, the file count
#: (63 in all). No project is in ``corpus.py``, DEV, HOLDOUT, HOLDOUT2, HOLDOUT3 or HOLDOUT4.
#: Rejected for no declared pytorch-lightning dependency: transformers-lightning 0.7.8 (no Requires-Dist, no
#: requires.txt), voicefixer 0.0.17, retinaface-pytorch 0.0.8, torch-geometric 2.0.4, norse 0.0.7.post1,
#: pycorrector 0.4.2 (only in requirements-dev.txt), satflow 0.3.35 (only neptune-pytorch-lightning);
#: for no file containing it: cell2location 0.6a0, pykeen 1.8.0, simclr 1.0.2, metnet 3.0.3, pytorchvideo
#: 0.1.5, flood-forecast 0.992.dev0, zoobot 0.0.1, deepke 2.0.0; for no release in the window: pylaia,
#: serotiny, aicsmlsegment, ml4floods, zamba, torchphysics, reagent, lmqg, igfold, people-segmentation,
#: cloths-segmentation, facemask-detection; not on PyPI's JSON API: etna-ts, d2go, fengshen; sdist that pip
#: could not fetch: graphein 1.2.1. Left out unopened: pytorch-tabular and tner (named in an earlier commit
#: while fetch_sdist was written), darts (u8darts is in HOLDOUT). Passed, but left out for the mix of
#: domains (counted, not opened; spares for a later half): neptune-pytorch-lightning 1.0.0, opacus 1.1.0,
#: torchx 0.1.1, solo-sc 1.2, nowcasting-utils 0.0.39. Not read, not migrated yet.
HOLDOUT5: tuple[str, ...] = (
    "ai2-tango==0.6.0",  # 2022-02-25, pytorch-lightning>=1.5,<1.6 (extra "pytorch_lightning"), 9 files
    "bytesep==0.1.1",  # 2021-12-25, pytorch-lightning==1.2.1, 16 files
    "collie==1.2.0",  # 2022-01-18, pytorch-lightning>=1.0.0, 5 files
    "dvclive==0.6.0",  # 2022-03-04, pytorch-lightning (any; extra "pytorch_lightning"), 2 files
    "gt4sd==0.29.0",  # 2022-03-14, pytorch_lightning (any) (sdist), 14 files
    "heareval==2021.1.1",  # 2022-03-23, pytorch-lightning (any), 1 file
    "horovod==0.24.2",  # 2022-03-10, pytorch_lightning==1.3.8 (extra "pytorch") (sdist), 5 files
    "kraken==4.0.0",  # 2022-02-22, pytorch-lightning (any), 2 files
    "pytorch-segmentation-models-trainer==0.16.4",  # 2021-12-06, pytorch-lightning==1.5.4, 6 files
    "taming-transformers-rom1504==0.0.6",  # 2021-06-28, pytorch-lightning>=1.0.8, 3 files
)
HALVES = {
    "dev": DEV,
    "holdout": HOLDOUT,
    "holdout2": HOLDOUT2,
    "holdout3": HOLDOUT3,
    "holdout4": HOLDOUT4,
    "holdout5": HOLDOUT5,
}
TODO_DISTANCE = 3


def uses_lightning(text: str) -> bool:
    """Whether a file imports the old package (the files a user would migrate)."""
    return "pytorch_lightning" in text


def fetch_sdist(requirement: str) -> Path:
    """The cached source archive (``.tar.gz`` or ``.zip``) of ``requirement``, for a release that
    has no wheel: ``pip download --no-deps --no-binary=NAME`` into the wheel cache if absent.

    Raises:
        RuntimeError: pip could not fetch it; the message has pip's last lines.
    """
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    name, _, version = requirement.partition("==")

    def cached() -> Path | None:  # named as the project spells it (Foo-1.0.tar.gz, foo_bar-1.0.zip)
        stems = {f"{stem}-{version}" for stem in (name.lower().replace("_", "-"), name.lower().replace("-", "_"))}
        found = [
            p for p in directory.iterdir() if any(p.name.lower() == s + x for s in stems for x in (".tar.gz", ".zip"))
        ]
        return sorted(found)[-1] if found else None

    return pip_download(requirement, f"--no-binary={name}", cached, "no wheel, no sdist?")


def python_files(archive: Path) -> Iterator[tuple[str, str]]:
    """``(path, text)`` of each ``.py`` file of a wheel, ``.tar.gz`` or ``.zip``, sorted by path;
    an sdist's leading ``name-version/`` folder is dropped, and metadata folders skipped."""
    if archive.name.endswith(".tar.gz"):
        with tarfile.open(archive) as tar:
            members = {m.name: m for m in tar.getmembers() if m.isfile() and m.name.endswith(".py")}
            for name in sorted(members):
                handle = tar.extractfile(members[name])
                assert handle is not None  # a regular file
                yield name.partition("/")[2] or name, handle.read().decode("utf-8", errors="replace")
        return
    with zipfile.ZipFile(archive) as zipped:
        sdist = archive.suffix == ".zip"
        for name in sorted(zipped.namelist()):
            if not name.endswith(".py") or ".dist-info/" in name or ".egg-info/" in name:
                continue
            yield (
                (name.partition("/")[2] or name) if sdist else name,
                zipped.read(name).decode("utf-8", errors="replace"),
            )


def extract(requirements: tuple[str, ...], dest: Path) -> tuple[list[Path], list[str]]:
    """Unpack every Python file that imports ``pytorch_lightning`` of each release under
    ``dest/<requirement>/``, from its wheel or, when it has none, its sdist (``fetch_sdist``);
    returns the files and one line per release not fetched."""
    written: list[Path] = []
    missing: list[str] = []
    for requirement in requirements:
        try:
            archive = fetch_wheel(requirement)
        except RuntimeError as err:
            try:
                archive = fetch_sdist(requirement)
            except RuntimeError as again:
                missing.append(f"{err}; {again}")
                continue
        for name, text in python_files(archive):
            if uses_lightning(text):
                target = dest / requirement.replace("==", "-") / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
                written.append(target)
    return written, missing


@functools.cache
def old_only_members(target: str) -> frozenset[str]:
    """Public members of the old owner classes that the class each maps to on ``target`` lacks
    (a class the table maps to nothing, or not at all, counts with every member)."""
    from codemods._facts import COMMON_MEMBER_NAMES, TORCH_MODULE_METHODS
    from codemods._net import OWNERS, _target_members  # the owners the safety net reads

    new = _catalog.target(target)
    maps = {e.old: e.target(target) for e in RENAMES if e.kind is Kind.CLASS}
    found: set[str] = set()
    for name in _catalog.OLD:
        old = _catalog.load(name)
        for public in maps:
            path = old.resolve(public)
            if path is None or not OWNERS.match(path):
                continue
            mapped = maps[public]
            have = new.members(mapped) if mapped and new.has(mapped) else frozenset()
            found |= {m for m in old.members(path) if not m.startswith("_") and m not in have}
    anywhere = _target_members()  # a name some new class still has is not old-only as a bare name
    return frozenset(n for n in found if n not in anywhere and n not in TORCH_MODULE_METHODS | COMMON_MEMBER_NAMES)


def old_api_sites(text: str, target: str) -> list[tuple[int, str]]:
    """``(line, name)`` of each old-API site: the corpus's, and every attribute or method
    definition named by an old-only member (``old_only_members``) the file does not bind."""
    sites = set(corpus.old_api_sites(text))
    tree = ast.parse(text)
    own = corpus._own_names(tree)
    own |= {
        t.attr for n in ast.walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        for t in (n.targets if isinstance(n, ast.Assign) else [n.target]) if isinstance(t, ast.Attribute)
    }  # fmt: skip
    names = old_only_members(target)
    data = _passed_to_new_keywords(tree, target)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr in names and node.attr not in own and id(node) not in data:
            sites.add((node.lineno, node.attr))
    return sorted(sites)


@functools.cache
def _new_trainer_keywords(target: str) -> frozenset[str]:
    catalog = _catalog.target(target)
    signature = catalog.signature(catalog.trainer)
    return frozenset(p.name for p in signature.params) if signature else frozenset()


def _passed_to_new_keywords(tree: ast.AST, target: str) -> set[int]:
    """Ids of the attribute nodes inside the value of a keyword the target's Trainer takes
    (``devices=args.gpus if args.gpus else "auto"``): data handed to the new API, not old API."""
    keywords = _new_trainer_keywords(target)
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in keywords:
            found.update(id(n) for n in ast.walk(node.value) if isinstance(n, ast.Attribute))
    return found


def residual(text: str, target: str) -> list[tuple[int, str]]:
    """Old-API sites of a migrated file with no TODO within ``TODO_DISTANCE`` lines."""
    lines = text.splitlines()
    todos = [i + 1 for i, line in enumerate(lines) if "TODO(compat.migrate)" in line]
    return [(n, s) for n, s in old_api_sites(text, target) if not any(abs(n - t) <= TODO_DISTANCE for t in todos)]


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compat.migrate", "-q", "--jobs", "1", *args],
        check=False,
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=1800,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def measure(tree: Path, work: Path, target: str) -> dict:
    """Migrate ``tree`` into ``work/<target>`` and return the figures."""
    out = work / target
    report = work / f"{target}.json"
    run = _cli("--target", target, "--out", str(out), "--report", str(report), str(tree))
    data = json.loads(report.read_text())
    sources = sorted(tree.rglob("*.py"))
    sites = left = unparsable = 0
    missed: dict[str, list[tuple[int, str]]] = {}
    for source in sources:
        text = source.read_text(encoding="utf-8")
        try:
            before = old_api_sites(text, target)
        except SyntaxError:
            continue  # the input itself does not parse (reported by the CLI as skipped)
        migrated = (out / source.relative_to(tree)).read_text(encoding="utf-8")
        try:
            rest = residual(migrated, target)
        except SyntaxError:
            unparsable += 1
            continue
        sites += len(before)
        left += len(rest)
        if rest:
            missed[str(source.relative_to(tree))] = rest
    again = work / f"{target}.again.json"
    _cli("--target", target, "--diff", "--report", str(again), str(out))
    second = json.loads(again.read_text())
    diff = _cli("--target", target, "--diff", str(tree)).stdout
    (work / f"{target}.diff").write_text(diff, encoding="utf-8")
    return {
        "target": target,
        "exit": run.returncode,
        "files": len(sources),
        "failed": data["failed"],
        "unparsable": unparsable,
        "not_idempotent": [f for f, s in second["files"].items() if s == "changed"],
        "sites": sites,
        "residual": left,
        "recall": 1 - left / sites if sites else 1.0,
        "todos": data["summary"]["todos"],
        "edits": len(data["changes"]),
        "missed": missed,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("half", choices=sorted(HALVES))
    parser.add_argument("--keep", type=Path, help="keep the unpacked tree, outputs and diffs here")
    args = parser.parse_args(argv)
    work = args.keep or Path(tempfile.mkdtemp(prefix="holdout-"))
    tree = work / "src"
    files, missing = extract(HALVES[args.half], tree)
    for line in missing:
        print("not fetched:", line, file=sys.stderr)
    print(f"{args.half}: {len(files)} files that import pytorch_lightning")
    for target in ("strategies", "lightning"):
        result = measure(tree, work, target)
        print(
            f"[{target}] files {result['files']}, crashes/refused {len(result['failed'])}, "
            f"unparsable {result['unparsable']}, not idempotent {len(result['not_idempotent'])}, "
            f"sites {result['sites']}, residual {result['residual']}, recall {result['recall']:.1%}, "
            f"TODOs {result['todos']}, edits {result['edits']}"
        )
        for name, left in sorted(result["missed"].items()):
            print(f"  {name}: " + ", ".join(f"{line}:{old}" for line, old in left))
        for item in result["failed"]:
            print("  failed:", item)
        for name in result["not_idempotent"]:
            print("  not idempotent:", name)
    print(f"trees and diffs in {work}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
