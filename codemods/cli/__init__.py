"""The migrate CLI (``python -m compat.migrate``, ``compat-migrate``): files, workers, reports.

``_main`` parses the command line, ``_runner`` finds the files and drives the workers, ``_worker``
migrates one file with ``codemods``, ``_safety`` writes it back atomically, ``_report`` prints
the summary and writes ``--report``. Importing this package costs only the standard library: libcst
and the rules are imported when a run starts, and the CLI never imports torch.
"""

from __future__ import annotations

from ._main import build_parser, main, rule_summaries

__all__ = ["build_parser", "main", "rule_summaries"]
