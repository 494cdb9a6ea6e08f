"""`memex opened ID` records that the user opened a result; `memex frecency` lists or clears.

A launcher or script that shows `memex --search … --json` results calls `memex opened
<id>` when the user picks one, as the app does on Enter; the next searches lift that result
a little (engine/search/rank/frecency.py). The opens are kept in the index file, apart from its
content (engine/store/opens.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TextIO

import apsw

from engine.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    Parser,
    add_common,
    require_index,
    settings_from,
    tell,
)
from engine.index.locks import WAITING_FOR_LOCK
from engine.settings import Settings
from engine.store import db, opens
from engine.store.directory import read_people
from engine.store.sql import chunks
from engine.text import clean_text, is_clean

PROFILE = "profile:"  # a person's id (engine/search/rank/entity.py)


def _clock(settings: Settings) -> datetime:
    return datetime.fromisoformat(settings.now) if settings.now else datetime.now()


def _check_id(result_id: str) -> None:
    """An id holding bytes that are not UTF-8 (argv decoded with surrogateescape) names
    nothing: every id `--search --json` prints is plain UTF-8."""
    if not is_clean(result_id):
        raise CliError(
            f"the id '{clean_text(result_id)}' is not valid UTF-8, so no result has it; "
            "copy the id from 'memex --search … --json'; nothing was recorded",
            EXIT_USAGE,
        )


def _people_file(settings: Settings, result_id: str, slugs: set[str]) -> str:
    """The people file, for the id of a person who is in it."""
    if result_id.removeprefix(PROFILE) not in slugs:
        raise CliError(
            f"no person with id '{result_id}' in {settings.people_file} under the roots; "
            "nothing was recorded",
            EXIT_USAGE,
        )
    return settings.people_file


def _source_files(settings: Settings, result_ids: Sequence[str]) -> list[tuple[str, str]]:
    """(id, its file) for every id: a chunk's file, or the people file for profile:<slug>;
    one sentence (exit 2) for the first id that names nothing."""
    for result_id in result_ids:
        _check_id(result_id)
    slugs = {p.slug for p in read_people(settings)} if _any_profile(result_ids) else set()
    conn = db.connect(settings.db_path, create=False)
    try:
        if not db.has_schema(conn):  # an empty file, another program's database
            raise db.NoIndexYet(
                f"{settings.db_path} holds no Memex index yet; run 'memex reindex' first"
            )
        return [(r, _file_of(conn, settings, r, slugs)) for r in result_ids]
    finally:
        conn.close()


def _any_profile(result_ids: Sequence[str]) -> bool:
    return any(r.startswith(PROFILE) for r in result_ids)


def _file_of(conn: apsw.Connection, settings: Settings, result_id: str, slugs: set[str]) -> str:
    if result_id.startswith(PROFILE):
        return _people_file(settings, result_id, slugs)
    row = conn.execute(chunks.position_by_id_sql(), (result_id,)).fetchone()
    if row is None:
        raise CliError(f"no result with id '{result_id}' in the index; nothing was recorded")
    return str(row[0])


def _waiting() -> None:
    tell(WAITING_FOR_LOCK)


def cmd_opened(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(prog="memex opened", description="Record that you opened these results.")
    add_common(p)
    p.add_argument("ids", nargs="+", metavar="ID", help="a result id from --search --json")
    args = p.parse_args(argv)
    settings = settings_from(args)
    require_index(settings)
    files = _source_files(settings, args.ids)
    opens.record_opens(settings.db_path, files, _clock(settings), on_busy=_waiting)
    out.write(f"recorded {len(files)} open{'s' if len(files) != 1 else ''}\n")
    return EXIT_OK


def cmd_frecency(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(prog="memex frecency", description="The results you opened, or --clear them.")
    add_common(p)
    p.add_argument("--clear", action="store_true", help="forget every recorded open")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    settings = settings_from(args)
    require_index(settings)
    if args.clear:
        gone = opens.clear_opens(settings.db_path, on_busy=_waiting)
        out.write(f"cleared {gone} recorded opens\n")
        return EXIT_OK
    conn = db.connect(settings.db_path, create=False)
    try:
        listed = opens.opened(conn)
    finally:
        conn.close()
    if args.json:
        rows = [
            {"id": o.result_id, "file": o.source_file, "opens": o.count, "last": o.last}
            for o in listed
        ]
        out.write(json.dumps(rows, indent=2) + "\n")
        return EXIT_OK
    for o in listed:
        out.write(f"{o.last[:16]}  {o.count:>3}×  {o.result_id}  {o.source_file}\n")
    out.write(f"{len(listed)} results opened\n")
    return EXIT_OK
