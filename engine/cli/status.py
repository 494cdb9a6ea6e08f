"""`memex status`: counts per source type, sizes, embedder, bloat, the last run."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence
from datetime import datetime
from typing import Any, TextIO

from engine.cli.common import EXIT_OK, Parser, add_common, require_index, settings_from
from engine.index.reports import IndexStatus
from engine.index.status import collect_status

LISTED_ERRORS = 10  # files with errors shown in full; --json lists every one
WIDTH = 100


def cmd_status(argv: Sequence[str], out: TextIO) -> int:
    p = Parser(prog="memex status", description="Counts, sizes, embedder, last run.")
    add_common(p)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    settings = settings_from(args)
    require_index(settings)
    status = collect_status(settings)
    if args.json:
        out.write(json.dumps(status.as_json(), indent=2) + "\n")
        return EXIT_OK
    print_status(status, out)
    return EXIT_OK


def print_status(status: IndexStatus, out: TextIO) -> None:
    out.write(f"index      {status.db} ({status.size_bytes / 1e6:.1f} MB)\n")
    out.write(f"embedder   {status.embedder or 'none'}\n")
    if (r := status.reembed) is not None:
        out.write(
            f"re-embed   to {r.target}: {r.done}/{r.total} chunks "
            "(search uses the old vectors until done; 'memex reindex' resumes)\n"
        )
    out.write(f"files      {status.files} ({problem_counts(status)})\n")
    print_errors(status.errors, out, status.indexed_with_errors)
    out.write(f"chunks     {status.chunks} (vectors {status.counts.vectors})\n")
    if status.vector_coverage < 1:
        missing = status.counts.chunks - status.counts.embedded
        out.write(
            f"vectors    {status.vector_coverage:.0%} embedded, {missing} to go: searchable by "
            "keywords now; 'memex reindex' or the running app embeds the rest\n"
        )
    for source_type, count in status.per_type.items():
        out.write(f"  {source_type:<16}{count:>8}\n")
    slots = status.vector_slots
    out.write(
        f"vec slots  {slots.live} live, {slots.dead} dead of {slots.allocated} "
        f"({slots.fraction:.0%})\n"
    )
    if status.maintenance_suggested:
        out.write(
            "suggest    run 'memex maintenance' to rebuild the vector index and reclaim space\n"
        )
    if status.last_run:
        out.write(f"last run   {describe_run(status.last_run)}\n")


def problem_counts(status: IndexStatus) -> str:
    """The files with a problem in words: "3 with errors", or "2 with errors, 1 indexed with
    a problem" when some file's text was indexed all the same (a warning, not an error)."""
    warned = sum(path in status.indexed_with_errors for path, _ in status.errors)
    errors = f"{len(status.errors) - warned} with errors"
    return f"{errors}, {warned} indexed with a problem" if warned else errors


def print_errors(
    errors: Sequence[tuple[str, str]], out: TextIO, indexed: frozenset[str] = frozenset()
) -> None:
    """Each file's problem whole, wrapped between words (never cut), the first few files:
    "error:" for a file that is not indexed, "warning:" for one in `indexed` (its text is)."""
    for path, message in errors[:LISTED_ERRORS]:
        lines = textwrap.wrap(
            f"{path}: {message}",
            WIDTH,
            initial_indent="  warning: " if path in indexed else "  error: ",
            subsequent_indent=" " * 9,
            break_long_words=False,
            break_on_hyphens=False,
        )
        out.write("\n".join(lines) + "\n")
    if len(errors) > LISTED_ERRORS:
        more = len(errors) - LISTED_ERRORS
        out.write(f"  … and {more} more ('memex status --json' lists every one)\n")


def describe_run(run: dict[str, Any]) -> str:
    """One line for the newest run-log record (or the older meta summary)."""
    when = run.get("at", "")
    if isinstance(when, float):
        when = datetime.fromtimestamp(when).strftime("%Y-%m-%dT%H:%M:%S")
    if run.get("kind") in ("maintenance", "check", "repair"):
        detail = (
            f"{run.get('bytes_reclaimed', 0) / 1e6:.1f} MB reclaimed"
            if "bytes_reclaimed" in run
            else ("ok" if run.get("ok") else "problems found")
        )
    else:
        detail = (
            f"{run.get('files')} file(s), {run.get('chunks_new', run.get('chunks'))} new "
            f"chunk(s), {run.get('error_count', run.get('errors'))} error(s)"
        )
    # A repair's record keeps its duration inside "repair".
    seconds = run.get("seconds", (run.get("repair") or {}).get("seconds"))
    took = "" if seconds is None else f", {seconds}s"
    return f"{run.get('kind', 'reindex')} {when}: {detail}{took}"
