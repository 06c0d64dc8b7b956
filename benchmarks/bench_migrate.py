"""Benchmark ``python -m compat.migrate --check`` against the floor of any such tool.

Usage::

    python benchmarks/bench_migrate.py [--files 2000] [--old-share 0.05,0.25] [--reps 3]
                                       [--real PATH] [--corpus] [--bump-pydantic CMD [--bp-files 40]]

It builds generated trees (``--files`` files each; ``--old-share`` of them use the old API, 5%
and 25% by default, the rest is ordinary 100-300-line code) in a temporary folder and, with ``--real PATH``, copies the
Python files of a real tree there too (e.g. torch's, libcst's or pydantic's installed source).
With ``--corpus`` it also measures the real libraries built on the old plugin API of
``benchmarks/corpus.py`` (ray_lightning, bolts, flash, NeMo, BigDL-Nano, machin,
pytorch-forecasting, lightning-transformers, asteroid, gluonts, pyannote.audio: every Python
file of their wheels,
fetched with ``pip download --no-deps`` into the cache), where the pre-scan flags real-sized files
of hundreds to over a thousand lines each.
On each tree, in the same run, it measures (median of ``--reps``, interleaved, each a fresh
process):

* the floor: a process that reads every file, runs ``codemods.prescan``, and
  ``libcst.parse_module``\\ s the files the pre-scan flags, with libcst's own node checks
  (the CLI's parse skips them for the nodes the parser builds, ``codemods._parse``: about a
  tenth of a parse; the floor puts libcst's ``__post_init__`` back, so it is not the faster one);
* ``python -m compat.migrate --check --no-cache`` with ``--jobs 1`` and ``--jobs 2``;
* ``--check --jobs 1`` again with a results cache filled by one run before (an unchanged tree);

and prints files/s and the ratios to the floor (targets: ``--jobs 1`` at most 1.5x the floor,
``--jobs 2`` faster than ``--jobs 1``, the cached re-run at most 0.3x the floor).
With ``--bump-pydantic CMD`` (or ``bump-pydantic`` on PATH) it also times ``CMD --diff`` once
on a generated tree of ``--bp-files`` files and our
``--check --jobs 1`` on that same tree, and prints the ratio (bump-pydantic needs several
seconds per file: install it in a separate virtualenv, e.g. ``python -m venv /tmp/bp &&
/tmp/bp/bin/pip install bump-pydantic``, and pass ``--bump-pydantic /tmp/bp/bin/bump-pydantic``).
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
_CACHED = "... cached re-run (unchanged tree)"

FLOOR = """\
import os, sys
import libcst
import codemods
from codemods import _parse
from libcst._nodes.base import CSTNode

CSTNode.__post_init__ = _parse.ORIGINAL_POST_INIT  # libcst's own parse, as importing codemods found it
flagged = 0
for folder, dirs, files in os.walk(sys.argv[1]):
    dirs.sort()
    for name in sorted(files):
        if name.endswith((".py", ".pyi")):
            with open(os.path.join(folder, name), "rb") as fh:
                text = fh.read().decode("utf-8")
            if codemods.prescan(text):
                flagged += 1
                libcst.parse_module(text)
print(flagged)
"""

LEGACY = '''\
"""Cluster launch glue for job {i} (written against the old plugin API)."""

import os

from pytorch_lightning import Trainer
from pytorch_lightning.plugins import DDPPlugin


class ClusterDDP{i}(DDPPlugin):
    """DDP with the site's port scheme."""

    def init_ddp_connection(self, global_rank, world_size):
        # the port must be set before the process group exists
        os.environ["MASTER_PORT"] = str(12000 + {i} % 1000)
        super().init_ddp_connection(global_rank, world_size)


def build_trainer_{i}(epochs=3):
    return Trainer(max_epochs=epochs, accelerator="ddp", gpus=2, plugins=[ClusterDDP{i}()])

'''

_FILLERS = [
    '''\
def normalize_{n}(values, scale={k}):
    """Scale the values so that they sum to ``scale``."""
    total = sum(values) or 1
    return [v * scale / total for v in values]

''',
    '''\
class Inventory{n}:
    """A small keyed store with counts."""

    def __init__(self, items=None):
        self.items = dict(items or {{}})  # name -> count

    def add(self, name, count=1):
        self.items[name] = self.items.get(name, 0) + count
        return self.items[name]

    def most_common(self, limit={k}):
        ranked = sorted(self.items.items(), key=lambda kv: (-kv[1], kv[0]))
        return ranked[:limit]

''',
    """\
def parse_record_{n}(line: str) -> dict[str, str]:
    # fields are separated by ';' and keys by '='
    record = {{}}
    for field in line.strip().split(";"):
        if "=" not in field:
            continue
        key, _, value = field.partition("=")
        record[key.strip()] = value.strip()
    return record

""",
    """\
def window_means_{n}(xs, width={k}):
    out = []
    for start in range(0, max(0, len(xs) - width + 1)):
        chunk = xs[start : start + width]
        out.append(sum(chunk) / len(chunk))
    return out

""",
    '''\
MAPPING_{n} = {{
    "alpha": {k},
    "beta": {k} * 2,
    "gamma": [{k}, {k} + 1, {k} + 2],
}}


def lookup_{n}(key, default=None):
    """Find ``key`` in the table, case-insensitively."""
    return MAPPING_{n}.get(key.lower(), default)

''',
    """\
async def fetch_all_{n}(client, urls, retries={k}):
    results = {{}}
    for url in urls:
        for attempt in range(retries):
            try:
                results[url] = await client.get(url)
                break
            except OSError as err:  # transient network failure
                if attempt == retries - 1:
                    results[url] = err
    return results

""",
    """\
def format_table_{n}(rows):
    widths = [max(len(str(c)) for c in col) for col in zip(*rows)] if rows else []
    lines = []
    for row in rows:
        cells = [f"{{str(c):<{{w}}}}" for c, w in zip(row, widths)]
        lines.append(" | ".join(cells))
    return "\\n".join(lines)

""",
]


def _ordinary(rng: random.Random, index: int, lines: int) -> str:
    parts = [f'"""Utilities, batch {index}."""\n\nfrom __future__ import annotations\n\nimport math\n\n\n']
    n = 0
    while sum(p.count("\n") for p in parts) < lines:
        parts.append(rng.choice(_FILLERS).format(n=n, k=rng.randint(2, 9)))
        n += 1
    return "".join(parts)


def generate(folder: Path, files: int, old_share: float, seed: int = 0) -> tuple[int, int]:
    """Write the generated tree; returns (files with old names, total lines)."""
    rng = random.Random(seed)
    old = set(rng.sample(range(files), round(files * old_share)))
    total = 0
    for i in range(files):
        package = folder / f"pkg{i // 50:03d}"
        if not package.exists():
            package.mkdir(parents=True)
            (package / "__init__.py").write_text("")
        lines = rng.randint(100, 300)
        text = _ordinary(rng, i, lines)
        if i in old:
            text = LEGACY.format(i=i) + text.split("\n\n\n", 1)[1]
        (package / f"mod{i:05d}.py").write_text(text)
        total += text.count("\n")
    return len(old), total


def _timed(cmd: list[str], cwd: Path, ok: tuple[int, ...]) -> tuple[float, float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # exit 1 is also what a crash at import gives (a missing module): a run of the CLI counts
    # only when it printed its summary
    summary = "compat.migrate" not in cmd or "compat.migrate: " in proc.stdout + proc.stderr
    if proc.returncode not in ok or not summary:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout


def measure(name: str, tree: Path, files: int, reps: int) -> dict[str, tuple[float, float]]:
    """Time the floor and ``--check`` with one and two jobs on ``tree``, and print the table.

    The three commands are interleaved (floor, jobs 1, jobs 2, floor, ...) so that a change of
    load on a shared machine hits them alike; each figure is the median of ``reps``.
    """
    python = sys.executable
    cache = tree.parent / f"{tree.name}.cache"
    check = [python, "-m", "compat.migrate", "--check", "-q"]
    commands = {"floor (read + prescan + parse flagged)": [python, "-c", FLOOR, str(tree)]}
    for jobs in (1, 2):
        commands[f"compat.migrate --check --jobs {jobs}"] = [*check, "--no-cache", "--jobs", str(jobs), str(tree)]
    cached = [*check, "--cache-dir", str(cache), "--jobs", "1", str(tree)]
    commands[_CACHED] = cached
    _timed(cached, REPO, ok=(0, 1, 2))  # fills the cache: the timed runs are re-runs on an unchanged tree
    runs: dict[str, list[tuple[float, float, str]]] = {label: [] for label in commands}
    for _ in range(reps):
        for label, cmd in commands.items():
            runs[label].append(_timed(cmd, REPO, ok=(0, 1, 2)))
    rows = {
        label: (statistics.median(r[0] for r in got), statistics.median(r[1] for r in got))
        for label, got in runs.items()
    }
    floor_label = next(iter(commands))
    flagged = int(runs[floor_label][-1][2].strip() or 0)
    floor = rows[floor_label]
    print(f"\n{name}: {files:,} files, {flagged:,} flagged by the pre-scan; median of {reps}")
    print(f"  {'':40} {'wall s':>7} {'CPU s':>7} {'files/s':>8} {'x floor':>8} {'CPU x floor':>12}")
    for label, (wall, cpu) in rows.items():
        print(f"  {label:40} {wall:7.2f} {cpu:7.2f} {files / wall:8.0f} {wall / floor[0]:8.2f} {cpu / floor[1]:12.2f}")
    one, two = rows["compat.migrate --check --jobs 1"], rows["compat.migrate --check --jobs 2"]
    print(f"  speed-up --jobs 2 over --jobs 1: {one[0] / two[0]:.2f}x (wall)")
    again = rows[_CACHED]
    print(
        f"  --check --jobs 1: {one[0] / floor[0]:.2f}x the floor (target <= 1.5x); cached re-run: "
        f"{again[0] / floor[0]:.2f}x the floor (target <= 0.3x); "
        f"CPU: {one[1] / floor[1]:.2f}x, {again[1] / floor[1]:.2f}x"
    )
    return rows


def _bump_pydantic(cmd: str, base: Path, files: int, old_share: float) -> None:
    tree = base / "bp_tree"
    generate(tree, files, old_share, seed=1)
    wall_bp, cpu_bp, _ = _timed([*cmd.split(), "--diff", "bp_tree"], base, ok=(0, 1))
    ours = _timed(
        [sys.executable, "-m", "compat.migrate", "--check", "-q", "--no-cache", "--jobs", "1", str(tree)],
        REPO,
        (0, 1, 2),
    )
    print(f"\nbump-pydantic ({cmd} --diff) vs compat.migrate --check --jobs 1, same {files}-file tree, one run:")
    print(f"  bump-pydantic   wall {wall_bp:8.2f} s  CPU {cpu_bp:8.2f} s")
    print(f"  compat.migrate  wall {ours[0]:8.2f} s  CPU {ours[1]:8.2f} s")
    print(f"  ratio: {wall_bp / ours[0]:.0f}x (wall), {cpu_bp / max(ours[1], 1e-9):.0f}x (CPU)")


def _measure_corpus(tree: Path, reps: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import corpus

    files, missing = corpus.extract(tree, everything=True)
    for line in missing:
        print(f"corpus: {line}")
    if not files:
        print("corpus: nothing fetched; skipped")
        return
    texts = [f.read_text(encoding="utf-8") for f in files]
    old = [t for t in texts if corpus.uses_old_api(t)]
    sizes = sorted(t.count("\n") for t in old)
    print(
        f"\ncorpus tree: {len(files):,} files, {sum(t.count(chr(10)) for t in texts):,} lines; {len(old)} use the "
        f"old API ({sum(sizes):,} lines, median {sizes[len(sizes) // 2]}, largest {sizes[-1]})"
    )
    measure("corpus tree (" + ", ".join(r for r, _ in corpus.CORPUS) + ")", tree, len(files), reps)


def _not_python(folder: str, names: list[str]) -> list[str]:
    """``copytree`` filter: keep folders and Python files only (no binaries, headers, data)."""
    return [n for n in names if not n.endswith((".py", ".pyi")) and not os.path.isdir(os.path.join(folder, n))]


def main() -> None:
    """Parse the options, build the trees, print the figures."""
    parser = argparse.ArgumentParser(description=textwrap.dedent(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--files", type=int, default=2000, help="files in the generated tree")
    parser.add_argument(
        "--old-share",
        type=lambda v: [float(x) for x in v.split(",")],
        default=[0.05, 0.25],
        help="shares of files using old names, one generated tree each (default: 0.05,0.25)",
    )
    parser.add_argument("--reps", type=int, default=3, help="repetitions (the median is printed)")
    parser.add_argument("--real", type=Path, help="a real tree to copy and measure too")
    parser.add_argument(
        "--corpus",
        action="store_true",
        help="measure the real old-API libraries of benchmarks/corpus.py too (network, cached)",
    )
    parser.add_argument(
        "--bump-pydantic",
        default=shutil.which("bump-pydantic"),
        metavar="CMD",
        help="bump-pydantic command to compare with (default: on PATH)",
    )
    parser.add_argument("--bp-files", type=int, default=40, help="files in the bump-pydantic tree")
    args = parser.parse_args()
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load:.1f} at start")
    print(f"command: python {' '.join(sys.argv)}")
    with tempfile.TemporaryDirectory(prefix="bench_migrate_") as tmp:
        base = Path(tmp)
        for share in args.old_share:
            tree = base / f"generated-{share:g}"
            old, lines = generate(tree, args.files, share)
            print(f"\ngenerated tree: {args.files:,} files ({old} with old names, {share:.0%}), {lines:,} lines")
            measure(f"generated tree, {share:.0%} old-API files", tree, args.files, args.reps)
        if args.corpus:
            _measure_corpus(base / "corpus", args.reps)
        if args.real:
            real = base / "real"
            shutil.copytree(args.real, real, ignore=_not_python)
            count = sum(1 for p in real.rglob("*.py*") if p.suffix in (".py", ".pyi"))
            measure(f"real tree ({args.real})", real, count, args.reps)
        if args.bump_pydantic:
            _bump_pydantic(args.bump_pydantic, base, args.bp_files, args.old_share[0])
        else:
            print("\nbump-pydantic: not installed (give --bump-pydantic CMD to compare)")


if __name__ == "__main__":
    main()
