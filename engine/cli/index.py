"""`memex reindex`, `memex discover` and `memex demo`: what is indexed, and indexing it."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import platformdirs

from engine.cli import discovery
from engine.cli.common import (
    EXIT_OK,
    EXIT_UNUSABLE,
    NO_ROOT,
    CliError,
    Parser,
    TerminalReporter,
    add_common,
    index_exit_code,
    print_stats,
    require_memex_file,
    settings_from,
    tell,
)
from engine.index.routes import root_errors
from engine.index.runs import reindex
from engine.resources import demo_dir
from engine.settings import load_settings
from engine.store import db

VECTORS_LATER = "chunks without a vector are found by keywords until a reindex embeds them"


def cmd_reindex(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(prog="memex reindex", description="Index what changed.")
    add_common(p)
    p.add_argument("--full", action="store_true", help="re-read every file")
    p.add_argument("paths", nargs="*", metavar="PATH")
    args = p.parse_args(argv)
    settings = settings_from(args)
    if not settings.roots:
        raise CliError(NO_ROOT)
    require_memex_file(settings.db_path, build=True)
    reporter = TerminalReporter(sys.stderr)
    try:
        stats = reindex(
            args.paths or None, settings=settings, reporter=reporter, full=args.full, on_wait=tell
        )
    except db.IndexError_ as exc:  # damaged, unwritable, disk full (4); busy (5)
        raise CliError(str(exc), index_exit_code(exc)) from None
    finally:
        reporter.close()
    print_stats(stats, out)
    if not args.paths and not stats.files and not stats.skipped and not stats.errors:
        out.write(discovery.nothing_found(settings))
    unlisted = root_errors(stats.errors, settings)
    if unlisted:  # a typo or an unmounted drive: nothing under it was deleted, nor read
        raise CliError("; ".join(unlisted), EXIT_UNUSABLE)
    failed = [message for path, message in stats.errors if path == "<embedder>"]
    if failed:  # a rejected key, a server down: keyword search works, vectors do not
        raise CliError(f"{failed[0]}; {VECTORS_LATER}", EXIT_UNUSABLE)
    return EXIT_OK


def cmd_discover(argv: Sequence[str], out: TextIO) -> int:
    return discovery.cmd_discover(argv, out)


def cmd_demo(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(prog="memex demo", description="Write the demo data layer and index it.")
    p.add_argument("dir", nargs="?", default=None, metavar="DIR")
    p.add_argument("--db", metavar="FILE")
    p.add_argument("--config", metavar="FILE")
    args = p.parse_args(argv)
    target = Path(args.dir or Path(platformdirs.user_data_dir("memex")) / "demo").expanduser()
    target = target.resolve()
    db_file = Path(args.db).resolve() if args.db else target / ".memex" / "memex.db"
    require_memex_file(db_file, build=True)
    shutil.copytree(demo_dir(), target, dirs_exist_ok=True)
    settings = load_settings(args.config, roots=[str(target)], db=str(db_file))
    reporter = TerminalReporter(sys.stderr)
    try:
        stats = reindex(settings=settings, reporter=reporter)
    finally:
        reporter.close()
    print_stats(stats, out)
    out.write(
        f"demo data in {target}\nsearch it with:\n"
        f'  memex --root {target} --db {db_file} --search "standup time"\n'
    )
    return EXIT_OK
