"""1.x's argparse helpers on compat: ``Trainer.add_argparse_args`` and its kin, as 1.5 wrote them.

``pytorch_lightning.utilities.argparse`` (and the classmethods ``Trainer.add_argparse_args``,
``from_argparse_args``, ``parse_argparser``, ``default_attributes`` and
``LightningDataModule.add_argparse_args``, ``from_argparse_args``,
``get_init_arguments_and_types``) build a command line from a class's ``__init__``, and the class
from the parsed namespace. Lightning 2.0 removed them (``LightningCLI`` replaces them); compat
keeps them so that a 1.x script's command line works unchanged, each warning once.

The rules are 1.5's:

- only parameters annotated with ``str``, ``int``, ``float`` or ``bool`` (or a ``Union`` of them,
  ``Optional`` included) become flags; ``--name`` with the ``__init__`` default;
- a ``bool`` flag takes an optional value (``--fast_dev_run`` is ``True``, ``--fast_dev_run 0``
  is ``False``), read by ``str_to_bool``, or ``str_to_bool_or_int`` / ``str_to_bool_or_str`` where
  ``int`` / ``str`` is allowed too; ``int`` and ``float`` together read ``"0.5"`` as a float and
  ``"2"`` as an int; ``--gpus``/``--tpu_cores`` read ``"0,1"`` as a string and ``"2"`` as an
  int; ``--track_grad_norm`` is a float; ``--precision`` an int where it can be;
- ``use_argument_group=True`` (the default) adds a group named ``pl.Trainer`` (for a user class,
  its module and name) to the parser given and returns that parser; ``False`` returns a new
  ``ArgumentParser(parents=[parent_parser], add_help=False)``;
- ``from_argparse_args(args, **kwargs)`` keeps the namespace's values of the class's parameters,
  lets ``kwargs`` override them, and builds the class.

For ``compat.Trainer`` the parameters are the 1.x Trainer's, read from the catalog of the
1.2-1.5 releases (1.5's defaults and types, then the arguments only older releases had, so a 1.3
script's ``--distributed_backend ddp`` parses), not ``strategies.Trainer``'s. ``from_argparse_args``
passes on only the values the user set (those that differ from every release's default): an
argument left at its 1.x default means what it meant in 1.x, without a deprecation warning for a
flag nobody typed. An argument that not every release had (``devices`` came in 1.5,
``distributed_backend`` left) is the script's own when its parser has, or later gets, a flag of
that name (a 1.2 script's ``--devices`` was never the Trainer's): the Trainer's flag is left out
or dropped, and ``from_argparse_args`` passes such an argument on only where this module added
its flag.

The rules and the helpers that are not 1.x-specific are ``strategies.utilities.argparse``'s, where
``compat.migrate`` moves the calls (``Trainer.add_argparse_args(p)`` -> ``add_argparse_args(Trainer,
p)``).
"""

from __future__ import annotations

import argparse
import ast
import functools
import inspect
import os
from collections.abc import Callable
from typing import Any

from strategies.utilities import argparse as _new
from strategies.utilities.argparse import str_to_bool, str_to_bool_or_int, str_to_bool_or_str

__all__ = [
    "add_argparse_args",
    "from_argparse_args",
    "get_init_arguments_and_types",
    "parse_argparser",
    "parse_env_variables",
    "str_to_bool",
    "str_to_bool_or_int",
    "str_to_bool_or_str",
]

_BUILTIN_TYPES: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool, "None": type(None)}
_IGNORED = ("self", "args", "kwargs")
_EMPTY = inspect.Parameter.empty

ArgumentsAndTypes = list[tuple[str, tuple[Any, ...], Any]]


def _gpus_allowed_type(x: str) -> str | int:
    """``"0,1"`` stays a string (device indices), ``"2"`` is a count."""
    return str(x) if "," in x else int(x)


def _int_or_float_type(x: int | float | str) -> int | float:
    return float(x) if "." in str(x) else int(x)


def _precision_allowed_type(x: int | str) -> int | str:
    try:
        return int(x)
    except ValueError:
        return x


def _annotation_types(text: str) -> tuple[Any, ...]:
    """The types an annotation's source text allows, ``Optional``/``Union`` flattened as
    ``typing``'s ``__args__`` flattens them: builtins as classes, anything else as its text."""
    try:
        node = ast.parse(text, mode="eval").body
    except SyntaxError:
        return (text,)

    def visit(node: ast.expr) -> list[Any]:
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).rsplit(".", 1)[-1] in ("Optional", "Union"):
            inner = node.slice
            items = inner.elts if isinstance(inner, ast.Tuple) else [inner]
            found = [t for item in items for t in visit(item)]
            return [*found, type(None)] if ast.unparse(node.value).endswith("Optional") else found
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):  # ``int | None``
            return [*visit(node.left), *visit(node.right)]
        source = ast.unparse(node)
        return [_BUILTIN_TYPES.get(source, source)]

    types: list[Any] = []
    for t in visit(node):
        if t not in types:
            types.append(t)
    return tuple(types)


#: The Trainer arguments not every release had whose flags ``add_argparse_args`` added here.
_ADDED_SPECIFIC: set[str] = set()


@functools.cache
def _trainer_parameters() -> tuple[tuple[tuple[str, tuple[Any, ...], Any], ...], frozenset[str], dict[str, tuple]]:
    """The 1.x Trainer's ``__init__`` parameters from the catalog: ``((name, types, default),
    ...)`` (1.5's order, then the names only older releases had), the names every release had,
    and every default each name had in any release."""
    from compat import _catalog

    found: dict[str, tuple[str, tuple[Any, ...], Any]] = {}
    defaults: dict[str, list[Any]] = {}
    common: set[str] | None = None
    for name in reversed(_catalog.OLD):
        catalog = _catalog.load(name)
        signature = catalog.signature(catalog.trainer)
        annotations = catalog.init_annotations(catalog.trainer)
        if signature is None:  # pragma: no cover - every 1.x catalog has its Trainer
            continue
        names = set()
        for param in signature.params:
            if param.kind.name not in ("POSITIONAL_OR_KEYWORD", "KEYWORD_ONLY"):
                continue
            names.add(param.name)
            try:
                default = _EMPTY if param.default is None else ast.literal_eval(param.default)
            except ValueError:  # a default that is not a literal: not a flag 1.x could fill either
                continue
            seen = defaults.setdefault(param.name, [])
            if not any(type(d) is type(default) and d == default for d in seen):
                seen.append(default)
            if param.name not in found:
                types = _annotation_types(annotations[param.name]) if param.name in annotations else (_EMPTY,)
                found[param.name] = (param.name, types, default)
        common = names if common is None else common & names
    return tuple(found.values()), frozenset(common or ()), {k: tuple(v) for k, v in defaults.items()}


def _uses_catalog(cls: type) -> bool:
    """Whether ``cls``'s ``__init__`` is compat.Trainer's (``**kwargs`` read by the rename table):
    its parameters are then the 1.x Trainer's."""
    return bool(getattr(getattr(cls, "__init__", None), "_compat_1x_trainer", False))


def get_init_arguments_and_types(cls: Any) -> ArgumentsAndTypes:
    """``[(name, types, default), ...]`` of ``cls``'s ``__init__`` (``types`` a tuple of the
    annotation's types, ``Optional``/``Union`` flattened; ``inspect.Parameter.empty`` for none)."""
    if isinstance(cls, type) and _uses_catalog(cls):
        return list(_trainer_parameters()[0])
    return _new.get_init_arguments_and_types(cls, evaluate=False)  # 1.x did not evaluate string annotations


def _deprecated_names(cls: Any) -> list[str]:
    get = getattr(cls, "get_deprecated_arg_names", None)
    return list(get()) if callable(get) else []


def _abbrev_qualified_name(cls: Any) -> str:
    """``pl.Trainer`` for the 1.x classes (compat's stand for them), else module and qualname."""
    module = getattr(cls, "__module__", "")
    if module.startswith(("pytorch_lightning.", "compat.", "strategies.")) or module in ("compat", "strategies"):
        return f"pl.{cls.__name__}"
    return f"{module}.{cls.__qualname__}"


def _docstring_help(cls: Any) -> dict[str, str]:
    """``{argument: first line of its description}`` from the class's docstring (for compat's
    Trainer, ``strategies.Trainer``'s, which describes the 1.x arguments it still has)."""
    if _uses_catalog(cls):
        import importlib

        return _new.docstring_help(importlib.import_module("strategies").Trainer)
    return _new.docstring_help(cls)


def _flag_type(arg: str, arg_types: list[Any]) -> tuple[Callable[[str], Any], dict[str, Any]]:
    extra: dict[str, Any] = {}
    use_type: Callable[[str], Any]
    if bool in arg_types:
        extra.update(nargs="?", const=True)
        if len(arg_types) == 1:
            use_type = str_to_bool
        elif int in arg_types:
            use_type = str_to_bool_or_int
        elif str in arg_types:
            use_type = str_to_bool_or_str
        else:
            use_type = next(t for t in arg_types if t is not bool)
    else:
        use_type = arg_types[0]
    if arg in ("gpus", "tpu_cores"):
        use_type = _gpus_allowed_type
    if len(arg_types) == 2 and set(arg_types) == {int, float}:
        use_type = _int_or_float_type
    if arg == "track_grad_norm":
        use_type = float
    if arg == "precision":
        use_type = _precision_allowed_type
    return use_type, extra


def add_argparse_args(
    cls: Any, parent_parser: argparse.ArgumentParser, *, use_argument_group: bool = True
) -> argparse.ArgumentParser:
    """Add ``cls``'s ``__init__`` arguments to ``parent_parser`` as ``--name`` flags (the rules are
    in the module docstring); returns ``parent_parser``, or with ``use_argument_group=False`` a new
    parser with ``parent_parser`` as its parent."""
    parser = _new.group_parser(cls, parent_parser, use_argument_group, _abbrev_qualified_name(cls))
    ignored = [*_IGNORED, *_deprecated_names(cls)]
    arguments: ArgumentsAndTypes = []
    for symbol in (cls, cls.__init__):
        arguments = [a for a in get_init_arguments_and_types(symbol) if a[0] not in ignored]
        if arguments:
            break
    common = _trainer_parameters()[1] if _uses_catalog(cls) else None
    taken = set(parent_parser._option_string_actions)
    descriptions = _docstring_help(cls)
    specific: dict[str, argparse.Action] = {}
    for arg, types, default in arguments:
        arg_types = [t for t in _new.FLAG_TYPES if t in types]
        if not arg_types:  # 1.x skipped arguments of other types too
            continue
        if common is not None and arg not in common and f"--{arg}" in taken:
            continue  # the script's own flag (see the module docstring)
        use_type, extra = _flag_type(arg, arg_types)
        action = parser.add_argument(
            f"--{arg}", dest=arg, default=default, type=use_type, help=descriptions.get(arg), **extra
        )
        if common is not None and arg not in common:
            specific[f"--{arg}"] = action
            _ADDED_SPECIFIC.add(arg)
    for target in {id(p): p for p in (parent_parser, parser)}.values():
        if specific and isinstance(target, argparse.ArgumentParser):
            _yield_on_conflict(target, specific)
    return parent_parser if use_argument_group else parser  # type: ignore[return-value]


def _yield_on_conflict(parser: argparse.ArgumentParser, ours: dict[str, argparse.Action]) -> None:
    """A flag the script adds after ours, of an argument not every release had, replaces ours
    (the script's is its own: see the module docstring); any other conflict is argparse's error."""

    def patch(container: Any) -> None:
        # argparse checks conflicts on the container an argument is added to: the parser's own
        # groups (``add_argument`` goes through its "options" group), and the groups made later
        original = container._get_handler()

        def handle(action: argparse.Action, conflicts: list[tuple[str, argparse.Action]]) -> None:
            rest = []
            for option, existing in conflicts:
                if ours.get(option) is existing:
                    _ADDED_SPECIFIC.discard(existing.dest)
                    existing.option_strings = [o for o in existing.option_strings if o != option]
                    container._option_string_actions.pop(option, None)
                    if not existing.option_strings:
                        existing.container._remove_action(existing)  # type: ignore[attr-defined]
                else:
                    rest.append((option, existing))
            if rest:
                original(action, rest)

        setattr(container, f"_handle_conflict_{container.conflict_handler}", handle)

    for container in (parser, *parser._action_groups, *parser._mutually_exclusive_groups):
        patch(container)
    add_group = parser.add_argument_group

    def add_argument_group(*args: Any, **kwargs: Any) -> Any:
        group = add_group(*args, **kwargs)
        patch(group)
        return group

    parser.add_argument_group = add_argument_group  # type: ignore[method-assign]


def parse_argparser(cls: Any, arg_parser: argparse.ArgumentParser | argparse.Namespace) -> argparse.Namespace:
    """Parse the command line (or take a namespace) and turn a bare ``--flag`` of a ``bool``
    argument that defaulted to a ``bool`` (left ``None``) into ``True``, as 1.x did."""
    return _new.bools_set(arg_parser, get_init_arguments_and_types(cls))


def warn_removed(owner: str, member: str) -> None:
    """Once per call site: ``owner.member``, a 1.x argparse helper Lightning 2.0 removed, and what
    replaces it."""
    from compat._warnings import deprecation_message, warn_deprecated

    warn_deprecated(
        deprecation_message(
            owner,
            "strategies.cli.LightningCLI",
            member=member,
            lightning="lightning.pytorch.cli.LightningCLI",
            hint="Lightning 2.0 removed the argparse helpers: build the command line with `LightningCLI`, or add "
            "the arguments you use to your parser and pass them to the class yourself",
        )
    )


def is_1x_default(name: str, value: Any) -> bool:
    """Whether ``value`` is the default of the 1.x Trainer's ``name`` in one of the releases."""
    return any(type(value) is type(d) and value == d for d in _trainer_parameters()[2].get(name, ()))


def from_argparse_args(cls: Any, args: argparse.Namespace | argparse.ArgumentParser | dict, **kwargs: Any) -> Any:
    """``cls(**{the parsed values of its parameters}, **kwargs)``; an ``ArgumentParser`` is
    parsed first (``parse_argparser``), a dict is taken as the namespace's values."""
    if isinstance(args, argparse.ArgumentParser):
        args = parse_argparser(cls, args)
    params = args if isinstance(args, dict) else vars(args)
    valid = [name for name, _, _ in get_init_arguments_and_types(cls) if name not in _IGNORED]
    if _uses_catalog(cls):
        common = _trainer_parameters()[1]
        valid = [name for name in valid if name in common or name in _ADDED_SPECIFIC]
        chosen = {name: params[name] for name in valid if name in params and not is_1x_default(name, params[name])}
    else:
        chosen = {name: params[name] for name in valid if name in params}
    chosen.update(kwargs)
    return cls(**chosen)


def parse_env_variables(cls: Any, template: str = "PL_%(cls_name)s_%(cls_argument)s") -> argparse.Namespace:
    """The ``PL_<CLASS>_<ARGUMENT>`` environment variables set for ``cls``'s arguments
    (``PL_TRAINER_GPUS=2``), each value read as a Python literal where it is one."""
    found: dict[str, Any] = {}
    for name, _, _ in get_init_arguments_and_types(cls):
        env = template % {"cls_name": cls.__name__.upper(), "cls_argument": name.upper()}
        value = os.environ.get(env)
        if value is None or value == "":
            continue
        try:
            found[name] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            found[name] = value
    return argparse.Namespace(**found)


_CLI = "strategies.cli.LightningCLI"
#: What ``pytorch_lightning.utilities.argparse`` resolves to under compat (``compat._legacy``).
OWN: dict[str, Callable[[], tuple[Any, str]]] = {
    name: (lambda name=name: (globals()[name], _CLI))  # type: ignore[misc]
    for name in (
        "add_argparse_args",
        "from_argparse_args",
        "get_init_arguments_and_types",
        "parse_argparser",
        "parse_env_variables",
    )
}
