"""Regenerate engine/settings/views.pyi (the typed views mypy reads) from the SETTINGS table."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.settings.views import stub_text  # noqa: E402

STUB = Path(__file__).resolve().parent.parent / "engine" / "settings" / "views.pyi"


def main() -> None:
    STUB.write_text(stub_text(), encoding="utf-8")
    print(f"wrote {STUB}")


if __name__ == "__main__":
    main()
