"""Rewrite a Lightning 2.x program's imports to ``strategies``, and nothing else.

The side-by-side test of real Lightning programs (test_lightning_programs.py) runs each program
twice: as written, on ``lightning==2.6.*``, and after this rewrite, on ``strategies``. "Only the
imports changed" means:

- every ``import``/``from ... import`` of ``lightning``, ``lightning.pytorch``,
  ``lightning.fabric`` or ``pytorch_lightning`` is written against ``strategies``;
- a name the rename table (``compat.renames``) gives another name in ``strategies``
  (``LightningModule`` -> ``TrainModule``) is imported under the program's own name
  (``from strategies import TrainModule as LightningModule``), so the program's body is
  unchanged;
- a module alias (``import lightning as L``, ``import lightning.pytorch as pl``) binds
  ``strategies`` instead, and the attribute chains read through it are mapped the same way
  (``L.LightningModule`` -> ``L.TrainModule``, ``L.pytorch.callbacks`` -> ``L.callbacks``): these
  are the only edits outside import statements.

A name is looked up in this order: the rename table; the same path with the prefix swapped
(``lightning.pytorch.callbacks.ModelCheckpoint`` -> ``strategies.callbacks.ModelCheckpoint``);
a shallower ``strategies`` module that has the name (``strategies.utilities.seed.x`` ->
``strategies.utilities.x`` -> ``strategies.x``). A name found nowhere is still written against
``strategies`` with the prefix swapped, so the program fails at import naming what is missing,
rather than running on Lightning in silence. ``lightning.pytorch.demos`` (Lightning's example
models and datasets, not part of the API under test) is left as it is.

Run as a script: ``python tests/strategies/_to_strategies.py program.py out.py``.
"""

from __future__ import annotations

import importlib
import sys
from functools import cache
from pathlib import Path

import libcst as cst

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from compat.renames import RENAMES, Kind  # noqa: E402

PREFIXES = ("lightning.pytorch", "lightning.fabric", "pytorch_lightning", "lightning")
KEEP = ("lightning.pytorch.demos",)


def _tail(path: str) -> str:
    """The part of a Lightning path after its package (``""`` for the package itself)."""
    for prefix in PREFIXES:
        if path == prefix:
            return ""
        if path.startswith(prefix + "."):
            return path[len(prefix) + 1 :]
    raise ValueError(f"not a Lightning path: {path}")


def is_lightning(path: str) -> bool:
    return any(path == p or path.startswith(p + ".") for p in PREFIXES) and not any(
        path == k or path.startswith(k + ".") for k in KEEP
    )


def _canonical(path: str) -> str:
    """``lightning.X``, ``pytorch_lightning.X`` -> ``lightning.pytorch.X`` (the 2.x spelling)."""
    tail = _tail(path)
    if path.startswith("lightning.fabric"):
        return path
    if path.startswith("lightning.") and not path.startswith("lightning.pytorch") and tail.startswith("pytorch"):
        return path
    return "lightning.pytorch" + (f".{tail}" if tail else "")


@cache
def _rename_table() -> dict[str, str]:
    """Lightning 2.x path -> strategies path, from the rename table's object entries."""
    options: dict[str, set[str]] = {}
    for entry in RENAMES:
        if entry.kind in (Kind.CLASS, Kind.FUNCTION) and entry.lightning and entry.strategies:
            options.setdefault(entry.lightning, set()).add(entry.strategies)
    table = {}
    for source, targets in options.items():
        same = sorted(t for t in targets if t.rsplit(".", 1)[-1] == source.rsplit(".", 1)[-1])
        if same:
            table[source] = same[0]
        elif len(targets) == 1:
            table[source] = next(iter(targets))
    return table


@cache
def _by_name() -> dict[str, str]:
    """Bare Lightning name -> strategies path, where the rename table gives it one home."""
    homes: dict[str, set[str]] = {}
    for source, target in _rename_table().items():
        homes.setdefault(source.rsplit(".", 1)[-1], set()).add(target)
    return {name: next(iter(t)) for name, t in homes.items() if len(t) == 1}


@cache
def _exists(path: str) -> bool:
    """Whether ``path`` is a strategies module, or a name in one."""
    try:
        importlib.import_module(path)
        return True
    except ImportError:
        pass
    module, _, name = path.rpartition(".")
    if not module:
        return False
    try:
        return hasattr(importlib.import_module(module), name)
    except ImportError:
        return False


@cache
def resolve(path: str) -> str:
    """The strategies path for a Lightning 2.x path (see the module docstring for the order)."""
    canonical = _canonical(path)
    table = _rename_table()
    if canonical in table:
        return table[canonical]
    tail = _tail(canonical)
    name = tail.rsplit(".", 1)[-1] if tail else ""
    if name in _by_name() and not _exists("strategies." + tail):
        return _by_name()[name]
    direct = "strategies" + (f".{tail}" if tail else "")
    if not tail or _exists(direct):
        return direct
    parts = tail.split(".")
    for depth in range(len(parts) - 2, -1, -1):
        candidate = ".".join(["strategies", *parts[:depth], parts[-1]])
        if _exists(candidate):
            return candidate
    return direct


def _dotted(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr.value}"
    return None


def _expr(dotted: str) -> cst.BaseExpression:
    return cst.parse_expression(dotted)


class _Rewriter(cst.CSTTransformer):
    def __init__(self) -> None:
        self.aliases: dict[str, str] = {}  # local name -> the Lightning module it bound
        self.changes = 0

    # -- imports --------------------------------------------------------------------------------
    def leave_Import(self, original: cst.Import, updated: cst.Import) -> cst.Import:
        names = []
        for alias in updated.names:
            dotted = _dotted(alias.name)
            if dotted is None or not is_lightning(dotted):
                names.append(alias)
                continue
            target = resolve(dotted)
            local = alias.asname.name.value if alias.asname else dotted.split(".")[0]
            self.aliases[local] = dotted if alias.asname else dotted.split(".")[0]
            if alias.asname is None and "." not in dotted:
                # `import lightning` -> `import strategies as lightning` (the body is unchanged)
                target = "strategies"
            asname = cst.AsName(name=cst.Name(local))
            names.append(alias.with_changes(name=_expr(target), asname=asname))
            self.changes += 1
        return updated.with_changes(names=names)

    def leave_SimpleStatementLine(
        self, original: cst.SimpleStatementLine, updated: cst.SimpleStatementLine
    ) -> cst.SimpleStatementLine | cst.FlattenSentinel:
        if len(updated.body) != 1 or not isinstance(updated.body[0], cst.ImportFrom):
            return updated
        node = updated.body[0]
        module = _dotted(node.module) if node.module is not None and not node.relative else None
        if module is None or not is_lightning(module):
            return updated
        self.changes += 1
        if isinstance(node.names, cst.ImportStar):
            return updated.with_changes(body=[node.with_changes(module=_expr(resolve(module)))])
        groups: dict[str, list[cst.ImportAlias]] = {}
        for alias in node.names:
            name = alias.name.value
            local = alias.asname.name.value if alias.asname else name
            target = resolve(f"{module}.{name}")
            home, _, new_name = target.rpartition(".")
            if not home:  # the package itself: `from lightning import pytorch as pl`
                self.aliases[local] = f"{module}.{name}"
                groups.setdefault("", []).append(
                    cst.ImportAlias(name=cst.Name("strategies"), asname=cst.AsName(cst.Name(local)))
                )
                continue
            asname = None if new_name == local else cst.AsName(name=cst.Name(local))
            groups.setdefault(home, []).append(cst.ImportAlias(name=cst.Name(new_name), asname=asname))
        lines = []
        for home, aliases in groups.items():
            aliases = [a.with_changes(comma=cst.MaybeSentinel.DEFAULT) for a in aliases]
            if home == "":
                statement: cst.BaseSmallStatement = cst.Import(names=aliases)
            else:
                statement = cst.ImportFrom(module=_expr(home), names=aliases)
            lines.append(updated.with_changes(body=[statement]))
        if len(lines) == 1:
            return lines[0]
        return cst.FlattenSentinel([lines[0], *(line.with_changes(leading_lines=()) for line in lines[1:])])

    # -- attribute chains through a module alias ------------------------------------------------
    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        dotted = _dotted(original)
        if dotted is None:
            return updated
        head, _, rest = dotted.partition(".")
        if head not in self.aliases or not rest:
            return updated
        bound = self.aliases[head]
        full = f"{bound}.{rest}"
        if not is_lightning(full):
            return updated
        target = resolve(full)
        base = resolve(bound)
        if not target.startswith(base + "."):
            return updated  # not expressible through the alias; left for the import to fail
        new = head + target[len(base) :]
        if new == dotted:
            return updated
        self.changes += 1
        return _expr(new)


def rewrite(source: str) -> str:
    """``source`` with its Lightning imports written against ``strategies``."""
    return cst.parse_module(source).visit(_Rewriter()).code


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: _to_strategies.py PROGRAM OUT", file=sys.stderr)
        return 2
    Path(args[1]).write_text(rewrite(Path(args[0]).read_text()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
