"""YAML configs through ``python -m compat.migrate``: the Python rules' answers, spliced into the YAML.

Fixtures: ``fixtures/yaml/<case>.in.yaml`` with ``<case>.out.yaml`` (``--target strategies``)
and ``<case>.lightning.out.yaml`` (``--target lightning``); the Trainer configs of the
lightning-hydra-template of 2021 in ``fixtures/real`` (see its SOURCES.md).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

pytest.importorskip("ruamel.yaml", reason="the YAML support needs ruamel.yaml (a core dependency)")

from ruamel.yaml import YAML  # noqa: E402

from compat import migrate  # noqa: E402

FIXTURES = Path(__file__).parent / "fixtures"
CASES = sorted((FIXTURES / "yaml").glob("*.in.yaml"))
TEMPLATE = FIXTURES / "real" / "lightning-hydra-template"


def run(*args: str) -> int:
    return migrate.main([*args, "-q"])


def _load(path: Path) -> list[object]:
    return list(YAML(typ="safe", pure=True).load_all(path.read_text(encoding="utf-8")))


@pytest.mark.parametrize("target", ["strategies", "lightning"])
@pytest.mark.parametrize("case", CASES, ids=lambda p: p.name)
def test_fixture(case: Path, target: str, tmp_path: Path) -> None:
    stem = case.name[: -len(".in.yaml")]
    expected = case.with_name(f"{stem}.lightning.out.yaml" if target == "lightning" else f"{stem}.out.yaml")
    work = tmp_path / "conf" / "config.yaml"
    work.parent.mkdir()
    shutil.copy(case, work)
    assert run("--target", target, str(tmp_path)) == 0
    assert work.read_text(encoding="utf-8") == expected.read_text(encoding="utf-8")
    assert run("--target", target, str(tmp_path)) == 0  # idempotent: no second TODO, no second edit
    assert work.read_text(encoding="utf-8") == expected.read_text(encoding="utf-8")


def test_hydra_config_keeps_comments_order_and_quoting() -> None:
    """What the fixture shows, spelled out (the same rule as `Trainer(gpus=2, accelerator='ddp')`)."""
    text = (FIXTURES / "yaml" / "hydra.out.yaml").read_text(encoding="utf-8")
    assert "  accelerator: cuda\n  devices: 2  # two cards per node\n  strategy: 'ddp'\n  max_epochs: 10\n" in text
    assert "  trainer: {accelerator: cuda, devices: 4, strategy: ddp, num_nodes: 2}\n" in text
    assert "_target_: strategies.DDPStrategy\n" in text and 'class_path: "strategies.DDPSpawnStrategy"' in text
    assert "  # TODO(compat.migrate): CM006 `gpus=` may be 0 or None here" in text  # ${oc.env:GPUS}
    assert "  gpus: ${oc.env:GPUS}\n" in text and "  gpus: 3  # not a Trainer: left alone\n" in text
    assert "  max_epochs: -1\n" in text
    assert text.startswith("# Hydra config of a Lightning 1.x project\ndefaults:\n  - _self_\n")


def test_real_hydra_template_configs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The lightning-hydra-template (2021): `configs/trainer/*.yaml` with `gpus:` and `accelerator: ddp`."""
    tree = tmp_path / "template"
    shutil.copytree(TEMPLATE, tree)
    before = {p.relative_to(tree): _load(p) for p in tree.rglob("*.yaml")}
    report = tmp_path / "report.json"
    assert migrate.main([str(tree), "--report", str(report)]) == 0
    files = json.loads(report.read_text())["files"]
    assert sorted(Path(f).name for f, status in files.items() if status == "changed") == [
        "all_params.yaml",
        "ddp.yaml",
        "default.yaml",
        "example_full.yaml",
    ]
    ddp = (tree / "configs/trainer/ddp.yaml").read_text()
    assert ddp == "defaults:\n  - default.yaml\n\naccelerator: cuda\ndevices: 4\nstrategy: ddp\n"
    default = (tree / "configs/trainer/default.yaml").read_text()
    assert default.startswith("_target_: strategies.Trainer\n\n# set `1` to train on GPU, `0` to train on CPU only\n")
    assert "# TODO(compat.migrate): CM006 gpus=0 or gpus=None meant CPU" in default
    experiment = (tree / "configs/experiment/example_full.yaml").read_text()
    assert "trainer:\n  _target_: strategies.Trainer\n" in experiment
    # Keys outside the Trainer and every value that did not change load as before.
    after = _load(tree / "configs/experiment/example_full.yaml")
    old = before[Path("configs/experiment/example_full.yaml")]
    assert after[0]["model"] == old[0]["model"] and after[0]["datamodule"] == old[0]["datamodule"]  # type: ignore[index]
    assert after[0]["trainer"]["max_epochs"] == 10  # type: ignore[index]
    capsys.readouterr()
    assert migrate.main(["--check", str(tree)]) == 1  # TODOs remain for a person: CI stays red
    assert "open TODOs:" in capsys.readouterr().err


def test_which_yaml_files_are_looked_at(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tree = tmp_path / "tree"
    (tree / ".github" / "workflows").mkdir(parents=True)
    (tree / "configs").mkdir()
    (tree / "deploy").mkdir()
    old = "trainer:\n  gpus: 2\n"
    (tree / ".github" / "workflows" / "ci.yml").write_text("jobs:\n  test:\n    gpus: 2  # pytorch_lightning\n")
    (tree / ".pre-commit-config.yaml").write_text("repos: []  # pytorch_lightning\n")
    (tree / "configs" / "data.yaml").write_text("batch_size: 32\n")  # a config folder: always looked at
    (tree / "deploy" / "k8s.yaml").write_text("kind: Deployment\n")  # mentions nothing: not listed
    (tree / "experiment.yml").write_text(old)  # mentions a Trainer key: looked at
    report = tmp_path / "report.json"
    assert migrate.main(["--check", str(tree), "--report", str(report)]) == 1
    files = json.loads(report.read_text())["files"]
    assert {Path(f).name: s for f, s in files.items()} == {"data.yaml": "unchanged", "experiment.yml": "changed"}


def test_unparsable_yaml_is_reported_and_untouched(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "conf" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text("trainer:\n  gpus: 2\n  accelerator: [ddp\n", encoding="utf-8")
    before = bad.read_bytes()
    assert run(str(tmp_path)) == 2
    assert "bad.yaml: does not parse as YAML" in capsys.readouterr().err
    assert bad.read_bytes() == before


def test_crlf_and_bom_are_kept(tmp_path: Path) -> None:
    path = tmp_path / "conf" / "trainer.yaml"
    path.parent.mkdir()
    path.write_bytes(b"\xef\xbb\xbftrainer:\r\n  gpus: 2\r\n  accelerator: ddp\r\n")
    assert run(str(tmp_path)) == 0
    assert path.read_bytes() == b"\xef\xbb\xbftrainer:\r\n  accelerator: cuda\r\n  devices: 2\r\n  strategy: ddp\r\n"


def test_diff_and_check_write_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "conf" / "trainer.yaml"
    path.parent.mkdir()
    path.write_text("trainer:\n  distributed_backend: ddp  # old name\n", encoding="utf-8")
    assert run("--diff", str(tmp_path)) == 1
    out = capsys.readouterr().out
    assert "-  distributed_backend: ddp  # old name\n+  strategy: ddp  # old name\n" in out
    assert run("--check", str(tmp_path)) == 1
    assert path.read_text() == "trainer:\n  distributed_backend: ddp  # old name\n"
