"""Command-line flags from a class's ``__init__``, for scripts built on argparse.

Lightning 1.x had ``Trainer.add_argparse_args(parser)`` and ``Trainer.from_argparse_args(args)``
(and the same on ``LightningDataModule``); Lightning 2.0 removed them for ``LightningCLI``
(``strategies.cli.LightningCLI`` here). A script that keeps its own ``ArgumentParser`` can keep
its shape with these functions, which take the class as their first argument::

    from argparse import ArgumentParser
    from strategies import Trainer
    from strategies.utilities.argparse import add_argparse_args, from_argparse_args

    parser = add_argparse_args(Trainer, ArgumentParser())   # --max_epochs, --devices, ...
    args = parser.parse_args()
    trainer = from_argparse_args(Trainer, args, callbacks=[...])

``python -m compat.migrate`` writes these calls for the 1.x classmethods. The flags are the
class's own parameters, so for ``Trainer`` they are the new names (``--accelerator``,
``--devices``), not 1.x's ``--gpus``: a command line with a flag that is gone fails at once with
argparse's "unrecognized arguments". The rules are 1.5's:

- a parameter annotated with ``str``, ``int``, ``float`` or ``bool`` (or a union of them,
  ``None`` included) becomes ``--name`` with the ``__init__`` default; others are left out;
- a ``bool`` flag takes an optional value (``--fast_dev_run`` is ``True``, ``--fast_dev_run 0``
  is ``False``), read by ``str_to_bool``, or ``str_to_bool_or_int`` / ``str_to_bool_or_str`` where
  ``int`` / ``str`` is allowed too;
- a number reads ``"2"`` as an ``int`` and ``"0.5"`` as a ``float`` (``--limit_train_batches``);
  ``int`` and ``str`` together read ``"2"`` as an ``int`` and anything else as the string
  (``--devices 2``, ``--devices 0,1``, ``--precision 16-mixed``);
- a flag the parser already has is the script's own and is not added again; its value still
  reaches the class when the parameter has its name;
- ``use_argument_group=True`` (the default) adds a group named after the class to the parser and
  returns that parser; ``False`` returns a new ``ArgumentParser(parents=[parent_parser],
  add_help=False)``;
- ``from_argparse_args(cls, args, **kwargs)`` takes the namespace's values of the class's
  parameters, lets ``kwargs`` override them, and builds the class.
"""

from __future__ import annotations

import argparse
import inspect
import re
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "add_argparse_args",
    "from_argparse_args",
    "get_init_arguments_and_types",
    "parse_argparser",
    "str_to_bool",
    "str_to_bool_or_int",
    "str_to_bool_or_str",
]

#: The annotation types that become flags, in the order 1.5 chose among them.
FLAG_TYPES = (str, int, float, bool)
_IGNORED = ("self", "args", "kwargs")

#: ``[(name, types, default), ...]``: a class's ``__init__`` parameters, their annotation's types
#: (a tuple, unions flattened; ``inspect.Parameter.empty`` for none) and defaults.
ArgumentsAndTypes = list[tuple[str, tuple[Any, ...], Any]]


def str_to_bool_or_str(val: str) -> str | bool:
    """``"yes"``/``"true"``/``"on"``/``"1"`` (any case) -> ``True``, their opposites -> ``False``,
    anything else unchanged."""
    lower = val.lower()
    if lower in ("y", "yes", "t", "true", "on", "1"):
        return True
    if lower in ("n", "no", "f", "false", "off", "0"):
        return False
    return val


def str_to_bool(val: str) -> bool:
    """``str_to_bool_or_str`` that refuses what is not a truth value (``ValueError``)."""
    converted = str_to_bool_or_str(val)
    if isinstance(converted, bool):
        return converted
    raise ValueError(f"invalid truth value {converted}")


def str_to_bool_or_int(val: str) -> bool | int | str:
    """A truth value, else an ``int``, else the string."""
    converted = str_to_bool_or_str(val)
    if isinstance(converted, bool):
        return converted
    try:
        return int(converted)
    except ValueError:
        return converted


def int_or_float(val: str) -> int | float:
    """``"2"`` -> ``2``, ``"0.5"`` -> ``0.5`` (a count or a fraction: ``limit_train_batches``)."""
    try:
        return int(val)
    except ValueError:
        return float(val)


def int_or_str(val: str) -> int | str:
    """``"2"`` -> ``2``; anything else stays a string (``"auto"``, ``"0,1"``, ``"16-mixed"``)."""
    try:
        return int(val)
    except ValueError:
        return val


def get_init_arguments_and_types(cls: Any, *, evaluate: bool = True) -> ArgumentsAndTypes:
    """``[(name, types, default), ...]`` of ``cls``'s ``__init__`` (see ``ArgumentsAndTypes``).

    ``evaluate``: read annotations written as strings (``from __future__ import annotations``) as
    the types they name; 1.x did not (such a parameter got no flag), and ``compat`` keeps that."""
    parameters = inspect.signature(cls).parameters
    if evaluate:
        try:
            parameters = inspect.signature(cls, eval_str=True).parameters
        except (NameError, TypeError, SyntaxError):  # an annotation that does not evaluate: as written
            pass
    found: ArgumentsAndTypes = []
    for name, parameter in parameters.items():
        if parameter.kind in (parameter.VAR_POSITIONAL, parameter.VAR_KEYWORD):
            continue
        annotation = parameter.annotation
        args = getattr(annotation, "__args__", None)
        types = tuple(args) if isinstance(args, tuple) and not _is_generic_alias(annotation) else (annotation,)
        found.append((name, types, parameter.default))
    return found


def _is_generic_alias(annotation: Any) -> bool:
    """``list[int]``, ``dict[str, int]``: one type with parameters, not a union of them."""
    origin = getattr(annotation, "__origin__", None)
    return origin is not None and isinstance(origin, type)


def flag_type(types: Iterable[Any]) -> tuple[Callable[[str], Any], dict[str, Any]] | None:
    """How a flag of a parameter annotated with ``types`` reads its value: ``(type, extra
    add_argument keywords)``, or ``None`` when none of ``FLAG_TYPES`` is among them."""
    present = [t for t in FLAG_TYPES if t in tuple(types)]
    if not present:
        return None
    if bool in present:
        extra: dict[str, Any] = {"nargs": "?", "const": True}
        if len(present) == 1:
            return str_to_bool, extra
        if int in present:
            return str_to_bool_or_int, extra
        if str in present:
            return str_to_bool_or_str, extra
        return present[0] if present[0] is not bool else present[1], extra
    numbers = {int, float} & set(present)
    if str in present:
        return (int_or_str if numbers else str), {}
    if float in present:
        return int_or_float, {}
    return int, {}


def docstring_help(cls: Any) -> dict[str, str]:
    """``{argument: first line of its description}`` from the ``Args:`` section of the class's
    (or its ``__init__``'s) docstring."""
    doc = inspect.getdoc(cls.__init__) or ""
    if "Args:" not in doc:
        doc = inspect.getdoc(cls) or ""
    found: dict[str, str] = {}
    for line in doc.partition("Args:")[2].splitlines():
        match = re.match(r"^ {0,4}(\w+)(?: \([^)]*\))?: ?(.*)$", line)
        if match:
            found[match[1]] = match[2].strip()
        elif line and not line.startswith(" "):
            break
    return found


def group_parser(
    cls: Any, parent_parser: argparse.ArgumentParser, use_argument_group: bool, title: str
) -> argparse.ArgumentParser | argparse._ArgumentGroup:
    """Where ``add_argparse_args`` adds its flags: a group of ``parent_parser`` named ``title``, or
    a new parser with ``parent_parser`` as its parent."""
    if isinstance(parent_parser, argparse._ArgumentGroup):
        raise RuntimeError(
            "`add_argparse_args` takes an `ArgumentParser`, not an argument group: pass the parser and read "
            "the group back from it."
        )
    if use_argument_group:
        return parent_parser.add_argument_group(title)
    return argparse.ArgumentParser(parents=[parent_parser], add_help=False)


def add_argparse_args(
    cls: Any, parent_parser: argparse.ArgumentParser, *, use_argument_group: bool = True
) -> argparse.ArgumentParser:
    """Add ``cls``'s ``__init__`` parameters to ``parent_parser`` as ``--name`` flags (the rules
    are in the module docstring); returns ``parent_parser``, or with ``use_argument_group=False`` a
    new parser with ``parent_parser`` as its parent."""
    parser = group_parser(cls, parent_parser, use_argument_group, f"{cls.__module__}.{cls.__qualname__}")
    taken = set(parent_parser._option_string_actions)
    descriptions = docstring_help(cls)
    for name, types, default in get_init_arguments_and_types(cls):
        read = flag_type(types) if name not in _IGNORED else None
        if read is None or f"--{name}" in taken:
            continue
        use_type, extra = read
        parser.add_argument(
            f"--{name}", dest=name, default=default, type=use_type, help=descriptions.get(name), **extra
        )
    return parent_parser if use_argument_group else parser  # type: ignore[return-value]


def parse_argparser(cls: Any, arg_parser: argparse.ArgumentParser | argparse.Namespace) -> argparse.Namespace:
    """Parse the command line (or take a namespace) and turn a ``None`` left by a bare ``--flag``
    of a ``bool`` parameter whose default is a ``bool`` into ``True``, as 1.x did."""
    return bools_set(arg_parser, get_init_arguments_and_types(cls))


def bools_set(
    arg_parser: argparse.ArgumentParser | argparse.Namespace, arguments: ArgumentsAndTypes
) -> argparse.Namespace:
    """``parse_argparser`` for a class whose parameters are ``arguments``."""
    args = arg_parser.parse_args() if isinstance(arg_parser, argparse.ArgumentParser) else arg_parser
    types_default = {name: (types, default) for name, types, default in arguments}
    modified: dict[str, Any] = {}
    for key, value in vars(args).items():
        if key in types_default and value is None:
            types, default = types_default[key]
            if bool in types and isinstance(default, bool):
                value = True
        modified[key] = value
    return argparse.Namespace(**modified)


def from_argparse_args(
    cls: Any, args: argparse.Namespace | argparse.ArgumentParser | dict[str, Any], **kwargs: Any
) -> Any:
    """``cls(**{the namespace's values of its parameters}, **kwargs)``; an ``ArgumentParser`` is
    parsed first (``parse_argparser``), a dict is taken as the namespace's values."""
    if isinstance(args, argparse.ArgumentParser):
        args = parse_argparser(cls, args)
    params = args if isinstance(args, dict) else vars(args)
    names = [name for name, _, _ in get_init_arguments_and_types(cls) if name not in _IGNORED]
    chosen = {name: params[name] for name in names if name in params}
    chosen.update(kwargs)
    return cls(**chosen)
