"""YAML configs (Hydra and plain): Trainer keys and dotted paths, rewritten by the Python rules.

Nothing here knows an old name: the config is turned into the Python the rules already read,
the rules run on it, and their answer is spliced back into the YAML text.

* Every string value that mentions an old package (``_target_: pytorch_lightning.plugins.
  DDPPlugin``, LightningCLI's ``class_path: ...``) becomes ``_s0 = "..."``: CM010 rewrites the
  ones that are exactly an old dotted path and leaves a TODO on the others.
* Every mapping of Trainer arguments becomes ``_c0 = Trainer(key=value, ...)``: CM006/CM007
  rewrite or flag its keywords (``gpus: 2`` becomes ``accelerator: cuda`` and ``devices: 2``;
  ``accelerator: ddp`` becomes ``strategy: ddp``). A mapping holds Trainer arguments when its
  ``_target_`` is a ``Trainer``, when it is the value of a ``trainer:`` key, or when it is the
  top of a file in a ``trainer/`` folder (a Hydra config group). Values that are not plain
  scalars (``${oc.env:GPUS}`` interpolations, lists, mappings) reach the rules as names, so a
  rule that must know the value leaves a TODO, as it does for a variable in Python.

The YAML is parsed with ruamel.yaml (its node positions), and only the spans that change are
replaced, so comments, order, quoting and layout stay as they were. A TODO becomes a
``# TODO(compat.migrate): ...`` comment line above the key. Before a file is written the new
text must parse, load to exactly the data the edits meant, and need no edit on a second run.
"""

from __future__ import annotations

import ast
import copy
import json
import keyword
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from codemods._ids import CONFIG_MARKER
from codemods.cli._notebook import split_lines
from codemods.cli._safety import TODO_PREFIX, Unprocessable, decode, encode, read_snapshot
from compat.renames import RENAMES, Kind, compat_path

if TYPE_CHECKING:
    from codemods.cli._worker import ChangeRecord, FileResult, Settings

YAML_SUFFIXES = (".yaml", ".yml")
_CONFIG_DIRS = frozenset({"conf", "config", "configs"})
# CI, tooling and packaging files: never configs of a training run.
_NEVER_DIRS = frozenset({".github", ".gitlab", ".circleci", ".azure-pipelines", ".buildkite"})
_NEVER_FILES = frozenset(
    {
        ".pre-commit-config.yaml",
        ".pre-commit-hooks.yaml",
        ".gitlab-ci.yml",
        ".travis.yml",
        "azure-pipelines.yml",
        "appveyor.yml",
        ".readthedocs.yaml",
        ".readthedocs.yml",
        "codecov.yml",
        ".codecov.yml",
        "mkdocs.yml",
        "environment.yml",
        "environment.yaml",
        "docker-compose.yml",
        "docker-compose.yaml",
        "pnpm-lock.yaml",
        ".clang-format",
    }
)
_TRAINER = "pytorch_lightning.Trainer"
#: The old Trainer keywords the table knows (``gpus``, ``distributed_backend``, ...).
TRAINER_KEYS = frozenset(
    e.member
    for e in RENAMES
    if e.kind in (Kind.ARGUMENT, Kind.ARGUMENT_VALUE) and e.old == _TRAINER and e.member is not None
)
_ROOTS = tuple(sorted({r for e in RENAMES for r in (e.old.partition(".")[0], compat_path(e.old.partition(".")[0]))}))
_MENTIONS = re.compile(r"\b(?:{})\.".format("|".join(map(re.escape, _ROOTS))))
_PRESCAN = re.compile(
    r"\b(?:{})\b|(?:^|[{{,\s])(?:{})[ \t]*:".format(
        "|".join(map(re.escape, _ROOTS)), "|".join(sorted(map(re.escape, TRAINER_KEYS)))
    ),
    re.MULTILINE,
)
_TRAINER_TARGETS = re.compile(r"^(?:pytorch_lightning|lightning\.pytorch|lightning|strategies|compat)\.Trainer$")
_TODO_LINE = re.compile(r"^[ \t]*" + re.escape(TODO_PREFIX))


def is_yaml(path: str) -> bool:
    """Whether ``path`` names a YAML file."""
    return path.endswith(YAML_SUFFIXES)


def prescan(text: str) -> bool:
    """Cheap test: ``False`` means the config surely needs nothing (no old package, no Trainer key)."""
    return _PRESCAN.search(text) is not None


def wanted(path: str, rel: str, max_size: int | None) -> bool:
    """Whether a YAML file found in a folder is looked at.

    Files under a ``conf``/``config``/``configs`` folder are, and any other YAML file that
    mentions an old package or an old Trainer key; CI and tool files never are.
    """
    parts = rel.split("/")
    if parts[-1] in _NEVER_FILES or _NEVER_DIRS & set(parts[:-1]):
        return False
    if _CONFIG_DIRS & set(parts[:-1]):
        return True
    try:
        with open(path, "rb") as fh:
            head = fh.read(max_size or -1)
    except OSError:
        return True  # the scan reports why it cannot be read
    return prescan(head.decode("utf-8", "replace"))


def todo_lines(text: str) -> tuple[int, ...]:
    """Lines holding a ``# TODO(compat.migrate)`` comment."""
    if TODO_PREFIX not in text:
        return ()
    return tuple(n for n, line in enumerate(split_lines(text), 1) if _TODO_LINE.match(line))


# --- Planning ------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Name:
    """A value the rules see as a variable (an interpolation, a list, a mapping, an odd scalar)."""

    name: str


@dataclass
class _Entry:
    key: str
    key_node: Any
    value_node: Any
    value: Any  # a Python literal, or a _Name


@dataclass
class _Call:
    node: Any  # the MappingNode
    path: tuple[Any, ...]  # document index, then keys
    entries: list[_Entry]
    line: int = 0  # of `_cN = Trainer(` in the Python
    lines: dict[int, _Entry] = field(default_factory=dict)  # Python line -> entry


@dataclass
class _String:
    node: Any
    path: tuple[Any, ...]
    line: int = 0


@dataclass
class _Edit:
    start: int
    end: int
    text: str


@dataclass
class Plan:
    """What the rules want done to one YAML text.

    Attributes:
        edits: spans of the text to replace.
        changes: the changes and TODOs, at YAML lines.
        expected: the data the edited text must load to.
    """

    edits: list[_Edit] = field(default_factory=list)
    changes: list[ChangeRecord] = field(default_factory=list)
    expected: Any = None


def _first_line(err: Exception) -> str:
    return " ".join(str(err).split())[:160]


def _ruamel() -> Any:
    try:
        from ruamel.yaml import YAML
    except ImportError as err:  # a core dependency: only a broken install gets here
        raise Unprocessable("YAML configs need ruamel.yaml, which is not installed: pip install ruamel.yaml") from err
    return YAML


def _load(text: str) -> list[Any]:
    YAML = _ruamel()  # noqa: N806 - the class
    try:
        return list(YAML(typ="safe", pure=True).load_all(text))
    except Exception as err:  # noqa: BLE001 - ruamel raises many kinds
        raise Unprocessable(f"does not parse as YAML: {_first_line(err)}") from err


def _compose(text: str) -> list[Any]:
    YAML = _ruamel()  # noqa: N806 - the class
    try:
        return list(YAML(typ="rt").compose_all(text))
    except Exception as err:  # noqa: BLE001 - ruamel raises many kinds
        raise Unprocessable(f"does not parse as YAML: {_first_line(err)}") from err


_INT = re.compile(r"[-+]?(?:0|[1-9][0-9_]*)")
_FLOAT = re.compile(r"[-+]?(?:[0-9][0-9_]*)?\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9]+[eE][-+]?[0-9]+")
_NOT_LITERAL = object()


def _scalar(node: Any) -> Any:
    """The Python value of a scalar node, or ``_NOT_LITERAL`` (octal, ``.inf``, an interpolation)."""
    tag, value = str(node.tag).rpartition(":")[2], str(node.value)
    if tag == "null":
        return None
    if tag == "bool":
        return value.lower() in ("true", "yes", "on", "y")
    if tag == "int" and _INT.fullmatch(value):
        return int(value.replace("_", ""))
    if tag == "float" and _FLOAT.fullmatch(value):
        return float(value.replace("_", ""))
    if tag == "str" and "${" not in value:
        return value
    return _NOT_LITERAL


class _Walker:
    def __init__(self) -> None:
        self.calls: list[_Call] = []
        self.strings: list[_String] = []

    def value_of(self, node: Any) -> Any:
        from ruamel.yaml.nodes import ScalarNode

        value = _scalar(node) if isinstance(node, ScalarNode) else _NOT_LITERAL
        return _Name(f"_v{id(node)}") if value is _NOT_LITERAL else value

    def walk(self, node: Any, path: tuple[Any, ...], trainer: bool) -> None:
        from ruamel.yaml.nodes import MappingNode, ScalarNode, SequenceNode

        if isinstance(node, ScalarNode):
            if node.tag == "tag:yaml.org,2002:str" and _MENTIONS.search(node.value) and "${" not in node.value:
                self.strings.append(_String(node, path))
            return
        if isinstance(node, SequenceNode):
            for index, item in enumerate(node.value):
                self.walk(item, (*path, index), False)
            return
        if not isinstance(node, MappingNode):
            return
        target = next((v for k, v in node.value if isinstance(k, ScalarNode) and k.value == "_target_"), None)
        if isinstance(target, ScalarNode) and _TRAINER_TARGETS.match(str(target.value)):
            trainer = True
        entries = self.entries(node) if trainer else []
        if trainer:
            self.calls.append(_Call(node, path, entries))
        arguments = {id(e.value_node) for e in entries}
        for key, value in node.value:
            if not isinstance(key, ScalarNode) or id(value) in arguments and isinstance(value, ScalarNode):
                continue  # a Trainer argument's value is the call's business
            self.walk(value, (*path, key.value), key.value == "trainer" and isinstance(value, MappingNode))

    def entries(self, node: Any) -> list[_Entry]:
        from ruamel.yaml.nodes import ScalarNode

        found = []
        for key, value in node.value:
            name = key.value if isinstance(key, ScalarNode) else None
            if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
                continue
            if name.startswith("_") or name == "defaults":
                continue  # Hydra's own keys (`_target_`, `_partial_`, the defaults list)
            found.append(_Entry(name, key, value, self.value_of(value)))
        return found


def _python(walker: _Walker) -> str:
    lines = [CONFIG_MARKER, f"from {_TRAINER.rpartition('.')[0]} import Trainer"]
    for number, string in enumerate(walker.strings):
        string.line = len(lines) + 1
        lines.append(f"_s{number} = {string.node.value!r}")
    for number, call in enumerate(walker.calls):
        call.line = len(lines) + 1
        lines.append(f"_c{number} = Trainer(")
        for entry in call.entries:
            call.lines[len(lines) + 1] = entry
            value = entry.value.name if isinstance(entry.value, _Name) else repr(entry.value)
            lines.append(f"    {entry.key}={value},")
        lines.append(")")
    return "\n".join(lines) + "\n"


def _render(value: Any, like: Any) -> str:
    """A scalar as YAML text; a string is quoted like ``like`` (the value it replaces), else plain if it can be."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    style = getattr(like, "style", None)
    if style == "'":
        return "'" + text.replace("'", "''") + "'"
    plain = re.fullmatch(r"[A-Za-z_][\w.\-/]*", text) and text.lower() not in ("null", "true", "false", "yes", "no")
    if style == '"' or not plain:
        return json.dumps(text, ensure_ascii=False)
    return text


def plan(text: str, settings: Settings, in_trainer_folder: bool = False) -> Plan:
    """What the rules would change in the YAML ``text``, and the data it must load to after.

    Args:
        text: the config.
        settings: the run's settings (target, rules).
        in_trainer_folder: the file lies in a ``trainer/`` folder: its top mapping holds Trainer arguments.

    Raises:
        Unprocessable: the text is not YAML.
    """
    from codemods.cli._worker import ChangeRecord, _rule_id, _run_rules

    walker = _Walker()
    for index, document in enumerate(_compose(text)):
        if document is not None:
            walker.walk(document, (index,), in_trainer_folder)
    result = Plan()
    if not walker.strings and not walker.calls:
        return result
    migrated = _run_rules(_python(walker), "", settings)
    original = _load(text)
    result.expected = copy.deepcopy(original)
    new = {n.targets[0].id: n.value for n in ast.parse(migrated.code).body if _assigns(n)}  # type: ignore[attr-defined]
    where: dict[int, Any] = {}  # Python line -> the YAML node a comment goes above
    for number, string in enumerate(walker.strings):
        where[string.line] = string.node
        value = new.get(f"_s{number}")
        if isinstance(value, ast.Constant) and isinstance(value.value, str) and value.value != string.node.value:
            node = string.node
            result.edits.append(_Edit(node.start_mark.index, node.end_mark.index, _render(value.value, node)))
            _set(result.expected, string.path, value.value)
    refused: dict[int, str] = {}
    for number, call in enumerate(walker.calls):
        where[call.line] = call.entries[0].key_node if call.entries else call.node
        where.update({line: entry.key_node for line, entry in call.lines.items()})
        value = new.get(f"_c{number}")
        if isinstance(value, ast.Call):
            reason = _call_edits(text, call, value, result, original, migrated.changes)
            if reason:
                refused[call.line] = reason
    todos: dict[int, list[str]] = {}
    for change in migrated.changes:
        node = where.get(change.line)
        if node is None:
            continue  # the synthetic import line
        rule = _rule_id(change.rule)
        result.changes.append(ChangeRecord(rule, node.start_mark.line + 1, change.message, change.todo))
        if change.todo:
            todos.setdefault(node.start_mark.line, []).append(f"{TODO_PREFIX}: {rule} {change.message}")
    for line, reason in refused.items():
        node = where[line]
        result.changes.append(ChangeRecord("CM006", node.start_mark.line + 1, reason, True))
        todos.setdefault(node.start_mark.line, []).append(f"{TODO_PREFIX}: CM006 {reason}")
    _todo_edits(text, todos, result)
    return result


def _assigns(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)


def _get(data: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        data = data[key]
    return data


def _set(data: Any, path: tuple[Any, ...], value: Any) -> None:
    _get(data, path[:-1])[path[-1]] = value


def _same(a: tuple[str, Any], b: tuple[str, Any]) -> bool:
    return a[0] == b[0] and type(a[1]) is type(b[1]) and a[1] == b[1]


def _origins(call: _Call, removed: list[_Entry], added: list[tuple[str, Any]], changes: Any) -> list[list[int]]:
    """For each removed entry, the indexes of the added keys that come from it.

    A rule's message names the keywords an argument became (``gpus=2 -> accelerator='cuda',
    devices=2``): they take that argument's place, so its end-of-line comment stays with them.
    Keys no message claims go where the first removed entry was.
    """
    position = {id(e): i for i, e in enumerate(removed)}
    lines = {id(entry): line for line, entry in call.lines.items()}
    claimed: dict[str, int] = {}
    for change in changes:
        for entry in removed:
            if lines.get(id(entry)) == change.line and not change.todo and " -> " in change.message:
                for name in re.findall(r"\b(\w+)=", change.message.split(" -> ", 1)[1]):
                    claimed.setdefault(name, position[id(entry)])
    groups: list[list[int]] = [[] for _ in removed]
    for index, (key, _) in enumerate(added):
        groups[claimed.get(key, 0)].append(index)
    return groups


def _call_edits(text: str, call: _Call, migrated: ast.Call, result: Plan, original: Any, changes: Any) -> str | None:
    """Splice the Trainer keywords the rules wrote; a reason when they cannot be written in YAML."""
    from ruamel.yaml.nodes import ScalarNode

    names = {e.value.name: e for e in call.entries if isinstance(e.value, _Name)}
    new: list[tuple[str, Any]] = []
    for kw in migrated.keywords:
        if kw.arg is None:
            return "the rules wrote `**kwargs`; rewrite these keys by hand"
        if isinstance(kw.value, ast.Name) and kw.value.id in names:
            new.append((kw.arg, names[kw.value.id].value))
        elif (value := _literal(kw.value)) is not _NOT_LITERAL:
            new.append((kw.arg, value))
        else:
            return f"in Python this is `{kw.arg}={ast.unparse(kw.value)}`: write the equivalent in the config by hand"
    old = [(e.key, e.value) for e in call.entries]
    removed = [e for e in call.entries if not any(_same((e.key, e.value), item) for item in new)]
    added = [item for item in new if not any(_same(item, o) for o in old)]
    if not removed and not added:
        return None
    groups = _origins(call, removed, added, changes) if removed else []
    owner = {index: removed[g].value_node for g, group in enumerate(groups) for index in group}
    texts = []
    for index, (key, value) in enumerate(added):
        if isinstance(value, _Name):
            node = names[value.name].value_node
            source = text[node.start_mark.index : node.end_mark.index]
            if not isinstance(node, ScalarNode) or "\n" in source:
                return f"`{key}:` takes a value spread over several lines here: move it by hand"
            texts.append(f"{key}: {source}")
        else:
            texts.append(f"{key}: {_render(value, owner.get(index))}")
    node = call.node
    if node.flow_style:
        span = text[node.start_mark.index : node.end_mark.index]
        if "\n" in span or "#" in span:
            return "a flow mapping over several lines or with comments: rewrite these keys by hand"
        by_key = dict(zip([id(e.key_node) for e in removed], groups, strict=True))
        items: list[str] = []
        for key, value in node.value:
            if id(key) in by_key:
                items.extend(texts[i] for i in by_key[id(key)])
            else:
                items.append(text[key.start_mark.index : value.end_mark.index])
        if not removed:
            items.extend(texts)
        result.edits.append(_Edit(node.start_mark.index, node.end_mark.index, "{" + ", ".join(items) + "}"))
    else:
        if not call.entries:
            return "no key to put the new ones next to: add them by hand"
        indent = " " * call.entries[0].key_node.start_mark.column
        if removed:
            for entry, group in zip(removed, groups, strict=True):
                if group:
                    block = ("\n" + indent).join(texts[i] for i in group)
                    result.edits.append(_Edit(entry.key_node.start_mark.index, entry.value_node.end_mark.index, block))
                else:
                    result.edits.append(_remove(text, entry))
        else:
            end = call.entries[-1].value_node.end_mark.index
            result.edits.append(_Edit(end, end, "\n" + indent + ("\n" + indent).join(texts)))
    mapping = _get(result.expected, call.path)
    for entry in removed:
        mapping.pop(entry.key, None)
    for key, value in added:
        mapping[key] = _get(original, (*call.path, names[value.name].key)) if isinstance(value, _Name) else value
    return None


def _literal(node: ast.expr) -> Any:
    """A scalar the rules wrote (``-1`` is an operation in Python's tree), or ``_NOT_LITERAL``."""
    try:
        value = ast.literal_eval(node)
    except ValueError:
        return _NOT_LITERAL
    return value if value is None or isinstance(value, (bool, int, float, str)) else _NOT_LITERAL


def _remove(text: str, entry: _Entry) -> _Edit:
    """Delete a key and its value; its whole line when nothing else is on it (a comment stays)."""
    start, end = entry.key_node.start_mark.index, entry.value_node.end_mark.index
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", end)
    line_end = len(text) if line_end < 0 else line_end
    if text[line_start:start].strip() == "" and text[end:line_end].strip() == "":
        return _Edit(line_start, min(line_end + 1, len(text)), "")
    return _Edit(start, end, "")


def _todo_edits(text: str, todos: dict[int, list[str]], result: Plan) -> None:
    """A comment line above each line with TODOs, unless the same comment is already there."""
    lines = split_lines(text)  # as YAML counts lines (str.splitlines also cuts at form feeds, ...)
    offsets = [0]
    for each in lines:
        offsets.append(offsets[-1] + len(each))
    for line, comments in todos.items():
        if line >= len(lines):
            continue
        current = lines[line]
        indent = current[: len(current) - len(current.lstrip(" \t"))]
        wanted = list(dict.fromkeys(comments))
        above = {lines[i].strip() for i in range(max(0, line - len(wanted) - 4), line)}
        missing = [c for c in wanted if c not in above]
        if missing:
            newline = "\r\n" if current.endswith("\r\n") else "\n"
            result.edits.append(_Edit(offsets[line], offsets[line], "".join(f"{indent}{c}{newline}" for c in missing)))


def apply(text: str, edits: list[_Edit]) -> str:
    """``text`` with ``edits`` (non-overlapping spans) made."""
    out = text
    for edit in sorted(edits, key=lambda e: (e.start, e.end), reverse=True):
        out = out[: edit.start] + edit.text + out[edit.end :]
    return out


# --- The file ------------------------------------------------------------------------------


def migrate(path: str, display: str, rel: str, settings: Settings) -> FileResult:
    """Check, diff or write one YAML config (the worker's ``codemods.cli._worker.migrate``)."""
    from codemods.cli._worker import CHECK, DIFF, FileResult, unified_diff, write

    snap = read_snapshot(path)
    decoded = decode(snap.data)
    folder = os.path.basename(os.path.dirname(path))
    result = plan(decoded.text, settings, folder == "trainer")
    changes = tuple(result.changes)
    if not result.edits:
        return FileResult(path, "unchanged", changes=changes)
    new = apply(decoded.text, result.edits)
    if settings.mode == CHECK:
        return FileResult(path, "changed", changes=changes)
    reason = _check(decoded.text, new, result, settings, folder == "trainer")
    if reason is not None:
        return FileResult(path, "failed", reason, changes)
    if settings.mode == DIFF:
        return FileResult(path, "changed", changes=changes, diff=unified_diff(display, decoded.text, new))
    failed = write(path, rel, encode(new, decoded), snap, settings)
    if failed is not None:
        return FileResult(path, "failed", failed.reason, changes)
    return FileResult(path, "changed", changes=changes)


def _check(old: str, new: str, done: Plan, settings: Settings, in_trainer_folder: bool) -> str | None:
    """Why ``new`` must not be written (``None``: it is safe)."""
    try:
        loaded = _load(new)
    except Unprocessable as err:
        return f"the migrated config would not parse ({err}; please report it)"
    if loaded != done.expected:
        return "the migrated config would not load to the data the edits meant (please report it)"
    if plan(new, settings, in_trainer_folder).edits:
        return "running the rules again changes the result (a codemod bug; please report it)"
    comments = [line.strip() for line in old.splitlines() if line.lstrip().startswith("#")]
    kept = {line.strip() for line in new.splitlines()}
    if any(c not in kept for c in comments):
        return "a comment would disappear (please report it)"
    return None
