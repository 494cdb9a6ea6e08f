"""`memex maintenance [--no-vacuum] [--check] [--repair] [--json]` and `memex backup FILE`.

Exit codes: 0 done (and the check passed), 2 the backup's target exists (without --force) or
is the index, 3 no index, 4 the check found problems or damage (maintenance and backup check
the file first and refuse a damaged one), or another writer holds the index (maintenance
never waits for it), or the backup could not be written or failed its check; 5 SQLite's
write lock was held past the busy timeout. `--repair` of a damaged file moves it aside and
rebuilds the index from the files (0 when done).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

import apsw

from engine.cli.common import (
    EXIT_BUSY,
    EXIT_OK,
    EXIT_UNUSABLE,
    EXIT_USAGE,
    CliError,
    Parser,
    TerminalReporter,
    add_common,
    index_exit_code,
    print_stats,
    require_index,
    settings_from,
    tell,
)
from engine.index import recovery
from engine.index.maintenance import (
    BackupError,
    BackupRefused,
    MaintenanceBusy,
    backup,
    check_index,
    maintain,
)
from engine.index.reports import CheckReport, MaintenanceReport, MaintenanceResult
from engine.settings import Settings
from engine.store import db


def _mb(n: int) -> str:
    return f"{n / 1e6:.1f} MB"


def print_maintenance(m: MaintenanceReport, out: TextIO) -> None:
    out.write(
        f"size       {_mb(m.size_before.total)} -> {_mb(m.size_after.total)} "
        f"({_mb(m.bytes_reclaimed)} reclaimed)\n"
    )
    slots = m.dead_slots_before
    out.write(
        f"vectors    {m.vectors_rebuilt} rebuilt; dead slots before {slots.dead} "
        f"of {slots.allocated} ({slots.fraction:.0%})\n"
    )
    counts = m.counts_after
    out.write(f"rows       {counts.chunks} chunks, {counts.fts} FTS, {counts.vectors} vectors\n")
    timings = ", ".join(f"{k} {v:.2f}s" for k, v in m.timings.items())
    out.write(f"timings    {timings}" + ("" if m.vacuum else " (no VACUUM)") + "\n")


def print_check(c: CheckReport, out: TextIO) -> None:
    if c.note is not None:
        out.write(f"check      {'ok' if c.ok else 'PROBLEMS FOUND'}: {c.note}\n")
    else:
        counts = c.counts
        out.write(
            f"check      {'ok' if c.ok else 'PROBLEMS FOUND'}: {counts.chunks} chunks, "
            f"{counts.fts} FTS rows, {counts.embedded} embedded, "
            f"{counts.vectors} vectors\n"
        )
    for problem in c.problems:
        out.write(f"  problem: {problem}\n")


def print_result(result: MaintenanceResult, out: TextIO) -> None:
    if (r := result.repair) is not None:
        out.write(
            f"repair     FTS rebuilt, {r.vectors_rebuilt} vectors rebuilt, "
            f"{r.orphan_chunks_dropped} orphan chunk(s) dropped\n"
        )
    if result.maintenance is not None:
        print_maintenance(result.maintenance, out)
    if result.check is not None:
        print_check(result.check, out)


def maintenance_parser() -> Parser:
    p = Parser(
        prog="memex maintenance",
        description="Rebuild the vector index and VACUUM; or check / repair the index.",
    )
    add_common(p)
    p.add_argument("--no-vacuum", action="store_true", help="rebuild vectors only")
    p.add_argument("--check", action="store_true", help="integrity and row-count checks only")
    p.add_argument(
        "--repair",
        action="store_true",
        help="rebuild FTS and vectors from chunks; a damaged file is moved aside and the "
        "index rebuilt from the files",
    )
    p.add_argument("--json", action="store_true")
    return p


def cmd_maintenance(argv: Sequence[str], out: TextIO) -> int:
    args = maintenance_parser().parse_args(argv)
    settings = settings_from(args)
    require_index(settings, verify=False)  # each mode checks the file itself
    if args.repair and (reason := recovery.find_damage(settings.db_path)) is not None:
        return rebuild_damaged(settings, reason, args.json, out)
    try:
        if args.check and not args.repair:
            # Needs no writer lock: runs beside a watcher (SQLite's lock only while checking).
            result = MaintenanceResult(check=check_index(settings))
        else:
            result = maintain(settings, vacuum=not args.no_vacuum, do_repair=args.repair)
    except MaintenanceBusy as exc:
        raise CliError(str(exc), EXIT_UNUSABLE) from None
    except db.IndexError_ as exc:  # the integrity gate: damaged, nothing rewritten
        raise CliError(str(exc), index_exit_code(exc)) from None
    except apsw.BusyError as exc:  # a --check or another program held SQLite's write lock
        raise CliError(str(db.as_index_error(settings.db_path, exc)), EXIT_BUSY) from None
    except apsw.Error as exc:  # disk full during VACUUM, …: each step is one transaction
        raise maintenance_stopped(settings, exc) from None
    if args.json:
        out.write(json.dumps(result.as_json(), indent=2) + "\n")
    else:
        print_result(result, out)
    check = result.check
    return EXIT_UNUSABLE if check is not None and not check.ok else EXIT_OK


def maintenance_stopped(settings: Settings, exc: apsw.Error) -> CliError:
    """Why maintenance stopped: damage (which a damaged page can show as any error), or an
    error after which the index is as it was (each step is one transaction)."""
    reason = recovery.damage_behind(settings.db_path, exc)
    if reason is not None:
        return CliError(str(db.damaged(settings.db_path, reason)), EXIT_UNUSABLE)
    return CliError(f"maintenance stopped, the index is still consistent: {exc}", EXIT_UNUSABLE)


def rebuild_damaged(settings: Settings, reason: str, as_json: bool, out: TextIO) -> int:
    """`--repair` of a damaged file: moved aside, the index rebuilt from the files."""
    tell(f"the index is damaged ({reason}): moving it aside and rebuilding it from the files")
    reporter = TerminalReporter(sys.stderr)
    try:
        report = recovery.rebuild(settings, reason, reporter)
    except recovery.RebuildRefused as exc:
        raise CliError(str(exc), EXIT_UNUSABLE) from None
    finally:
        reporter.close()
    if as_json:
        out.write(json.dumps({"rebuilt": report.as_json()}, indent=2) + "\n")
    else:
        out.write(f"repair     the damaged index was moved to {report.moved_to}\n")
        print_stats(report.stats, out)
    return EXIT_OK


def cmd_backup(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(
        prog="memex backup",
        description="Write a consistent copy of the index (safe while indexing).",
    )
    add_common(p)
    p.add_argument("file", metavar="FILE")
    p.add_argument("--force", action="store_true", help="overwrite an existing file")
    args = p.parse_args(argv)
    settings = settings_from(args)
    require_index(settings, verify=False)  # the backup checks the index and its copy
    try:
        result = backup(settings, Path(args.file), force=args.force)
    except BackupRefused as exc:  # a usage problem: the target exists, or is the index
        raise CliError(str(exc), EXIT_USAGE) from None
    except BackupError as exc:
        raise CliError(str(exc), EXIT_UNUSABLE) from None
    except db.IndexError_ as exc:  # damaged (the target left as it was), busy
        raise CliError(str(exc), index_exit_code(exc)) from None
    out.write(f"backup     {result.path} ({_mb(result.bytes)}, {result.seconds:.1f}s)\n")
    return EXIT_OK
