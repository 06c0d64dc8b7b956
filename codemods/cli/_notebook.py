"""Jupyter notebooks (``.ipynb``), migrated cell by cell, never written invalid.

The code cells of a notebook share one namespace (an import in cell 1 is used in cell 5), so
they are migrated together: their sources are joined into one module, each cell behind a
marker line, and split back at the markers afterwards (a missing or moved marker: the notebook
is refused, not guessed). IPython syntax that is not Python is masked before parsing and put
back after: line magics (``%matplotlib inline``), shell lines (``!pip install ...``,
``files = !ls``), help (``obj?``) and the first line of the cell magics whose body is Python
(``%%time``); cells of other cell magics (``%%bash``) are left alone.

Only the ``source`` of code cells changes: metadata, outputs and the other cells stay as they
were, and a source stored as a list of lines stays a list (a string stays a string). The JSON
is written back as the file was written (indent, key order, ASCII escapes, final newline),
which is checked first: if a no-op round trip does not give back the file's bytes exactly, the
notebook is not written (``--check`` and ``--diff`` still report it). Before a notebook is
replaced, the new JSON is parsed again and compared with the old one outside the changed
sources; with ``nbformat`` installed, a notebook that validated before must validate after.
"""

from __future__ import annotations

import copy
import json
import re
import warnings
from dataclasses import dataclass, field
from typing import Any

from codemods.cli._safety import TODO_PREFIX, Decoded, Unprocessable

NOTEBOOK_SUFFIX = ".ipynb"

# Marker and mask lines carry this word; a cell that already holds it cannot be split safely.
_TAG = "compat-migrate-notebook"
_MARKER = "# " + _TAG + "-cell {}\n"
_MARKER_LINE = re.compile(r"^# " + _TAG + r"-cell (\d+)\n", re.MULTILINE)
_MASK = "pass  # " + _TAG + "-mask {}"
_MASK_LINE = re.compile(r"^[ \t]*pass  # " + _TAG + r"-mask (\d+)[ \t]*$", re.MULTILINE)
# IPython lines that are not Python: magics, shell escapes, `x = !cmd`, `x = %magic`, help.
_MAGIC_LINE = re.compile(r"^[ \t]*(?:[%!]|\?|[\w.]+[ \t]*=[ \t]*[%!]|[\w.]+\?{1,2}[ \t]*$)")
# Cell magics whose body is Python: the first line is masked, the body migrated.
_PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "debug"})
_LINES = re.compile(r"[^\n]*\n|[^\n]+")


def is_notebook(path: str) -> bool:
    """Whether ``path`` names a Jupyter notebook."""
    return path.endswith(NOTEBOOK_SUFFIX)


def split_lines(text: str) -> list[str]:
    """``text`` cut after each ``\\n`` only (``str.splitlines`` also cuts at form feeds, ...)."""
    return _LINES.findall(text)


@dataclass(frozen=True)
class Style:
    """How a notebook's JSON was serialized (``json.dumps`` arguments and the final newline)."""

    indent: int | str | None
    ensure_ascii: bool
    separators: tuple[str, str] | None
    final_newline: bool

    def dump(self, data: Any) -> str:
        text = json.dumps(data, indent=self.indent, ensure_ascii=self.ensure_ascii, separators=self.separators)
        return text + ("\n" if self.final_newline else "")


def detect_style(text: str, data: Any) -> Style | None:
    """The serialization that gives back ``text`` exactly from ``data``, or ``None``.

    Jupyter and nbformat write ``indent=1, ensure_ascii=False`` with a final newline; other
    tools use other indents, tabs or no newlines at all.
    """
    found = re.match(r"\{\n([ \t]+)\S", text)
    if found:
        indent = found.group(1)
        layouts: list[tuple[int | str | None, tuple[str, str] | None]] = [
            (len(indent) if indent.strip(" ") == "" else indent, None)
        ]
    else:
        layouts = [(None, None), (None, (",", ":"))]
    for indent_value, separators in layouts:
        for ensure_ascii in (False, True):
            for final_newline in (True, False):
                style = Style(indent_value, ensure_ascii, separators, final_newline)
                if style.dump(data) == text:
                    return style
    return None


@dataclass
class _Cell:
    index: int  # in the notebook's `cells`
    text: str  # the source joined
    as_list: bool  # the file stores it as a list of lines
    masked: str  # IPython lines replaced by mask lines, ending with a newline
    added_newline: bool  # `masked` got a final newline the source does not have
    masks: dict[int, str] = field(default_factory=dict)  # mask number -> the original line


@dataclass
class Notebook:
    """A parsed notebook and its code cells joined into one module.

    Attributes:
        data: the JSON document.
        style: how to write it back exactly, or ``None`` (then it is never written).
        cells: the code cells that are migrated, in order.
        code: their masked sources, joined behind marker lines.
        starts: the first line of each cell's source in ``code`` (1-based), by cell order.
    """

    data: dict[str, Any]
    style: Style | None
    cells: list[_Cell]
    code: str
    starts: list[int]

    def cell_line(self, line: int) -> tuple[int, int]:
        """``(cell number, line in the cell)``, 1-based, of line ``line`` of ``code``."""
        position = 0
        for order, start in enumerate(self.starts):
            if start <= line:
                position = order
        return self.cells[position].index + 1, max(1, line - self.starts[position] + 1)


def _json_text(decoded: Decoded) -> str:
    if decoded.newline == "\r\n":
        return decoded.text.replace("\r\n", "\n")
    return decoded.text


def _python_kernel(data: dict[str, Any]) -> bool:
    metadata = data.get("metadata")
    if not isinstance(metadata, dict):
        return True
    for key, name_key in (("language_info", "name"), ("kernelspec", "language")):
        info = metadata.get(key)
        if isinstance(info, dict) and isinstance(info.get(name_key), str):
            return bool(info[name_key].lower() == "python")
    return True


def _mask(text: str, masks: dict[int, str], counter: list[int]) -> str:
    lines = split_lines(text)
    out: list[str] = []
    first = True
    continued = False
    indent = ""
    for line in lines:
        magic = continued or _MAGIC_LINE.match(line) is not None or (first and line.startswith("%%"))
        first = False
        if not magic:
            out.append(line)
            continue
        if not continued:  # a continuation line (after a trailing backslash) takes the first one's indent
            indent = re.match(r"[ \t]*", line).group(0)  # type: ignore[union-attr]
        continued = line.rstrip("\n").endswith("\\")
        number = counter[0]
        counter[0] += 1
        masks[number] = line
        out.append(indent + _MASK.format(number) + ("\n" if line.endswith("\n") else ""))
    return "".join(out)


def _code_cells(data: dict[str, Any]) -> list[_Cell]:
    cells = data.get("cells")
    if not isinstance(cells, list):
        nbformat = data.get("nbformat")
        raise Unprocessable(
            f"not a notebook in nbformat 4 (nbformat {nbformat!r}, no `cells` list); "
            "convert it with `jupyter nbconvert --to notebook --nbformat 4` first"
        )
    found: list[_Cell] = []
    counter = [0]
    for index, cell in enumerate(cells):
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source")
        if isinstance(source, str):
            text, as_list = source, False
        elif isinstance(source, list) and all(isinstance(s, str) for s in source):
            text, as_list = "".join(source), True
        else:
            continue  # no source, or an odd one: left as it is
        if _TAG in text:
            raise Unprocessable(f"cell {index + 1} holds the text `{_TAG}` used to split cells; not migrated")
        first = text.split("\n", 1)[0]
        if first.startswith("%%") and first[2:].split(" ", 1)[0].strip() not in _PYTHON_CELL_MAGICS:
            continue  # `%%bash`, `%%writefile`, ...: not Python
        masks: dict[int, str] = {}
        masked = _mask(text, masks, counter)
        added = not masked.endswith("\n")
        found.append(_Cell(index, text, as_list, masked + ("\n" if added else ""), added, masks))
    return found


def load(decoded: Decoded) -> Notebook:
    """Parse a notebook and join its code cells.

    Raises:
        Unprocessable: it is not JSON, not a notebook, or not one this tool can split.
    """
    text = _json_text(decoded)
    try:
        data = json.loads(text)
    except ValueError as err:
        raise Unprocessable(f"not a valid notebook: the JSON does not parse ({err})") from err
    if not isinstance(data, dict):
        raise Unprocessable("not a valid notebook: the JSON is not an object")
    style = detect_style(text, data) if decoded.newline in ("\n", "\r\n") else None
    cells = _code_cells(data) if _python_kernel(data) else []
    parts: list[str] = []
    starts: list[int] = []
    line = 1
    for order, cell in enumerate(cells):
        parts.append(_MARKER.format(order))
        starts.append(line + 1)
        parts.append(cell.masked)
        line += 1 + cell.masked.count("\n")
    return Notebook(data, style, cells, "".join(parts), starts)


def split(notebook: Notebook, code: str) -> list[str]:
    """The new source of each cell in ``Notebook.cells``, from the migrated ``code``.

    Raises:
        Unprocessable: the markers or masks did not survive the migration intact.
    """
    markers = list(_MARKER_LINE.finditer(code))
    if [int(m.group(1)) for m in markers] != list(range(len(notebook.cells))):
        raise Unprocessable("the cell boundaries did not survive the migration (a codemod bug; please report it)")
    texts: list[str] = []
    for order, (cell, marker) in enumerate(zip(notebook.cells, markers, strict=True)):
        start = 0 if order == 0 else marker.end()
        end = markers[order + 1].start() if order + 1 < len(markers) else len(code)
        part = code[start:end]
        if order == 0:  # lines put above the first marker (an import) join the first cell
            part = code[: marker.start()] + code[marker.end() : end]
        part = _unmask(part, cell.masks)
        if cell.added_newline and part.endswith("\n"):
            part = part[:-1]
        texts.append(part)
    return texts


def _unmask(text: str, masks: dict[int, str]) -> str:
    seen: list[int] = []

    def put_back(match: re.Match[str]) -> str:
        number = int(match.group(1))
        seen.append(number)
        return masks.get(number, match.group(0)).rstrip("\n")

    restored = _MASK_LINE.sub(put_back, text)
    if sorted(seen) != sorted(masks):
        raise Unprocessable("an IPython magic or shell line did not survive the migration (please report it)")
    return restored


def _strip_sources(data: Any, indexes: set[int]) -> Any:
    stripped = copy.deepcopy(data)
    for index in indexes:
        stripped["cells"][index].pop("source", None)
    return stripped


def render(notebook: Notebook, texts: list[str]) -> str:
    """The notebook's JSON with the code cells' new sources, checked to be a valid notebook.

    Raises:
        Unprocessable: the result would not be a valid notebook, or the file's JSON layout
            cannot be reproduced (then nothing may be written).
    """
    if notebook.style is None:
        raise Unprocessable(
            "its JSON layout cannot be reproduced exactly (a no-op rewrite would change other bytes); "
            "not written: save it once with Jupyter (or nbformat) and run again, or see --diff"
        )
    data = copy.deepcopy(notebook.data)
    changed: set[int] = set()
    for cell, text in zip(notebook.cells, texts, strict=True):
        if text == cell.text:
            continue
        changed.add(cell.index)
        data["cells"][cell.index]["source"] = split_lines(text) if cell.as_list else text
    new = notebook.style.dump(data)
    check_written(notebook.data, new, changed, notebook.style)
    return new


def check_written(old: dict[str, Any], new: str, changed: set[int], style: Style) -> None:
    """Refuse ``new`` unless it parses, round-trips, and differs from ``old`` only in sources.

    Raises:
        Unprocessable: it would be an invalid or damaged notebook.
    """
    try:
        parsed = json.loads(new)
    except ValueError as err:
        raise Unprocessable(f"the migrated notebook would not be valid JSON ({err}); not written") from err
    if style.dump(parsed) != new:
        raise Unprocessable("the migrated notebook does not round-trip through JSON; not written")
    if not isinstance(parsed, dict) or _strip_sources(parsed, changed) != _strip_sources(old, changed):
        raise Unprocessable("the migration would change more than code cell sources; not written")
    _nbformat_check(old, parsed)


def _nbformat_check(old: dict[str, Any], new: dict[str, Any]) -> None:
    """With ``nbformat`` installed: a notebook that validated before must validate after."""
    try:
        import nbformat  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        return
    if not isinstance(old.get("nbformat"), int):
        return

    def errors(data: dict[str, Any]) -> str | None:
        try:
            with warnings.catch_warnings():  # nbformat warns about fields it will require one day
                warnings.simplefilter("ignore")
                nbformat.validate(copy.deepcopy(data), version=data.get("nbformat"))
        except Exception as err:  # noqa: BLE001 - nbformat raises several kinds
            return str(err).split("\n", 1)[0]
        return None

    if errors(old) is None and (problem := errors(new)) is not None:
        raise Unprocessable(f"the migrated notebook would not validate with nbformat: {problem}; not written")


_TODO_IN_JSON = re.compile(r"(?:\"|\\n)[ \t]*" + re.escape(TODO_PREFIX))


def todo_lines(text: str) -> tuple[int, ...]:
    """Lines of the notebook file holding a ``# TODO(compat.migrate)`` comment in a cell."""
    if TODO_PREFIX not in text:
        return ()
    return tuple(
        number for number, line in enumerate(text.split("\n"), 1) for _ in range(len(_TODO_IN_JSON.findall(line)))
    )
