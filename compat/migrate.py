"""``python -m compat.migrate PATH...``: the documented entry point of the migrate CLI.

The command line lives in ``codemods.cli`` with the rules it runs; this module only keeps the
command (and the ``compat-migrate`` console script) where the docs and users' CI configs say it is.
It never imports torch.
"""

from __future__ import annotations

import sys

from codemods.cli import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
