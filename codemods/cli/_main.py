"""``python -m compat.migrate PATH...``: rewrite user code from the old API to the new one.

The codemods (``codemods/``) do the rewriting; this module is the command line around them
(``compat/migrate.py`` is its thin entry point, kept so the documented command stays the same).
It never imports torch nor the user's code: ``--help`` imports only the standard library, and a
run imports libcst and ``codemods`` (workers too). See ``docs/codemods.md``.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
from collections.abc import Sequence
from typing import Any

__all__ = ["build_parser", "main", "rule_summaries"]

PROG = "python -m compat.migrate"
TARGETS = ("strategies", "lightning")
NAMESPACES = ("lightning.pytorch", "pytorch_lightning")  # codemods.NAMESPACES, without importing codemods
OUTPUT_FORMATS = ("full", "concise", "json", "github", "sarif")  # codemods.cli._diagnostics.FORMATS

_DESCRIPTION = """\
Rewrite code written against the old PyTorch Lightning accelerator/plugin API (custom
accelerators, training-type plugins, cluster environments, Trainer arguments) to the new
strategy API, keeping formatting and comments. What cannot be rewritten safely gets a
`# TODO(compat.migrate): <rule> <hint>` comment and a line in the summary and the report.
Files are rewritten in place unless --check, --diff or --out is given."""

_EPILOG = """\
exit codes:
  0    done, or nothing to do
  1    --check/--diff: some files would change; --check: or TODO(compat.migrate) comments remain
  2    some files could not be processed (the others were), or bad usage
  130  interrupted (Ctrl-C): the workers were stopped, each file is as it was or fully migrated

Settings can also live in the nearest pyproject.toml, under [tool.compat.migrate]:
select, ignore, exclude (lists) and target (a string); command-line options win,
and --exclude adds to the configured patterns."""


def _default_jobs() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


DEFAULT_MAX_FILE_SIZE = "512k"
_SIZE_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3}


def _size(value: str) -> int | None:
    """``--max-file-size``: bytes, or with a ``k``/``m``/``g`` suffix (KiB...); 0 means no limit."""
    text = value.strip().lower().removesuffix("b").removesuffix("i")
    unit = text[-1:] if text[-1:] in _SIZE_UNITS else ""
    try:
        number = float(text[: len(text) - len(unit)])
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"`{value}` is not a size; give bytes or e.g. 512k, 2m (0: no limit)"
        ) from None
    if not math.isfinite(number) or number * _SIZE_UNITS[unit] >= 2**63:
        raise argparse.ArgumentTypeError(f"`{value}` is not a size; give bytes or e.g. 512k, 2m (0: no limit)")
    if number < 0:
        raise argparse.ArgumentTypeError(f"`{value}`: a size cannot be negative (0: no limit)")
    return int(number * _SIZE_UNITS[unit]) or None


def _integer(value: str, minimum: int, what: str, least: str) -> int:
    """An option's whole number of at least ``minimum``; a usage error (exit 2) otherwise."""
    try:
        number = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{value}` is not a number{what}") from None
    if number < minimum:
        raise argparse.ArgumentTypeError(f"`{value}`: give {least}")
    return number


def _jobs(value: str) -> int:
    return _integer(value, 1, " of processes", "at least 1 process")


DEFAULT_TIMEOUT = 300


def _seconds(value: str) -> float | None:
    """``--timeout``: seconds (a positive number); 0 means no limit."""
    try:
        seconds = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"`{value}` is not a number of seconds (0: no limit)") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise argparse.ArgumentTypeError(f"`{value}`: give a positive number of seconds (0: no limit)")
    return seconds or None


def _count(value: str) -> int:
    return _integer(value, 0, "", "0 or more")


def build_parser() -> argparse.ArgumentParser:
    """The command-line parser (``docs/codemods.md``'s CLI reference is generated from it)."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=_DESCRIPTION,
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to migrate")
    mode = parser.add_argument_group("what to do (default: rewrite the files in place)")
    mode.add_argument(
        "--check",
        action="store_true",
        help="write nothing; list the files that would change and the TODO(compat.migrate) comments "
        "left in the tree, and exit 1 if there is either (for CI)",
    )
    mode.add_argument(
        "--diff",
        action="store_true",
        help="write nothing; print a unified diff of every change and exit 1 if there is one",
    )
    mode.add_argument(
        "--out",
        metavar="DIR",
        help="write a migrated copy of the tree to DIR (a new folder outside the tree)",
    )
    rules = parser.add_argument_group("rules")
    rules.add_argument(
        "--target",
        choices=TARGETS,
        default=None,
        help="the API to migrate to: this project's `strategies` (default) or Lightning 2.x",
    )
    rules.add_argument(
        "--lightning-namespace",
        choices=NAMESPACES,
        default=None,
        help="with --target lightning: the package every Lightning import is written in "
        "(default: the one the project's dependency files name, else lightning.pytorch)",
    )
    rules.add_argument(
        "--select",
        action="append",
        metavar="RULE",
        help="run only these rules (ids or id prefixes, repeatable or comma-separated)",
    )
    rules.add_argument(
        "--ignore",
        action="append",
        metavar="RULE",
        help="do not run these rules (wins over --select)",
    )
    rules.add_argument("--list-rules", action="store_true", help="list the rules and exit")
    files = parser.add_argument_group("files")
    files.add_argument(
        "--exclude",
        action="append",
        default=[],
        metavar="GLOB",
        help="skip paths matching GLOB (gitignore syntax, relative to each PATH; repeatable); "
        ".gitignore files are respected and virtualenvs/site-packages are always skipped",
    )
    files.add_argument(
        "-j",
        "--jobs",
        type=_jobs,
        default=None,
        metavar="N",
        help="worker processes (default and most: the CPUs this process may use; never more than the files to parse)",
    )
    files.add_argument(
        "--max-file-size",
        type=_size,
        default=_size(DEFAULT_MAX_FILE_SIZE),
        metavar="SIZE",
        help=f"skip larger files, reported as 'too large' (bytes, or k/m suffixes; default: "
        f"{DEFAULT_MAX_FILE_SIZE}; 0: no limit)",
    )
    files.add_argument(
        "--timeout",
        type=_seconds,
        default=_seconds(str(DEFAULT_TIMEOUT)),
        metavar="SECONDS",
        help=f"stop the work on a file after SECONDS, reported as failed (a parser that hangs; "
        f"default: {DEFAULT_TIMEOUT}; 0: no limit)",
    )
    cache = parser.add_argument_group("cache")
    cache.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="where to keep the results cache (default: .compat_migrate_cache/ next to the "
        "project's pyproject.toml, else in the current folder; env COMPAT_MIGRATE_CACHE_DIR); "
        "delete it at any time",
    )
    cache.add_argument(
        "--no-cache",
        action="store_true",
        help="neither read nor write the cache (env COMPAT_MIGRATE_NO_CACHE=1)",
    )
    output = parser.add_argument_group("output")
    output.add_argument(
        "--report",
        metavar="FILE.json",
        help="write every change, TODO, failure and skip (with file:line and rule id) as JSON",
    )
    output.add_argument(
        "--output-format",
        choices=OUTPUT_FORMATS,
        default="full",
        help="how to show the sites found (edits that --check would make, TODOs), on standard output "
        "except `full`: `full` lists every TODO in the summary on stderr; `concise`: path:line:col: CM0xx "
        "message lines; `json`: the --report document; `github`: workflow annotations; `sarif`: SARIF 2.1.0 "
        "for code scanning",
    )
    output.add_argument(
        "--statistics",
        action="store_true",
        help="print a table of changes, TODOs and suppressed sites per rule on standard output "
        "instead of the sites (JSON with --output-format json)",
    )
    output.add_argument(
        "--max-todos",
        type=_count,
        default=None,
        metavar="N",
        help="list at most N TODOs in the summary (default: all)",
    )
    output.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no progress bar and no per-file lines; failures and the summary are still printed",
    )
    return parser


def _split(values: Sequence[str] | None) -> tuple[str, ...] | None:
    if values is None:
        return None
    return tuple(v.strip().upper() for value in values for v in value.split(",") if v.strip())


def _expand(ids: Sequence[str], known: Sequence[str], option: str) -> tuple[str, ...]:
    """Rule ids from ids or prefixes (``CM0``); raises ``ValueError`` naming the valid ids."""
    chosen: list[str] = []
    for item in ids:
        matches = [r for r in known if r == item or (item == "ALL") or r.startswith(item)]
        if not matches:
            raise ValueError(f"unknown rule `{item}` in {option}; valid rules: {', '.join(known)}")
        chosen.extend(m for m in matches if m not in chosen)
    return tuple(chosen)


def rule_summaries() -> list[tuple[str, str]]:
    """``(rule id, one-line summary)`` for every rule, in id order (the first docstring line)."""
    from codemods.cli._diagnostics import rule_summaries as summaries

    return summaries()


def _list_rules(stdout: object) -> int:
    for rule_id, text in rule_summaries():
        print(f"{rule_id}  {text}", file=stdout)  # type: ignore[call-overload]
    return 0


def _options(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Any:
    """Merge the command line with ``[tool.compat.migrate]`` into ``_runner.Options``."""
    from codemods.cli._config import ConfigError, load_config
    from codemods.cli._ignore import IgnoreSpec

    try:
        config = load_config(args.paths[0])
    except ConfigError as err:
        parser.exit(2, f"{PROG}: error: {err}\n")
    target = args.target or config.target or "strategies"
    if target not in TARGETS:
        parser.exit(2, f"{PROG}: error: {config.path}: `target` must be one of {', '.join(TARGETS)}, got `{target}`\n")
    import codemods
    from codemods.cli import _runner

    known = sorted(str(r) for r in codemods.Rule)  # the ids (a leaf): not the rules, which import libcst
    cli_select, cli_ignore = _split(args.select), _split(args.ignore)
    try:
        select = _expand(cli_select if cli_select is not None else config.select or (), known, "--select")
        ignore = _expand(cli_ignore if cli_ignore is not None else config.ignore, known, "--ignore")
    except ValueError as err:
        parser.exit(2, f"{PROG}: error: {err}\n")
    explicit = cli_select is not None or config.select is not None
    rules = tuple(r for r in (select if explicit else known) if r not in ignore)
    config_excludes = None
    if config.path and config.exclude:
        config_excludes = IgnoreSpec(
            os.path.dirname(os.path.realpath(config.path)), list(config.exclude), "pyproject exclude"
        )
    return _runner.Options(
        paths=tuple(args.paths),
        mode="diff" if args.diff else "check" if args.check else "out" if args.out else "write",
        target=target,
        lightning_namespace=(
            args.lightning_namespace or codemods.declared_namespace(args.paths) if target == "lightning" else None
        ),
        select=tuple(codemods.Rule(r) for r in rules) if (explicit or ignore) else None,
        ignore=(),
        rules=rules,
        exclude=tuple(args.exclude),
        config_excludes=config_excludes,
        jobs=_capped_jobs(args.jobs),
        report=args.report,
        out=args.out,
        quiet=args.quiet,
        max_size=args.max_file_size,
        timeout=args.timeout,
        cache_dir=_cache_dir(parser, args, config.path),
        output_format=args.output_format,
        statistics=args.statistics,
        max_todos=args.max_todos,
    )


def _cache_dir(parser: argparse.ArgumentParser, args: argparse.Namespace, config_path: str | None) -> str | None:
    """The cache folder, or ``None`` for no cache (``--no-cache``, ``COMPAT_MIGRATE_NO_CACHE``)."""
    from codemods.cli import _cache

    if args.no_cache or os.environ.get(_cache.ENV_OFF, "").strip().lower() not in ("", "0", "false", "no"):
        return None
    folder = args.cache_dir or os.environ.get(_cache.ENV_DIR) or _cache.default_dir(config_path)
    if os.path.lexists(folder) and (os.path.islink(folder) or not os.path.isdir(folder)):
        parser.exit(
            2,
            f"{PROG}: error: the cache folder `{folder}` is {'a symlink' if os.path.islink(folder) else 'not a folder'}"
            "; give another --cache-dir or --no-cache\n",
        )
    return os.path.abspath(folder)


def _capped_jobs(asked: int | None) -> int:
    """``--jobs``, at most the CPUs this process may use (more only add memory and switching)."""
    cores = _default_jobs()
    if asked is None:
        return cores
    if asked > cores:
        print(f"{PROG}: --jobs {asked} capped at {cores}, the CPUs available to this process", file=sys.stderr)
        return cores
    return asked


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code.

    Args:
        argv: the arguments (default: ``sys.argv[1:]``).
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.list_rules:
        return _list_rules(sys.stdout)
    if not args.paths:
        parser.error("give at least one PATH (a file or folder to migrate)")
    if args.out and (args.check or args.diff):
        parser.error("--out writes a migrated copy; it cannot be combined with --check or --diff")
    if args.diff and (args.output_format != "full" or args.statistics):
        parser.error("--diff prints the diff on standard output; use --check for --output-format/--statistics")
    if args.statistics and args.output_format in ("github", "sarif"):
        parser.error(f"--statistics prints a table (or JSON); it has no {args.output_format} form")
    options = _options(parser, args)
    from codemods.cli import _runner

    try:
        return _runner.run(options)
    except _runner.UsageError as err:
        parser.exit(2, f"{PROG}: error: {err}\n")
    except KeyboardInterrupt:  # before the migration started or after it ended (it reports its own)
        print(f"\n{PROG}: interrupted outside the migration; no file was being migrated", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
