"""The warm process a `memex --search` starts on first use: `python -m engine.cli.autostart`.

Started detached by the client (engine/warm/autostart.py) with the client's own
`--root/--db/--config`, environment and working folder, plus the identity the client
computed: it reads the same settings, and gives up at once when its own identity differs,
when the lock beside the socket is held (another process starts or serves this index), when
the index is not this user's, or when the socket's folder is someone else's. Otherwise it
holds the lock, loads the engine and warms it up, and only then listens (engine/cli/warm.py,
the server `memex watch` runs): a search that comes meanwhile finds no socket and answers
one-shot, never waits behind the warm-up. It exits after `search.warm_idle_minutes` without
a search, or on SIGTERM, SIGINT or SIGHUP, removing its socket; the kernel drops the lock.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from types import FrameType

from engine.cli.warm import SearchService
from engine.core import Engine
from engine.settings import Settings
from engine.warm import autostart
from engine.warm.identity import cli_settings, identity
from engine.warm.runtime import address_for
from engine.warm.server import WarmServer
from engine.warm.trust import Untrusted

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
MAX_TICK_SECONDS = 1.0  # how often the idle clock is read


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m engine.cli.autostart", add_help=False)
    p.add_argument("--identity", required=True)
    p.add_argument("--root", action="append")
    p.add_argument("--db")
    p.add_argument("--config")
    return p


def settings_to_serve(argv: Sequence[str], env: Mapping[str, str]) -> Settings | None:
    """The client's settings, when this process may serve them (None: give up quietly)."""
    args = parser().parse_args(argv)
    try:
        settings = cli_settings(args.root, args.db, args.config)
    except Exception:  # a config that no longer loads: the client's one-shot path says why
        return None
    if identity(settings, env) != args.identity or not autostart.wanted(settings, env):
        return None
    return None if autostart.index_problem(settings.db_path) else settings


def claim(settings: Settings, env: Mapping[str, str]) -> int | None:
    """The lock for this index's socket, held; None when another process holds it or the
    folder is not this user's."""
    try:
        address = address_for(settings.db_path, env, create=True)
    except (Untrusted, OSError):
        return None
    return autostart.take_lock(autostart.lock_path(address))


def stop_on_signals(stop: threading.Event) -> None:
    def handler(signum: int, _frame: FrameType | None) -> None:
        stop.set()

    for sig in STOP_SIGNALS:
        signal.signal(sig, handler)


def until_idle(server: WarmServer, idle_seconds: float, stop: threading.Event) -> None:
    """Return once no search was answered for `idle_seconds` and none is in hand, or on
    `stop`. Declined requests (another identity) do not keep the process alive."""
    tick = min(MAX_TICK_SECONDS, idle_seconds / 4)
    served, quiet_since = server.served, time.monotonic()
    while not stop.wait(tick):
        now = time.monotonic()
        if server.served != served or server.in_hand:
            served, quiet_since = server.served, now
        elif now - quiet_since >= idle_seconds:
            return


def serve_until_idle(settings: Settings, env: Mapping[str, str], stop: threading.Event) -> None:
    """Warm up an engine on `settings`, then answer searches until idle or stopped."""
    engine = Engine(settings)
    try:
        service = SearchService(lambda: engine, env)
        service.warm_up()
        server = WarmServer(settings.db_path, service, env)
        if stop.is_set() or not server.start():
            return
        try:
            until_idle(server, settings.search.warm_idle_minutes * 60, stop)
        finally:
            server.close()
    finally:
        engine.close()


def main(argv: Sequence[str] | None = None) -> int:
    """Exit code 0 whether it served or gave up: nobody reads it."""
    env = os.environ
    stop = threading.Event()
    stop_on_signals(stop)
    settings = settings_to_serve(sys.argv[1:] if argv is None else argv, env)
    if settings is None:
        return 0
    lock = claim(settings, env)
    if lock is None:
        return 0
    try:
        serve_until_idle(settings, env, stop)
    finally:
        os.close(lock)
    return 0


if __name__ == "__main__":
    sys.exit(main())
