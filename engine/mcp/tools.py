"""The MCP tools over one warm `Engine`: search, get, person, status. Nothing here writes.

Each tool is a `ToolSpec` in `TOOLS`: its name, description, arguments (engine/mcp/params.py)
and the `$defs` entry of engine/schemas/memex-v1.schema.json its result follows. A tool takes
the engine and its checked arguments and returns the JSON payload; an expected failure is a
`ToolFailure` (or one of the engine's errors) whose message is one sentence for the model.
This module does not import the MCP SDK (engine/mcp/server.py does).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.core import Engine
from engine.embedders import EmbedderError
from engine.index.status import collect_status
from engine.mcp.params import ArgumentError, Param, input_schema, read_arguments
from engine.mcp.records import ChunkView, PersonMentions
from engine.people import PeopleMatcher, profile_text
from engine.records import Person, SearchResult
from engine.search import MODES, NoIndexError, SearchError
from engine.search.present.neighbours import neighbours
from engine.settings import SettingsError
from engine.sources import PROFILE_TYPE
from engine.store import db
from engine.store.sql import chunks

MAX_LIMIT = 50
MAX_CONTEXT = 10
# `person` takes the newest of this many best mentions: a person-filtered search ranks by
# relevance, so the pool must be deep enough that its newest are the person's newest.
MENTION_POOL = 100
KNOWN_PEOPLE_SHOWN = 12

ToolFunction = Callable[[Engine, Mapping[str, Any]], dict[str, Any]]


class ToolFailure(RuntimeError):
    """A tool cannot answer as asked (unknown id, unknown person); one sentence."""


@dataclass(frozen=True)
class ToolSpec:
    """One MCP tool: what clients see of it and the function that answers it."""

    name: str
    title: str
    description: str
    params: tuple[Param, ...]
    output: str  # the `$defs` entry of the JSON schema its result follows
    function: ToolFunction

    def input_schema(self) -> dict[str, Any]:
        return input_schema(self.params)

    def call(self, engine: Engine, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check the arguments, then answer; raises ArgumentError or the tool's errors."""
        return self.function(engine, read_arguments(self.name, self.params, arguments))


# -- the tools ------------------------------------------------------------------------------


def search_tool(engine: Engine, args: Mapping[str, Any]) -> dict[str, Any]:
    response = engine.search(
        args["query"],
        args["limit"],
        args["source_types"],
        since=args["since"],
        until=args["until"],
        people=[args["person"]] if args["person"] else None,
        mode=args["mode"],
    )
    return response.as_json()


def get_tool(engine: Engine, args: Mapping[str, Any]) -> dict[str, Any]:
    chunk_id, context = args["id"], args["context"]
    searcher = engine.searcher()  # NoIndexError first: an id means nothing without an index
    if chunk_id.startswith("profile:"):
        return profile_view(engine, chunk_id).as_json()
    conn = searcher.conn
    with db.read_snapshot(conn):
        row = conn.execute(chunks.row_by_id_sql(), (chunk_id,)).fetchone()
        if row is None:
            raise ToolFailure(
                f"no chunk with id '{chunk_id}' in the index; ids come from search results"
            )
        around = neighbours(conn, chunk_id, before=context, after=context)
    cid, source_file, source_type, content, content_date, title, location, people, meta = row
    return ChunkView(
        id=cid,
        source_type=source_type,
        source_file=source_file,
        content=content,
        content_date=content_date,
        title=title,
        location=location,
        people=tuple(name for name in people.split("\n") if name),
        metadata=json.loads(meta) if meta else {},
        neighbours=tuple(around),
    ).as_json()


def profile_view(engine: Engine, profile_id: str) -> ChunkView:
    slug = profile_id.split(":", 1)[1]
    person = next((p for p in engine.people() if p.slug == slug), None)
    if person is None:
        raise ToolFailure(f"no known person with id '{profile_id}'; {_known_people(engine)}")
    return ChunkView(
        id=profile_id,
        source_type=PROFILE_TYPE,
        source_file=str(engine.settings.people_file),
        content=profile_text(person),
        title=person.name,
        people=(person.name,),
        profile=person,
    )


def person_tool(engine: Engine, args: Mapping[str, Any]) -> dict[str, Any]:
    name, limit = args["name"], args["limit"]
    engine.searcher()  # NoIndexError before "unknown person": the index is what is missing
    matcher = PeopleMatcher(engine.people())
    person = matcher.by_name(name) or matcher.find(name)
    if person is None:
        raise ToolFailure(f"no known person named '{name}'; {_known_people(engine)}")
    response = engine.search(person.name, MENTION_POOL, people=[person.name])
    mentions = newest_first([r for r in response.results if r.source_type != PROFILE_TYPE])
    return PersonMentions(name, person, tuple(mentions[:limit])).as_json()


def newest_first(results: list[SearchResult]) -> list[SearchResult]:
    """By content date, newest first; undated results last, in their ranked order."""
    dated = sorted((r for r in results if r.content_date), key=_date_key, reverse=True)
    return dated + [r for r in results if not r.content_date]


def _date_key(result: SearchResult) -> str:
    return result.content_date or ""


def status_tool(engine: Engine, args: Mapping[str, Any]) -> dict[str, Any]:
    engine.searcher()  # the same "no index; run 'memex reindex' or 'memex demo'" as search
    return collect_status(engine.settings).as_json()


def _known_people(engine: Engine) -> str:
    people: list[Person] = engine.people()
    if not people:
        return (
            "no people are known (none in the people directory, which 'memex reindex' "
            f"builds from the data, nor in {engine.settings.people_file})"
        )
    names = ", ".join(p.name for p in people[:KNOWN_PEOPLE_SHOWN])
    more = (
        f" and {len(people) - KNOWN_PEOPLE_SHOWN} more" if len(people) > KNOWN_PEOPLE_SHOWN else ""
    )
    return f"known people: {names}{more}"


# -- the registry ---------------------------------------------------------------------------

TOOLS: dict[str, ToolSpec] = {
    spec.name: spec
    for spec in (
        ToolSpec(
            "search",
            "Search Memex",
            "Search the user's own chats, meetings, mail, notes, journal, health data and "
            "people, offline. Use it whenever the user mentions a past event, person, "
            "decision or fact about their life. Returns ranked results with an id, source "
            "type, file, date, title, a snippet with the matched terms marked **like this**, "
            "and the whole chunk; pass an id to `get` for the text around it.",
            (
                Param("query", "text", "What to look for, in the user's words.", required=True),
                Param(
                    "limit",
                    "integer",
                    "How many results (default 10).",
                    default=10,
                    minimum=1,
                    maximum=MAX_LIMIT,
                ),
                Param(
                    "source_types",
                    "texts",
                    "Only these source types (e.g. slack, meeting, mail, note, journal; "
                    "`status` lists what the index holds in per_type).",
                ),
                Param("since", "date", "Only content dated on or after this day (YYYY-MM-DD)."),
                Param("until", "date", "Only content dated on or before this day (YYYY-MM-DD)."),
                Param("person", "text", "Only chunks naming this person (a name or alias)."),
                Param(
                    "mode",
                    "choice",
                    "hybrid (keywords and meaning, the default), vector (meaning) or bm25 "
                    "(keywords only).",
                    default="hybrid",
                    choices=MODES,
                ),
            ),
            "search_response",
            search_tool,
        ),
        ToolSpec(
            "get",
            "Read a result in context",
            "Read one search result in full with the chunks just before and after it in the "
            "same file (the messages around a chat window, the sections around a note), its "
            "file and location. A profile:<slug> id gives that person's card.",
            (
                Param("id", "text", "A result id from search or person.", required=True),
                Param(
                    "context",
                    "integer",
                    "How many chunks to show before and after it (default 2).",
                    default=2,
                    minimum=0,
                    maximum=MAX_CONTEXT,
                ),
            ),
            "get_response",
            get_tool,
        ),
        ToolSpec(
            "person",
            "Look up a person",
            "A person the user knows, by name or alias: their profile card (relationship, "
            "context, notes, interests, milestones from the people file; from the data: "
            "emails, phones, where they appear, first and last contact, latest "
            "conversations, whom they are seen with) and their most recent mentions, "
            "newest first.",
            (
                Param("name", "text", "The person's name or alias.", required=True),
                Param(
                    "limit",
                    "integer",
                    "How many mentions (default 10).",
                    default=10,
                    minimum=1,
                    maximum=MAX_LIMIT,
                ),
            ),
            "person_response",
            person_tool,
        ),
        ToolSpec(
            "status",
            "Index status",
            "What the index holds and how fresh it is: files and chunks per source type, "
            "the embedder, the share of chunks with vectors (vector_coverage) and the last "
            "indexing run.",
            (),
            "status_response",
            status_tool,
        ),
    )
}


# -- errors ---------------------------------------------------------------------------------

EXPECTED_ERRORS = (
    ArgumentError,
    ToolFailure,
    NoIndexError,
    SearchError,
    SettingsError,
)


def failure_message(exc: Exception) -> str | None:
    """The one sentence a model sees for an expected failure; None for a crash."""
    if isinstance(exc, EXPECTED_ERRORS):
        return str(exc)
    if isinstance(exc, EmbedderError):
        return f"the embedder is unusable: {exc}"
    if isinstance(exc, db.IndexError_):
        return f"the index is unusable: {exc}"
    if isinstance(exc, db.DAMAGE):  # a damaged page met by a query: the way to --repair
        return f"the index is unusable: {db.damaged(None, exc)}"
    return None
