"""The 1.x module paths (``pytorch_lightning.callbacks``, ``.loggers``, ``.utilities``, ...) on compat.

Standard library only until a name is resolved (``import compat`` must not import torch).

Which names a 1.x module had comes from the catalog of the 1.2-1.5 releases
(``_catalog.Catalog.public``), not from a hand list. A name is resolved, in this order:

1. ``own``: what the compat module itself provides for it (a shim that takes the 1.x arguments,
   or a 1.x helper ``strategies`` has no counterpart for), warning once with its new name;
2. a name of a compat package above it (``pytorch_lightning.core.lightning.LightningModule`` is
   ``compat.LightningModule``), which warns as it always does;
3. the one ``strategies`` name of that short name in the ``strategies`` catalog
   (``pytorch_lightning.callbacks.EarlyStopping`` -> ``strategies.EarlyStopping``), warning once;
4. otherwise ``MissingNameError`` at once, saying what to use instead: a 1.x name with no
   counterpart here fails where it is imported, not later at ``fit``.

A 1.x module is the compat module of that path when compat has a file for it, else a module
``LegacyModuleFinder`` (appended to ``sys.meta_path`` by ``import compat``) makes, whose names
resolve the same way: ``from compat.core.lightning import LightningModule`` works.
"""

from __future__ import annotations

import functools
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Callable, Mapping
from typing import Any

from compat._warnings import deprecation_message, warn_deprecated

__all__ = [
    "LegacyModuleFinder",
    "MissingNameError",
    "OLD_PACKAGE",
    "install_finder",
    "legacy_module",
    "module_getattr",
    "old_names",
    "resolve",
]

OLD_PACKAGE = "pytorch_lightning"
#: Set by ``python -m compat.run``: messages name the ``pytorch_lightning.`` path the script imports.
ALIASED = False


class MissingNameError(ImportError):
    """A 1.x name that neither compat nor ``strategies`` has a counterpart for (yet).

    An ``ImportError``, so ``from pytorch_lightning.callbacks import LearningRateMonitor`` fails on
    that line with this message.
    """


def old_path(compat_module: str) -> str:
    """``compat.callbacks`` -> ``pytorch_lightning.callbacks``."""
    return OLD_PACKAGE + compat_module[len("compat") :] if compat_module.startswith("compat") else compat_module


def compat_module_path(old_module: str) -> str:
    """``pytorch_lightning.callbacks`` -> ``compat.callbacks``."""
    return "compat" + old_module[len(OLD_PACKAGE) :]


def _shown(old_module: str, name: str) -> str:
    module = old_module if ALIASED else compat_module_path(old_module)
    return f"{module}.{name}"


@functools.cache
def old_names(old_module: str) -> frozenset[str]:
    """The public names ``old_module`` had in any of the 1.2-1.5 releases (classes, functions,
    values and submodules)."""
    _catalog = importlib.import_module("compat._catalog")

    return frozenset().union(*(_catalog.load(name).public(old_module) for name in _catalog.OLD))


@functools.cache
def is_old_module(old_module: str) -> bool:
    """Whether ``old_module`` was a module in one of the 1.2-1.5 releases."""
    _catalog = importlib.import_module("compat._catalog")

    return any(old_module in _catalog.load(name).modules for name in _catalog.OLD)


@functools.cache
def new_home(name: str, target: str) -> str | None:
    """The one public path of ``name`` in ``target`` (``"strategies"``/``"lightning"``), if any."""
    _catalog = importlib.import_module("compat._catalog")

    homes = _catalog.target(target).homes(name)
    catalog = _catalog.target(target)
    objects = {d: paths for d, paths in homes.items() if d not in catalog.modules}
    if target == "lightning" and len(objects) > 1:  # Fabric's namesakes (CSVLogger, ...) come second
        objects = {d: p for d, p in objects.items() if any(x.startswith("lightning.pytorch.") for x in p)}
    if len(objects) != 1:
        return None
    paths = next(iter(objects.values()))
    if target == "lightning":
        paths = tuple(p for p in paths if p.startswith("lightning.pytorch.")) or paths
    return min(paths, key=lambda p: (p.count("."), p))


def _import_object(path: str) -> Any:
    module, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def _missing(old_module: str, name: str, lightning: str | None = None) -> MissingNameError:
    lightning = lightning or new_home(name, "lightning")
    where = f"Lightning 2.x has it as `{lightning}`; " if lightning else ""
    base = next((b for kind, b in _OWN_CODE if f".{kind}" in old_module), "")
    return MissingNameError(
        f"`{_shown(old_module, name)}` (pytorch_lightning 1.x) has no counterpart in compat or `strategies` yet: "
        f"{where}remove it from your program or replace it with your own code{base}. "
        f"`python -m compat.migrate <path>` marks every such line with a TODO."
    )


# What a user writes instead of a missing name, by the 1.x module it came from.
_OWN_CODE = (("callbacks", " (a `strategies.Callback` subclass)"), ("loggers", " (a `strategies.Logger` subclass)"))


def _compat_parents(old_module: str) -> list[str]:
    """The real compat modules above ``old_module``'s compat path, nearest first."""
    parts = compat_module_path(old_module).split(".")
    found = []
    for end in range(len(parts) - 1, 0, -1):
        candidate = ".".join(parts[:end])
        if _exists(candidate):
            found.append(candidate)
    return found


def _exists(compat_name: str) -> bool:
    """Whether compat has a real module ``compat_name`` (without importing it)."""
    try:
        return importlib.util.find_spec(compat_name) is not None
    except ModuleNotFoundError:  # a parent is not a real module
        return False


def resolve(old_module: str, name: str, own: Mapping[str, Callable[[], Any]] | None = None) -> Any:
    """The compat object for ``old_module.name`` (a ``pytorch_lightning.`` module path); see the
    module docstring for the order. Raises ``AttributeError`` for a name the 1.x module never had.

    ``own`` maps a name to a function that returns the object, or ``(object, new name)`` when the
    new name is not the ``strategies`` name of the same short name.
    """
    own = own or {}
    if name in own:
        value = own[name]()
        new = None
        if isinstance(value, tuple):
            value, new = value
        new = new or new_home(name, "strategies")
        lightning = new_home(name, "lightning")
        hint = "" if new else f"`strategies` has no counterpart yet (Lightning 2.x: `{lightning}`)"
        warn_deprecated(
            deprecation_message(
                f"{old_module}.{name}", new, old_display=_shown(old_module, name), lightning=lightning, hint=hint
            )
        )
        return value
    if name not in old_names(old_module):
        raise AttributeError(f"module {compat_module_path(old_module)!r} has no attribute {name!r}")
    submodule = f"{old_module}.{name}"
    if is_old_module(submodule):
        return legacy_module(submodule)
    for parent in _compat_parents(old_module):
        module = importlib.import_module(parent)
        if name in getattr(module, "__all__", ()):
            return getattr(module, name)
    new = new_home(name, "strategies")
    if new is None:
        raise _missing(old_module, name)
    warn_deprecated(
        deprecation_message(
            submodule,
            new,
            old_display=_shown(old_module, name),
            lightning=new_home(name, "lightning"),
        )
    )
    return _import_object(new)


def module_getattr(module_name: str, own: Mapping[str, Callable[[], Any]] | None = None) -> Callable[[str], Any]:
    """A PEP 562 ``__getattr__`` for the compat module ``module_name`` (``compat.callbacks``)."""
    old_module = old_path(module_name)

    def __getattr__(name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        return resolve(old_module, name, own)

    return __getattr__


def module_dir(module_name: str, own: Mapping[str, Callable[[], Any]] | None = None) -> Callable[[], list[str]]:
    """A PEP 562 ``__dir__``: the module's globals and every 1.x name."""
    old_module = old_path(module_name)

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[module_name]), *old_names(old_module), *(own or {})})

    return __dir__


def legacy_module(old_module: str) -> types.ModuleType:
    """The compat module for the 1.x module ``old_module``: compat's own file when it has one,
    else the module ``LegacyModuleFinder`` makes for it (``ModuleNotFoundError`` when 1.x had no
    such module)."""
    return importlib.import_module(compat_module_path(old_module))


class LegacyModuleFinder(importlib.abc.MetaPathFinder):
    """``compat.<1.x module path>`` that compat has no file for (``compat.core.lightning``): a
    module whose names resolve as ``resolve`` says. Last on ``sys.meta_path`` (``import compat``
    appends it), so it answers only for names no other finder has."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("compat.") or any(p.startswith("_") for p in fullname.split(".")):
            return None
        old_module = old_path(fullname)
        if not is_old_module(old_module):
            return None
        is_package = any(n.startswith(old_module + ".") for n in _all_old_modules())
        return importlib.util.spec_from_loader(fullname, _LegacyModuleLoader(), is_package=is_package)


class _LegacyModuleLoader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> None:
        return None  # the default module

    def exec_module(self, module: types.ModuleType) -> None:
        old_module = old_path(module.__name__)
        module.__doc__ = f"``{old_module}`` (pytorch_lightning 1.x) on compat: see ``compat._legacy``."
        own = importlib.import_module(_OWN_MODULES[old_module]).OWN if old_module in _OWN_MODULES else None
        module.__getattr__ = module_getattr(module.__name__, own)  # type: ignore[method-assign]
        module.__dir__ = module_dir(module.__name__, own)  # type: ignore[method-assign]


#: 1.x modules with no compat file whose names compat implements in a private module (its
#: ``OWN``: name -> a function returning ``(object, new name)``), resolved before the catalog.
_OWN_MODULES = {
    "pytorch_lightning.utilities.argparse": "compat._argparse",
    "pytorch_lightning.utilities.argparse_utils": "compat._argparse",  # 1.2's old name of it
}


#: compat's module files whose 1.x path was a package (``pytorch_lightning.trainer`` had
#: ``.trainer``, ``.states``, ...): imported as packages with no folder, so that their 1.x
#: submodules import (``LegacyModuleFinder`` makes them). tests/compat/test_modules.py checks this
#: set against the catalogs; it is written out so that importing ``compat.migrate`` reads none.
OPENED = frozenset(
    {
        "compat.accelerators",
        "compat.callbacks",
        "compat.loggers",
        "compat.metrics",
        "compat.plugins.environments",
        "compat.plugins.precision",
        "compat.plugins.training_type",
        "compat.trainer",
        "compat.utilities",
    }
)


class _OpenedPackageFinder(importlib.abc.MetaPathFinder):
    """First on ``sys.meta_path``: finds an ``OPENED`` module as usual, as a package with no folder."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in OPENED:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and spec.submodule_search_locations is None:
            spec.submodule_search_locations = []
        return spec


def install_finder() -> None:
    """Put the finders of the 1.x module paths on ``sys.meta_path`` (once)."""
    if not any(isinstance(finder, LegacyModuleFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _OpenedPackageFinder())
        sys.meta_path.append(LegacyModuleFinder())


@functools.cache
def _all_old_modules() -> frozenset[str]:
    _catalog = importlib.import_module("compat._catalog")

    return frozenset().union(*(_catalog.load(name).modules for name in _catalog.OLD))
