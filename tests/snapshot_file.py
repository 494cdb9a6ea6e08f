"""Checked-in text snapshots: one `-- name` header per section, compared whole.

With MEMEX_UPDATE_SNAPSHOTS=1 the file is rewritten from what the test rendered instead;
review the diff before committing it.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

SNAPSHOTS = Path(__file__).parent / "snapshots"
HEADER = "-- "


def render(sections: dict[str, str]) -> str:
    """The snapshot file's text: sections in the given order, a blank line between them."""
    for name, text in sections.items():
        assert "\n" not in name, name
        assert not any(line.startswith(HEADER) for line in text.splitlines()), name
    return "\n".join(f"{HEADER}{name}\n{text.strip()}\n" for name, text in sections.items())


def parse(text: str) -> dict[str, str]:
    """Sections of a snapshot file by name (the inverse of `render`)."""
    sections: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(HEADER):
            current = sections.setdefault(line[len(HEADER) :], [])
        elif current is not None:
            current.append(line)
    return {name: "\n".join(lines).strip() for name, lines in sections.items()}


def check_snapshot(filename: str, sections: dict[str, str]) -> None:
    """Assert that `sections` match tests/snapshots/<filename> (or rewrite it, see above)."""
    path = SNAPSHOTS / filename
    text = render(sections)
    if os.environ.get("MEMEX_UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.exists(), f"no snapshot {path}: run with MEMEX_UPDATE_SNAPSHOTS=1"
    stored = path.read_text(encoding="utf-8")
    expected = parse(stored)
    got = parse(text)
    missing = [name for name in expected if name not in got]
    new = [name for name in got if name not in expected]
    changed = [name for name in got if name in expected and got[name] != expected[name]]
    diff = "\n".join(
        difflib.unified_diff(
            stored.splitlines(), text.splitlines(), str(path), "rendered", lineterm=""
        )
    )
    assert not (missing or new or changed), (
        f"{filename}: changed {changed}, new {new}, gone {missing} "
        f"(MEMEX_UPDATE_SNAPSHOTS=1 rewrites it)\n{diff}"
    )
    assert stored == text, f"{filename}: same sections, different layout\n{diff}"
