"""`memex watch`: the file watcher, headless, in the foreground, one line per change.

Stops cleanly on Ctrl+C (SIGINT) and SIGTERM: the file being indexed is finished (each file is
its own transaction), queued work is dropped and caught up by the next start's reconcile.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Sequence
from types import FrameType
from typing import Any, TextIO

from engine.cli.common import (
    EXIT_OK,
    NO_ROOT,
    CliError,
    Parser,
    add_common,
    index_exit_code,
    require_memex_file,
    settings_from,
)
from engine.cli.warm import WarmEngine
from engine.index.indexer import Action, FileOutcome
from engine.index.watcher import Watcher
from engine.index.writer import BatchResult
from engine.settings import Settings
from engine.store import db


class WatchLog:
    """Writes one line per change (and per scan that changed something) to a stream."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self._lock = threading.Lock()

    def line(self, text: str) -> None:
        with self._lock:
            self.out.write(f"{time.strftime('%H:%M:%S')} {text}\n")
            self.out.flush()

    def indexed(self, batch: BatchResult) -> None:
        for change in batch.changes:
            self.line(describe(change))
        s = batch.stats
        if batch.kind != "paths" and (s.files or s.deleted_files or s.errors):
            self.line(
                f"{batch.kind}: {s.files} file(s) reindexed, {s.chunks} new chunk(s), "
                f"{s.deleted_chunks} deleted, {s.deleted_files} file(s) gone, "
                f"{len(s.errors)} error(s) in {s.seconds:.1f}s"
            )

    def error(self, path: str, message: str) -> None:
        self.line(f"error    {path}: {message}")

    def notice(self, message: str) -> None:
        self.line(f"notice   {message}")


def describe(change: FileOutcome) -> str:
    if change.action is Action.INDEXED:
        problems = f"; {change.message}" if change.message else ""
        return (
            f"indexed  {change.path} (+{change.new_chunks} new, -{change.deleted_chunks} "
            f"deleted, {change.unchanged_chunks} unchanged){problems}"
        )
    if change.action is Action.DELETED:
        return f"deleted  {change.path} (-{change.deleted_chunks} chunks)"
    return f"error    {change.path}: {change.message}"


_Handler = Callable[[int, FrameType | None], Any] | int | None


def _install_stop_handlers(stop: threading.Event) -> dict[signal.Signals, _Handler]:
    if threading.current_thread() is not threading.main_thread():
        return {}

    def handler(signum: int, _frame: FrameType | None) -> None:
        stop.set()

    previous: dict[signal.Signals, _Handler] = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        previous[sig] = signal.signal(sig, handler)
    return previous


def watch_settings(argv: Sequence[str]) -> Settings:
    """The Settings `memex watch ARGS` runs with (its own flags over the common ones)."""
    p = Parser(prog="memex watch", description="Watch the roots and keep the index fresh.")
    add_common(p)
    p.add_argument("--polling", action="store_true", help="poll instead of inotify/FSEvents")
    p.add_argument("--debounce", type=float, metavar="SECONDS", help="quiet period per file")
    args = p.parse_args(argv)
    settings = settings_from(args)
    if args.polling:
        settings = settings.with_values(watch__polling=True)
    if args.debounce is not None:
        settings = settings.with_values(watch__debounce_seconds=args.debounce)
    if not settings.roots:
        raise CliError(NO_ROOT)
    return settings


def cmd_watch(argv: Sequence[str], out: TextIO) -> int:
    settings = watch_settings(argv)
    require_memex_file(settings.db_path, build=True)  # before its lock file or engine
    log = WatchLog(out)
    warm = WarmEngine(settings, log.error)  # also answers `memex --search` (cli/warm.py)
    watcher = Watcher(
        settings,
        on_indexed=warm.after(log.indexed),
        on_error=log.error,
        on_notice=log.notice,
        writer=warm.engine.writer,
    )
    stop = threading.Event()
    previous = _install_stop_handlers(stop)
    try:
        catch_up = watcher.start()
        log.line(f"catching up with {len(settings.roots)} root(s), index {settings.db_path}")
        if warm.start(log.notice) and warm.server is not None:
            log.line(f"answering searches at {warm.server.address}")
        while not stop.wait(0.1) and not catch_up.done():
            pass
        failed = catch_up.exception() if catch_up.done() else None
        if isinstance(failed, db.IndexError_):  # unwritable, damaged: no batch could succeed
            raise CliError(str(failed), index_exit_code(failed))
        if not stop.is_set():
            log.line(
                f"watching with {'polling' if watcher.polling else 'native events'}, "
                f"debounce {settings['watch.debounce_seconds']}s; Ctrl+C to stop"
            )
        while not stop.wait(0.5):
            pass
        log.line("stopping")
    finally:
        watcher.stop()
        warm.close()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    log.line("stopped")
    return EXIT_OK
