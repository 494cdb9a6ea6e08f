"""The re-ranking stage's pure parts: which candidates are sent, as what text, and the
order their scores give. Profiles and other non-chunk candidates keep their place."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from engine.parts import body_start
from engine.search.hits import ChunkRow, Hit


def document_text(row: ChunkRow, max_chars: int) -> str:
    """What the cross-encoder reads of a chunk: its title, then its text without the
    header lines the extractors write ("Meeting: …", "Tags: …"), cut at `max_chars`."""
    content = row.content or ""
    body = content[body_start(content) :].strip()
    title = (row.title or "").strip()
    text = f"{title}\n{body}" if title and body else title or body
    return text[:max_chars]


def head_positions(candidates: Sequence[Hit], depth: int) -> list[int]:
    """Positions, among the first `depth` candidates, of the chunks (with a row) to send."""
    return [i for i, c in enumerate(candidates[:depth]) if c.row is not None]


def finite(scores: Mapping[int, float], count: int) -> dict[int, float]:
    """The scores of documents 0..count-1 that are finite numbers."""
    return {i: float(s) for i, s in scores.items() if 0 <= i < count and math.isfinite(float(s))}


def reorder(
    candidates: Sequence[Hit], positions: Sequence[int], scores: Mapping[int, float]
) -> list[Hit]:
    """The candidates with those at `positions` (document i is `candidates[positions[i]]`)
    put back into the same positions by score, best first; ties and unscored documents keep
    their earlier order, unscored after scored. Each sent candidate is noted with its
    place before (`rank_before_rerank`) and, if scored, `rerank_score` and `rerank_rank`."""
    good = finite(scores, len(positions))
    order = sorted(range(len(positions)), key=lambda i: (i not in good, -good.get(i, 0.0), i))
    out = list(candidates)
    for rank, (slot, i) in enumerate(zip(positions, order, strict=True)):
        notes: dict[str, Any] = {"rank_before_rerank": positions[i] + 1}
        if i in good:
            notes.update(rerank_score=round(good[i], 6), rerank_rank=rank + 1)
        out[slot] = candidates[positions[i]].noted(**notes)
    return out
