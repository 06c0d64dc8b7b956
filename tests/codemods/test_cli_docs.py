"""What docs/codemods.md and the README say about the CLI is what the code does.

Every ``--flag`` they name exists in ``build_parser()`` and every flag is described outside the
generated reference; the exit-code table matches the codes the code returns and the ``--help``
epilog; every default written as ``(default: `X`)`` after a flag is the parser's default;
the documented pre-commit hook is the shipped one.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import pytest

from codemods.cli import _report
from compat import migrate

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "codemods.md").read_text(encoding="utf-8")
README = (REPO / "README.md").read_text(encoding="utf-8")
GENERATED = re.compile(r"<!-- BEGIN GENERATED cli.*?<!-- END GENERATED cli -->", re.S)
# Lines about other commands, whose flags are theirs (the benchmark, pip, pytest, ...).
FOREIGN = ("bench_migrate.py", "--bump-pydantic", "pip install", "pytest", "mkdocs", "pre-commit try-repo")
FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")


def parser_flags() -> dict[str, object]:
    return {flag: action for action in migrate.build_parser()._actions for flag in action.option_strings}


def mentioned_flags(text: str, only_migrate_lines: bool = False) -> set[str]:
    """The flags ``text`` names; with ``only_migrate_lines``, those after ``compat.migrate`` only."""
    found = set()
    for line in text.splitlines():
        if only_migrate_lines:
            for command in re.split(r"&&|;|\|", line):
                parts = re.split(r"compat[.-]migrate\b", command, maxsplit=1)
                if len(parts) == 2:
                    found.update(FLAG.findall(parts[1]))
        elif not any(marker in line for marker in FOREIGN):
            found.update(FLAG.findall(line))
    return found


def test_every_flag_the_docs_name_exists() -> None:
    known = parser_flags()
    prose = GENERATED.sub("", DOC)
    unknown = (mentioned_flags(prose) | mentioned_flags(README, only_migrate_lines=True)) - set(known)
    assert not unknown, f"docs name flags that `build_parser()` does not have: {sorted(unknown)}"


def test_every_flag_is_described_in_the_prose() -> None:
    prose = GENERATED.sub("", DOC)
    missing = {f for f in parser_flags() if f.startswith("--") and f != "--help"} - mentioned_flags(prose)
    assert not missing, f"docs/codemods.md describes these flags only in the generated table: {sorted(missing)}"


def _doc_exit_codes() -> dict[int, str]:
    section = DOC.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {int(code): text for code, text in re.findall(r"^\| (\d+) \| (.*) \|$", section, re.M)}


def _code_exit_codes() -> set[int]:
    returned = re.findall(r"return (\d+)", inspect.getsource(_report.Outcome.exit_code))
    exits = re.findall(r"(?:parser\.exit|return) \(?(\d+)", inspect.getsource(migrate.main))
    return {int(c) for c in returned + exits} | {2}  # 2: argparse's usage errors


def test_exit_codes_match_the_code_and_the_help() -> None:
    documented = _doc_exit_codes()
    assert set(documented) == _code_exit_codes()
    epilog = dict(re.findall(r"^  (\d+)\s+(.*)$", migrate.build_parser().epilog, re.M))
    assert set(map(int, epilog)) == set(documented)
    assert "TODO(compat.migrate)" in documented[1] and "--check" in documented[1]
    assert "Ctrl-C" in documented[130] and "Ctrl-C" in epilog["130"]


def test_documented_defaults_are_the_parsers() -> None:
    flags = parser_flags()
    defaults = re.findall(r"`(--[a-z-]+)[^`]*`\s*\(default:\s*`([^`]+)`", GENERATED.sub("", DOC))
    assert defaults, "no `--flag` (default: `X`) in docs/codemods.md"
    for flag, text in defaults:
        action = flags[flag]
        value = action.type(text) if callable(action.type) else text
        assert value == action.default, f"{flag}: the docs say {text!r}, the parser {action.default!r}"


def test_target_default_is_strategies(tmp_path: Path) -> None:
    assert re.search(r"`--target strategies` \(the default\)", DOC)
    report = tmp_path / "r.json"
    assert migrate.main([str(tmp_path), "--report", str(report), "-q"]) == 0
    assert '"target": "strategies"' in report.read_text()


def test_documented_hook_is_the_shipped_one() -> None:
    shipped = (REPO / ".pre-commit-hooks.yaml").read_text()
    section = DOC.split("## As a pre-commit hook", 1)[1]
    first_yaml = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    assert first_yaml == shipped
    assert "--check" in shipped.split("entry:", 1)[1].splitlines()[0]


@pytest.mark.parametrize("text", [README])
def test_readme_commands_use_real_flags(text: str) -> None:
    used = mentioned_flags(text, only_migrate_lines=True)
    assert "--diff" in used
    assert used <= set(parser_flags())
