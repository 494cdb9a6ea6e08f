"""`memex discover`: what the roots hold, per export (a Slack export, a vault, a chat), and
what the walk skipped and why; `--files` lists each file."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from engine.cli.common import EXIT_OK, Parser, add_common, settings_from
from engine.index.exports import Export, exports, skipped_summary
from engine.index.routes import Discovery, Found, scan
from engine.settings import Settings
from engine.store import db
from engine.text import shown


def write_exports(told: Sequence[Export], discovery: Discovery, files: int, out: TextIO) -> None:
    for export in told:
        out.write(f"{shown(export.folder)}: {export.describe()}\n")
    for root in discovery.unlisted_roots:
        out.write(f"not looked at: {shown(root.root)} {root.reason}\n")
    for path, problem in discovery.problems:  # archives refused, files a check failed on
        out.write(f"not read: {shown(Path(path))}: {problem}\n")
    skipped = skipped_summary(discovery)
    if skipped:
        out.write(f"skipped: {skipped}\n")
    out.write(f"{files} file(s) in {len(told)} export(s)\n")


def nothing_found(settings: Settings) -> str:
    """What `memex reindex` says when no file under the roots was routed or recognised."""
    roots = ", ".join(shown(root) for root in settings.roots)
    return (
        f"nothing to index under {roots}: no file there matched a route or was recognised "
        "by its content; 'memex discover' shows what was skipped and why\n"
    )


def _changed(found: Sequence[Found], settings: Settings) -> list[Found]:
    known = db.known_files(settings.db_path)
    return [f for f in found if known.get(str(f.path)) != (f.mtime, f.size)]


def cmd_discover(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(
        prog="memex discover",
        description="What the roots hold: each export Memex reads, and what it skipped.",
    )
    add_common(p)
    p.add_argument("--changed", action="store_true", help="only files that need reindexing")
    p.add_argument("--files", action="store_true", help="one line per file")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    settings = settings_from(args)
    discovery = scan(settings)
    found = _changed(discovery.found, settings) if args.changed else list(discovery.found)
    if args.json:
        listed = [
            {"path": str(f.path), "source_type": f.source_type, "size": f.size} for f in found
        ]
        out.write(json.dumps(listed, indent=2) + "\n")
    elif args.files:
        for f in found:
            out.write(f"{f.source_type:<15} {f.path}\n")
        out.write(f"{len(found)} file(s)\n")
    else:
        write_exports(exports(found, settings.max_file_bytes), discovery, len(found), out)
    return EXIT_OK
