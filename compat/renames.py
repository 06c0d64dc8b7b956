"""The one table of old -> new names.

Pure data, standard library only: the runtime shims (``compat.*``), the codemods
(``codemods/``), ``docs/migration.md`` and the coverage tests are all derived from it.

Every entry names an old object by its ``pytorch_lightning.`` qualified path; the same object
under ``compat.`` (``compat.plugins.DDPPlugin``) is derived by :func:`compat_path`, and deep
module paths a user may have imported from are listed in ``aliases``.

Member kinds (method, property, hook, argument, argument value, attribute) name their owner in
``old`` and the member in ``member``; their ``strategies``/``lightning`` targets are bare member
names (or, for argument values, the new keyword arguments written as ``key=value, ...``).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

__all__ = ["Kind", "Rename", "RENAMES", "PACKAGE_REMOVAL", "compat_path", "lookup"]

# The version of strategy-compat that removes every shim unless an entry says otherwise.
PACKAGE_REMOVAL = "1.0"


class Kind(str, enum.Enum):
    """What an entry renames."""

    MODULE = "module"
    CLASS = "class"
    FUNCTION = "function"
    METHOD = "method"
    PROPERTY = "property"
    ATTRIBUTE = "attribute"
    ARGUMENT = "argument"
    ARGUMENT_VALUE = "argument value"
    HOOK = "hook"


@dataclass(frozen=True)
class Rename:
    """One old name and where it went.

    Attributes:
        kind: what is renamed.
        old: ``pytorch_lightning.`` qualified path of the old object, or of the owner for member
            kinds (``pytorch_lightning.plugins.DDPPlugin`` for ``init_ddp_connection``).
        member: the old member name for member kinds, else ``None``.
        strategies: the new name in ``strategies`` (qualified for objects, bare for members);
            ``None`` when nothing replaces it there.
        lightning: the same for Lightning 2.x (``lightning.pytorch...``).
        renamed_in: the Lightning version that deprecated/renamed it (for the docs).
        removed_in: the strategy-compat version that removes the shim.
        automatic: whether the codemods rewrite it without a person.
        hint: one line for a person when ``automatic`` is false (or when the change needs a look).
        aliases: other ``pytorch_lightning.`` paths of the same old object (deep module paths).
        row: the row of OLD_API.md §3 the entry comes from, when it comes from one.
        value: for ``ARGUMENT_VALUE``, the old string value (``"ddp_cpu"``).
        to_property: a method that became a property (``master_address()`` -> ``main_address``).
        params: for signature changes, old parameter name -> replacement expression
            (``("global_rank", "self.global_rank")``).
    """

    kind: Kind
    old: str
    strategies: str | None
    lightning: str | None
    renamed_in: str
    member: str | None = None
    removed_in: str = PACKAGE_REMOVAL
    automatic: bool = True
    hint: str = ""
    aliases: tuple[str, ...] = ()
    row: int | None = None
    value: str | None = None
    to_property: bool = False
    params: tuple[tuple[str, str], ...] = field(default=())

    @property
    def old_name(self) -> str:
        """The old name as a user wrote it: ``DDPPlugin``, ``DDPPlugin.init_ddp_connection``."""
        short = self.old.rsplit(".", 1)[-1]
        if self.kind is Kind.ARGUMENT:
            return f"{short}({self.member}=...)"
        if self.kind is Kind.ARGUMENT_VALUE:
            return f"{short}({self.member}={self.value!r})"
        return f"{short}.{self.member}" if self.member else short


def compat_path(path: str) -> str:
    """The ``compat.`` path of a ``pytorch_lightning.`` path."""
    prefix = "pytorch_lightning"
    if path == prefix or path.startswith(prefix + "."):
        return "compat" + path[len(prefix):]
    return path


# Entries are filled in below; keep them grouped by kind and ordered by OLD_API.md §3 row.
RENAMES: tuple[Rename, ...] = ()


def lookup(path: str, member: str | None = None) -> Rename | None:
    """The entry for an old qualified path (``pytorch_lightning.``, ``compat.`` or an alias)."""
    for entry in RENAMES:
        paths = (entry.old, compat_path(entry.old), *entry.aliases, *map(compat_path, entry.aliases))
        if path in paths and entry.member == member:
            return entry
    return None
