"""The report's section of bench.scan_options: each scan optimisation ON and OFF, per size.

The ON ÷ OFF ratios are computed from the file's own p50s, both arms of one run, timed
query by query in turn.
"""

from __future__ import annotations

from typing import Any

from bench.report.sections import Section
from bench.report.tables import markdown_table

PART = "Speed"
SIDES = (
    ("keyword", "keyword side (`bm25.top_rows`)"),
    ("vector", "vector side (`nearest_chunks`)"),
)


def size_label(size: str) -> str:
    chunks = int(size)
    return f"{chunks // 1_000_000}M" if chunks >= 1_000_000 else f"{chunks // 1000}k"


def agreement(arm: dict[str, Any]) -> str:
    """Identical lists, recall@10 against the exact scan where the lists may differ, and
    the p50s over the queries the optimisation acts on, where they are a subset."""
    same = f"{arm['same_lists']:.0%} same"
    if "subset" in arm:
        part = arm["subset"]
        same += f"; on the {part['n']} it prunes {part['on_p50']:.2f} vs {part['off_p50']:.2f} ms"
    if "recall10_on" in arm:
        return f"{same}; recall@10 {arm['recall10_on']:.3f} ON, {arm['recall10_off']:.3f} OFF"
    return same


def arm_row(name: str, size: str, arm: dict[str, Any]) -> list[str]:
    on, off = arm["on"], arm["off"]
    ratio = f"{on['p50'] / off['p50']:.2f}×" if off["p50"] else "–"
    return [
        name,
        size_label(size),
        f"{on['p50']:.2f} / {on['p95']:.2f}",
        f"{off['p50']:.2f} / {off['p95']:.2f}",
        ratio,
        agreement(arm),
        arm["verdict"],
    ]


def side_table(data: dict[str, Any], side: str) -> str:
    """One row per optimisation and size, the optimisations in the order measured."""
    sizes = sorted(data["sizes"], key=int)
    names = list(dict.fromkeys(n for s in sizes for n in data["sizes"][s][side]["arms"]))
    rows = [
        arm_row(name, size, data["sizes"][size][side]["arms"][name])
        for name in names
        for size in sizes
        if name in data["sizes"][size][side]["arms"]
    ]
    headers = ["optimisation", "size", "ON p50 / p95 ms", "OFF p50 / p95 ms", "ON ÷ OFF"]
    return markdown_table([*headers, "lists", "verdict"], rows)


def verdict_table(data: dict[str, Any]) -> str:
    rows = [
        [name, v["side"], size_label(v["size"]), v["verdict"]]
        for name, v in data["verdicts"].items()
    ]
    return markdown_table(["optimisation", "side", "judged at", "verdict"], rows)


def sizes_line(data: dict[str, Any]) -> str:
    parts = []
    for size in sorted(data["sizes"], key=int):
        figures = data["sizes"][size]
        vector, keyword = figures["vector"], figures["keyword"]
        parts.append(
            f"{size_label(size)}: {keyword['rows']:,} keyword rows "
            f"({keyword['scores_every_row']:.0%} of queries score every row), "
            f"{vector['parts']:,} parts, re-score depth {vector['rescore_depth']}, "
            f"load {figures['load_before']} → {figures['load_after']}, "
            f"peak RSS {figures['peak_rss_mb']:,.0f} MB"
        )
    return "; ".join(parts) + "."


def render(data: dict[str, Any]) -> str:
    lines = [
        f"k = {data['k']}, {data['queries']} queries; {sizes_line(data)}",
        "",
        verdict_table(data),
    ]
    for side, title in SIDES:
        lines += ["", f"The {title}:", "", side_table(data, side)]
    return "\n".join(lines)


SECTIONS = [
    Section(
        "Scan optimisations, each ON and OFF",
        "scan_options",
        render,
        ".venv/bin/python -m bench.scan_options",
        PART,
    )
]
