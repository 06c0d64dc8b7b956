"""Which files a run looks at: folder walking, ignore rules, symlinks and module names.

Paths named on the command line are always looked at. Inside a folder, these are left out:
VCS and cache folders (silently), virtualenvs and site-packages (reported), whatever
``--exclude``, the config's ``exclude`` or a ``.gitignore`` (of the folder or of a parent up to
the repository root) ignores, and symlinks whose target is outside the folder given. Symlinks
inside the tree are not followed either: their targets are reached through their real path.
Only regular files are read: a FIFO, socket or device named ``x.py``, a symlink loop, a broken
symlink and a file above the size limit are skipped and reported, also when named on the
command line. Temporary files left by an interrupted run are collected for cleaning up.
"""

from __future__ import annotations

import errno
import functools
import os
import stat
from dataclasses import dataclass, field

from codemods.cli._ignore import IgnoreSpec, ignored_by
from codemods.cli._safety import is_temp_file, temp_files_of

PYTHON_SUFFIXES = (".py", ".pyi")

# Never looked into and not worth a line in the report.
_SILENT_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".compat_migrate_cache",
        ".pytype",
        ".ipynb_checkpoints",
        ".eggs",
        ".direnv",
        "node_modules",
        "buck-out",
        ".pants.d",
    }
)
# Installed code, not the user's: always skipped, and said so.
_ENV_DIRS = frozenset(
    {
        ".venv",
        "venv",
        ".tox",
        ".nox",
        "site-packages",
        "dist-packages",
        "__pypackages__",
        ".pyenv",
    }
)


@dataclass(frozen=True)
class SourceFile:
    """A file to look at: a Python module, a notebook or a YAML config (codemods.cli._formats).

    Attributes:
        path: absolute real path, read and written.
        display: the path as shown to the user (built from the argument given).
        module: the dotted module name used to resolve imports between files.
        rel: the path relative to the argument's folder, posix style (for ``--out``).
    """

    path: str
    display: str
    module: str
    rel: str


@dataclass(frozen=True)
class Skipped:
    """Something left out on purpose, with the reason."""

    display: str
    reason: str


@dataclass
class Discovery:
    """What a walk found.

    Attributes:
        files: files to look at, in a stable order, each real file once.
        skipped: folders and files left out, with the reason.
        others: ``(absolute path, rel)`` of non-Python files and inward symlinks (for ``--out``).
    """

    files: list[SourceFile] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    others: list[tuple[str, str]] = field(default_factory=list)
    leftovers: list[tuple[str, str]] = field(default_factory=list)


def _human(size: int) -> str:
    for unit, factor in (("MB", 1_000_000), ("kB", 1_000)):
        if size >= factor:
            return f"{size / factor:.1f} {unit}"
    return f"{size} bytes"


def not_regular(path: str, follow: bool = False) -> str | None:
    """Why ``path`` cannot be read as a source file (a FIFO, a symlink loop, ...), or ``None``."""
    try:
        st = os.stat(path, follow_symlinks=follow)
    except OSError as err:
        if err.errno == errno.ELOOP:
            return "symlink loop"
        if err.errno == errno.ENOENT and os.path.islink(path):
            return f"broken symlink (-> {os.readlink(path)})"
        return f"cannot look at it: {err.strerror or err}"
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode) or stat.S_ISLNK(st.st_mode):
        return None
    kind = "FIFO" if stat.S_ISFIFO(st.st_mode) else "socket" if stat.S_ISSOCK(st.st_mode) else "device"
    return f"not a regular file (a {kind}); only regular files are read"


def too_large(size: int, limit: int | None) -> str | None:
    """The skip reason for a file of ``size`` bytes over ``limit`` (``None``: no limit)."""
    if limit is None or size <= limit:
        return None
    return f"too large ({_human(size)} > --max-file-size {_human(limit)}); raise the limit to migrate it"


def within(path: str, folder: str) -> bool:
    """Whether the real path ``path`` is ``folder`` or inside it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def _is_env(path: str, name: str) -> bool:
    if name in _ENV_DIRS:
        return True
    return os.path.isfile(os.path.join(path, "pyvenv.cfg")) or os.path.isdir(os.path.join(path, "conda-meta"))


@functools.lru_cache(maxsize=4096)
def _is_package(folder: str) -> bool:
    return os.path.isfile(os.path.join(folder, "__init__.py")) or os.path.isfile(os.path.join(folder, "__init__.pyi"))


def module_name(path: str, root: str) -> str:
    """The dotted module name of ``path``.

    Inside a package (a folder with ``__init__.py``) the name follows the package chain upwards,
    even above ``root``; elsewhere it is the path relative to ``root``, without a leading
    ``src`` folder (the ``src/`` layout). A package's own file keeps its ``__init__`` part
    (``pkg.__init__``): that is how ``codemods`` knows relative imports start at ``pkg``. A name
    that would start with ``pytorch_lightning`` (or another API package) is the project's own
    folder of that name: the folders above it are kept, so that ``from .data import
    LightningDataModule`` there is not read as the library's.
    """
    folder, base = os.path.split(path)
    tail = [base.rsplit(".", 1)[0]]
    if _is_package(folder):
        chain: list[str] = []
        while _is_package(folder) and os.path.dirname(folder) != folder:
            chain.insert(0, os.path.basename(folder))
            folder = os.path.dirname(folder)
        while chain and chain[0] in _API_PACKAGES and os.path.dirname(folder) != folder:
            # a project's own `integrations/pytorch_lightning/` package (its parents' `__init__.py`
            # absent: a namespace package, or files copied out): never the library of that name
            chain.insert(0, os.path.basename(folder) or "_project")
            folder = os.path.dirname(folder)
        return ".".join(chain + tail)
    rel = os.path.relpath(folder, root) if within(folder, root) else "."
    parts = [] if rel == "." else rel.split(os.sep)
    if parts and parts[0] == "src":
        parts = parts[1:]
    if parts and parts[0] in _API_PACKAGES:
        parts.insert(0, "_project")
    return ".".join(parts + tail)


#: Top-level names of the old and new APIs: a user's module is never called by one of them.
_API_PACKAGES = frozenset({"pytorch_lightning", "lightning", "strategies", "compat"})


def _parent_gitignores(folder: str) -> list[IgnoreSpec]:
    """The ``.gitignore`` specs of the parents of ``folder`` up to its repository root."""
    chain: list[str] = []
    current = os.path.dirname(folder)
    repo = None
    probe = folder
    while True:
        if os.path.exists(os.path.join(probe, ".git")):
            repo = probe
            break
        parent = os.path.dirname(probe)
        if parent == probe:
            break
        probe = parent
    if repo is None:
        return []
    while within(current, repo):
        chain.insert(0, current)
        if current == repo:
            break
        current = os.path.dirname(current)
    specs: list[IgnoreSpec] = []
    info = os.path.join(repo, ".git", "info", "exclude")
    if os.path.isfile(info):
        spec = IgnoreSpec.from_file(info, ".git/info/exclude")
        if spec is not None:
            specs.append(IgnoreSpec(repo, spec.lines, ".git/info/exclude"))
    for parent in chain:
        spec = IgnoreSpec.from_file(os.path.join(parent, ".gitignore"), ".gitignore")
        if spec is not None:
            specs.append(spec)
    return specs


class _Walker:
    def __init__(self, found: Discovery, seen: set[str], excludes: list[IgnoreSpec], max_size: int | None) -> None:
        self.found = found
        self.seen = seen
        self.excludes = excludes
        self.max_size = max_size

    def add_file(self, real: str, display: str, root: str, rel: str, size: int) -> None:
        if real in self.seen:
            return
        self.seen.add(real)
        reason = too_large(size, self.max_size)
        if reason is not None:
            self.found.skipped.append(Skipped(display, reason))
            return
        self.found.files.append(SourceFile(real, display, module_name(real, root), rel))

    def walk(self, root: str, display_root: str) -> None:
        stack: list[tuple[str, str, str, list[IgnoreSpec]]] = [(root, display_root, "", _parent_gitignores(root))]
        while stack:
            folder, display, rel, specs = stack.pop()
            own = IgnoreSpec.from_file(os.path.join(folder, ".gitignore"), ".gitignore")
            if own is not None:
                specs = [*specs, own]
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError as err:
                self.found.skipped.append(Skipped(display, f"cannot list the folder: {err}"))
                continue
            subfolders = []
            for entry in entries:
                item = self.entry(entry, root, display, rel, specs)
                if item is not None:
                    subfolders.append(item)
            stack.extend(reversed(subfolders))

    def entry(
        self, entry: os.DirEntry[str], root: str, display: str, rel: str, specs: list[IgnoreSpec]
    ) -> tuple[str, str, str, list[IgnoreSpec]] | None:
        name = entry.name
        entry_display = os.path.join(display, name) if display != "." else name
        entry_rel = f"{rel}/{name}" if rel else name
        link = entry.is_symlink()
        is_dir = entry.is_dir(follow_symlinks=False)
        is_python = name.endswith(PYTHON_SUFFIXES)
        if not is_python and not is_dir and not link:  # hook: notebooks and YAML
            from codemods.cli import _formats

            is_python = _formats.wanted(entry.path, entry_rel, self.max_size)
        if is_dir and name in _SILENT_DIRS:
            return None
        if not is_dir and is_temp_file(name):
            self.found.leftovers.append((entry.path, entry_display))
            return None
        reason = ignored_by(self.excludes, entry.path, is_dir) or ignored_by(specs, entry.path, is_dir)
        if reason is not None:
            if is_dir or is_python:
                self.found.skipped.append(Skipped(entry_display + ("/" if is_dir else ""), reason))
            return None
        if link:
            broken = not_regular(entry.path, follow=True)
            if broken is not None and "symlink" in broken:
                self.found.skipped.append(Skipped(entry_display, broken))
                return None
            target = os.path.realpath(entry.path)
            if not within(target, root):
                self.found.skipped.append(Skipped(entry_display, f"symlink leaves the tree (-> {target})"))
            else:
                # Inside the tree: reached through its real path; --out recreates the link.
                self.found.others.append((entry.path, entry_rel))
            return None
        if is_dir:
            if _is_env(entry.path, name):
                self.found.skipped.append(Skipped(entry_display + "/", "virtualenv / installed packages"))
                return None
            return (entry.path, entry_display, entry_rel, specs)
        if is_python:
            odd = None if entry.is_file(follow_symlinks=False) else not_regular(entry.path)
            if odd is not None:
                self.found.skipped.append(Skipped(entry_display, odd))
                return None
            self.add_file(entry.path, entry_display, root, entry_rel, entry.stat(follow_symlinks=False).st_size)
        elif entry.is_file(follow_symlinks=False):  # a FIFO is not copied by --out either
            self.found.others.append((entry.path, entry_rel))
        return None


def discover(
    paths: list[str], exclude: list[str], config_excludes: IgnoreSpec | None, max_size: int | None = None
) -> Discovery:
    """Find the Python files under ``paths``.

    Args:
        paths: files and folders as given on the command line.
        exclude: ``--exclude`` patterns (gitignore syntax), relative to each folder given.
        config_excludes: the config's ``exclude`` patterns, relative to the pyproject's folder.
        max_size: skip files larger than this many bytes (``None``: no limit).

    Raises:
        FileNotFoundError: a path does not exist.
    """
    found = Discovery()
    seen: set[str] = set()
    for given in paths:
        if not os.path.lexists(given):
            raise FileNotFoundError(given)
        absolute = os.path.abspath(given)
        if os.path.isdir(absolute):
            root = os.path.realpath(absolute)
            excludes = [s for s in (config_excludes,) if s is not None]
            if exclude:
                excludes.append(IgnoreSpec(root, list(exclude), "--exclude"))
            _Walker(found, seen, excludes, max_size).walk(root, os.path.normpath(given))
            continue
        odd = not_regular(absolute, follow=True)
        if odd is not None:
            found.skipped.append(Skipped(given, odd))
            continue
        parent = os.path.realpath(os.path.dirname(absolute))
        real = os.path.realpath(absolute)
        if not within(real, parent):
            found.skipped.append(Skipped(given, f"symlink leaves the tree (-> {real})"))
            continue
        for leftover in temp_files_of(real):
            found.leftovers.append((leftover, os.path.join(os.path.dirname(given), os.path.basename(leftover))))
        _Walker(found, seen, [], max_size).add_file(
            real, os.path.normpath(given), parent, os.path.basename(given), os.path.getsize(real)
        )
    return found
