"""``[tool.compat.migrate]`` in the nearest ``pyproject.toml``.

The nearest file is the first ``pyproject.toml`` found from the first path given upwards; a
file without the table means no configuration (the search does not go on above it, so a
sub-project is never configured by its parent's file).
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import dataclass

_KEYS = ("select", "ignore", "exclude", "target")


class ConfigError(ValueError):
    """The configuration is invalid; the message names the file, the key and the fix."""


@dataclass(frozen=True)
class Config:
    """The settings read from a ``pyproject.toml``.

    Attributes:
        path: the file they come from (``None`` when none was found).
        select: rule ids or prefixes to run (``None``: all).
        ignore: rule ids or prefixes not to run.
        exclude: gitignore-style patterns, relative to the file's folder.
        target: ``strategies`` or ``lightning`` (``None``: the default).
    """

    path: str | None = None
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    target: str | None = None


def find_pyproject(start: str) -> str | None:
    """The nearest ``pyproject.toml`` at or above ``start`` (a file or folder)."""
    folder = os.path.abspath(start)
    if not os.path.isdir(folder):
        folder = os.path.dirname(folder)
    while True:
        candidate = os.path.join(folder, "pyproject.toml")
        if os.path.isfile(candidate):
            return candidate
        parent = os.path.dirname(folder)
        if parent == folder:
            return None
        folder = parent


def _strings(path: str, key: str, value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: [tool.compat.migrate] `{key}` must be a list of strings, got {value!r}")
    return tuple(value)


def load_config(start: str) -> Config:
    """Read ``[tool.compat.migrate]`` from the nearest ``pyproject.toml`` above ``start``.

    Raises:
        ConfigError: the file is not valid TOML, or a key is unknown or has the wrong type.
    """
    path = find_pyproject(start)
    if path is None:
        return Config()
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as err:
        raise ConfigError(f"{path}: cannot read it: {err}") from err
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as err:
        raise ConfigError(f"{path}: cannot read it as TOML: {err}") from err
    table = data.get("tool", {}).get("compat", {}).get("migrate")
    if table is None:
        return Config(path=path)
    if not isinstance(table, dict):
        raise ConfigError(f"{path}: [tool.compat.migrate] must be a table")
    unknown = sorted(set(table) - set(_KEYS))
    if unknown:
        raise ConfigError(
            f"{path}: unknown key `{unknown[0]}` in [tool.compat.migrate]; valid keys: {', '.join(_KEYS)}"
        )
    target = table.get("target")
    if target is not None and not isinstance(target, str):
        raise ConfigError(f"{path}: [tool.compat.migrate] `target` must be a string, got {target!r}")
    return Config(
        path=path,
        select=_strings(path, "select", table["select"]) if "select" in table else None,
        ignore=_strings(path, "ignore", table.get("ignore", [])),
        exclude=_strings(path, "exclude", table.get("exclude", [])),
        target=target,
    )
