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

import json
import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import apsw

from engine.search.dress import chunk_rows
from engine.search.filters import Filters
from engine.search.stages import Candidate
from engine.settings import SearchSettings
from engine.sources import SOURCE_TYPES
from engine.store.sql import chunks

Link = tuple[str, str, str]  # (from key, to key, how)
Rows = Mapping[int, Mapping[str, Any]]
MAX_WIKILINKS = 5  # link targets resolved per hit
_REFERENCE = re.compile(r"^[A-Z][\w ]* id: (\S+)$", re.MULTILINE)
# The records read field by field, which name each other by id (`Interview id: int-…`).
RECORD_TYPES = tuple(t.name for t in SOURCE_TYPES if t.reader == "structured")


def pick_related(direct: Sequence[Candidate], links: Sequence[Link], limit: int) -> list[Candidate]:
    """Up to `limit` related candidates from `links` (in order), none already among
    `direct` and none twice; each marked related, scored 0, with its origin noted."""
    taken = {c.key for c in direct}
    out: list[Candidate] = []
    for origin, key, how in links:
        if len(out) >= limit:
            break
        if key in taken:
            continue
        taken.add(key)
        out.append(Candidate(key, 0.0, related=True, explain={"related_to": origin, "link": how}))
    return out


def _metadata(row: Mapping[str, Any]) -> dict[str, Any]:
    try:
        data = json.loads(row.get("metadata") or "{}")
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def conversation_links(conn: apsw.Connection, seq: int, row: Mapping[str, Any]) -> Iterator[str]:
    """The next, then the previous window of the same conversation."""
    conversation = _metadata(row).get("conversation")
    if not conversation:
        return
    for near, metadata in conn.execute(chunks.around_seq_sql(), (seq,)).fetchall():
        if _metadata({"metadata": metadata}).get("conversation") == conversation:
            yield str(near)


def wikilink_links(conn: apsw.Connection, row: Mapping[str, Any]) -> Iterator[str]:
    """The first chunk of each note the chunk's [[wikilinks]] name."""
    targets = _metadata(row).get("links") or []
    for target in [str(t) for t in targets if str(t).strip()][:MAX_WIKILINKS]:
        found = conn.execute(chunks.note_named_sql(), (target, f"/{target}.md")).fetchone()
        if found is not None:
            yield str(found[0])


def record_links(conn: apsw.Connection, row: Mapping[str, Any]) -> Iterator[str]:
    """The records a structured record names by id (`Interview id: int-…`)."""
    if row.get("source_type") not in RECORD_TYPES:
        return
    sql = chunks.record_by_id_sql(len(RECORD_TYPES))
    for record_id in _REFERENCE.findall(str(row["content"])):
        found = conn.execute(sql, (*RECORD_TYPES, record_id)).fetchone()
        if found is not None:
            yield str(found[0])


def links_from(conn: apsw.Connection, hits: Sequence[Candidate], rows: Rows) -> list[Link]:
    """Every link of these hits: the ones the data states (wikilinks, record ids) hit by
    hit first, then the neighbouring windows, hit by hit (a link the author wrote says
    more than being next in a conversation)."""
    stated: list[Link] = []
    around: list[Link] = []
    for hit in hits:
        if not hit.key.isdigit() or int(hit.key) not in rows:
            continue
        row = rows[int(hit.key)]
        origin = str(row["id"])
        stated += [(origin, s, "wikilink") for s in wikilink_links(conn, row) if s != hit.key]
        stated += [(origin, s, "record") for s in record_links(conn, row) if s != hit.key]
        around += [(origin, s, "conversation") for s in conversation_links(conn, int(hit.key), row)]
    return stated + around


def appended(
    conn: apsw.Connection,
    shown: list[Candidate],
    rows: dict[int, dict[str, Any]],
    cfg: SearchSettings,
    filters: Filters,
) -> tuple[list[Candidate], dict[int, dict[str, Any]]]:
    """The pipeline's step: the direct hits, then their related results (with the rows
    to dress them), when `search.related` is on and no filter is set."""
    if not cfg.related or not filters.empty or not shown:
        return shown, rows
    heads = [c for c in shown if c.key.isdigit()][: cfg.related_from]
    picked = pick_related(shown, links_from(conn, heads, rows), cfg.related_limit)
    more = chunk_rows(conn, [c.key for c in picked if int(c.key) not in rows])
    merged = {**rows, **more}
    located = [
        Candidate(
            c.key,
            c.score,
            source_type=merged[int(c.key)]["source_type"],
            source_file=merged[int(c.key)]["source_file"],
            content_date=merged[int(c.key)]["content_date"],
            explain=c.explain,
            related=True,
        )
        for c in picked
        if int(c.key) in merged
    ]
    return [*shown, *located], merged
