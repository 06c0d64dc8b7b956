"""The old PyTorch Lightning accelerator/plugin names, working on top of ``strategies``.

``import compat`` stays cheap (no torch) until a shim is touched: names are resolved lazily
through PEP 562 ``__getattr__``.
"""

from __future__ import annotations
