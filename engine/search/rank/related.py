"""Related context: after the hits, a few chunks linked to the top hits (one hop).

With `search.related`, each of the first `search.related_from` direct hits offers what it
links to, in this order:

- **wikilink**: the notes its `[[wikilinks]]` name (the markdown extractor keeps their
  targets in metadata `links`), resolved as Obsidian does: by note title or file name.
- **record**: the record a structured record names by id (`Interview id: …` of an
  interview answer → the interview's own record, with its summary and follow-ups).
- **conversation**: a chat window's next window, then its previous one, when they belong to
  the same conversation (metadata `conversation`). Slack replies sit right after their
  parent (extractors/slack.py), so the next window carries a thread's replies on.

The links the data states (the first two) come first, for every top hit, then the
neighbouring windows.

The first `search.related_limit` of them that are not already on the page are appended
after the direct hits, outside the limit: a related result never displaces a direct one
and the `limit` direct hits are all still there. Each is marked `related` (JSON
`"related": true`, the app's "Related" badge), scored 0 and says in `explain` which hit
it hangs from and how. Not applied with filters: a filter asks to browse what it selects.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import apsw

from engine.search.context import SearchContext
from engine.search.hits import ChunkRow, Hit
from engine.search.rank.locate import located
from engine.search.retrieve.rows import chunk_rows
from engine.sources import SOURCE_TYPES
from engine.store.sql import chunks

Link = tuple[str, int, str]  # (from id, to seq, how)
MAX_WIKILINKS = 5  # link targets resolved per hit
_REFERENCE = re.compile(r"^[A-Z][\w ]* id: (\S+)$", re.MULTILINE)
# The records read field by field, which name each other by id (`Interview id: int-…`).
RECORD_TYPES = tuple(t.name for t in SOURCE_TYPES if t.reader == "structured")


def pick_related(direct: Sequence[Hit], links: Sequence[Link], limit: int) -> list[Hit]:
    """Up to `limit` related hits from `links` (in order), none already among `direct`
    and none twice; each marked related, scored 0, with its origin noted."""
    taken = {c.seq for c in direct if c.seq is not None}
    out: list[Hit] = []
    for origin, seq, how in links:
        if len(out) >= limit:
            break
        if seq in taken:
            continue
        taken.add(seq)
        out.append(Hit.chunk(seq, related=True, notes={"related_to": origin, "link": how}))
    return out


def conversation_links(conn: apsw.Connection, row: ChunkRow) -> Iterator[int]:
    """The next, then the previous window of the same conversation."""
    conversation = row.meta().get("conversation")
    if not conversation:
        return
    for near, metadata in conn.execute(chunks.around_seq_sql(), (row.seq,)).fetchall():
        if ChunkRow.meta_of(metadata).get("conversation") == conversation:
            yield int(near)


def wikilink_links(conn: apsw.Connection, row: ChunkRow) -> Iterator[int]:
    """The first chunk of each note the chunk's [[wikilinks]] name."""
    targets = row.meta().get("links") or []
    for target in [str(t) for t in targets if str(t).strip()][:MAX_WIKILINKS]:
        found = conn.execute(chunks.note_named_sql(), (target, f"/{target}.md")).fetchone()
        if found is not None:
            yield int(found[0])


def record_links(conn: apsw.Connection, row: ChunkRow) -> Iterator[int]:
    """The records a structured record names by id (`Interview id: int-…`)."""
    if row.source_type not in RECORD_TYPES:
        return
    sql = chunks.record_by_id_sql(len(RECORD_TYPES))
    for record_id in _REFERENCE.findall(row.content):
        found = conn.execute(sql, (*RECORD_TYPES, record_id)).fetchone()
        if found is not None:
            yield int(found[0])


def links_from(conn: apsw.Connection, hits: Sequence[Hit]) -> list[Link]:
    """Every link of these hits: the ones the data states (wikilinks, record ids) hit by
    hit first, then the neighbouring windows, hit by hit (a link the author wrote says
    more than being next in a conversation)."""
    stated: list[Link] = []
    around: list[Link] = []
    for hit in hits:
        row = hit.row
        if row is None:
            continue
        stated += [(row.id, s, "wikilink") for s in wikilink_links(conn, row) if s != row.seq]
        stated += [(row.id, s, "record") for s in record_links(conn, row) if s != row.seq]
        around += [(row.id, s, "conversation") for s in conversation_links(conn, row)]
    return stated + around


class Related:
    """The stage: the direct hits, then their related results, when `search.related` is
    on and no filter is set."""

    name = "related"
    reads = ("settings", "filters", "conn")
    writes = ()

    def __call__(self, ctx: SearchContext, hits: list[Hit]) -> list[Hit]:
        cfg = ctx.cfg
        if not cfg.related or not ctx.filters.empty or not hits:
            return hits
        heads = [h for h in hits if h.row is not None][: cfg.related_from]
        picked = pick_related(hits, links_from(ctx.conn, heads), cfg.related_limit)
        rows = chunk_rows(ctx.conn, [h.seq for h in picked if h.seq is not None])
        return [*hits, *located(picked, rows)]
