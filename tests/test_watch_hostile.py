"""`memex watch` stays in hand while its servers send hostile answers: with the embedder and
the HTTP re-ranker both answering a megabyte of escaped quotes with no closing quote (the
body that once held the interpreter for an hour), and searches and file changes sending
them requests all along, the watcher answers its status request within 1 s every time and
SIGTERM ends it within 2 s.

The two bounds are the targets themselves: the scan of such a body takes milliseconds
(engine/jsonscan.py), so they hold with a wide margin; before it, neither was answered.
"""

from __future__ import annotations

import io
import json
import signal
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.cli import run
from engine.settings import Settings
from engine.warm import client
from tests.fake_openai import FakeOpenAI
from tests.fake_rerank import FakeRerank
from tests.test_bounded_passes import UNCLOSED
from tests.test_warm_cli import Watch, env, run_dir

__all__ = ["env", "run_dir"]  # fixtures, used by name

STATUS_SECONDS, STOP_SECONDS = 1.0, 2.0  # the targets
ROUNDS = 25  # status requests, 0.2 s apart, while the searches and the changes go on
HOSTILE = ("raw", 200, UNCLOSED)


class HostileOpenAI(FakeOpenAI):
    """Normal answers until `hostile`, then the unclosed megabyte to every request."""

    hostile = False

    def _next_failure(self) -> Any:
        return HOSTILE if self.hostile else super()._next_failure()


class HostileRerank(FakeRerank):
    hostile = False

    def _next_failure(self) -> Any:
        return HOSTILE if self.hostile else super()._next_failure()


@pytest.fixture
def servers() -> Iterator[tuple[HostileOpenAI, HostileRerank]]:
    embedder, rerank = HostileOpenAI().start(), HostileRerank("llama").start()
    yield embedder, rerank
    embedder.stop()
    rerank.stop()


@pytest.fixture
def config(
    settings_factory: Callable[..., Settings], servers: tuple[HostileOpenAI, HostileRerank]
) -> tuple[Path, Path]:
    """(a config file naming both servers, its root), the root's note indexed with normal
    answers."""
    settings = settings_factory()
    root = settings.roots[0]
    (root / "note.md").write_text("# Lunch\nDumplings at the night market.\n")
    embedder, rerank = servers
    path = settings.db_path.parent / "hostile.toml"
    path.write_text(
        f"roots = [{json.dumps(str(root))}]\ndb = {json.dumps(str(settings.db_path))}\n"
        f"log_dir = {json.dumps(str(settings.log_path.parent))}\n"
        f'[embedder]\nname = "openai"\nbase_url = "{embedder.base_url}"\ndimensions = 8\n'
        f'[rerank]\nbackend = "http"\nbase_url = "{rerank.base_url}"\n'
    )
    err = io.StringIO()
    assert run(["--config", str(path), "reindex"], io.StringIO(), err) == 0, err.getvalue()
    return path, root


def test_watch_answers_status_and_stops_while_its_servers_send_hostile_bodies(
    env: dict[str, str], config: tuple[Path, Path], servers: tuple[HostileOpenAI, HostileRerank]
) -> None:
    embedder, rerank = servers
    config_file, root = config
    watch = Watch(env, ["--config", str(config_file)])
    try:
        embedder.hostile = rerank.hostile = True
        seen = len(embedder.requests), len(rerank.requests)
        done = threading.Event()
        replies: list[dict[str, Any] | None] = []

        def search() -> None:  # warm searches: each query embedded, its hits re-ranked
            while not done.is_set():
                argv = ["--config", str(config_file), "--search", "dumplings", "--json"]
                replies.append(client.ask(argv, env))

        def change() -> None:  # the watcher embeds each new note
            for n in range(ROUNDS):
                (root / f"new-{n}.md").write_text(f"# Market {n}\nLeeks and dumplings.\n")
                if done.wait(0.2):
                    return

        workers = [threading.Thread(target=search), threading.Thread(target=change)]
        for worker in workers:
            worker.start()
        waits = []
        try:
            for _ in range(ROUNDS):
                started = time.monotonic()
                status = watch.status()
                waits.append(time.monotonic() - started)
                assert status["ok"] is True, status
                time.sleep(0.2)
        finally:
            done.set()
            for worker in workers:
                worker.join(timeout=60)
        assert len(embedder.requests) > seen[0] + 2 and len(rerank.requests) > seen[1] + 2
        answered = [r for r in replies if r is not None]
        assert answered, replies
        for reply in answered:
            said = json.loads(reply["stdout"])
            assert said["results"] and "not JSON (a string never closed)" in " ".join(
                said["warnings"]
            ), said
        assert max(waits) < STATUS_SECONDS, waits
        started = time.monotonic()
        watch.child.send_signal(signal.SIGTERM)
        code = watch.child.wait(timeout=60)
        stopped = time.monotonic() - started
        log = watch.log.read_text()
        assert code == 0 and "Traceback" not in log, log
        assert stopped < STOP_SECONDS, (stopped, log)
    finally:
        if watch.child.poll() is None:  # a watcher that ignored SIGTERM: no process left
            watch.child.kill()
        watch.stop()
