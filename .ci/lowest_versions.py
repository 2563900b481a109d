"""Print `name==X` for every runtime dependency `name>=X,...` in pyproject.toml.

`make test-min` installs exactly these, so the lowest versions the project declares are
the ones it tests (besides the newest, which `make test` gets).
"""

import re
import sys
import tomllib
from pathlib import Path

LOWER = re.compile(r"^\s*([A-Za-z0-9_.\-\[\],]+?)\s*>=\s*([^,;\s]+)")


def main() -> int:
    project = tomllib.loads(Path("pyproject.toml").read_text())["project"]
    for spec in project["dependencies"]:
        match = LOWER.match(spec)
        if match is None:
            print(f"pyproject.toml: dependency {spec!r} declares no lower bound", file=sys.stderr)
            return 2
        name, version = match.groups()
        bare = name.split("[")[0]  # extras are not part of a constraint
        print(f"{bare}=={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
