"""CM010: rewrite old dotted paths written in strings (hydra ``_target_``, registries)."""

from __future__ import annotations

import re

import libcst as cst

from ._context import Context
from ._rule import Rule, RuleCommand

__all__ = ["RewriteDottedPathsCommand"]


class RewriteDottedPathsCommand(RuleCommand):
    """Rewrite strings that are exactly an old dotted path; mark strings that mention one.

    Configuration written in Python (hydra ``_target_``, ``importlib.import_module``, plugin
    registries) names classes by their dotted path, where no import resolves them. A string that
    is exactly an old class, function or module path the table renames becomes the new path;
    a string that only contains one (``"pytorch_lightning.plugins.DDPPlugin(...)"``, a format
    string) or names something without an automatic replacement gets a TODO.

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
                ctx.edits.replace(
                    string, lambda n, t=text: n.with_changes(value=t), self.RULE, f"{value} -> {new}", entry=entry
                )
                continue
            found = _PATH.search(value)
            path = found.group(0) if found else value
            if entry is None:
                hint = f"the string names `{path}` of the old API: write its new dotted path (docs/migration.md)"
            else:
                hint = f"the string names `{path}`, which has no automatic replacement: {entry.hint or 'see docs/migration.md'}"
            ctx.edits.todo(string, self.RULE, hint, entry)


_PATH = re.compile(r"[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+")
