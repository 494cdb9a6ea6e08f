"""`memex --search QUERY …`: one search, printed as text or as one JSON object."""

from __future__ import annotations

import argparse
import json
import re
from typing import Any, TextIO

import apsw

from engine.cli.common import (
    EXIT_NO_INDEX,
    EXIT_OK,
    EXIT_UNUSABLE,
    EXIT_USAGE,
    CliError,
    Parser,
    add_common,
    index_exit_code,
    settings_from,
)
from engine.people.cards import carded
from engine.records import Person, SearchResult
from engine.search import MODES, NoIndexError, Searcher, SearchError, SearchResponse
from engine.search.query.inputs import safe_query
from engine.settings import Settings
from engine.store import db
from engine.store.directory import read_people, read_people_named
from engine.text import shown
from engine.warm.argv import END_OF_OPTIONS, FREE_TEXT_FLAGS

COMMAND_NAMES = (
    "roots, reindex, watch, maintenance, backup, discover, status, key, demo, mcp, opened, frecency"
)


# argparse's words for a flag given no value (`--search --json`, `--search` last).
_NO_VALUE = re.compile(r"argument (--[a-z-]+)(?:/\S+)?: expected one argument")
_VALUE_NAMES = {"--search": "a query", "--query": "a query", "--person": "a name"}


def missing_value(flag: str) -> str:
    """The sentence for a free-text flag without its value, and how to give one that
    starts with a dash. (`engine.warm.argv.glue_values` joins each value to its flag, and
    leaves a flag followed by a long option alone: argparse then finds no value.)"""
    what = _VALUE_NAMES.get(flag, "a value")
    return (
        f"{flag} needs {what} after it; for one that starts with '-', write "
        f"{flag} {END_OF_OPTIONS} TEXT (see 'memex --help')"
    )


class SearchParser(Parser):
    """The top-level parser; a free-text flag without its value is told in plain words."""

    def error(self, message: str) -> Any:
        found = _NO_VALUE.fullmatch(message)
        if found and found.group(1) in FREE_TEXT_FLAGS:
            raise CliError(missing_value(found.group(1)), EXIT_USAGE)
        return super().error(message)


def search_parser() -> argparse.ArgumentParser:
    """The top-level parser: `--search` and its filters, `--toggle`, `--self-test`."""
    p = SearchParser(
        prog="memex",
        description="Search one person's whole digital life, offline.",
        epilog=f"commands: {COMMAND_NAMES}. 'memex COMMAND --help' for each; --root, --db "
        "and --config go before or after the command. No arguments: the desktop app.",
    )
    add_common(p)
    p.add_argument(
        "--search",
        metavar="QUERY",
        help="search and print the results (a query that starts with '-': --search -- -QUERY)",
    )
    p.add_argument("--limit", type=int, default=None, metavar="N")
    p.add_argument("--source", action="append", metavar="TYPE", help="source type (repeatable)")
    dates = "a day (2026-05-31), month (2026-05), year or phrase ('last week')"
    p.add_argument("--since", metavar="DATE", help=f"from {dates}, inclusive")
    p.add_argument("--until", metavar="DATE", help=f"up to {dates}, inclusive")
    p.add_argument("--person", action="append", metavar="NAME")
    p.add_argument("--mode", choices=MODES, default="hybrid")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.add_argument("--explain", action="store_true", help="show each stage's effect")
    p.add_argument("--toggle", action="store_true", help="show/hide the running app's window")
    p.add_argument("--self-test", action="store_true", help="boot the window offscreen and check")
    p.add_argument("--screenshot", metavar="FILE")
    p.add_argument("--query", metavar="Q")
    p.add_argument("--version", action="store_true")
    return p


def format_result(n: int, r: SearchResult, explain: bool) -> str:
    date = (r.content_date or "")[:10]
    head = f"{n:>2}. [{r.source_type}] {date}  {r.title}".rstrip()
    if r.sections > 1:
        head += f"  ({r.sections} sections match)"
    if r.related:  # after the direct hits: context linked to one of them
        head = f"{n:>2}. related · [{r.source_type}] {date}  {r.title}".rstrip()
    lines = [head, "    " + " ".join(r.snippet.split())]
    if r.location or r.source_file:
        lines.append(f"    {r.source_file}" + (f" ({r.location})" if r.location else ""))
    if explain and r.explain:
        lines.append("    explain: " + ", ".join(f"{k}={v}" for k, v in r.explain.items()))
    return "\n".join(lines)


def format_dates(dates: dict[str, str | None]) -> str:
    """`dates: 2026-03-12 (from 'on 12 March')`, or a range: the days the search covered."""
    since, until, words = dates["since"], dates["until"], dates["from_query"]
    days = since if since == until else f"{since or '…'} – {until or '…'}"
    return f"dates: {days}" + (f" (from '{words}')" if words else "")


def print_response(response: SearchResponse, as_json: bool, explain: bool, out: TextIO) -> None:
    if as_json:
        payload = response.as_json()
        if explain:
            for item, r in zip(payload["results"], response.results, strict=True):
                item["explain"] = r.explain
            payload["stages"] = response.stages_json()
        out.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    for warning in response.warnings:
        out.write(f"warning: {warning}\n")
    if response.dates is not None:
        out.write(format_dates(response.dates) + "\n")
    if not response.results:
        out.write(f"No results for '{response.query}'.\n")
    for n, r in enumerate(response.results, start=1):
        out.write(format_result(n, r, explain) + "\n\n")
    out.write(
        f"{len(response.results)} hits · {response.took_ms:.0f} ms · {outcome_words(response)}\n"
    )
    unfiltered = response.outcome.filters.without_filters
    if unfiltered:  # a filter left (almost) nothing: what dropping it would give
        out.write(f"without the filters: {unfiltered} keyword match(es)\n")
    if explain:  # the pipeline as it ran: each stage, its time, the hits it kept
        out.write("stages:\n" + "".join(f"  {line}\n" for line in response.stage_lines()))


def outcome_words(response: SearchResponse) -> str:
    """The mode, and why it is keywords alone when vectors were asked for: "bm25 (fell back:
    embedder failed)"; "re-ranked" when the head was."""
    outcome, words = response.outcome, response.mode
    if outcome.fell_back and outcome.vector_miss is not None:
        words += f" (fell back: {outcome.vector_miss.value.replace('_', ' ')})"
    return words + (" · re-ranked" if outcome.reranked else "")


def cmd_search(args: argparse.Namespace, out: TextIO) -> int:
    settings = settings_from(args)
    check_limit(args)
    try:
        # One query: a vec0 scan is cheaper than loading every vector into memory.
        people = carded(people_for(args, settings), settings)
        searcher = Searcher(settings, vector_cache=False, keyword_index=False, people=people)
    except NoIndexError as exc:
        raise CliError(no_index_message(settings, exc), EXIT_NO_INDEX) from None
    except db.IndexError_ as exc:  # not Memex's file (3), damaged, unreadable (4)
        raise CliError(str(exc), index_exit_code(exc)) from None
    try:
        response = search_on(searcher, settings, args)
    finally:
        searcher.close()
    print_response(response, args.json, args.explain, out)
    return EXIT_OK


def people_for(args: argparse.Namespace, settings: Settings) -> list[Person]:
    """The people this one search can name: those whose names hold a word of the query
    (the answer is the one the whole directory gives, engine/store/directory.py), or
    everyone when --person filters, whose unknown names are told with the nearest known."""
    if args.person:
        return read_people(settings)
    return read_people_named(settings, safe_query(args.search))


def no_index_message(settings: Settings, exc: NoIndexError) -> str:
    """What to run when there is no index yet: add a folder first, or index the folders
    already configured. A file that is there but is no index keeps the engine's sentence."""
    if settings.db_path.exists():
        return str(exc)
    if not settings.roots:
        return (
            "no index yet, and no data folder to index: run 'memex roots add ~' "
            "(or another folder), then 'memex reindex'"
        )
    folders = ", ".join(shown(root) for root in settings.roots)
    return f"no index yet: run 'memex reindex' to index {folders}"


def check_limit(args: argparse.Namespace) -> None:
    if args.limit is not None and args.limit < 1:
        raise CliError("--limit must be at least 1")


def search_on(searcher: Searcher, settings: Settings, args: argparse.Namespace) -> SearchResponse:
    """The search `args` ask for; its errors as CliErrors. Shared with the warm path
    (engine/cli/warm.py), which brings a warm Engine's Searcher."""
    try:
        return searcher.search(
            args.search,
            args.limit,
            args.source,
            since=args.since,
            until=args.until,
            people=args.person,
            mode=args.mode,
            explain=args.explain,
        )
    except SearchError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    except apsw.Error as exc:  # a damaged page: the way forward, not a traceback
        from engine.index import recovery  # the indexer's side: loaded only on damage

        reason = recovery.damage_behind(settings.db_path, exc)
        if reason is None:
            raise
        raise CliError(str(db.damaged(settings.db_path, reason)), EXIT_UNUSABLE) from None
