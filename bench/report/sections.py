"""The report's sections, in order: a title, the result file, and the function that renders it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Render = Callable[[dict[str, Any]], str]


@dataclass(frozen=True)
class Section:
    title: str
    result: str  # bench/out/<result>.json
    render: Render
    command: str  # how to produce the result file, shown when it is missing
    part: str  # the report's top-level part this section sits in


def sections() -> list[Section]:
    """Every section, in the report's order (imported late: the renderers read no bench code)."""
    from bench.report import bodies, operations, relevance, scan, speed

    return [
        *relevance.SECTIONS,
        *speed.SECTIONS,
        *scan.SECTIONS,
        *operations.SECTIONS,
        *bodies.SECTIONS,
    ]
