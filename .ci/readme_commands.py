"""Print the shell commands of README.md's "Set up" section, one per line, in order.

``.ci/run`` runs exactly these, so the README and CI cannot drift apart: every line of every
```` ```bash ```` block of the section is a command (a trailing backslash joins the next line;
blank lines and ``#`` comments are left out). Exits 1, naming the problem, when the section or
its commands are missing.

    python .ci/readme_commands.py [README.md]
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SECTION = "Set up"


def setup_commands(readme: str) -> list[str]:
    """The commands of the ``## Set up`` section's bash blocks.

    Raises:
        ValueError: the section or its commands are missing.
    """
    found = re.search(rf"^## {re.escape(SECTION)}[ \t]*\n(.*?)(?=^## |\Z)", readme, re.M | re.S)
    if found is None:
        raise ValueError(f"no `## {SECTION}` section")
    commands: list[str] = []
    for block in re.findall(r"^```(?:bash|sh|shell)[ \t]*\n(.*?)^```", found.group(1), re.M | re.S):
        pending = ""
        for line in block.splitlines():
            if line.rstrip().endswith("\\"):
                pending += line.rstrip()[:-1]
                continue
            line, pending = pending + line, ""
            if line.strip() and not line.lstrip().startswith("#"):
                commands.append(line.strip())
    if not commands:
        raise ValueError(f"the `## {SECTION}` section has no ```bash block")
    return commands


def main(argv: list[str]) -> int:
    path = Path(argv[0]) if argv else Path(__file__).resolve().parent.parent / "README.md"
    try:
        commands = setup_commands(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        print(f"{path}: {err}", file=sys.stderr)
        return 1
    print("\n".join(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
