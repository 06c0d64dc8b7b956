"""The table ``Trainer.validate``/``test`` print at the end (``verbose=True``), laid out as Lightning's."""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from typing import Any

_SUFFIX = "/dataloader_idx_"


def print_results(results: list[dict[str, float]], stage: str) -> None:
    """One column per loader (``DataLoader 0``, ...), one row per metric name (without the loader's
    suffix), sorted; with ``rich`` installed it draws the table with rich, as Lightning does."""
    rows = [{name.split(_SUFFIX)[0]: value for name, value in result.items()} for result in results]
    names = sorted({name for row in rows for name in row})
    if not names:
        return
    headers = [f"DataLoader {i}" for i in range(len(rows))]
    width = shutil.get_terminal_size(fallback=(120, 30)).columns or 120
    column = int(min(max(len(max(names, key=len)), len(max(headers, key=len)), 25), width / 2))
    per_table = max(1, int((width - column) / column))
    for start in range(0, len(headers), per_table):
        shown = list(range(start, min(start + per_table, len(headers))))
        title = f"{stage} metric".capitalize()
        cells = [[_cell(rows[i].get(name)) for i in shown] for name in names]
        if importlib.util.find_spec("rich") is not None:
            _print_rich([title, *(headers[i] for i in shown)], names, cells, column)
        else:
            _print_plain([title, *(headers[i] for i in shown)], names, cells, column, width)


def _cell(value: Any) -> str:
    return " " if value is None else f"{value}"


def _print_rich(headers: list[str], names: list[str], cells: list[list[str]], column: int) -> None:
    from rich import get_console
    from rich.table import Column, Table

    columns = [Column(h, justify="center", style="magenta", width=column) for h in headers]
    columns[0].style = "cyan"
    table = Table(*columns)
    for name, row in zip(names, cells, strict=True):
        table.add_row(name, *row)
    get_console().print(table)


def _print_plain(headers: list[str], names: list[str], cells: list[list[str]], column: int, width: int) -> None:
    layout = f"{{:^{column}}}" * len(headers)
    try:
        "─".encode(sys.stdout.encoding or "utf-8")
        rule = "─" * width
    except UnicodeEncodeError:
        rule = "-" * width
    half = int(width / 2)
    lines = [rule, layout.format(*headers).rstrip(), rule]
    for name, row in zip(names, cells, strict=True):
        while len(name) > half:  # a long name wraps over several lines, its values on the first
            lines.append(layout.format(name[:half], *row).rstrip())
            name, row = name[half:], [" "] * len(row)
        lines.append(layout.format(name, *row).rstrip())
    lines.append(rule)
    print(os.linesep.join(lines))
