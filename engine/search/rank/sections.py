"""Note-level results: a note or meeting shown once, by its best section.

A long note is cut into sections and a long meeting into segments; a query about the note
matches several of them, and without grouping they fill the page with near-identical hits.
With `search.group_sections`, the candidates of one file of a grouped type
(`search.group_types`: notes, meetings and other documents; chat windows, mail and
one-record-per-line files are never grouped) become one candidate: its best section, the
one shown, scored

    best × (1 + lift × s / (s + 3))     s = the file's other sections in the pool

so a file many of whose sections match rises a little, never past (1 + lift) × its best
(a bounded lift: many matching sections never outweigh one better file). "In the pool"
means ranked by a retriever (BM25, the coverage list or the vector KNN) deep enough to be
fused: the same evidence every candidate has. The group keeps the best section's place in
the ranking inputs (its seq, its ranks) and says how many sections it stands for
(`sections`, `explain.sections`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from engine.search.context import SearchContext
from engine.search.hits import Hit

SATURATION = 3.0  # s at which a file has half of its lift


def section_lift(extra: int, lift: float) -> float:
    """The factor on a file's best score for `extra` more matching sections."""
    return 1.0 + lift * extra / (extra + SATURATION) if extra > 0 else 1.0


def group_sections(candidates: Sequence[Hit], types: Collection[str], lift: float) -> list[Hit]:
    """One candidate per file of a grouped type (its best section, lifted), sorted by
    score (ties keep their order); other types and candidates without a file pass as
    they are."""
    best: dict[str, tuple[int, Hit]] = {}
    counts: dict[str, int] = {}
    out: list[tuple[int, Hit]] = []
    for position, c in enumerate(candidates):
        if c.source_type not in types or not c.source_file or c.seq is None:
            out.append((position, c))
            continue
        counts[c.source_file] = counts.get(c.source_file, 0) + 1
        if c.source_file not in best or c.score > best[c.source_file][1].score:
            best[c.source_file] = (position, c)
    for file, (position, c) in best.items():
        n = counts[file]
        if n > 1:
            c = c.scaled("section_lift", section_lift(n - 1, lift)).evolve(sections=n)
            c = c.noted(sections=n)
        out.append((position, c))
    out.sort(key=lambda pc: (-pc[1].score, pc[0]))
    return [c for _, c in out]


class Sections:
    """The stage: `group_sections` when `search.group_sections` is on."""

    name = "sections"
    reads = ("settings",)
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        cfg = ctx.cfg
        if not cfg.group_sections:
            return hits
        return group_sections(hits, frozenset(cfg.group_types), cfg.group_lift)
