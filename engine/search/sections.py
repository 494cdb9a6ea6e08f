"""Note-level results: a note or meeting shown once, by its best section.

A long note is cut into sections and a long meeting into segments; a query about the note
matches several of them, and without grouping they fill the page with near-identical hits.
With `search.group_sections`, the candidates of one file of a grouped type
(`search.group_types`: notes, meetings and other documents; chat windows, mail and
one-record-per-line files are never grouped) become one candidate: its best section, the
one shown, scored

    best × (1 + lift × s / (s + 3))     s = the file's other sections in the pool

so a file many of whose sections match rises a little, never past (1 + lift) × its best
(a bounded lift: many matching sections never outweigh one better file). "In the pool" means ranked by a retriever (BM25,
the exact list or the vector KNN) deep enough to be fused: the same evidence every
candidate has. The group keeps the best section's place in the ranking inputs (its key, its
ranks) and says how many sections it stands for (`sections`, `explain.sections`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from engine.search.stages import Candidate
from engine.settings import SearchSettings

SATURATION = 3.0  # s at which a file has half of its lift


def section_lift(extra: int, lift: float) -> float:
    """The factor on a file's best score for `extra` more matching sections."""
    return 1.0 + lift * extra / (extra + SATURATION) if extra > 0 else 1.0


def group_sections(
    candidates: Sequence[Candidate], types: Collection[str], lift: float
) -> list[Candidate]:
    """One candidate per file of a grouped type (its best section, lifted), sorted by
    score (ties keep their order); other types and candidates without a file pass as
    they are."""
    best: dict[str, tuple[int, Candidate]] = {}
    counts: dict[str, int] = {}
    out: list[tuple[int, Candidate]] = []
    for position, c in enumerate(candidates):
        if c.source_type not in types or not c.source_file or not c.key.isdigit():
            out.append((position, c))
            continue
        counts[c.source_file] = counts.get(c.source_file, 0) + 1
        if c.source_file not in best or c.score > best[c.source_file][1].score:
            best[c.source_file] = (position, c)
    for file, (position, c) in best.items():
        n = counts[file]
        if n > 1:
            factor = section_lift(n - 1, lift)
            c = replace(c, score=c.score * factor, sections=n)
            c = c.noted(sections=n, section_lift=round(factor, 4))
        out.append((position, c))
    out.sort(key=lambda pc: (-pc[1].score, pc[0]))
    return [c for _, c in out]


def grouped(candidates: list[Candidate], cfg: SearchSettings) -> list[Candidate]:
    """The pipeline's step: `group_sections` when `search.group_sections` is on."""
    if not cfg.group_sections:
        return candidates
    return group_sections(candidates, frozenset(cfg.group_types), cfg.group_lift)
