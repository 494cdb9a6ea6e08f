"""The headless command line: `memex --search`, `reindex`, `discover`, `status`, `demo`.

Exit codes: 0 success (also with no results), 2 usage error, 3 no index yet,
4 index or embedder unusable. Errors are one sentence on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from engine import db
from engine.embedders import EmbedderError
from engine.indexer import reindex
from engine.records import IndexStats, SearchResult
from engine.resources import demo_dir
from engine.routes import discover
from engine.search import MODES, NoIndexError, Searcher, SearchError, SearchResponse
from engine.settings import Settings, SettingsError, load_settings
from engine.status import collect_status

EXIT_OK, EXIT_USAGE, EXIT_NO_INDEX, EXIT_UNUSABLE = 0, 2, 3, 4


class CliError(Exception):
    """An error with its exit code and a one-sentence message."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> Any:  # argparse would exit(2) with usage; we raise instead
        raise CliError(f"{message} (see 'memex --help')", EXIT_USAGE)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", action="append", metavar="DIR", help="data root (repeatable)")
    parser.add_argument("--db", metavar="FILE", help="index file")
    parser.add_argument("--config", metavar="FILE", help="config file (TOML)")


def search_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="memex", description="Search one person's whole digital life, offline.",
                epilog="commands: reindex, watch, maintenance, backup, discover, status, key, "
                       "demo. 'memex COMMAND --help' for each. No arguments: the desktop app.")
    _common(p)
    p.add_argument("--search", metavar="QUERY", help="search and print the results")
    p.add_argument("--limit", type=int, default=None, metavar="N")
    p.add_argument("--source", action="append", metavar="TYPE", help="source type (repeatable)")
    p.add_argument("--since", metavar="DATE")
    p.add_argument("--until", metavar="DATE")
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


def settings_from(args: argparse.Namespace) -> Settings:
    overrides: dict[str, Any] = {}
    if args.root:
        overrides["roots"] = [str(Path(r).expanduser().resolve()) for r in args.root]
    if args.db:
        overrides["db"] = str(Path(args.db).expanduser().resolve())
    try:
        return load_settings(args.config, **overrides)
    except SettingsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


# -- output -------------------------------------------------------------------------------------

def format_result(n: int, r: SearchResult, explain: bool) -> str:
    date = (r.content_date or "")[:10]
    head = f"{n:>2}. [{r.source_type}] {date}  {r.title}".rstrip()
    lines = [head, "    " + " ".join(r.snippet.split())]
    if r.location or r.source_file:
        lines.append(f"    {r.source_file}" + (f" ({r.location})" if r.location else ""))
    if explain and r.explain:
        lines.append("    explain: " + ", ".join(f"{k}={v}" for k, v in r.explain.items()))
    return "\n".join(lines)


def print_response(response: SearchResponse, as_json: bool, explain: bool, out: TextIO) -> None:
    if as_json:
        payload = response.as_json()
        if explain:
            for item, r in zip(payload["results"], response.results, strict=True):
                item["explain"] = r.explain
        out.write(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
        return
    for warning in response.warnings:
        out.write(f"warning: {warning}\n")
    if not response.results:
        out.write(f"No results for '{response.query}'.\n")
    for n, r in enumerate(response.results, start=1):
        out.write(format_result(n, r, explain) + "\n\n")
    out.write(f"{len(response.results)} hits · {response.took_ms:.0f} ms · {response.mode}\n")


def print_stats(stats: IndexStats, out: TextIO) -> None:
    out.write(f"indexed {stats.files} file(s): {stats.chunks} new chunk(s), "
              f"{stats.unchanged_chunks} unchanged, {stats.deleted_chunks} deleted, "
              f"{stats.embedded} embedded, {stats.skipped} file(s) unchanged, "
              f"{len(stats.errors)} error(s) in {stats.seconds:.1f}s\n")
    for path, message in stats.errors[:20]:
        out.write(f"  error: {path}: {message}\n")


class TerminalReporter:
    """A tqdm progress bar on a terminal; silence elsewhere."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._bar: Any = None
        self.enabled = stream.isatty()

    def on_progress(self, done: int, total: int, path: str) -> None:
        if not self.enabled:
            return
        if self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=total, unit="file", file=self._stream, leave=False)
        self._bar.update(done - self._bar.n)

    def on_error(self, path: str, message: str) -> None:
        pass

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()


# -- commands -----------------------------------------------------------------------------------

def cmd_search(args: argparse.Namespace, out: TextIO) -> int:
    settings = settings_from(args)
    if args.limit is not None and args.limit < 1:
        raise CliError("--limit must be at least 1")
    try:
        # One query: a vec0 scan is cheaper than loading every vector into memory.
        searcher = Searcher(settings, vector_cache=False)
    except NoIndexError as exc:
        raise CliError(str(exc), EXIT_NO_INDEX) from None
    except db.IndexError_ as exc:
        raise CliError(str(exc), EXIT_UNUSABLE) from None
    try:
        response = searcher.search(args.search, args.limit, args.source, since=args.since,
                                   until=args.until, people=args.person, mode=args.mode,
                                   explain=args.explain)
    except SearchError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    finally:
        searcher.close()
    print_response(response, args.json, args.explain, out)
    return EXIT_OK


def cmd_reindex(argv: Sequence[str], out: TextIO) -> int:
    p = _Parser(prog="memex reindex", description="Index what changed.")
    _common(p)
    p.add_argument("--full", action="store_true", help="re-read every file")
    p.add_argument("paths", nargs="*", metavar="PATH")
    args = p.parse_args(argv)
    settings = settings_from(args)
    if not settings.roots:
        raise CliError("no data root configured: pass --root DIR, set MEMEX_ROOT or 'roots' "
                       "in the config file")
    reporter = TerminalReporter(sys.stderr)
    try:
        stats = reindex(args.paths or None, settings=settings, reporter=reporter, full=args.full)
    except db.IndexError_ as exc:
        raise CliError(str(exc), EXIT_UNUSABLE) from None
    finally:
        reporter.close()
    print_stats(stats, out)
    return EXIT_OK


def cmd_discover(argv: Sequence[str], out: TextIO) -> int:
    p = _Parser(prog="memex discover", description="List the files the routes match.")
    _common(p)
    p.add_argument("--changed", action="store_true", help="only files that need reindexing")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    settings = settings_from(args)
    known: dict[str, tuple[float, int]] = {}
    if args.changed and settings.db_path.exists():
        conn = db.connect(settings.db_path, create=False)
        if db.has_schema(conn):
            known = {r[0]: (r[1], r[2]) for r in conn.execute(
                "SELECT source_file, mtime, size FROM index_state")}
        conn.close()
    found = [f for f in discover(settings)
             if not args.changed or known.get(str(f.path)) != (f.mtime, f.size)]
    if args.json:
        out.write(json.dumps([{"path": str(f.path), "source_type": f.source_type,
                               "size": f.size} for f in found], indent=2) + "\n")
    else:
        for f in found:
            out.write(f"{f.source_type:<15} {f.path}\n")
        out.write(f"{len(found)} file(s)\n")
    return EXIT_OK


def cmd_status(argv: Sequence[str], out: TextIO) -> int:
    p = _Parser(prog="memex status", description="Counts, sizes, embedder, last run.")
    _common(p)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    settings = settings_from(args)
    if not settings.db_path.exists():
        raise CliError(f"no index at {settings.db_path}; run 'memex reindex' first", EXIT_NO_INDEX)
    status = collect_status(settings)
    if args.json:
        out.write(json.dumps(status, indent=2) + "\n")
        return EXIT_OK
    out.write(f"index      {status['db']} ({status['size_bytes'] / 1e6:.1f} MB)\n")
    out.write(f"embedder   {status['embedder'] or 'none'}\n")
    if status.get("reembed"):
        r = status["reembed"]
        out.write(f"re-embed   to {r['to']}: {r['done']}/{r['total']} chunks "
                  "(search uses the old vectors until done; 'memex reindex' resumes)\n")
    out.write(f"files      {status['files']} ({len(status['errors'])} with errors)\n")
    out.write(f"chunks     {status['chunks']} (vectors {status['counts']['vectors']})\n")
    for source_type, count in status["per_type"].items():
        out.write(f"  {source_type:<16}{count:>8}\n")
    slots = status["vector_slots"]
    out.write(f"vec slots  {slots['live']} live, {slots['dead']} dead of {slots['allocated']} "
              f"({slots['fraction']:.0%})\n")
    if status["maintenance_suggested"]:
        out.write("suggest    run 'memex maintenance' to rebuild the vector index and reclaim "
                  "space\n")
    if status["last_run"]:
        out.write(f"last run   {describe_run(status['last_run'])}\n")
    return EXIT_OK


def describe_run(run: dict[str, Any]) -> str:
    """One line for the newest run-log record (or the older meta summary)."""
    when = run.get("at", "")
    if isinstance(when, float):
        when = datetime.fromtimestamp(when).strftime("%Y-%m-%dT%H:%M:%S")
    if run.get("kind") in ("maintenance", "check", "repair"):
        detail = (f"{run.get('bytes_reclaimed', 0) / 1e6:.1f} MB reclaimed"
                  if "bytes_reclaimed" in run else ("ok" if run.get("ok") else "problems found"))
    else:
        detail = (f"{run.get('files')} file(s), {run.get('chunks_new', run.get('chunks'))} new "
                  f"chunk(s), {run.get('error_count', run.get('errors'))} error(s)")
    return f"{run.get('kind', 'reindex')} {when}: {detail}, {run.get('seconds')}s"


def cmd_demo(argv: Sequence[str], out: TextIO) -> int:
    p = _Parser(prog="memex demo", description="Write the demo data layer and index it.")
    p.add_argument("dir", nargs="?", default=None, metavar="DIR")
    p.add_argument("--db", metavar="FILE")
    p.add_argument("--config", metavar="FILE")
    args = p.parse_args(argv)
    import platformdirs

    target = Path(args.dir or Path(platformdirs.user_data_dir("memex")) / "demo").expanduser()
    target = target.resolve()
    shutil.copytree(demo_dir(), target, dirs_exist_ok=True)
    db_file = Path(args.db).resolve() if args.db else target / ".memex" / "memex.db"
    settings = load_settings(args.config, roots=[str(target)], db=str(db_file))
    reporter = TerminalReporter(sys.stderr)
    try:
        stats = reindex(settings=settings, reporter=reporter)
    finally:
        reporter.close()
    print_stats(stats, out)
    out.write(f"demo data in {target}\nsearch it with:\n"
              f"  memex --root {target} --db {db_file} --search \"standup time\"\n")
    return EXIT_OK


COMMANDS: dict[str, Callable[[Sequence[str], TextIO], int]] = {
    "reindex": cmd_reindex, "discover": cmd_discover, "status": cmd_status, "demo": cmd_demo,
}


def register_command(name: str, func: Callable[[Sequence[str], TextIO], int]) -> None:
    COMMANDS[name] = func


def _load_plugins() -> None:
    # Commands that live in their own modules register themselves on import.
    import importlib

    for module in ("engine.maintenance_cli", "engine.watch_cli", "engine.keys_cli"):
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise


def _glue_values(argv: Sequence[str]) -> list[str]:
    """`--search -x` would read -x as an option: glue free-text values to their flag."""
    out: list[str] = []
    items = list(argv)
    i = 0
    while i < len(items):
        if items[i] in ("--search", "--query", "--person") and i + 1 < len(items):
            out.append(f"{items[i]}={items[i + 1]}")
            i += 2
        else:
            out.append(items[i])
            i += 1
    return out


def run(argv: Sequence[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run one headless command; returns the exit code. Used in-process by the tests."""
    out = out or sys.stdout
    err = err or sys.stderr
    try:
        _load_plugins()
        if argv and argv[0] in COMMANDS:
            return COMMANDS[argv[0]](argv[1:], out)
        args = search_parser().parse_args(_glue_values(argv))
        if args.version:
            from engine import __version__

            out.write(f"memex {__version__}\n")
            return EXIT_OK
        if args.search is None:
            raise CliError("nothing to do: give --search QUERY or a command (see 'memex --help')")
        return cmd_search(args, out)
    except CliError as exc:
        err.write(f"memex: {exc}\n")
        return exc.code
    except SettingsError as exc:
        err.write(f"memex: {exc}\n")
        return EXIT_USAGE
    except EmbedderError as exc:
        err.write(f"memex: the embedder is unusable: {exc}\n")
        return EXIT_UNUSABLE
    except db.IndexError_ as exc:
        err.write(f"memex: {exc}\n")
        return EXIT_UNUSABLE
    except KeyboardInterrupt:
        err.write("memex: interrupted\n")
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    return run(list(sys.argv[1:] if argv is None else argv))
