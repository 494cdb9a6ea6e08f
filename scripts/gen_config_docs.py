"""Regenerate the settings table in docs/configuration.md from engine.settings.SETTINGS."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.settings import SETTINGS  # noqa: E402
from engine.settings.checks import allowed  # noqa: E402

DOC = Path(__file__).resolve().parent.parent / "docs" / "configuration.md"
BEGIN, END = "<!-- settings:begin -->", "<!-- settings:end -->"


def table() -> str:
    rows = ["| setting | type | default | allowed | meaning |", "|---|---|---|---|---|"]
    for s in SETTINGS:
        default = repr(s.default) if s.name != "search.half_lives" else "see the SPEC §4 table"
        rows.append(f"| `{s.name}` | {s.type.__name__} | `{default}` | {allowed(s)} | {s.help} |")
    return "\n".join(rows)


def main() -> None:
    text = DOC.read_text()
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    DOC.write_text(f"{head}{BEGIN}\n{table()}\n{END}{tail}")


if __name__ == "__main__":
    main()
