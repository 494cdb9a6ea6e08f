"""The locate stage: each fused hit with the row a result shows, read in this search's
snapshot; a hit the snapshot lacks (a vector hit from a cache a commit ahead) is dropped."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.search.context import SearchContext
from engine.search.hits import ChunkRow, Hit
from engine.search.retrieve.rows import read_rows


def located(hits: Sequence[Hit], rows: Mapping[int, ChunkRow]) -> list[Hit]:
    """The chunk hits whose rows this snapshot holds, with their row, type, file and date
    (a vector hit from a cache a commit ahead may be missing here: it is dropped);
    profiles pass as they are."""
    out = []
    for h in hits:
        row = rows.get(h.seq) if h.seq is not None else None
        if row is not None:  # made afresh, not `replace`d: this runs on every candidate
            out.append(
                Hit(
                    h.score,
                    seq=h.seq,
                    source_type=row.source_type,
                    source_file=row.source_file,
                    content_date=row.content_date,
                    row=row,
                    ranks=h.ranks,
                    signals=h.signals,
                    notes=h.notes,
                    sections=h.sections,
                    related=h.related,
                )
            )
        elif h.seq is None:
            out.append(h)
    return out


class Locate:
    """The stage: each fused hit with its row (dropped when this snapshot lacks it)."""

    name = "locate"
    reads = ("conn", "rows")
    writes = ("rows",)

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        read_rows(ctx.conn, [h.seq for h in hits if h.seq is not None], ctx.rows)
        return located(hits, ctx.rows)
