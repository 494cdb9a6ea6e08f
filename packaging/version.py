"""The project's version, read without importing the engine (no numpy, no onnxruntime).

`engine/__init__.py`'s `__version__` is the source of truth; pyproject.toml's `version` must agree
(tests/test_packaging.py checks it). Used by build.spec and the Linux dist script:

    python packaging/version.py          # prints e.g. 0.1.0
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def read_version(root: Path = ROOT) -> str:
    tree = ast.parse((root / "engine" / "__init__.py").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__version__" for t in node.targets
        ):
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
    raise RuntimeError("engine/__init__.py defines no __version__ string")


if __name__ == "__main__":
    sys.stdout.write(read_version() + "\n")
