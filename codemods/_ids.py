"""The stable rule ids: used by ``--select/--ignore``, reports, TODO comments and fixture folders."""

from __future__ import annotations

import enum

__all__ = ["Rule"]


class Rule(str, enum.Enum):
    """One id per migration rule; the member docstring is the rule's one-line summary."""

    CM001 = "CM001"
    """Rewrite imports of old names to the new modules, keeping aliases; drop imports made unused."""

    CM002 = "CM002"
    """Rename references to old classes and functions (bases, isinstance, annotations, calls)."""

    CM003 = "CM003"
    """Rename overridden old methods and hooks in user subclasses, with their ``super()`` calls."""

    CM004 = "CM004"
    """Apply signature changes: dropped parameters, methods that became properties, call sites."""

    CM005 = "CM005"
    """Rename old attributes (``trainer.training_type_plugin``) where the receiver is known."""

    CM006 = "CM006"
    """Rewrite old ``Trainer`` keyword arguments and string values (``accelerator="ddp"``, ``gpus``)."""

    CM007 = "CM007"
    """Mark what cannot be migrated automatically with one ``# TODO(compat.migrate)`` comment."""
