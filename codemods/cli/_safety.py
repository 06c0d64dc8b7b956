"""Reading, checking and writing source files without losing anything.

A file is decoded the way Python does (BOM, PEP 263 cookie, UTF-8 otherwise) and written back
with the same encoding, BOM and newline style. Before a write the new text must parse, be
stable under a second run of the rules, and keep every comment (``# TODO(compat.migrate)``
comments may be added). Writes go to a temporary file in the same folder, get the old file's
mode, and replace the old file only if it is still what was read.

A temporary file is named ``.<file>.<pid>.<random>.compat-migrate.tmp``: a process killed between
creating and renaming it (``kill -9``) leaves it behind, and the next run removes it once the
process ``<pid>`` is gone (``remove_leftover``).
"""

from __future__ import annotations

import ast
import codecs
import errno
import glob
import io
import os
import re
import stat
import tempfile
import tokenize
import warnings
from collections import Counter
from dataclasses import dataclass

TODO_PREFIX = "# TODO(compat.migrate)"
TEMP_SUFFIX = ".compat-migrate.tmp"
_TEMP_NAME = re.compile(r"^\..+\.(\d+)\.[^.]+" + re.escape(TEMP_SUFFIX) + "$")


def is_temp_file(name: str) -> bool:
    """Whether ``name`` (a base name) is one of our temporary files."""
    return name.endswith(TEMP_SUFFIX) and _TEMP_NAME.match(name) is not None


def temp_files_of(path: str) -> list[str]:
    """Our temporary files next to ``path`` (written for it by an earlier run)."""
    folder, name = os.path.split(path)
    pattern = os.path.join(glob.escape(folder), f".{glob.escape(name)}.*{TEMP_SUFFIX}")
    return sorted(f for f in glob.glob(pattern) if is_temp_file(os.path.basename(f)))


def _alive(pid: int) -> bool:
    """Whether process ``pid`` runs (a zombie, dead but not yet reaped, does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def remove_leftover(path: str) -> bool:
    """Remove a temporary file whose writer is gone; ``False`` if it is still alive (kept).

    The writer's pid is in the name; a live one may be another run writing right now.
    """
    match = _TEMP_NAME.match(os.path.basename(path))
    if match is None or _alive(int(match.group(1))):
        return False
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    return True


_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=]", re.MULTILINE)
_LONE_LF = re.compile(r"(?<!\r)\n")


class Unprocessable(Exception):
    """A file cannot be handled; the message says why (it is shown to the user)."""


@dataclass(frozen=True)
class Decoded:
    """A file's text and how to turn it back into the same kind of bytes.

    Attributes:
        text: the text, without BOM.
        encoding: the codec (``utf-8-sig`` when there is a BOM).
        newline: ``"\\n"``, ``"\\r\\n"`` or ``"\\r"`` when the file uses only that, else ``""``.
    """

    text: str
    encoding: str
    newline: str


def _newline_style(data: bytes) -> str:
    if b"\r" not in data:  # the usual case, in one pass over the bytes instead of three
        return "\n"
    crlf, lf, cr = data.count(b"\r\n"), data.count(b"\n"), data.count(b"\r")
    if lf == crlf and cr == crlf:
        return "\r\n" if crlf else "\n"
    if crlf == 0 and cr == 0:
        return "\n"
    if crlf == 0 and lf == 0:
        return "\r"
    return ""


def detect_encoding(data: bytes) -> str:
    """The codec Python would use for ``data`` (``utf-8-sig`` when it starts with a BOM).

    Raises:
        Unprocessable: the coding cookie names an unknown codec.
    """
    head = data[:1024]
    if not head.startswith(codecs.BOM_UTF8) and _COOKIE.search(b"\n".join(head.split(b"\n")[:2])) is None:
        return "utf-8"
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as err:
        raise Unprocessable(f"bad encoding declaration: {err}") from err
    return encoding


def decode(data: bytes) -> Decoded:
    """Decode a file's bytes as Python would.

    Raises:
        Unprocessable: the file is not text (NUL bytes) or cannot be decoded.
    """
    if b"\0" in data:
        raise Unprocessable("not a text file (it contains NUL bytes)")
    encoding = detect_encoding(data)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as err:
        hint = "" if encoding != "utf-8" else " (add a PEP 263 coding cookie if it is not UTF-8)"
        raise Unprocessable(f"cannot decode it as {encoding}: {err.reason} at byte {err.start}{hint}") from err
    return Decoded(text, encoding, _newline_style(data))


def encode(text: str, like: Decoded) -> bytes:
    """``text`` as bytes in the encoding, BOM and newline style of ``like``.

    Raises:
        Unprocessable: the text has characters the file's encoding cannot hold.
    """
    if like.newline == "\r\n":
        text = _LONE_LF.sub("\r\n", text)
    elif like.newline == "\n" and "\r" in text:
        text = text.replace("\r\n", "\n")
    try:
        return text.encode(like.encoding)
    except UnicodeEncodeError as err:
        raise Unprocessable(
            f"the migrated code has characters that {like.encoding} cannot hold: {err.object[err.start : err.end]!r}"
        ) from err


def comments(text: str) -> Counter[str]:
    """The comment tokens of ``text``, counted (trailing blanks ignored).

    Raises:
        Unprocessable: the text cannot be tokenized.
    """
    found: Counter[str] = Counter()
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found[token.string.rstrip()] += 1
    except (tokenize.TokenError, SyntaxError) as err:
        raise Unprocessable(f"cannot tokenize it to compare comments: {err}") from err
    return found


def _parses(text: str) -> bool:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(text)
        except (SyntaxError, ValueError):
            return False
    return True


def check_output(before: Decoded, after: str, after_bytes: bytes, rerun_changes: bool) -> str | None:
    """Why the migrated text must not be written, or ``None`` when it is safe.

    Args:
        before: the file as read.
        after: the migrated text.
        after_bytes: ``after`` encoded for writing.
        rerun_changes: whether running the selected rules on ``after`` changed it again.
    """
    if not _parses(after) and _parses(before.text):
        return "the migrated code does not parse (a codemod bug; please report it)"
    if rerun_changes:
        return "running the rules again changes the result (a codemod bug; please report it)"
    old, new = comments(before.text), comments(after)
    lost = old - new
    if lost:
        first = next(iter(lost))
        return f"a comment would disappear ({first!r}; a codemod bug; please report it)"
    # A comment copied (a trailing noqa comment on both halves of a split import) is not a change.
    added = [c for c in new - old if not c.startswith(TODO_PREFIX) and c not in old]
    if added:
        return f"a comment would be changed ({added[0]!r}; a codemod bug; please report it)"
    if detect_encoding(after_bytes) != before.encoding:
        return f"the migrated file would no longer be read as {before.encoding}"
    return None


@dataclass(frozen=True)
class Snapshot:
    """A file as read: its bytes and the stat fields compared before replacing it."""

    data: bytes
    mtime_ns: int
    size: int
    mode: int
    uid: int
    gid: int


def read_snapshot(path: str) -> Snapshot:
    """Read ``path`` and remember what it looked like.

    Raises:
        Unprocessable: it cannot be read.
    """
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; only regular files are read.
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        if err.errno == errno.ELOOP:
            raise Unprocessable("symlink loop") from err
        raise Unprocessable(f"cannot read it: {err.strerror or err}") from err
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Unprocessable("not a regular file; only regular files are read")
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read()
    except OSError as err:
        raise Unprocessable(f"cannot read it: {err.strerror or err}") from err
    finally:
        os.close(fd)
    return Snapshot(data, st.st_mtime_ns, st.st_size, stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid)


def _unchanged_on_disk(path: str, snap: Snapshot) -> bool:
    try:
        st = os.stat(path)
        if (st.st_mtime_ns, st.st_size) != (snap.mtime_ns, snap.size):
            return False
        with open(path, "rb") as fh:
            return fh.read() == snap.data
    except OSError:
        return False


def is_read_only(snap: Snapshot) -> bool:
    """Whether the file's owner may not write it (root's ``os.access`` would say yes)."""
    return not snap.mode & stat.S_IWUSR


def write_atomic(path: str, data: bytes, snap: Snapshot, *, guard: bool = True) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and ``os.replace``.

    Args:
        path: the file to write.
        data: its new content.
        snap: the source file as read; its mode (and owner, where allowed) is given to ``path``.
        guard: refuse the write if ``path`` is no longer what ``snap`` holds (in-place runs).

    Raises:
        Unprocessable: ``path`` changed on disk since it was read, or the write failed.
    """
    folder, name = os.path.split(path)
    changed = "it changed on disk while being migrated; not overwritten (run again)"
    if guard and not _unchanged_on_disk(path, snap):
        raise Unprocessable(changed)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.{os.getpid()}.", suffix=TEMP_SUFFIX, dir=folder or ".")
    except OSError as err:
        raise Unprocessable(f"cannot write next to it: {err.strerror or err}") from err
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, snap.mode)
        try:
            os.chown(tmp, snap.uid, snap.gid)
        except OSError:
            pass  # not ours to give away; the mode is what matters
        if guard and not _unchanged_on_disk(path, snap):
            raise Unprocessable(changed)
        os.replace(tmp, path)
    except OSError as err:
        os.unlink(tmp)
        raise Unprocessable(f"cannot write it: {err.strerror or err}") from err
    except BaseException:
        os.unlink(tmp)
        raise


def open_no_follow(path: str) -> io.TextIOWrapper:
    """Open ``path`` for writing text (created or truncated), never through a symlink.

    ``--report``/``--out`` paths may sit in a repository someone else controls: a link planted
    there must not make the run overwrite the file it points to.

    Raises:
        OSError: ``path`` is a symlink (``ELOOP``) or cannot be written.
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    if not hasattr(os, "O_NOFOLLOW") and os.path.islink(path):
        raise OSError(errno.ELOOP, "is a symlink; not written through", path)
    fd = os.open(path, flags, 0o666)
    return io.TextIOWrapper(io.FileIO(fd, "w"), encoding="utf-8")
