"""The report's section on adversarial HTTP answer bodies (bench.hostile_bodies)."""

from __future__ import annotations

from typing import Any

from bench.report.operations import TRUST, section
from bench.report.sections import Section
from bench.report.tables import markdown_table


def size(count: int) -> str:
    return f"{count / 1024 / 1024:.0f} MB" if count >= 1024 * 1024 else f"{count // 1024} KB"


def old_check(row: dict[str, Any]) -> str:
    seconds = row["old_check_s"]
    return f"> {row['old_cap_s']:g} s (stopped)" if seconds is None else f"{seconds:.3f} s"


def render_hostile_bodies(data: dict[str, Any]) -> str:
    """The depth check before and after per body, then the searches against such a server."""
    checks = markdown_table(
        ["body", "size", "depth check before", "scan now (steps)", "whole read now", "outcome"],
        [
            [
                row["body"],
                size(row["bytes"]),
                old_check(row),
                f"{row['scan_s'] * 1000:.1f} ms ({row['scan_steps']})",
                f"{row['parse_json_s'] * 1000:.1f} ms",
                row["parse_json"],
            ]
            for row in data["bodies"]
        ],
    )
    searches = markdown_table(
        ["search against 1 MB of escaped quotes", "seconds (bound)", "results (mode)", "warning"],
        [
            [
                s["server"],
                f"{s['seconds']:.2f} s ({s['bound_s']:g} s)",
                f"{s['results']} ({s['mode']})",
                s["warning"],
            ]
            for s in data["searches"]
        ],
    )
    verdict = "yes" if data["ok"] else "**no**"
    return (
        f"{checks}\n\n{searches}\n\nEvery search within its bound + 1 s, with results: {verdict}."
    )


SECTIONS: list[Section] = [
    section(
        "Hostile answer bodies",
        "hostile_bodies",
        render_hostile_bodies,
        "bench.hostile_bodies",
        TRUST,
    ),
]
