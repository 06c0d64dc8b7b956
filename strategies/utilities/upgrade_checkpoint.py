"""Convert checkpoint files on disk to this library's format, as Lightning's ``upgrade_checkpoint``.

    python -m strategies.utilities.upgrade_checkpoint PATH [PATH ...]          # in place, PATH.bak kept
    python -m strategies.utilities.upgrade_checkpoint OLD.ckpt --output NEW.ckpt
    python -m strategies.utilities.upgrade_checkpoint --trust PATH             # a file that needs unpickling

A Lightning 1.2-1.5 file (or one of this library's without the Lightning keys) becomes one that
``strategies.Trainer.fit(ckpt_path=...)``, ``compat``'s and Lightning 2.6's ``load_from_checkpoint``
and Lightning 2.6's ``fit(ckpt_path=...)`` all read with ``torch.load(weights_only=True)``: the loop
state Lightning 2.6 reads, callback states under their state keys, the grad scaler's state under
``precision``, hyperparameters as plain dicts. Where it resumes is unchanged (1.x's meaning of
``epoch`` and ``global_step`` is kept). A Lightning 1.6+ file, or a current one, is left as it is.

A directory is searched for ``*.ckpt`` files. The original is copied to ``PATH.bak`` first (an
existing backup is never overwritten), the new file is written to a temporary and renamed into
place, and read back with ``weights_only=True``; on any failure the original is put back.
``--trust`` reads the file with full unpickling (``pytorch_lightning`` need not be installed): it can
execute code stored in the file, so use it only on files you made or trust.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

import torch

from strategies import _atomic
from strategies._checkpoint import read_file, source_of, upgrade
from strategies._preflight import CheckpointError


def upgrade_file(path: Path, output: Path | None = None, trust: bool = False) -> str:
    """Convert one file (to ``output``, or in place with a ``.bak`` copy); return what was done.

    Raises:
        FileNotFoundError: ``path`` does not exist.
        CheckpointError: ``path`` cannot be read as a checkpoint, needs ``trust``, or the converted
            file would not load with ``weights_only=True`` (the original is then left as it was).
    """
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    checkpoint = read_file(path, weights_only=not trust)
    source = source_of(checkpoint)
    if source == "lightning" or (source == "strategies" and "loops" in checkpoint):
        return (
            f"{path}: already current ({'Lightning 1.6+' if source == 'lightning' else 'this library'}), left as it is"
        )
    converted = upgrade(checkpoint)
    target, backup = output or path, None
    if output is None:
        backup = path.with_name(path.name + ".bak")
        if backup.exists():
            raise CheckpointError(f"{path}: {backup} exists; move it away, or pass `--output NEW.ckpt`.")
        shutil.copy2(path, backup)
    try:
        _atomic.write_file(target, lambda f: torch.save(converted, f))
        torch.load(target, map_location="cpu", weights_only=True)  # what Lightning 2.6 and this library do
    except Exception as err:
        if backup is not None:
            backup.replace(path)
        elif target.exists():
            target.unlink()
        if isinstance(err, OSError):
            raise
        raise CheckpointError(
            f"{path}: the converted checkpoint would not load with `weights_only=True` ({type(err).__name__}: "
            f"{str(err).splitlines()[0][:200]}); a key added by `on_save_checkpoint` holds objects. The file is "
            "unchanged; load it with `torch.load(path, weights_only=False)` only if you trust it."
        ) from None
    kept = f", original kept as {backup}" if backup is not None else ""
    return f"{path}: converted from {source} format to {target}{kept}"


def _files(paths: Sequence[str]) -> tuple[list[Path], list[Path]]:
    """The files to convert, and the directories that hold no ``*.ckpt`` file."""
    found: list[Path] = []
    empty: list[Path] = []
    for name in paths:
        path = Path(name)
        inside = sorted(path.rglob("*.ckpt")) if path.is_dir() else [path]
        found.extend(inside)
        if not inside:
            empty.append(path)
    return found, empty


def main(argv: Sequence[str] | None = None) -> int:
    """The command line; 0 when every file was converted or already current, 1 otherwise."""
    parser = argparse.ArgumentParser(
        prog="python -m strategies.utilities.upgrade_checkpoint",
        description="Convert Lightning 1.2-1.5 checkpoint files to the format strategies and Lightning 2.6 load.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="a checkpoint file, or a directory of *.ckpt files")
    parser.add_argument(
        "-o", "--output", help="write the converted checkpoint here (one PATH only) instead of in place"
    )
    parser.add_argument(
        "--trust",
        action="store_true",
        help="read files that need full unpickling (pickled hyperparameters): this can run code stored in the file",
    )
    args = parser.parse_args(argv)
    files, empty = _files(args.paths)
    if args.output is not None and (len(files) != 1 or Path(args.paths[0]).is_dir()):
        parser.error("--output takes one checkpoint file")
    for directory in empty:
        print(f"error: {directory}: a directory without *.ckpt files", file=sys.stderr)
    failed = len(empty)
    for path in files:
        try:
            print(upgrade_file(path, Path(args.output) if args.output else None, trust=args.trust))
        except (OSError, CheckpointError) as err:
            failed += 1
            print(f"error: {err}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
