"""Checkpoint writes that leave either the old checkpoint or the new one, and nothing else.

A checkpoint ``dir/name`` is written to a temporary ``dir/.name.<pid>.strategies-tmp`` (a file, or
a directory for FSDP's sharded checkpoints) and renamed into place. On any error the temporary
is removed; one left by a process that was killed mid-write (``kill -9``) is removed by the next
save into the same directory. Only names of this pattern whose process is gone are swept, so a
user's own ``.something.tmp`` files and a write in progress in another process are left alone.
A full disk (or a file-size or quota limit) is raised as ``OSError`` "no space left on <dir>".

A directory checkpoint that already exists is swapped (``swap_into_place``): renamed aside
to ``dir/.name.strategies-old``, the new one renamed in, the old one deleted; a process killed
between the renames leaves the old one aside, complete, and ``complete_checkpoint`` finds it.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
from collections.abc import Callable, Generator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

_TMP = re.compile(r"^\..+\.(?P<pid>\d+)\.strategies-tmp$")
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)


def temp_path(path: Path, owner: int | None = None) -> Path:
    """Where ``path`` is written before it is renamed into place (``owner``: the writing process)."""
    return path.with_name(f".{path.name}.{os.getpid() if owner is None else owner}.strategies-tmp")


def aside_path(path: Path) -> Path:
    """Where an old directory checkpoint waits while the new one is renamed into place."""
    return path.with_name(f".{path.name}.strategies-old")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def sweep(directory: Path) -> list[Path]:
    """Remove the temporaries that dead writers left in ``directory``; return what was removed."""
    removed: list[Path] = []
    try:
        entries = list(directory.iterdir())
    except OSError:
        return removed
    for entry in entries:
        match = _TMP.match(entry.name)
        if match is None:
            continue
        pid = int(match["pid"])
        if pid != os.getpid() and _alive(pid):
            continue
        _remove(entry)
        removed.append(entry)
    return removed


def _no_space(err: BaseException) -> OSError | None:
    """The out-of-space ``OSError`` behind ``err`` (torch reports it as a RuntimeError), if any."""
    seen: set[int] = set()
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _NO_SPACE:
            return current
        current = current.__cause__ or current.__context__
    return None


@contextmanager
def writing(path: Path, tmp: Path | None = None, clean: bool = True) -> Generator[Path, None, None]:
    """Yield the temporary to write ``path``'s new content to; remove it if the block raises.

    ``clean=False``: leave the temporary to the caller (FSDP: rank 0 removes the shared one).
    """
    tmp = temp_path(path) if tmp is None else tmp
    try:
        yield tmp
    except BaseException as err:
        if clean:
            _remove(tmp)
        cause = _no_space(err)
        if cause is not None:
            raise OSError(
                cause.errno,
                f"no space left on {path.parent} to write the checkpoint {path.name} ({cause.strerror}). "
                "The partial file was removed and an earlier checkpoint at that path is untouched; free some "
                "space (or raise the quota or file-size limit), or save to another directory.",
            ) from err
        raise


def write_file(path: Path, write: Callable[[BinaryIO], None]) -> None:
    """Write ``path`` atomically: ``write(file)`` fills the temporary, which is synced and renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep(path.parent)
    with writing(path) as tmp:
        with open(tmp, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)


def swap_into_place(tmp: Path, path: Path) -> None:
    """Rename the complete directory ``tmp`` to ``path``, keeping the old ``path`` aside until then."""
    aside = aside_path(path)
    if path.exists():
        _remove(aside)  # an older one, left by a kill after the last swap's first rename
        os.replace(path, aside)
    os.replace(tmp, path)
    _remove(aside)


def complete_checkpoint(path: Path) -> Path:
    """``path``, or the complete old checkpoint a kill in the middle of a swap left aside."""
    aside = aside_path(path)
    if not path.exists() and aside.exists():
        return aside
    return path
