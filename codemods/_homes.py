"""Where a name the old API had lives in the target, read from the target's catalog.

The rename table knows the distributed-training API; a 1.x file imports much more
(``ModelCheckpoint``, ``rank_zero_only``, ``seed_everything``, ``apply_to_collection``...). For
an import ``from pytorch_lightning.X.Y import name``:

- ``--target lightning``: the module is mapped (``pytorch_lightning.X.Y`` ->
  ``lightning.pytorch.X.Y``); when Lightning 2.6 has ``name`` there, that is its home. Otherwise
  the catalog's public homes of ``name`` (the defining module, and every package or ``__all__``
  that re-exports it, across ``lightning.pytorch``, ``lightning.fabric`` and
  ``lightning_utilities``) are grouped by the object they name, keeping only objects of the
  same kind as the old one (a class, a module, or else anything but a module). One object: its home is the
  path Lightning documents, taken as the one in ``lightning.pytorch`` before
  ``lightning.fabric`` before ``lightning_utilities``, then the shortest, then the closest to
  the mapped module (``rank_zero_only`` -> ``lightning.pytorch.utilities``). None, or several:
  no home, and the old import stays with a TODO saying why; a path is never made up.
- ``--target strategies``: a class or function ``strategies`` provides under the same name
  (``ModelCheckpoint``, ``EarlyStopping``, ``seed_everything``, the loggers) is imported from
  its shortest public path; anything else has no home (a TODO: a ``strategies.Trainer`` cannot
  drive Lightning's objects).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from compat import _catalog

from ._facts import OLD_CALLBACK

__all__ = ["Home", "call_changes", "find_home", "first_missing", "lightning_path", "module_resolves", "old_kind"]

#: How the Lightning target spells Lightning's own packages, by preference.
_LIGHTNING_ORDER = ("lightning.pytorch", "lightning.fabric", "lightning_utilities")
_LIGHTNING = "lightning.pytorch"
_KINDS = {"class": "class ", "module": "module ", None: ""}


@dataclass(frozen=True)
class Home:
    """The module to import a name from (``module``), or why there is none (``reason``)."""

    module: str | None
    reason: str = ""


def lightning_path(old_module: str) -> str:
    """``pytorch_lightning.X.Y`` -> ``lightning.pytorch.X.Y`` (Lightning 2.x's spelling)."""
    root, dot, rest = old_module.partition(".")
    return _LIGHTNING + dot + rest if root == _catalog.OLD_PACKAGE else old_module


@functools.cache
def old_kind(path: str) -> str | None:
    """``"class"`` or ``"module"``: what ``path`` was in 1.2-1.5; ``None`` when the old catalogs
    do not say (a function or a value, or a name of a later release)."""
    for catalog in map(_catalog.load, _catalog.OLD):
        if catalog.resolve(path) is not None:
            return "class"
        if path in catalog.modules:
            return "module"
    return None


_CALLBACK = OLD_CALLBACK.rpartition(".")[2]  # the base's name in every release and target


def _is_callback(path: str, catalog: _catalog.Catalog | None = None) -> bool | None:
    """Whether the class ``path`` is a Callback (in ``catalog``, or in the newest 1.x release that
    has it): a summary class and the callback of the same name are not one object
    (``utilities.model_summary.ModelSummary`` is not ``callbacks.ModelSummary``)."""
    catalogs = [catalog] if catalog is not None else [_catalog.load(n) for n in reversed(_catalog.OLD)]
    for current in catalogs:
        resolved = current.resolve(path)
        if resolved is not None:
            return any(c.rpartition(".")[2] == _CALLBACK for c in current.mro(resolved))
    return None


def _kind(catalog: _catalog.Catalog, definition: str) -> str | None:
    if definition in catalog.modules:
        return "module"
    return "class" if catalog.resolve(definition) is not None else None


def _rank(path: str, mapped: str) -> tuple[int, int, int, str]:
    package = next((i for i, p in enumerate(_LIGHTNING_ORDER) if path == p or path.startswith(p + ".")), 3)
    shared = 0
    for a, b in zip(path.split("."), mapped.split("."), strict=False):
        if a != b:
            break
        shared += 1
    return package, path.count("."), -shared, path


def module_resolves(target: str, module: str) -> bool:
    """Whether ``module`` is a module of the target."""
    return module in _catalog.target(target).modules


def first_missing(target: str, path: str) -> str | None:
    """The first prefix of the dotted ``path`` that the target does not have, or ``None``.

    Module parts must be modules; the first part that is not a module must be bound there (a
    class, a function, a value); what follows it is a member, not checked here.
    """
    catalog = _catalog.target(target)
    parts = path.split(".")
    current = parts[0]
    for part in parts[1:]:
        nxt = f"{current}.{part}"
        if nxt in catalog.modules:
            current = nxt
            continue
        return None if catalog.binds(nxt) else nxt
    return None if current in catalog.modules else current


@functools.cache
def find_home(target: str, old_module: str, name: str, mapped: str | None = None) -> Home:
    """Where ``name`` (imported from ``old_module`` in 1.x) is imported from in ``target``.

    Args:
        target: ``"lightning"`` or ``"strategies"``.
        old_module: the 1.x module (``pytorch_lightning.utilities.distributed``).
        name: the imported name.
        mapped: the module the rename table maps ``old_module`` to, if it has an entry.
    """
    catalog = _catalog.target(target)
    kind = old_kind(f"{old_module}.{name}")
    if target == "lightning":
        mapped = mapped or lightning_path(old_module)
        if catalog.binds(f"{mapped}.{name}"):
            return Home(mapped)
        missing = f"Lightning 2.6 has no {_KINDS[kind]}`{name}` in `{mapped}`"
        nowhere = f"Lightning 2.6 has no {_KINDS[kind]}`{name}` (not in `{mapped}`, nor elsewhere)"
    else:
        if kind == "module":
            return Home(None, f"`strategies` has no module like `{old_module}.{name}`")
        missing = nowhere = f"`strategies` has no {_KINDS[kind]}`{name}`"
    # Unknown to the 1.x catalogs (which list every module and class): a function, a value, or a
    # class of a later release; never a module.
    callback = _is_callback(f"{old_module}.{name}") if kind == "class" else None
    groups = {
        d: paths
        for d, paths in catalog.homes(name).items()
        if (_kind(catalog, d) == kind and (callback is None or _is_callback(d, catalog) == callback))
        or (kind is None and _kind(catalog, d) != "module")
    }
    if not groups:
        return Home(None, nowhere)
    if len(groups) > 1:
        options = ", ".join(f"`{min(paths, key=lambda p: _rank(p, mapped or ''))}`" for paths in groups.values())
        return Home(None, f"{missing}, and several elsewhere: {options}")
    (paths,) = groups.values()
    best = min(paths, key=lambda p: _rank(p, mapped or ""))
    return Home(best.rpartition(".")[0])


def _old_signature(path: str) -> tuple[_catalog.Catalog, _catalog.Signature] | None:
    for catalog in reversed(_catalog.old_with(path)):  # the newest release that has it
        signature = catalog.signature(path)
        if signature is not None:
            return catalog, signature
    return None


def _default(catalog: _catalog.Catalog, path: str, text: str | None) -> str | None:
    """A default of ``path``'s constructor, enum members by their value (``Interval.step``: ``'step'``)."""
    if text is None:
        return None
    resolved = catalog.resolve(path) or path
    return catalog.default_value(resolved.rpartition(".")[0], text)


def call_changes(target: str, old_path: str, new_path: str, positional: int, keywords: list[str]) -> list[str]:
    """What a call ``OldClass(<positional> args, <keywords>=...)`` would do differently once
    ``OldClass`` is the target's ``new_path`` (a class found by name, not by the rename table):
    arguments that bind elsewhere or are not taken, and defaults that changed."""
    found = _old_signature(old_path)
    new_catalog = _catalog.target(target)
    new = new_catalog.signature(new_path)
    if found is None or new is None:
        return []
    old_catalog, old = found
    problems = []
    if positional and old.positional()[:positional] != new.positional()[:positional]:
        problems.append(f"its positional arguments bind to {', '.join(new.positional()[:positional])} now")
    for keyword in keywords:
        if not new.accepts(keyword) and not new.var_keyword:
            problems.append(f"it takes no `{keyword}=`")
    passed = {*keywords, *old.positional()[:positional]}
    for param in old.params:
        if param.name in passed or param.kind in (_catalog.ParamKind.VAR_POSITIONAL, _catalog.ParamKind.VAR_KEYWORD):
            continue
        now = new.get(param.name)
        if now is None:
            continue
        if now.default is None and param.default is not None:
            problems.append(f"`{param.name}` is required now")
        elif _default(new_catalog, new_path, now.default) != _default(old_catalog, old_path, param.default):
            problems.append(f"`{param.name}` defaults to {now.default} now (was {param.default})")
    for param in new.params:
        if param.default is None and param.name not in passed and old.get(param.name) is None:
            if param.kind not in (_catalog.ParamKind.VAR_POSITIONAL, _catalog.ParamKind.VAR_KEYWORD):
                problems.append(f"`{param.name}` is required now")
    return problems
