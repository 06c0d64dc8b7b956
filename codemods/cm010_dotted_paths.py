"""CM010: rewrite old dotted paths written in strings (hydra ``_target_``, registries)."""

from __future__ import annotations

import re

import libcst as cst

from compat.renames import Rename

from ._context import Context
from ._edits import set_value
from ._facts import new_signature, trainer
from ._ids import Rule
from ._rule import RuleCommand
from ._scopes import ClassInfo

__all__ = ["RewriteDottedPathsCommand"]


class RewriteDottedPathsCommand(RuleCommand):
    """Rewrite strings that are exactly an old dotted path; mark strings that mention one.

    Configuration written in Python (hydra ``_target_``, ``importlib.import_module``, plugin
    registries) names classes by their dotted path, where no import resolves them. A string that
    is exactly an old class, function or module path the table renames becomes the new path;
    a string that only contains one (``"pytorch_lightning.plugins.DDPPlugin(...)"``, a format
    string) or names something without an automatic replacement gets a TODO, and so does a
    string that is exactly an old package's name (``is_installed("pytorch_lightning")``): the
    migrated imports name another package, so such a guard no longer says whether the code runs.

    Configuration classes (``@dataclass``/attrs classes, pydantic models, classes named
    ``*Config``/``*Args``/``*Params``...) often carry the Trainer's arguments as fields: a field
    named like an old ``Trainer`` argument the target Trainer does not take (``gpus``,
    ``distributed_backend``, ``num_processes``), and a field ``accelerator`` or
    ``distributed_backend`` whose default is an old value (``"ddp"``), get a TODO saying what to
    pass instead where the field reaches ``Trainer(...)``.

    Before::

        config = {
            "_target_": "pytorch_lightning.plugins.DDPPlugin",
            "find_unused_parameters": False,
        }
        legacy = "pytorch_lightning.plugins.RPCPlugin"

    After::

        config = {
            "_target_": "strategies.DDPStrategy",
            "find_unused_parameters": False,
        }
        # TODO(compat.migrate): CM010 the string names `pytorch_lightning.plugins.RPCPlugin`, which has ...
        legacy = "pytorch_lightning.plugins.RPCPlugin"
    """

    RULE = Rule.CM010

    def run(self, ctx: Context) -> None:
        table = ctx.table
        mentions = re.compile(r"\b(?:{})\.".format("|".join(map(re.escape, table.roots))))
        for string in ctx.analysis.dotted_strings:
            value = string.evaluated_value
            if not isinstance(value, str) or not mentions.search(value):
                continue
            if isinstance(ctx.analysis.parent(string), cst.Expr):
                continue  # a docstring or a bare string: prose, not a path the program uses
            entry = table.object(value) or table.module(value)
            new = table.new(entry) if entry is not None and table.auto(entry) else None
            if new:
                text = f"{string.prefix}{string.quote}{new}{string.quote}"
                ctx.edits.replace(string, set_value(text), self.RULE, f"{value} -> {new}", entry=entry)
                continue
            found = _PATH.search(value)
            path = found.group(0) if found else value
            if entry is None:
                hint = f"the string names `{path}` of the old API: write its new dotted path (docs/migration.md)"
            else:
                hint = (
                    f"the string names `{path}`, which has no automatic replacement: "
                    f"{entry.hint or 'see docs/migration.md'}"
                )
            ctx.edits.todo(string, self.RULE, hint, entry)
        self._package_names(ctx)
        for info in ctx.analysis.classes:
            if _is_config(info):
                self._fields(ctx, info)

    def _package_names(self, ctx: Context) -> None:
        """TODOs on strings that are exactly an old package's name (``is_installed("...")``,
        ``importlib.util.find_spec``, a version lookup): the migrated imports name another
        package, so such a check no longer says whether the code can run."""
        if not ctx.uses_old_api:
            return
        new_root = trainer(self.target).partition(".")[0]
        for string in ctx.analysis.name_strings:
            value = string.evaluated_value
            if value not in ctx.table.roots or isinstance(ctx.analysis.parent(string), cst.Expr):
                continue
            hint = (
                f"the string names the old package `{value}`, which the migrated code no longer imports: "
                f"if this looks the package up (an installed check, `importlib`, a version), name `{new_root}` "
                "or drop the check"
            )
            ctx.edits.todo(string, self.RULE, hint)

    def _fields(self, ctx: Context, info: ClassInfo) -> None:
        """TODOs on the fields of a configuration class that hold old Trainer arguments."""
        table = ctx.table
        signature = new_signature(trainer(self.target))
        taken = signature.params if signature is not None else frozenset()
        for line in info.node.body.body:
            if not isinstance(line, cst.SimpleStatementLine) or len(line.body) != 1:
                continue
            statement = line.body[0]
            if isinstance(statement, cst.AnnAssign):
                target, value = statement.target, statement.value
            elif isinstance(statement, cst.Assign) and len(statement.targets) == 1:
                target, value = statement.targets[0].target, statement.value
            else:
                continue
            if not isinstance(target, cst.Name):
                continue
            name = target.value
            entries = [e for e in table.arguments.get(name, ()) if e.old == _TRAINER]
            if entries and name not in taken:
                entry = entries[0]
                hint = f"the field `{name}` holds the old `Trainer` argument `{name}=`: {_instead(ctx, entry)}"
                ctx.edits.todo(target, self.RULE, hint, entry)
                continue
            if isinstance(value, cst.SimpleString) and isinstance(value.evaluated_value, str):
                found = table.values.get((name, value.evaluated_value))
                if found:
                    old = f"Trainer({name}={value.evaluated_value!r})"
                    hint = f"the field `{name}` defaults to the old `{old}`: {_instead(ctx, found[0])}"
                    ctx.edits.todo(target, self.RULE, hint, found[0])


def _instead(ctx: Context, entry: Rename) -> str:
    """What to pass where a field holding ``entry``'s old argument reaches ``Trainer(...)``."""
    table = ctx.table
    new = table.new(entry)
    # The table's hints are written for call sites, where literal values are rewritten.
    note = re.sub(r"\s*\([^)]*rewritten automatically\)", "", entry.hint)
    if new and table.auto(entry):
        text = f"pass `{new}`" + (f" ({note})" if note else "")
    else:
        text = note or "see docs/migration.md"
    return f"where it reaches `Trainer(...)`, {text}"


_TRAINER = "pytorch_lightning.Trainer"
#: Decorators (last dotted part) and base classes (last part) that make a configuration class.
_CONFIG_DECORATORS = frozenset({"dataclass", "define", "frozen", "mutable", "attrs", "s"})
_CONFIG_BASES = frozenset({"BaseModel", "BaseSettings", "Namespace", "NamedTuple", "TypedDict"})
_CONFIG_SUFFIXES = ("Config", "Conf", "Cfg", "Args", "Arguments", "Params", "Settings", "Options", "Hparams")


def _last(expr: cst.BaseExpression) -> str | None:
    if isinstance(expr, cst.Call):
        expr = expr.func
    if isinstance(expr, cst.Attribute):
        return expr.attr.value
    return expr.value if isinstance(expr, cst.Name) else None


def _is_config(info: ClassInfo) -> bool:
    """Whether a class reads as a configuration record (see ``RewriteDottedPathsCommand``)."""
    node = info.node
    return (
        any(_last(d.decorator) in _CONFIG_DECORATORS for d in node.decorators)
        or any(_last(b.value) in _CONFIG_BASES for b in node.bases)
        or node.name.value.endswith(_CONFIG_SUFFIXES)
    )


_PATH = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+")
