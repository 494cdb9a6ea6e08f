"""Where the bundled resources live: the source tree, or a PyInstaller bundle."""

from __future__ import annotations

import sys
from pathlib import Path


def resource_dir() -> Path:
    frozen = getattr(sys, "_MEIPASS", None)
    candidates = [Path(frozen) / "resources"] if frozen else []
    candidates.append(Path(__file__).resolve().parent.parent / "resources")
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError("the resources folder is missing from this installation")


def demo_dir() -> Path:
    return resource_dir() / "demo"
