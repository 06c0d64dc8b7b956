"""The results cache: a second run over unchanged files parses nothing.

Like ruff's ``.ruff_cache``, the cache is a folder the user may delete at any time
(``.compat_migrate_cache/`` next to the project's ``pyproject.toml``, else in the current
folder; ``--cache-dir DIR`` or ``COMPAT_MIGRATE_CACHE_DIR`` elsewhere; ``--no-cache`` or
``COMPAT_MIGRATE_NO_CACHE=1`` for none). It holds a ``CACHEDIR.TAG`` (backup tools skip it) and a
``.gitignore`` of ``*``.

One JSON file per run setting (the rules, target, namespace, the paths given, and a fingerprint
of this tool: the source of ``codemods`` and of the rename table and catalog it reads) maps a
file's content hash and module name to what a run found:

* ``bases``: its classes and their bases (``codemods.class_bases``), for the cross-file pass;
* ``results``: ``unchanged`` or ``changed`` with the changes, for that content *and* the user
  classes of the whole tree (their hash is part of the key: a class built on the old API in
  another file changes what this file needs);
* ``unimported``: for the last tree (a hash of every file's content and module), the files
  that define classes no other file imports, whose ``bases`` the run did not need.

An entry can only say "this exact content, with these settings, gave these results": a run in
place or with ``--diff`` uses only ``unchanged`` entries (nothing to write), and never writes on
the cache's word. A corrupted or foreign file is ignored and replaced. JSON, never pickle: a
cache file planted in a repository cannot run code.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from codemods.cli._worker import ChangeRecord, digest

CACHE_FOLDER = ".compat_migrate_cache"
ENV_DIR = "COMPAT_MIGRATE_CACHE_DIR"
ENV_OFF = "COMPAT_MIGRATE_NO_CACHE"
FORMAT = 2  # 2: a change's column and suppression, and the lines a `# compat: ignore` held
_TAG = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This file is a cache directory tag created by compat.migrate.\n"
    "# For information about cache directory tags, see https://bford.info/cachedir/\n"
)
_FINGERPRINT: list[str] = []


def tool_fingerprint() -> str:
    """A hash of everything a file's results depend on besides the file: this tool's code and data.

    The source of the ``codemods`` package (rules, CLI) and of ``compat.renames`` and
    ``compat._catalog`` (the rename table and the API catalog the rules read).
    """
    if not _FINGERPRINT:
        import codemods
        import compat.renames
        from compat import _catalog

        roots = [os.path.dirname(codemods.__file__), os.path.dirname(_catalog.__file__)]
        files = [compat.renames.__file__]
        for root in roots:
            for folder, dirs, names in os.walk(root):
                dirs[:] = sorted(d for d in dirs if d != "__pycache__")
                files.extend(os.path.join(folder, n) for n in sorted(names) if n.endswith((".py", ".json")))
        h = hashlib.blake2b(digest_size=16)
        for path in files:
            with open(path, "rb") as fh:
                h.update(os.path.basename(path).encode() + b"\0" + fh.read() + b"\0")
        _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]


def default_dir(config_path: str | None) -> str:
    """The cache folder when none is given: next to the project's pyproject.toml, else here."""
    root = os.path.dirname(os.path.abspath(config_path)) if config_path else os.getcwd()
    return os.path.join(root, CACHE_FOLDER)


def user_classes_key(user_classes: Mapping[str, str]) -> str:
    """The hash of the tree's user classes, part of every ``results`` key."""
    return digest(json.dumps(sorted(user_classes.items())).encode())


class Cache:
    """The entries for one run setting, loaded at the start and saved at the end.

    Args:
        folder: the cache folder (created with its tag and ``.gitignore`` on save).
        setting: what the results depend on besides the file (rules, target, paths...).
    """

    def __init__(self, folder: str, setting: Sequence[object]) -> None:
        self.folder = folder
        key = digest(json.dumps([FORMAT, tool_fingerprint(), *map(str, setting)]).encode())
        self.path = os.path.join(folder, f"results-{key}.json")
        self.bases: dict[str, dict[str, tuple[str, ...]]] = {}
        self.results: dict[str, tuple[str, tuple[ChangeRecord, ...], tuple[int, ...]]] = {}
        self._loaded_bases: dict[str, Any] = {}
        self._loaded_results: dict[str, Any] = {}
        self._loaded_unimported: Any = None
        self.unimported: tuple[str, list[str]] | None = None
        self._load()

    def _load(self) -> None:
        try:
            if os.path.islink(self.path):
                return
            with open(self.path, encoding="utf-8") as fh:
                data = json.load(fh)
        except (OSError, ValueError, UnicodeDecodeError):
            return  # no cache yet, or a broken one: it is rebuilt
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            return
        bases, results = data.get("bases"), data.get("results")
        if isinstance(bases, dict) and isinstance(results, dict):
            self._loaded_bases, self._loaded_results = bases, results
            self._loaded_unimported = data.get("unimported")

    def get_unimported(self, tree: str) -> set[str] | None:
        """The files (``content hash:module``) a run over this exact ``tree`` found that no
        other file imports (``Runner._importable``), or ``None``."""
        raw = self._loaded_unimported
        if not (isinstance(raw, list) and len(raw) == 2 and raw[0] == tree and isinstance(raw[1], list)):
            return None
        if not all(isinstance(key, str) for key in raw[1]):
            return None
        self.unimported = (tree, list(raw[1]))
        return set(raw[1])

    def put_unimported(self, tree: str, keys: Iterable[str]) -> None:
        """Remember which files of ``tree`` (a hash of every file's content and module) no
        other file imports; only the last tree is kept."""
        self.unimported = (tree, sorted(keys))

    def get_bases(self, key: str) -> dict[str, tuple[str, ...]] | None:
        """The cached ``class_bases`` of a file (``key``: content hash and module), or ``None``."""
        raw = self._loaded_bases.get(key)
        if not isinstance(raw, dict):
            return None
        if not all(
            isinstance(k, str) and isinstance(v, list) and all(isinstance(b, str) for b in v) for k, v in raw.items()
        ):
            return None
        found = {k: tuple(v) for k, v in raw.items()}
        self.bases[key] = found
        return found

    def put_bases(self, key: str, found: Mapping[str, Iterable[str]]) -> None:
        """Remember a file's ``class_bases``."""
        self.bases[key] = {k: tuple(v) for k, v in found.items()}

    def get_result(self, key: str) -> tuple[str, tuple[ChangeRecord, ...], tuple[int, ...]] | None:
        """``(status, changes, held lines)`` cached for a file (``key``: content, module, user classes)."""
        raw = self._loaded_results.get(key)
        if not (isinstance(raw, list) and len(raw) == 3 and raw[0] in ("changed", "unchanged")):
            return None
        changes = []
        for item in raw[1] if isinstance(raw[1], list) else [None]:
            if not (
                isinstance(item, list)
                and len(item) == 6
                and isinstance(item[0], str)
                and isinstance(item[1], int)
                and isinstance(item[2], str)
                and isinstance(item[3], bool)
                and isinstance(item[4], int)
                and isinstance(item[5], bool)
            ):
                return None
            changes.append(ChangeRecord(*item))
        if not (isinstance(raw[2], list) and all(isinstance(line, int) for line in raw[2])):
            return None
        found = (raw[0], tuple(changes), tuple(raw[2]))
        self.results[key] = found
        return found

    def put_result(self, key: str, status: str, changes: Iterable[ChangeRecord], held: Iterable[int] = ()) -> None:
        """Remember what the rules found in a file (``changed``/``unchanged`` only)."""
        if status in ("changed", "unchanged"):
            self.results[key] = (status, tuple(changes), tuple(held))

    def save(self) -> str | None:
        """Write the entries used or made by this run (others are dropped); an error, or ``None``."""
        data = {
            "format": FORMAT,
            "bases": {k: {c: list(b) for c, b in v.items()} for k, v in self.bases.items()},
            "results": {
                k: [status, [[c.rule, c.line, c.message, c.todo, c.column, c.suppressed] for c in changes], list(held)]
                for k, (status, changes, held) in self.results.items()
            },
        }
        if self.unimported is not None:
            data["unimported"] = list(self.unimported)
        try:
            if os.path.islink(self.folder):
                return f"the cache folder `{self.folder}` is a symlink; not written through"
            os.makedirs(self.folder, exist_ok=True)
            for name, text in (("CACHEDIR.TAG", _TAG), (".gitignore", "# created by compat.migrate\n*\n")):
                marker = os.path.join(self.folder, name)
                if not os.path.lexists(marker):
                    _write(marker, text)
            _write(self.path, json.dumps(data, separators=(",", ":")))
        except OSError as err:
            return f"cannot write the cache in `{self.folder}`: {err.strerror or err} (use --no-cache)"
        return None


def _write(path: str, text: str) -> None:
    """Write through a temporary file and ``os.replace`` (a link at ``path`` is replaced, not followed)."""
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=os.path.dirname(path))
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
