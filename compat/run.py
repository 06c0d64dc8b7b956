"""``python -m compat.run train.py [args...]``: run a 1.x script whose imports still say ``pytorch_lightning``.

The script runs unchanged on ``compat``: a ``sys.meta_path`` finder makes ``pytorch_lightning``
and every ``pytorch_lightning.<module>`` the compat module of the same path
(``pytorch_lightning.callbacks`` *is* ``compat.callbacks``; a 1.x module compat has no file for,
such as ``pytorch_lightning.core.lightning``, is made from the 1.x catalog, see
``compat._legacy``). Each old name warns once with its new name; a name with no counterpart yet
fails on its import line saying what to do. ``python -m compat.migrate train.py`` then moves the
script to ``strategies`` for good.

Forms::

    python -m compat.run train.py --lr 0.1        # like `python train.py --lr 0.1`
    python -m compat.run -m mypkg.train --lr 0.1  # like `python -m mypkg.train --lr 0.1`
    python -m compat.run --shadow train.py        # even where a real pytorch_lightning is installed

The script runs as ``__main__`` with ``sys.argv == ["train.py", "--lr", "0.1"]`` and the script's
folder first on ``sys.path`` (``runpy.run_path`` semantics; ``-m``: the current folder, as
``python -m``). Its ``__spec__`` is ``compat.run``'s, which is how processes started for it run
under ``compat.run`` too:

* ``strategy="ddp"`` (``accelerator="ddp_cpu"``/``"ddp"`` in 1.x terms) re-runs the interpreter's
  command line (``sys.orig_argv``), so the other ranks run ``python -m compat.run train.py ...``;
* ``ddp_spawn`` workers (``multiprocessing``'s spawn) import the main module by its spec's name:
  they run this module as ``__mp_main__``, which installs the finder and runs the script again
  there (``COMPAT_RUN_TARGET`` tells them which), so objects of the script's classes unpickle.

Where a real ``pytorch_lightning`` is importable, ``compat.run`` does not silently replace it:
it says so and exits with status 2, unless ``--shadow`` asks to run on compat anyway (for this
process and the processes it starts only; the installed package is not touched).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
import types
from collections.abc import Sequence
from typing import Any

__all__ = ["ENV_TARGET", "AliasFinder", "install", "main"]

OLD_PACKAGE = "pytorch_lightning"
#: What the processes started for the script run (``{"path": ...}`` or ``{"module": ...}``).
ENV_TARGET = "COMPAT_RUN_TARGET"
EXIT_INSTALLED = 2

_USAGE = (
    "usage: python -m compat.run [--shadow] SCRIPT.py [ARGS...]\n"
    "       python -m compat.run [--shadow] -m MODULE [ARGS...]\n"
    "Run a PyTorch Lightning 1.x program whose imports say `pytorch_lightning` on compat, unchanged.\n"
    "  --shadow  run on compat even where a real pytorch_lightning is installed\n"
)


class AliasFinder(importlib.abc.MetaPathFinder):
    """``pytorch_lightning[.x.y]`` -> the compat module of that path (the same module object)."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != OLD_PACKAGE and not fullname.startswith(OLD_PACKAGE + "."):
            return None
        from compat import _legacy

        try:
            module = _legacy.legacy_module(fullname)
        except ModuleNotFoundError as err:
            if err.name != _legacy.compat_module_path(fullname):
                raise
            raise ModuleNotFoundError(
                f"No module named {fullname!r}: pytorch_lightning 1.2-1.5 had no such module "
                "(`python -m compat.run` runs `pytorch_lightning` as compat)",
                name=fullname,
            ) from None
        return importlib.util.spec_from_loader(fullname, _AliasLoader(module), is_package=hasattr(module, "__path__"))


class _AliasLoader(importlib.abc.Loader):
    """Hands importlib the compat module itself, keeping its own ``__spec__``."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        if self.spec is not None:  # importlib set the alias spec on it; compat's stays the real one
            module.__spec__ = self.spec
        if module.__name__ == "compat":
            _warn_aliased()


def _warn_aliased() -> None:
    from compat._warnings import warn_deprecated

    warn_deprecated(
        "`import pytorch_lightning` runs on compat here (`python -m compat.run`): the 1.x names work and each "
        "warns once with its new name. Run `python -m compat.migrate <path>` to move the program to `strategies`, "
        "then run it with plain `python`."
    )


def install() -> AliasFinder:
    """Put the finder first on ``sys.meta_path`` (once); later imports of ``pytorch_lightning`` get compat."""
    from compat import _legacy

    _legacy.ALIASED = True
    for finder in sys.meta_path:
        if isinstance(finder, AliasFinder):
            return finder
    finder = AliasFinder()
    sys.meta_path.insert(0, finder)
    return finder


def installed_lightning() -> str | None:
    """Where a real ``pytorch_lightning`` would be imported from, or ``None``."""
    if any(isinstance(f, AliasFinder) for f in sys.meta_path):
        return None
    try:
        spec = importlib.util.find_spec(OLD_PACKAGE)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    return spec.origin or ", ".join(spec.submodule_search_locations or ()) or OLD_PACKAGE


def _script_code(path: str) -> types.CodeType:
    with open(path, "rb") as handle:
        source = handle.read()
    return compile(source, path, "exec", dont_inherit=True)


def _module_code(name: str) -> tuple[types.CodeType, importlib.machinery.ModuleSpec]:
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    if spec.submodule_search_locations is not None:  # a package: run its __main__, as python -m does
        return _module_code(f"{name}.__main__")
    loader = spec.loader
    code = loader.get_code(name) if isinstance(loader, importlib.abc.InspectLoader) else None
    if code is None:
        raise ImportError(f"`python -m compat.run -m {name}`: no code to run in {name!r}")
    return code, spec


def _keep_compat_importable() -> None:
    """When compat (and strategies) come from ``sys.path[0]`` (a checkout, not installed), keep that
    folder on the path, last, once ``sys.path[0]`` becomes the script's folder."""
    home = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if sys.path and os.path.abspath(sys.path[0] or os.curdir) == home:
        sys.path.append(home)


def _own_spec() -> importlib.machinery.ModuleSpec | None:
    return importlib.util.find_spec("compat.run")


def _execute(target: dict[str, str], namespace: dict[str, Any]) -> None:
    """Run the target's code in ``namespace`` (a module's globals)."""
    if "module" in target:
        code, spec = _module_code(target["module"])
        namespace.update(__file__=spec.origin, __package__=spec.parent, __cached__=None)
    else:
        path = target["path"]
        code = _script_code(path)
        namespace.update(__file__=path, __package__=None, __cached__=None)
    exec(code, namespace)


def _parse(argv: Sequence[str]) -> tuple[dict[str, str], list[str], bool]:
    args = list(argv)
    shadow = False
    while args and args[0] in ("--shadow", "--"):
        shadow = shadow or args.pop(0) == "--shadow"
    if not args or args[0] in ("-h", "--help"):
        raise SystemExit(_USAGE if args else _USAGE + "error: name a script or -m MODULE\n")
    if args[0] == "-m":
        if len(args) < 2:
            raise SystemExit(_USAGE + "error: -m needs a module name\n")
        return {"module": args[1]}, args[2:], shadow
    path = args[0]
    if not os.path.isfile(path):
        raise SystemExit(f"python -m compat.run: cannot open {path!r}: no such file")
    return {"path": os.path.abspath(path), "given": path}, args[1:], shadow


def main(argv: Sequence[str] | None = None) -> int:
    """Run the 1.x program named on the command line on compat; its exit status is ours."""
    target, args, shadow = _parse(sys.argv[1:] if argv is None else argv)
    real = installed_lightning()
    if real is not None and not shadow:
        sys.stderr.write(
            f"python -m compat.run: a real pytorch_lightning is installed here ({real}), so this program's "
            "`pytorch_lightning` imports would not be compat's. Either run it with that package "
            "(`python SCRIPT.py`), or run it on compat anyway with `python -m compat.run --shadow ...` "
            "(this process and the ones it starts only), or use an environment without pytorch_lightning "
            "(`pip uninstall pytorch_lightning`). `python -m compat.migrate <path>` moves the program to "
            "`strategies`, which needs neither.\n"
        )
        return EXIT_INSTALLED
    install()
    os.environ[ENV_TARGET] = json.dumps(target)
    _keep_compat_importable()
    if "module" in target:
        sys.argv = [target["module"], *args]
        sys.path[0] = os.getcwd()
    else:
        sys.argv = [target["given"], *args]  # as `python train.py` would have it
        sys.path[0] = os.path.dirname(target["path"])
    module = types.ModuleType("__main__")
    module.__spec__ = _own_spec()  # processes started for the script run compat.run too (see above)
    module.__builtins__ = __builtins__  # type: ignore[attr-defined]
    sys.modules["__main__"] = module
    try:
        _execute(target, vars(module))
    except SystemExit as stop:
        code = stop.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        sys.stderr.write(f"{code}\n")
        return 1
    return 0


def _spawned_worker(namespace: dict[str, Any]) -> None:
    """In a ``multiprocessing`` spawn child: run the script as ``__mp_main__`` in ``namespace``."""
    raw = os.environ.get(ENV_TARGET)
    if not raw:
        return
    install()
    _execute(json.loads(raw), namespace)


if __name__ == "__main__":
    sys.exit(main())
elif __name__ == "__mp_main__":
    _spawned_worker(globals())
