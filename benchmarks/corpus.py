"""Real old-API code nobody here wrote, for the corpus test and the migrate benchmark.

Released packages from PyPI that built on the Lightning 1.x plugin/accelerator API. Their wheels
are fetched with ``pip download --no-deps`` into the same cache as the API catalogs
(``~/.cache/strategy-compat/wheels``, or ``$STRATEGY_COMPAT_CACHE``) and unpacked into a
temporary folder; nothing of them is committed (their licences are theirs). Only the files
that use the old API are kept (see ``uses_old_api``): NeMo is a large toolkit, its trainer
glue is what matters here.

    python benchmarks/corpus.py DEST     # unpack the corpus into DEST and list it
"""

from __future__ import annotations

import ast
import re
import sys
import zipfile
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from compat import _catalog  # noqa: E402

sys.path.insert(0, str(REPO / "tools"))
from build_catalog import fetch_wheel  # noqa: E402

from compat.renames import RENAMES, Kind  # noqa: E402

#: (requirement, top-level package folders read from its wheel). ray_lightning subclasses the
#: DDP-spawn and Horovod plugins; bolts and flash wrap the Trainer and its plugins; NeMo has its
#: own DDP plugin, cluster glue and precision handling; BigDL-Nano subclasses the DDP-spawn
#: plugin and an accelerator and wraps the Trainer; machin builds its own DDP plugins;
#: pytorch-forecasting, lightning-transformers, asteroid, gluonts and pyannote.audio are models,
#: callbacks and training scripts on the 1.x hooks and Trainer arguments.
CORPUS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("ray_lightning==0.2.0", ("ray_lightning/",)),
    ("lightning-bolts==0.3.4", ("pl_bolts/",)),
    ("lightning-flash==0.5.2", ("flash/",)),
    ("nemo_toolkit==1.4.0", ("nemo/",)),
    ("bigdl-nano==2.0.0", ("bigdl/nano/pytorch/",)),
    ("machin==0.4.2", ("machin/",)),
    ("pytorch-forecasting==0.9.2", ("pytorch_forecasting/",)),
    ("lightning-transformers==0.1.0", ("lightning_transformers/",)),
    ("asteroid==0.5.1", ("asteroid/",)),
    ("gluonts==0.9.0", ("gluonts/",)),
    ("pyannote.audio==2.0.1", ("pyannote/audio/",)),
)

# Old-API modules whose classes are in scope (the plugin/accelerator API and the Trainer).
_SCOPE = ("pytorch_lightning.plugins", "pytorch_lightning.accelerators", "pytorch_lightning.trainer.trainer")


@cache
def old_only_names() -> frozenset[str]:
    """Names only the old API used: classes of the old plugin/accelerator modules that Lightning
    2.6 has under no name, the table's old members that no Lightning 2.6 class has, and the old
    Trainer arguments that the Lightning 2.6 Trainer does not take."""
    return _old_only()[0] | _old_only()[1]


@cache
def _old_only() -> tuple[frozenset[str], frozenset[str]]:
    new = _catalog.target("lightning")
    new_names = {path.rpartition(".")[2] for path in new.classes()}
    old: set[str] = set()
    for name in _catalog.OLD:
        catalog = _catalog.load(name)
        for path in catalog.classes():
            if path.startswith(_SCOPE) and "._" not in path:
                old.add(path.rpartition(".")[2])
    new_members: set[str] = set()
    for path in new.classes():
        new_members |= new.members(path)
    trainer = new.signature(new.trainer)
    assert trainer is not None
    members = {
        e.member for e in RENAMES if e.member and e.kind in (Kind.METHOD, Kind.PROPERTY, Kind.ATTRIBUTE, Kind.HOOK)
    }
    arguments = {e.member for e in RENAMES if e.member and e.kind is Kind.ARGUMENT}
    return (
        frozenset((old - new_names) | (members - new_members)),
        frozenset(a for a in arguments if not trainer.accepts(a)),
    )


def uses_old_api(text: str) -> bool:
    """Whether a file imports the old package and names something only the old API had."""
    if "pytorch_lightning" not in text:
        return False
    words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text))
    return bool(words & old_only_names())


def old_api_sites(text: str) -> list[tuple[int, str]]:
    """``(line, name)`` of each use of an old-only name in code: a name, an attribute, an
    imported name or a method definition; an old Trainer argument only as a keyword argument
    (``gpus=2``; a parameter of the user's own called ``gpus`` is not the old API), and a short
    one (``gpus``, not ``resume_from_checkpoint``) only in a call of something named like a
    trainer: ``SimCLR(gpus=...)`` passes the user's own model its own parameter."""
    names, keywords = _old_only()
    sites = []
    tree = ast.parse(text)
    trainer_keywords = {
        id(keyword)
        for call in ast.walk(tree)
        if isinstance(call, ast.Call) and "trainer" in ast.unparse(call.func).lower()
        for keyword in call.keywords
    }
    own = _own_names(tree)
    for node in ast.walk(tree):
        found = None
        if isinstance(node, ast.Name):
            found = node.id if node.id not in own else None
        elif isinstance(node, ast.Attribute):
            found = node.attr
        elif isinstance(node, ast.alias):
            found = node.name.rpartition(".")[2]
            found = found if (node.asname or found) not in own else None
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found = node.name
        elif isinstance(node, ast.keyword) and node.arg in keywords:
            if "_" in node.arg or id(node) in trainer_keywords:
                sites.append((node.value.lineno, node.arg))
            continue
        if found in names:
            sites.append((node.lineno, found))
    return sorted(sites)


def _own_names(tree: ast.AST) -> set[str]:
    """Names the file binds itself: variables, parameters, its own defs and classes, and names
    imported from anything but the old package (machin's own ``DDPPlugin``, a local
    ``master_port``): those are not the old API, whatever they are called."""
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.arg):
            own.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.ImportFrom) and not (node.module or "").startswith("pytorch_lightning"):
            own.update(alias.asname or alias.name for alias in node.names)
    return own


def extract(dest: Path, everything: bool = False) -> tuple[list[Path], list[str]]:
    """Unpack the old-API files (``everything``: all Python files) of every corpus package under ``dest``.

    Returns:
        The files written, and one line per package that could not be fetched (offline).
    """
    written: list[Path] = []
    missing: list[str] = []
    for requirement, roots in CORPUS:
        try:
            wheel = fetch_wheel(requirement)
        except RuntimeError as err:
            missing.append(str(err))
            continue
        with zipfile.ZipFile(wheel) as archive:
            for name in sorted(archive.namelist()):
                if not (name.endswith(".py") and name.startswith(roots)):
                    continue
                text = archive.read(name).decode("utf-8", errors="replace")
                if everything or uses_old_api(text):
                    target = dest / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(text, encoding="utf-8")
                    written.append(target)
    return written, missing


if __name__ == "__main__":
    files, failed = extract(Path(sys.argv[1]))
    for path in files:
        print(f"{sum(1 for _ in path.open()):6d}  {path}")
    for line in failed:
        print(line, file=sys.stderr)
