"""The rule ids and the TODO comment they sign: the package's leaf (it imports nothing from it).

Every other module may import this one; it imports none of them, so ids and the TODO text can
be used anywhere (edits, layout helpers, the Lightning pass, the CLI) without an import cycle.
"""

from __future__ import annotations

import enum

__all__ = ["CONFIG_MARKER", "TODO_PREFIX", "Rule"]

#: Every TODO left by ``python -m compat.migrate`` starts with this (greppable) prefix.
TODO_PREFIX = "# TODO(compat.migrate): "


class Rule(enum.StrEnum):
    """The stable rule ids: ``--select/--ignore``, reports, TODO comments and fixture folders.

    A rule's summary is the first line of its class docstring (``RULES[rule].DESCRIPTION``).
    """

    CM001 = "CM001"
    CM002 = "CM002"
    CM003 = "CM003"
    CM004 = "CM004"
    CM005 = "CM005"
    CM006 = "CM006"
    CM007 = "CM007"
    CM008 = "CM008"
    CM009 = "CM009"
    CM010 = "CM010"
    CM011 = "CM011"
    CM012 = "CM012"
    CM013 = "CM013"

    def todo(self, hint: str) -> str:
        """The full comment for one site: the prefix, this id, then the hint on one line."""
        return f"{TODO_PREFIX}{self} {' '.join(hint.split())}".rstrip()


#: The first line of the Python a config file (YAML) is read as for the rules: a rule that would
#: write Python a config cannot hold (``TQDMProgressBar(...)``, a conditional) leaves its TODO
#: there (standard library only here, so that the YAML reader imports no libcst).
CONFIG_MARKER = "# compat.migrate: a config file, read as Python"
