"""The warm process's side of `memex --search`: answer it with a warm Engine.

`search_server(engine_of, db_path)` makes the `WarmServer` (engine/warm/server.py) that
`memex watch` and the desktop app (through `engine.app_api.BackgroundServer`) run;
`SearchService` answers each request exactly as the one-shot path
(`engine.cli.search.cmd_search`) would have: the same parser, the same error sentences and
exit codes, the same printing, into strings the client writes out. What it cannot answer the same way (another identity, a command, `--help`, an unexpected error:
a damaged page, an engine closed by a settings change) it declines, and the client runs the
one-shot path, which then says it in its own words.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from engine.cli.common import EXIT_OK, CliError
from engine.cli.search import check_limit, print_response, search_on, search_parser
from engine.core import Engine
from engine.settings import Settings
from engine.warm.argv import Common, glue_values, is_plain_search
from engine.warm.identity import identity, named_identity
from engine.warm.server import WarmServer, decline, error

WARM_UP_QUERY = "memex"

PeopleStamp = tuple[tuple[str, int, int] | None, ...]


def answer(stdout: str, stderr: str, code: int) -> dict[str, Any]:
    return {"ok": True, "stdout": stdout, "stderr": stderr, "code": code}


def malformed(request: dict[str, Any]) -> str:
    """What is wrong with a search request's fields ('' when nothing)."""
    argv, common = request.get("argv"), request.get("common")
    if not isinstance(request.get("identity"), str):
        return "identity is not a string"
    if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv):
        return "argv is not a list of strings"
    if not isinstance(common, dict):
        return "common is not an object"
    return ""


class SearchService:
    """Answers search requests from the engine `engine_of()` returns (the app replaces its
    engine when its settings change, so it is asked each time)."""

    def __init__(self, engine_of: Callable[[], Engine], env: Mapping[str, str]) -> None:
        self.engine_of = engine_of
        self.env = env
        self._identity: tuple[Settings, str] | None = None
        self._people: PeopleStamp | None = None

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        problem = malformed(request)
        if problem:
            return error(f"malformed request: {problem}")
        engine = self.engine_of()
        if request["identity"] != self.identity_of(engine.settings):
            return decline("another index or other settings")
        from engine.cli import command_at  # engine.cli imports `watch`, which imports us

        glued = glue_values(request["argv"])
        if command_at(request["argv"]) is not None or not is_plain_search(glued):
            return decline("not a search")  # --help would print here, not in the client
        try:
            args = search_parser().parse_args(glued)
        except CliError as exc:
            return answer("", f"memex: {exc}\n", exc.code)
        except SystemExit:  # --help and its kin print: the one-shot path does that
            return decline("not a search")
        if args.version or args.search is None:
            return decline("not a search")
        if Common(args.root, args.db, args.config).as_json() != request["common"]:
            return decline("the client read --root/--db/--config otherwise")
        if not self.names_this_server(engine, request):
            return decline("its --root/--db/--config name another index or other settings")
        self.follow_people(engine)
        return self.search(engine, args)

    def search(self, engine: Engine, args: argparse.Namespace) -> dict[str, Any]:
        """One search on this thread's Searcher, printed as `cmd_search` prints it."""
        out = io.StringIO()
        try:
            check_limit(args)
            searcher = engine.searcher()  # this pool thread's own
            searcher.exact_vectors = True  # the one-shot path's answer (vec0 is exact)
            response = search_on(searcher, engine.settings, args)
        except CliError as exc:
            return answer("", f"memex: {exc}\n", exc.code)
        except Exception as exc:  # no index, damaged, closed: the one-shot path says it
            return decline(type(exc).__name__)
        print_response(response, args.json, args.explain, out)
        return answer(out.getvalue(), "", EXIT_OK)

    def names_this_server(self, engine: Engine, request: dict[str, Any]) -> bool:
        """The index, roots and settings the request's own options name are the server's
        (engine/warm/identity.py, `named_identity`); a config it cannot read is not."""
        cwd = request.get("cwd")
        try:
            named = named_identity(request["common"], cwd if isinstance(cwd, str) else "", self.env)
        except Exception:  # a config that will not load: the one-shot path says why
            return False
        return named is None or named == self.identity_of(engine.settings)

    def identity_of(self, settings: Settings) -> str:
        cached = self._identity
        if cached is not None and cached[0] is settings:
            return cached[1]
        digest = identity(settings, self.env)
        self._identity = (settings, digest)
        return digest

    def follow_people(self, engine: Engine) -> None:
        """The people file changed since the engine read it: read it again, as a one-shot
        search would (a watcher batch refreshes too, but the file need not be indexed)."""
        stamp = people_stamp(engine.settings)
        if stamp != self._people:
            self._people = stamp
            engine.refresh()

    def warm_up(self) -> None:
        """Load the model and the vector matrix before the first real request."""
        with contextlib.suppress(Exception):  # no index yet, say: the first request tells
            self.engine_of().search(WARM_UP_QUERY, 1)


def people_stamp(settings: Settings) -> PeopleStamp:
    stamps: list[tuple[str, int, int] | None] = []
    for root in settings.roots:
        path = Path(root) / settings.people_file
        try:
            info = os.stat(path)
        except OSError:
            stamps.append(None)
            continue
        stamps.append((str(path), info.st_mtime_ns, info.st_size))
    return tuple(stamps)


def search_server(
    engine_of: Callable[[], Engine], db_path: Path, env: Mapping[str, str] | None = None
) -> WarmServer:
    """The server (not started) that answers `memex --search` for `db_path` from
    `engine_of()`; `start()` it, then `warm_up()` runs on its pool."""
    env = os.environ if env is None else env
    return WarmServer(db_path, SearchService(engine_of, env), env)


def serve(
    engine_of: Callable[[], Engine], settings: Settings, on_notice: Callable[[str], None]
) -> WarmServer | None:
    """Start answering searches for `settings`' index (unless `search.warm_cli` is off),
    warming the engine up in the background; None, with a notice, when it cannot."""
    if not settings.search.warm_cli:
        return None
    server = search_server(engine_of, settings.db_path)
    if not server.start():
        on_notice(server.problem)
        server.close()
        return None
    service = server.handler
    if isinstance(service, SearchService):
        server.pool.submit(service.warm_up)
    return server


class _Errors:
    """A Reporter that passes only the writer's errors on (the watch log's lines)."""

    def __init__(self, on_error: Callable[[str, str], None]) -> None:
        self._on_error = on_error

    def on_progress(self, done: int, total: int, path: str) -> None:
        pass

    def on_embedding(self, done: int, total: int) -> None:
        pass

    def on_error(self, path: str, message: str) -> None:
        with contextlib.suppress(Exception):  # a failing log line must not stop the writer
            self._on_error(path, message)


class WarmEngine:
    """`memex watch`'s engine: its writer feeds the watcher and shares one model with the
    searches it answers over the socket once `start`ed; refreshed after every batch."""

    def __init__(self, settings: Settings, on_error: Callable[[str, str], None]) -> None:
        self.settings = settings
        self.engine = Engine(settings, reporter=_Errors(on_error))
        self.server: WarmServer | None = None

    def after(self, callback: Callable[[Any], None]) -> Callable[[Any], None]:
        """`callback`, then a refresh: the next search sees what the batch changed."""

        def both(batch: Any) -> None:
            callback(batch)
            self.engine.refresh()

        return both

    def start(self, on_notice: Callable[[str], None]) -> bool:
        self.server = serve(lambda: self.engine, self.settings, on_notice)
        return self.server is not None

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
        self.engine.close()
