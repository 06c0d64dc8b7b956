"""The README's numbers and claims about the codemods and warnings agree with the code."""

from __future__ import annotations

import re
from pathlib import Path

from compat.renames import RENAMES

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_automatic_counts_come_from_the_table():
    automatic = sum(entry.automatic_for("strategies") for entry in RENAMES)
    match = re.search(r"(\d+) of the (\d+) old names", README)
    assert match, "the README no longer says how many names are rewritten automatically"
    assert (int(match.group(1)), int(match.group(2))) == (automatic, len(RENAMES)), (
        f"the table has {automatic} automatic entries of {len(RENAMES)}: update the README"
    )
    other = re.search(r"The other (\d+)\s+get a TODO", README)
    assert other and int(other.group(1)) == len(RENAMES) - automatic


def test_no_accelerator_is_rewritten_automatically_as_the_readme_says():
    accelerators = [e for e in RENAMES if e.member is None and e.old.rsplit(".", 1)[-1].endswith("Accelerator")]
    assert accelerators and not any(e.automatic for e in accelerators)
    assert "every custom `Accelerator`" in README


def test_warnings_are_described_per_call_site():
    assert "once\n  per call site" in README or "once per call site" in README
    assert "warning once" not in README


def test_cpu_only_install_is_given_before_the_install_command():
    """A reader on a CPU machine meets the CPU index before the line that would pull the CUDA build."""
    setup = README.split("## Set up", 1)[1].split("\n## ", 1)[0]
    cpu = setup.find("pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu")
    install = setup.find("```bash\npip install")
    assert cpu != -1, "the README no longer gives the CPU-only install"
    assert install != -1 and cpu < install, "the CPU-index advice must come before the install command"
    assert "**CUDA build**" in setup[:cpu]
