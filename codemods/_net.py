"""What the safety net (CM013) knows: the names only the old API had, read from the catalogs.

Nothing here is a hand list of old names. The 1.2-1.5 catalogs say what each old class had and
which of its methods the old framework called; the target catalog says what its class has and
calls. An *old-only* member of an old class is one some old release had and the class it maps
to on the target (through the table's ``CLASS`` entry) does not. Old-only names are:

- on a receiver whose class is known: any member the mapped class lacks (see
  ``codemods._facts.missing_member``);
- on a receiver whose class is not known: a *distinctive* one (``distinctive_names``);
- for an override: a method the old base's framework called and the new base's never calls
  (``uncalled_override``).
"""

from __future__ import annotations

import builtins
import functools
import re

from compat import _catalog

from ._facts import (
    _HOOK_MOVES,
    COMMON_MEMBER_NAMES,
    HOOKS_THAT_RUN,
    OLD_TRAINER,
    STRATEGY_HOOK_MOVES,
    TORCH_MODULE_METHODS,
    uncalled_hook,
)

__all__ = [
    "OWNERS",
    "distinctive_hooks",
    "distinctive_names",
    "old_owner_of",
    "old_trainer_keywords",
    "uncalled_override",
]

#: The old classes whose members count (Trainer and its mixins and connectors, LightningModule
#: and its hooks, Callback, the plugins, the accelerators), by defining module. Loggers,
#: metrics, profilers and the data module share their member names with other libraries
#: (``log_metric``, ``pos_label``, ``train_transforms``) and are left out.
OWNERS = re.compile(
    r"pytorch_lightning\.(trainer|core\.(lightning|hooks|decorators|optimizer|saving|memory)|"
    r"callbacks\.base|plugins|accelerators)\b"
)


@functools.cache
def _owner_members() -> dict[str, tuple[str, ...]]:
    """Member name -> the old owner classes (short names) that define it themselves."""
    found: dict[str, set[str]] = {}
    for name in _catalog.OLD:
        catalog = _catalog.load(name)
        for path in catalog.classes():
            if not OWNERS.match(path) or "._" in path:
                continue
            info = catalog.cls(path)
            assert info is not None
            for member in (*info.methods, *info.properties, *info.attributes):
                found.setdefault(member, set()).add(path.rpartition(".")[2])
    return {member: tuple(sorted(owners)) for member, owners in found.items()}


@functools.cache
def _target_members() -> frozenset[str]:
    """Every member of every class of both targets (a name either still has is not distinctive)."""
    names: set[str] = set()
    for target in _catalog.TARGETS:
        catalog = _catalog.target(target)
        for path in catalog.classes():
            names |= catalog.members(path)
    return frozenset(names)


@functools.cache
def distinctive_names() -> frozenset[str]:
    """Old-only member names worth a TODO on a receiver of unknown class.

    A public member of an old owner class (``OWNERS``) that no class of either target has,
    with an inner underscore (``running_sanity_check``, not ``setup``), that is not a Python
    builtin and not a name other libraries use (``COMMON_MEMBER_NAMES``).
    """
    new = _target_members()
    return frozenset(
        name
        for name in _owner_members()
        if not name.startswith("_")
        and "_" in name.strip("_")
        and name not in new
        and name not in COMMON_MEMBER_NAMES
        and not hasattr(builtins, name)
    )


#: The old classes users subclass (not the Trainer and its connectors, whose methods nobody overrides).
_SUBCLASSED = re.compile(r"pytorch_lightning\.(core\.(lightning|hooks)|callbacks\.base|plugins|accelerators)\b")


@functools.cache
def distinctive_hooks() -> frozenset[str]:
    """Distinctive names (``distinctive_names``) that some old owner class's framework called.

    A method of that name in a class whose bases are not known here (a base imported from
    another library, NeMo's ``ModelPT`` over ``LightningModule``) is almost surely an override
    of the old hook, which no class of either target calls any more.
    """
    names = distinctive_names()
    found: set[str] = set()
    for name in _catalog.OLD:
        catalog = _catalog.load(name)
        for path in catalog.classes():
            if not _SUBCLASSED.match(path) or "._" in path:  # before ``cls``, which builds the class's record
                continue
            info = catalog.cls(path)
            if info is not None:
                found |= catalog.hooks(path) & names & frozenset(info.methods)
    return frozenset(found)


@functools.cache
def old_trainer_keywords() -> frozenset[str]:
    """Every keyword some 1.2-1.5 ``Trainer.__init__`` took (``gpus``, ``max_epochs``, ...)."""
    found: set[str] = set()
    for name in _catalog.OLD:
        catalog = _catalog.load(name)
        path = catalog.resolve(OLD_TRAINER)
        signature = catalog.signature(path) if path is not None else None
        if signature is not None:
            found |= set(signature.keywords())
    return frozenset(found)


def old_owner_of(name: str) -> str:
    """The old classes that had ``name``, for a TODO (``Trainer``, ``DDPPlugin/DDPSpawnPlugin``)."""
    owners = _owner_members().get(name, ())
    return "/".join(owners[:3]) + ("/..." if len(owners) > 3 else "")


def _old_hooks(old: str) -> frozenset[str]:
    return frozenset(h for catalog in _catalog.old_with(old) for h in catalog.hooks(old))


def uncalled_override(old: str, new: str, name: str, target: str) -> str | None:
    """Why an override of ``name`` in a subclass of ``old`` (now based on ``new``) is dead code.

    ``None`` when the old framework never called it (the user's own method), when the new one
    calls it, or when either class is not in the catalogs.
    """
    if (name.startswith("__") and name.endswith("__")) or name in TORCH_MODULE_METHODS:
        return None
    catalog = _catalog.target(target)
    if not catalog.has(new) or name not in _old_hooks(old):
        return None
    hooks = catalog.hooks(new)
    if name in hooks:
        return None
    known = uncalled_hook(old, new, name)
    if known is not None:
        return known
    short = new.rpartition(".")[2]
    moved = STRATEGY_HOOK_MOVES.get(name) or _HOOK_MOVES.get(name)
    if moved and moved in hooks:
        where = f"move its code to `{moved}`"
    else:
        calls = ", ".join(f"`{h}`" for h in HOOKS_THAT_RUN if h in hooks)
        where = f"move its code to a method it calls ({calls})" if calls else "move its code where it still runs"
    return f"`{short}` never calls `{name}` (the 1.x framework did): {where}, or drop it"
