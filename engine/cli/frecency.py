"""`memex opened ID` records that the user opened a result; `memex frecency` lists or clears.

A launcher or script that shows `memex --search … --json` results calls `memex opened
<id>` when the user picks one, as the app does on Enter; the next searches lift that result
a little (engine/search/frecency.py). The opens are kept in the index file, apart from its
content (engine/store/opens.py).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import TextIO

from engine.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    Parser,
    add_common,
    require_index,
    settings_from,
)
from engine.settings import Settings
from engine.store import db, opens
from engine.store.sql import chunks


def _clock(settings: Settings) -> datetime:
    return datetime.fromisoformat(settings.now) if settings.now else datetime.now()


def _source_file(settings: Settings, result_id: str) -> str:
    """The file of a result id (a chunk's, or the people file for profile:<slug>)."""
    if result_id.startswith("profile:"):
        return settings.people_file
    conn = db.connect(settings.db_path, create=False)
    try:
        row = conn.execute(chunks.position_by_id_sql(), (result_id,)).fetchone()
    finally:
        conn.close()
    if row is None:
        raise CliError(f"no result with id '{result_id}' in the index", EXIT_USAGE)
    return str(row[0])


def cmd_opened(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(prog="memex opened", description="Record that you opened these results.")
    add_common(p)
    p.add_argument("ids", nargs="+", metavar="ID", help="a result id from --search --json")
    args = p.parse_args(argv)
    settings = settings_from(args)
    require_index(settings)
    files = [(result_id, _source_file(settings, result_id)) for result_id in args.ids]
    for result_id, source_file in files:
        opens.record_open(settings.db_path, result_id, source_file, _clock(settings))
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
        out.write(f"cleared {opens.clear_opens(settings.db_path)} recorded opens\n")
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
