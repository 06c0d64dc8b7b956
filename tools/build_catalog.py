"""Regenerate the API catalogs in ``compat/_catalog/*.json`` from the real releases.

Run ``python tools/build_catalog.py`` from the repository root (needs network access the
first time: the wheels are fetched with ``pip download --no-deps`` into
``$STRATEGY_COMPAT_CACHE`` or ``~/.cache/strategy-compat/wheels``; ``--only NAME`` rebuilds one
catalog). Nothing of a wheel is copied into the repository, only facts about its API.

What is read, and how:

- ``pytorch_lightning`` 1.2.10, 1.3.8, 1.4.9, 1.5.10 and ``lightning`` 2.6 are read from their
  wheels with ``ast``, never imported (their torch pins are long gone). The Lightning 2.6
  catalog also reads ``lightning_utilities`` (0.15, the release Lightning 2.6 installs with) from
  its own wheel: Lightning 2.x keeps ``apply_to_collection``, ``rank_zero_only`` and friends there.
- ``strategies`` is read from this checkout with the same reader; its public names come from
  importing it (``__all__`` of each package, and the names in its strategy registry).

For every module-level class: its bases (resolved to the defining module's path), its methods
with their signatures (annotations dropped, defaults kept as source text; the 1.x Trainer's
``__init__`` annotations are kept apart as ``init_annotations``), properties, class and
instance attributes (``self.x = ...``), and the methods no code in the package ever names
(``uncalled``: a hook of the base that the framework never calls), and the abstract ones
(``@abstractmethod``: a subclass must define them). Assignments to
``trainer.x``/``self.trainer.x`` anywhere in the package count as attributes of the Trainer
class (1.x connectors set Trainer state that way).

Every catalog (the old releases too) also lists ``names``: every
module-level function and value, at the path that defines it, and every path a user is meant to
import a name from (a package ``__init__`` or a module whose ``__all__`` lists it, no
``_``-prefixed part), mapped to the defining path; ``python -m compat.migrate`` checks every
import it writes against them.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
CATALOG_DIR = REPO_ROOT / "compat" / "_catalog"

# catalog name -> (distribution requirement, top-level packages read from the wheel)
RELEASES: dict[str, tuple[str, tuple[str, ...]]] = {
    "pytorch_lightning-1.2": ("pytorch-lightning==1.2.10", ("pytorch_lightning",)),
    "pytorch_lightning-1.3": ("pytorch-lightning==1.3.8", ("pytorch_lightning",)),
    "pytorch_lightning-1.4": ("pytorch-lightning==1.4.9", ("pytorch_lightning",)),
    "pytorch_lightning-1.5": ("pytorch-lightning==1.5.10", ("pytorch_lightning",)),
    "lightning-2.6": ("lightning==2.6.*", ("lightning.pytorch", "lightning.fabric")),
}
#: More wheels read into a catalog: catalog name -> ((requirement, packages), ...).
EXTRA_WHEELS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "lightning-2.6": (("lightning-utilities==0.15.*", ("lightning_utilities",)),),
}
#: The catalogs that list module-level ``names``: the migration targets, and the old releases
#: (``compat``'s 1.x modules and ``python -m compat.run`` answer for every name they had).
WITH_NAMES = frozenset(
    {*(name for name in RELEASES if name.startswith("pytorch_lightning")), "lightning-2.6", "strategies"}
)
STRATEGIES = "strategies"
TRAINERS = {
    "pytorch_lightning": "pytorch_lightning.trainer.trainer.Trainer",
    "lightning.pytorch": "lightning.pytorch.trainer.trainer.Trainer",
    "strategies": "strategies.trainer.Trainer",
}


def cache_dir() -> Path:
    """Where wheels are cached (never inside the repository)."""
    return Path(os.environ.get("STRATEGY_COMPAT_CACHE", Path.home() / ".cache" / "strategy-compat")) / "wheels"


def fetch_wheel(requirement: str) -> Path:
    """The cached wheel for ``requirement``, downloaded with ``pip download --no-deps`` if absent.

    Raises:
        RuntimeError: pip could not fetch it (offline); the message has pip's last lines.
    """
    directory = cache_dir()
    directory.mkdir(parents=True, exist_ok=True)
    name, _, version = requirement.partition("==")
    stem = name.replace("-", "_")
    prefix = version.rstrip("*")

    def cached() -> Path | None:  # a project's wheel may be named in another case (Gammalearn-0.7a2-...)
        found = sorted(p for p in directory.glob("*.whl") if p.name.lower().startswith(f"{stem}-{prefix}".lower()))
        return found[-1] if found else None

    return pip_download(requirement, "--only-binary=:all:", cached, "offline?")


def pip_download(requirement: str, binary: str, cached: Callable[[], Path | None], failure: str) -> Path:
    """``cached()``, after ``pip download --no-deps BINARY`` into the cache when it is ``None``.

    Args:
        binary: pip's option choosing the archive kind (``--only-binary=:all:``, ``--no-binary=NAME``).
        cached: finds the archive in the cache (``None`` when absent).
        failure: the likely cause, for the error (``offline?``).

    Raises:
        RuntimeError: pip could not fetch it; the message has pip's last lines.
    """
    if (found := cached()) is not None:
        return found
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            binary,
            "--ignore-requires-python",  # only its files are read: an old release may cap Python below ours
            "-q",
            "-d",
            str(cache_dir()),
            requirement,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0 or (found := cached()) is None:
        tail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[-3:])
        raise RuntimeError(f"could not download `{requirement}` ({failure}): {tail}")
    return found


# ---------------------------------------------------------------------------------------------
# Reading sources


@dataclass
class _Module:
    name: str
    is_package: bool
    tree: ast.Module
    imports: dict[str, str] = field(default_factory=dict)  # local name -> qualified target
    classes: dict[str, ast.ClassDef] = field(default_factory=dict)
    #: module-level functions and assigned names -> the assigned expression (``None`` for a def)
    values: dict[str, ast.expr | None] = field(default_factory=dict)
    exported: frozenset[str] | None = None  # ``__all__``, when it is a literal


def _wheel_sources(wheel: Path, packages: tuple[str, ...]) -> dict[str, tuple[bool, str]]:
    roots = tuple(p.replace(".", "/") + "/" for p in packages)
    sources: dict[str, tuple[bool, str]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for path in archive.namelist():
            if path.endswith(".py") and path.startswith(roots):
                sources[path] = (path.endswith("/__init__.py"), archive.read(path).decode("utf-8"))
    return sources


def _tree_sources(root: Path, package: str) -> dict[str, tuple[bool, str]]:
    base = root / package
    return {
        str(path.relative_to(root)).replace(os.sep, "/"): (path.name == "__init__.py", path.read_text("utf-8"))
        for path in sorted(base.rglob("*.py"))
    }


def _parse(sources: dict[str, tuple[bool, str]]) -> dict[str, _Module]:
    modules: dict[str, _Module] = {}
    for path, (is_package, text) in sorted(sources.items()):
        parts = path[: -len(".py")].split("/")
        if is_package:
            parts = parts[:-1]
        name = ".".join(parts)
        with warnings.catch_warnings():  # old sources have invalid escape sequences
            warnings.simplefilter("ignore")
            tree = ast.parse(text, filename=path)
        module = _Module(name, is_package, tree)
        package = name if is_package else name.rpartition(".")[0]
        for node in _toplevel(module.tree.body):
            if isinstance(node, ast.ClassDef):
                module.classes[node.name] = node
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                module.values[node.name] = None
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                _assigned(module, node)
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        module.imports[alias.asname] = alias.name
                    else:
                        head = alias.name.split(".")[0]
                        module.imports[head] = head
            elif isinstance(node, ast.ImportFrom):
                source = node.module or ""
                if node.level:
                    anchor = package.split(".")
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    source = ".".join([*anchor, *([source] if source else [])])
                for alias in node.names:
                    if alias.name != "*":
                        module.imports[alias.asname or alias.name] = f"{source}.{alias.name}"
        modules[name] = module
    return modules


def _assigned(module: _Module, node: ast.Assign | ast.AnnAssign) -> None:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    for target in targets:
        if isinstance(target, ast.Name):
            if target.id == "__all__":
                try:
                    module.exported = frozenset(ast.literal_eval(node.value)) if node.value else None
                except ValueError:
                    module.exported = None
                continue
            module.values[target.id] = node.value
        elif isinstance(target, ast.Tuple):
            for element in target.elts:
                if isinstance(element, ast.Name):
                    module.values[element.id] = None


def _toplevel(body: list[ast.stmt]):
    """Module-level statements, looking into ``if``/``try`` blocks (guarded imports)."""
    for node in body:
        if isinstance(node, ast.If):
            yield from _toplevel(node.body)
            yield from _toplevel(node.orelse)
        elif isinstance(node, ast.Try):
            yield from _toplevel(node.body)
            for handler in node.handlers:
                yield from _toplevel(handler.body)
            yield from _toplevel(node.orelse)
        else:
            yield node


class _Resolver:
    def __init__(self, modules: dict[str, _Module]) -> None:
        self.modules = modules

    def canonical(self, path: str, depth: int = 0) -> str:
        """The defining path of ``path`` (follows re-exports); unknown paths come back unchanged."""
        if depth > 20:
            return path
        parts = path.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            module = self.modules.get(".".join(parts[:cut]))
            if module is None:
                continue
            head, rest = parts[cut], parts[cut + 1 :]
            if head in module.classes:
                return ".".join([module.name, head, *rest])
            if head in module.imports:
                return self.canonical(".".join([module.imports[head], *rest]), depth + 1)
            return path
        return path

    def definition(self, path: str, depth: int = 0) -> str | None:
        """The path defining the class, function or value ``path`` names, following imports and
        aliases (``name = module.other``); ``None`` for a module or a name from another package."""
        module_name, _, head = path.rpartition(".")
        module = self.modules.get(module_name)
        if module is None or depth > 20:
            return None
        if head in module.classes:
            return path
        if head in module.values:
            value = module.values[head]
            if isinstance(value, (ast.Name, ast.Attribute)):
                dotted = ast.unparse(value)
                first, _, rest = dotted.partition(".")
                if first in module.imports:
                    target = module.imports[first] + (f".{rest}" if rest else "")
                    return self.definition(target, depth + 1) or path
            return path
        if head in module.imports:
            return self.definition(module.imports[head], depth + 1)
        return None

    def expression(self, module: _Module, node: ast.expr) -> str:
        """The qualified path a base-class expression names, as seen from ``module``."""
        if isinstance(node, ast.Subscript):  # Generic[T], ABC-style subscripted bases
            node = node.value
        dotted = ast.unparse(node)
        head, _, rest = dotted.partition(".")
        if head in module.classes:
            return self.canonical(f"{module.name}.{dotted}")
        if head in module.imports:
            return self.canonical(module.imports[head] + (f".{rest}" if rest else ""))
        if head in {
            "object",
            "Exception",
            "RuntimeError",
            "ValueError",
            "dict",
            "list",
            "tuple",
            "str",
            "int",
            "Enum",
            "type",
        }:
            return dotted if head != "Enum" else "enum.Enum"
        return dotted


def _signature(args: ast.arguments) -> str:
    """``(self, a, b=1, *args, c, **kw)``: the parameter list without annotations."""
    stripped = ast.arguments(
        posonlyargs=[ast.arg(a.arg) for a in args.posonlyargs],
        args=[ast.arg(a.arg) for a in args.args],
        vararg=ast.arg(args.vararg.arg) if args.vararg else None,
        kwonlyargs=[ast.arg(a.arg) for a in args.kwonlyargs],
        kw_defaults=args.kw_defaults,
        kwarg=ast.arg(args.kwarg.arg) if args.kwarg else None,
        defaults=args.defaults,
    )
    return f"({ast.unparse(stripped)})"


def _is_property(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    for decorator in node.decorator_list:
        text = ast.unparse(decorator)
        if text in {"property", "cached_property", "functools.cached_property"} or text.endswith(
            (".setter", ".getter", ".deleter")
        ):
            return True
    return False


def _referenced(modules: dict[str, _Module]) -> set[str]:
    """Every name a package's code uses: attributes, names, and identifier-like strings."""
    names: set[str] = set()
    for module in modules.values():
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
                names.add(node.value)
    return names


def _trainer_attributes(modules: dict[str, _Module]) -> set[str]:
    """Attributes assigned as ``trainer.x = ...`` / ``self.trainer.x = ...`` anywhere."""
    found: set[str] = set()
    for module in modules.values():
        for node in ast.walk(module.tree):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else ([node.target] if isinstance(node, (ast.AnnAssign, ast.AugAssign)) else [])
            )
            for target in targets:
                if isinstance(target, ast.Attribute):
                    owner = target.value
                    if (isinstance(owner, ast.Name) and owner.id == "trainer") or (
                        isinstance(owner, ast.Attribute) and owner.attr in {"trainer", "_trainer"}
                    ):
                        found.add(target.attr)
    return found


def _class_entry(resolver: _Resolver, module: _Module, node: ast.ClassDef, referenced: set[str]) -> dict:
    methods: dict[str, str] = {}
    properties: set[str] = set()
    attributes: set[str] = set()
    abstract: set[str] = set()
    constants: dict[str, str] = {}  # class-level NAME = literal (an enum's members and their values)
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if any(
                ast.unparse(d).rpartition(".")[2] in {"abstractmethod", "abstractproperty"} for d in item.decorator_list
            ):
                abstract.add(item.name)
            if _is_property(item):
                properties.add(item.name)
            else:
                methods[item.name] = _signature(item.args)
            for sub in ast.walk(item):
                targets = (
                    sub.targets
                    if isinstance(sub, ast.Assign)
                    else ([sub.target] if isinstance(sub, (ast.AnnAssign, ast.AugAssign)) else [])
                )
                for target in targets:
                    for element in target.elts if isinstance(target, ast.Tuple) else [target]:
                        if (
                            isinstance(element, ast.Attribute)
                            and isinstance(element.value, ast.Name)
                            and element.value.id == "self"
                        ):
                            attributes.add(element.attr)
        elif isinstance(item, ast.Assign):
            for target in item.targets:
                if isinstance(target, ast.Name):
                    attributes.add(target.id)
                    if isinstance(item.value, ast.Constant) and not isinstance(item.value.value, bytes):
                        constants[target.id] = repr(item.value.value)
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            attributes.add(item.target.id)
    attributes -= properties | set(methods)
    uncalled = sorted(
        name
        for name in (*methods, *properties)
        if name not in referenced and not (name.startswith("__") and name.endswith("__"))
    )
    entry: dict = {"bases": [resolver.expression(module, base) for base in node.bases]}
    if abstract:
        entry["abstract"] = sorted(abstract)
    if methods:
        entry["methods"] = dict(sorted(methods.items()))
    if properties:
        entry["properties"] = sorted(properties)
    if attributes:
        entry["attributes"] = sorted(attributes)
    if uncalled:
        entry["uncalled"] = uncalled
    if constants and any(base.rpartition(".")[2].endswith("Enum") for base in entry["bases"]):
        # A member's value, so that a default spelled ``Interval.step`` compares equal to ``'step'``.
        entry["values"] = dict(sorted(constants.items()))
    return entry


def _init_annotations(modules: dict[str, _Module], path: str) -> dict[str, str]:
    """``{parameter: annotation source}`` of the ``__init__`` of the class at ``path``."""
    module_name, _, name = path.rpartition(".")
    node = modules[module_name].classes.get(name) if module_name in modules else None
    init = next(
        (i for i in (node.body if node else []) if isinstance(i, ast.FunctionDef) and i.name == "__init__"), None
    )
    if init is None:
        return {}
    params = [*init.args.posonlyargs, *init.args.args, *init.args.kwonlyargs]
    return {p.arg: ast.unparse(p.annotation) for p in params if p.annotation is not None}


def _catalog(
    modules: dict[str, _Module], exported: dict[str, str] | None = None, primary: tuple[str, ...] = ()
) -> dict:
    """``primary``: the packages whose code says which methods are called (default: all of them;
    an extra wheel's code, such as ``lightning_utilities``, does not call Lightning's hooks)."""
    resolver = _Resolver(modules)
    referenced = _referenced(
        {k: m for k, m in modules.items() if not primary or any(k == p or k.startswith(p + ".") for p in primary)}
    )
    classes: dict[str, dict] = {}
    for module in modules.values():
        for name, node in module.classes.items():
            classes[f"{module.name}.{name}"] = _class_entry(resolver, module, node, referenced)
    for trainer in TRAINERS.values():
        if trainer in classes:
            extra = _trainer_attributes(modules) - set(classes[trainer].get("methods", ()))
            extra -= set(classes[trainer].get("properties", ()))
            classes[trainer]["attributes"] = sorted(set(classes[trainer].get("attributes", ())) | extra)
            annotations = _init_annotations(modules, trainer)
            if annotations and trainer.startswith("pytorch_lightning."):
                # 1.x's `Trainer.add_argparse_args` typed its command line from these (compat does too).
                classes[trainer]["init_annotations"] = annotations
    if exported is None:  # re-exports of classes by package ``__init__`` modules
        exported = {}
        for module in modules.values():
            if module.is_package:
                for local, target in module.imports.items():
                    qualified = resolver.canonical(target)
                    if qualified in classes and not local.startswith("_"):
                        exported[f"{module.name}.{local}"] = qualified
    exports = {path: target for path, target in exported.items() if path != target}
    return {
        "modules": sorted(modules),
        "exports": dict(sorted(exports.items())),
        "classes": dict(sorted(classes.items())),
    }


def _names(modules: dict[str, _Module]) -> dict[str, str]:
    """Module-level functions and values, and names re-exported where a user would import them.

    ``path -> defining path`` for every definition (but classes, listed as classes) and for every
    *public home* of a name defined elsewhere in these packages: a package ``__init__`` or a
    module whose ``__all__`` lists it, with no ``_``-prefixed part in the path.
    """
    resolver = _Resolver(modules)
    found: dict[str, str] = {}
    for module in modules.values():
        for local in sorted({*module.values, *module.imports} - set(module.classes)):
            path = f"{module.name}.{local}"
            definition = resolver.definition(path)
            if path in modules or definition is None or definition in modules:
                continue
            public = not any(part.startswith("_") for part in path.split(".")) and (
                module.is_package or local in (module.exported or ())
            )
            if definition == path or public:
                found[path] = definition
    return dict(sorted(found.items()))


def _strategy_names(modules: dict[str, _Module], prefix: str) -> list[str]:
    """Names the strategies under ``prefix`` register (``registry.register("ddp", ...)``).

    Looks into ``register_strategies``: constant names, and names taken from a loop over a
    literal tuple (``for name, start_method in entries: registry.register(name, ...)``).
    """
    names: set[str] = set()
    for module in modules.values():
        if not module.name.startswith(prefix):
            continue
        for cls in module.classes.values():
            env: dict[str, object] = {}
            for item in cls.body:
                if (
                    isinstance(item, ast.Assign)
                    and isinstance(item.targets[0], ast.Name)
                    and item.targets[0].id == "strategy_name"
                    and isinstance(item.value, ast.Constant)
                ):
                    env["cls.strategy_name"] = item.value.value
            for item in cls.body:
                if isinstance(item, ast.FunctionDef) and item.name == "register_strategies":
                    names.update(_registered(item.body, {}, env))
    return sorted(names)


def _registered(body: list[ast.stmt], literals: dict[str, ast.expr], env: dict[str, object]) -> set[str]:
    found: set[str] = set()
    for node in body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            literals[node.targets[0].id] = node.value
        if isinstance(node, ast.For):
            iterable = literals.get(node.iter.id) if isinstance(node.iter, ast.Name) else node.iter
            try:
                items = ast.literal_eval(iterable) if iterable is not None else ()
            except ValueError:
                items = ()
            for item in items:
                names = [
                    t.id
                    for t in (node.target.elts if isinstance(node.target, ast.Tuple) else [node.target])
                    if isinstance(t, ast.Name)
                ]
                values = item if isinstance(node.target, ast.Tuple) else (item,)
                found |= _registered(node.body, literals, {**env, **dict(zip(names, values, strict=False))})
            continue
        for sub in ast.walk(node):
            if (
                isinstance(sub, ast.Call)
                and isinstance(sub.func, ast.Attribute)
                and sub.func.attr == "register"
                and sub.args
            ):
                value = _string(sub.args[0], env)
                if value is not None:
                    found.add(value)
    return found


def _string(node: ast.expr, env: dict[str, object]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    key = ast.unparse(node)
    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(env.get(key), str):
        return str(env[key])
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                if not isinstance(value.value, ast.Name) or value.value.id not in env:
                    return None
                parts.append(str(env[value.value.id]))
            else:
                parts.append(str(value.value))  # type: ignore[attr-defined]
        return "".join(parts)
    return None


def build_release(name: str) -> dict:
    """The catalog of one release (``pytorch_lightning-1.2``, ``lightning-2.6``) from its wheel
    (and the ``EXTRA_WHEELS`` read with it)."""
    requirement, packages = RELEASES[name]
    wheel = fetch_wheel(requirement)
    sources = _wheel_sources(wheel, packages)
    extra_packages: list[str] = []
    for extra_requirement, extra in EXTRA_WHEELS.get(name, ()):
        sources.update(_wheel_sources(fetch_wheel(extra_requirement), extra))
        extra_packages += extra
    modules = _parse(sources)
    data = {
        "distribution": wheel.name.split("-")[0],
        "version": wheel.name.split("-")[1],
        "packages": [*packages, *extra_packages],
        "trainer": TRAINERS[packages[0]],
        **_catalog(modules, primary=packages),
    }
    if name.startswith("lightning"):
        data["strategy_names"] = _strategy_names(modules, packages[0])
    if name in WITH_NAMES:
        data["names"] = _names(modules)
    return data


def build_strategies() -> dict:
    """The catalog of this checkout's ``strategies`` (public names by import, the rest by ast)."""
    import importlib
    import pkgutil

    sys.path.insert(0, str(REPO_ROOT))
    package = importlib.import_module(STRATEGIES)
    modules = _parse(_tree_sources(REPO_ROOT, STRATEGIES))
    resolver = _Resolver(modules)
    exported: dict[str, str] = {}
    for info in [None, *pkgutil.walk_packages(package.__path__, prefix=f"{STRATEGIES}.")]:
        name = STRATEGIES if info is None else info.name
        if info is not None and not info.ispkg:
            continue
        module = importlib.import_module(name)
        for public in getattr(module, "__all__", ()):
            value = getattr(module, public)
            if isinstance(value, type):
                exported[f"{name}.{public}"] = resolver.canonical(f"{value.__module__}.{value.__qualname__}")
    data = {
        "distribution": STRATEGIES,
        "version": "checkout",
        "packages": [STRATEGIES],
        "trainer": TRAINERS[STRATEGIES],
        **_catalog(modules, exported),
    }
    data["strategy_names"] = list(package.STRATEGY_REGISTRY.names())
    data["names"] = _names(modules)
    return data


def render(data: dict) -> str:
    """Deterministic JSON: sorted keys, one class per line."""
    lines = ["{"]
    items = sorted(data.items())
    for index, (key, value) in enumerate(items):
        comma = "," if index < len(items) - 1 else ""
        if isinstance(value, dict) and value:
            lines.append(f"{json.dumps(key)}: {{")
            inner = sorted(value.items())
            for j, (k, v) in enumerate(inner):
                lines.append(
                    f"{json.dumps(k)}: {json.dumps(v, sort_keys=True, separators=(',', ':'))}"
                    + ("," if j < len(inner) - 1 else "")
                )
            lines.append("}" + comma)
        else:
            lines.append(f"{json.dumps(key)}: {json.dumps(value, separators=(',', ':'))}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def build(name: str) -> dict:
    """The catalog called ``name`` (a key of ``RELEASES``, or ``"strategies"``)."""
    return build_strategies() if name == STRATEGIES else build_release(name)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python tools/build_catalog.py", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--only",
        choices=[*RELEASES, STRATEGIES],
        action="append",
        help="rebuild only this catalog (repeatable); default: all",
    )
    parser.add_argument("--check", action="store_true", help="exit 1 if a committed catalog differs, write nothing")
    args = parser.parse_args(argv)
    stale = []
    for name in args.only or [*RELEASES, STRATEGIES]:
        path = CATALOG_DIR / f"{name}.json"
        text = render(build(name))
        if args.check:
            if not path.exists() or path.read_text("utf-8") != text:
                stale.append(path.name)
        else:
            path.write_text(text, "utf-8")
            print(f"wrote {path.relative_to(REPO_ROOT)} ({len(text) // 1024} KiB)")
    if stale:
        print(f"stale catalogs: {', '.join(stale)}; run `python tools/build_catalog.py`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
