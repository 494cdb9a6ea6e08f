"""What every command shares: exit codes, the error that carries one, the parser, Settings.

Exit codes: 0 success (also with no results), 2 usage error (a bad flag or config value),
3 no index yet (or a file that is not Memex's, refused unwritten), 4 index or embedder
unusable (damaged, unwritable, disk full), 5 the index is busy (another program held its
write lock past the busy timeout). Errors are one sentence on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO

import apsw

from engine.records import IndexStats
from engine.settings import Settings, SettingsError, settings_from_options
from engine.store import db

EXIT_OK, EXIT_USAGE, EXIT_NO_INDEX, EXIT_UNUSABLE = 0, 2, 3, 4
EXIT_BUSY = 5
EXIT_INTERRUPTED = 130
NO_ROOT = "no data root configured: run 'memex roots add ~' (or another folder), or pass --root DIR"


class CliError(Exception):
    """An error with its exit code and a one-sentence message."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


class Parser(argparse.ArgumentParser):
    """argparse that raises a `CliError` (exit code 2) instead of exiting with usage."""

    def error(self, message: str) -> Any:
        raise CliError(f"{message} (see 'memex --help')", EXIT_USAGE)


def add_common(parser: argparse.ArgumentParser) -> None:
    """The options every command takes: `--root` (repeatable), `--db`, `--config`."""
    parser.add_argument("--root", action="append", metavar="DIR", help="data root (repeatable)")
    parser.add_argument("--db", metavar="FILE", help="index file")
    parser.add_argument("--config", metavar="FILE", help="config file (TOML)")


def settings_from(args: argparse.Namespace) -> Settings:
    """Settings from the config file and environment, then the common options
    (`engine.settings.settings_from_options`, which the desktop app reads them with too)."""
    try:
        return settings_from_options(args.root, args.db, args.config)
    except SettingsError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def index_exit_code(exc: db.IndexError_) -> int:
    """The exit code of an index that cannot be used: 3 none yet, 5 busy, 4 otherwise."""
    if isinstance(exc, db.NoIndexYet):
        return EXIT_NO_INDEX
    return EXIT_BUSY if isinstance(exc, db.IndexBusy) else EXIT_UNUSABLE


def tell(message: str) -> None:
    """A line on stderr while a command goes on (waiting for another writer, say)."""
    sys.stderr.write(f"memex: {message}…\n")
    sys.stderr.flush()


def require_index(settings: Settings, *, verify: bool = True) -> None:
    """Exit 3 with a hint when there is no index file yet, or the file is empty or not
    Memex's (`require_memex_file`); with `verify`, exit 4 with the way to --repair when
    the integrity gate finds it damaged (`require_sound`)."""
    if not settings.db_path.exists():
        raise CliError(f"no index at {settings.db_path}; run 'memex reindex' first", EXIT_NO_INDEX)
    require_memex_file(settings.db_path, build=False)
    if verify:
        require_sound(settings.db_path)


def require_memex_file(path: Path, *, build: bool) -> None:
    """Exit 3, one sentence, when the file at the index's path is another program's (or a
    folder), or is empty and the command builds no index (`build`): told before any lock
    file, WAL switch or marker is made beside it (engine/store/owner.py)."""
    try:
        db.claim(path, build=build)
    except db.IndexError_ as exc:
        raise CliError(str(exc), index_exit_code(exc)) from None


def require_sound(path: Path) -> None:
    """The integrity gate for a command that opens the index itself: SQLite's quick check
    (one read of the file). A damaged file: exit 4, one sentence, the way to --repair."""
    try:
        db.connect(path, create=False, verify_first=True).close()
    except db.IndexError_ as exc:
        raise CliError(str(exc), index_exit_code(exc)) from None
    except apsw.Error as exc:  # a read error, the disk: said as one sentence when it is
        error = db.as_index_error(path, exc)
        if error is None:
            raise
        raise CliError(str(error), index_exit_code(error)) from None


def print_stats(stats: IndexStats, out: TextIO) -> None:
    out.write(
        f"indexed {stats.files} file(s): {stats.chunks} new chunk(s), "
        f"{stats.unchanged_chunks} unchanged, {stats.deleted_chunks} deleted, "
        f"{stats.embedded} embedded, {stats.skipped} file(s) unchanged, "
        f"{len(stats.errors)} error(s) in {stats.seconds:.1f}s\n"
    )
    for path, message in stats.errors[:20]:
        out.write(f"  error: {path}: {message}\n")
    if len(stats.errors) > 20:
        out.write(f"  … and {len(stats.errors) - 20} more\n")
    for path in stats.empty_files[:20]:  # a note, not an error
        out.write(f"  note: {path}: no text to index\n")
    if len(stats.empty_files) > 20:
        out.write(f"  … and {len(stats.empty_files) - 20} more with no text\n")


class TerminalReporter:
    """Progress bars on a terminal, one per phase: files (keyword-searchable as soon as this
    bar ends), then vectors with their rate and time left; silence elsewhere."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._files: Any = None
        self._vectors: Any = None
        self.enabled = stream.isatty()

    def on_progress(self, done: int, total: int, path: str) -> None:
        if self.enabled:
            self._files = self._files or self._bar(total, "file", "files")
            self._files.update(done - self._files.n)

    def on_embedding(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self._vectors is None:
            self._close_files()
            self._vectors = self._bar(total, "chunk", "vectors")
        self._vectors.update(done - self._vectors.n)

    def on_error(self, path: str, message: str) -> None:
        pass

    def _bar(self, total: int, unit: str, label: str) -> Any:
        from tqdm import tqdm

        return tqdm(total=total, unit=unit, desc=label, file=self._stream, leave=False)

    def _close_files(self) -> None:
        if self._files is not None:
            self._files.close()
            self._files = None

    def close(self) -> None:
        self._close_files()
        if self._vectors is not None:
            self._vectors.close()
