"""A warm server no client can hold: clients that never read their answer hold no worker,
a request no worker takes soon is declined "busy" (its client answers one-shot), and a
request whose own --db names another index is declined, whatever identity it carries.

Real servers on real Unix sockets; no timing is asserted: each test waits for an outcome
(a count, a reply) under a generous bound."""

from __future__ import annotations

import json
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import __version__
from engine.cli.warm import search_server
from engine.core import Engine
from engine.warm import client, server
from engine.warm.argv import common_options, glue_values
from engine.warm.identity import cli_settings, identity
from engine.warm.protocol import PROTOCOL
from engine.warm.server import WarmServer
from tests.test_socket_trust import QUERY, layer
from tests.test_warm_server import args, run_env

__all__ = ["args", "layer", "run_env"]  # fixtures, used by name

BIG = "x" * (8 << 20)  # far more than a socket buffer holds: a writer that waits would block
SEARCH = {"memex": PROTOCOL, "op": "search", "version": __version__, "token": ""}


def wait_for(condition: Callable[[], bool]) -> bool:
    """True once `condition` holds (a generous bound: no timing is asserted)."""
    for _ in range(6000):
        if condition():
            return True
        time.sleep(0.01)
    return False


def raw_request(address: Path, request: dict[str, Any]) -> socket.socket:
    """A client that sends its request line and then reads only when the test says."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(60)
    sock.connect(str(address))
    sock.sendall(json.dumps(request).encode() + b"\n")
    return sock


def lines_of(sock: socket.socket) -> list[dict[str, Any]]:
    """Every reply line until the server closes the connection."""
    with sock, sock.makefile("rb") as lines:
        return [json.loads(line) for line in lines]


WORKERS = 2  # the servers here: as many silent clients as workers hold none of them


@pytest.fixture
def big_answers(
    run_env: dict[str, str], args: list[str], monkeypatch: pytest.MonkeyPatch
) -> Iterator[WarmServer]:
    """A server of two workers whose every answer is 8 MB, its outbox's deadline short."""
    monkeypatch.setattr(server, "WORKERS", WORKERS)
    db = cli_settings([args[1]], args[3], args[5]).db_path
    big = {"ok": True, "stdout": BIG, "stderr": "", "code": 0}
    ours = WarmServer(db, lambda _request: dict(big), run_env)
    ours.outbox.deadline = 0.5
    assert ours.start()
    yield ours
    ours.close()


def test_clients_that_never_read_hold_no_worker(
    big_answers: WarmServer, run_env: dict[str, str], args: list[str]
) -> None:
    assert big_answers.address is not None
    silent = [raw_request(big_answers.address, SEARCH) for _ in range(WORKERS)]
    try:
        assert wait_for(lambda: big_answers.served == WORKERS)  # both answered
        assert big_answers.in_hand == 0  # no worker waits for them to read
        reply = client.ask([*args, *QUERY, "--json"], run_env)
        assert reply is not None and reply["stdout"] == BIG  # the warm server answered
        assert big_answers.served == WORKERS + 1
        assert wait_for(lambda: big_answers.outbox.dropped == WORKERS)
        assert big_answers.outbox.waiting_bytes == 0  # their bytes let go with them
    finally:
        for sock in silent:
            sock.close()


def test_twenty_clients_two_never_reading_against_a_slow_search_are_all_answered_warm(
    run_env: dict[str, str], args: list[str]
) -> None:
    """The scale of bench.warm_slow_clients on the server's own pool: 20 clients at once,
    every search 1 s slow (a re-ranker's wait), 2 of them sending a search whose answer is
    8 MB and never reading it. The 18 that read are all answered warm (none declined busy,
    none gave up on the server), and the 2 are let go at their write deadline."""
    db = cli_settings([args[1]], args[3], args[5]).db_path

    def slow(request: dict[str, Any]) -> dict[str, Any]:
        time.sleep(1.0)
        stdout = "a page of hits\n" if "argv" in request else BIG  # the silent: no argv
        return {"ok": True, "stdout": stdout, "stderr": "", "code": 0}

    ours = WarmServer(db, slow, run_env)
    ours.outbox.deadline = 0.5
    assert ours.start() and ours.address is not None
    silent = [raw_request(ours.address, SEARCH) for _ in range(2)]
    replies: list[dict[str, Any] | None] = []
    asking = [
        threading.Thread(target=lambda: replies.append(client.ask([*args, *QUERY], run_env)))
        for _ in range(18)
    ]
    try:
        for thread in asking:
            thread.start()
        for thread in asking:
            thread.join(timeout=120)
        assert len(replies) == 18, replies
        assert all(r is not None and r["stdout"] == "a page of hits\n" for r in replies), replies
        assert ours.busy == 0 and ours.served == 20
        assert wait_for(lambda: ours.outbox.dropped == 2) and ours.in_hand == 0
    finally:
        for sock in silent:
            sock.close()
        ours.close()


def test_a_reader_that_reads_gets_the_whole_answer_after_its_note(big_answers: WarmServer) -> None:
    assert big_answers.address is not None
    note, answer = lines_of(raw_request(big_answers.address, SEARCH))
    assert note == server.WORKING
    assert answer["ok"] is True and answer["stdout"] == BIG


def test_a_request_no_worker_takes_is_declined_busy(
    run_env: dict[str, str], args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server, "WORKERS", WORKERS)  # fewer workers than requests in hand
    release = threading.Event()
    taken = threading.Semaphore(0)

    def held(_request: dict[str, Any]) -> dict[str, Any]:
        taken.release()
        release.wait(120)
        return {"ok": True, "stdout": "late\n", "stderr": "", "code": 0}

    db = cli_settings([args[1]], args[3], args[5]).db_path
    ours = WarmServer(db, held, run_env)
    assert ours.start() and ours.address is not None
    holding = [raw_request(ours.address, SEARCH) for _ in range(WORKERS)]
    try:
        for _ in range(WORKERS):
            assert taken.acquire(timeout=60)  # every worker is busy with a long search
        waiting = raw_request(ours.address, SEARCH)
        assert lines_of(waiting) == [{"ok": False, "decline": "busy"}]  # not the late answer
        assert not release.is_set() and ours.busy == 1
        assert client.ask([*args, *QUERY], run_env) is None  # so a client answers one-shot
    finally:
        release.set()
        for sock in holding:
            assert lines_of(sock)[-1]["stdout"] == "late\n"
        ours.close()


@pytest.fixture
def service(layer: list[str], run_env: dict[str, str]) -> Iterator[WarmServer]:
    """The real search service over a small index (the watcher's and the app's)."""
    settings = cli_settings([layer[1]], layer[3], layer[5])
    with Engine(settings) as engine:
        ours = search_server(lambda: engine, settings.db_path, run_env)
        assert ours.start()
        yield ours
        ours.close()


def request_for(argv: list[str], layer: list[str], env: dict[str, str], cwd: str) -> dict[str, Any]:
    """A search request with the identity of the server's own settings (`layer`'s)."""
    common = common_options(glue_values(argv))
    assert common is not None
    settings = cli_settings([layer[1]], layer[3], layer[5])
    return {
        **SEARCH,
        "identity": identity(settings, env),
        "argv": argv,
        "common": common.as_json(),
        "cwd": cwd,
    }


def test_a_request_whose_db_names_another_index_is_declined(
    service: WarmServer, layer: list[str], run_env: dict[str, str], tmp_path: Path
) -> None:
    assert service.address is not None
    other = tmp_path / "other.db"
    argv = [*layer[:3], str(other), *layer[4:], *QUERY, "--json"]
    replies = lines_of(raw_request(service.address, request_for(argv, layer, run_env, "/")))
    assert replies[-1]["ok"] is False and "another index" in replies[-1]["decline"], replies
    assert service.served == 0 and not other.exists()
    # The same index named by a relative path from the client's folder is this server's.
    here = Path(layer[3]).parent
    argv = [*layer[:3], Path(layer[3]).name, *layer[4:], *QUERY, "--json"]
    replies = lines_of(raw_request(service.address, request_for(argv, layer, run_env, str(here))))
    assert replies[-1]["ok"] is True and json.loads(replies[-1]["stdout"])["results"], replies
    # Without the client's folder, a relative path names nothing the server can check.
    replies = lines_of(raw_request(service.address, request_for(argv, layer, run_env, "")))
    assert replies[-1]["ok"] is False and "decline" in replies[-1], replies
    assert service.served == 1


@pytest.mark.parametrize("option", ["--root", "--config"])
def test_a_request_whose_roots_or_config_differ_is_declined(
    service: WarmServer, layer: list[str], run_env: dict[str, str], tmp_path: Path, option: str
) -> None:
    """The server's identity, but its own --root names another folder, or its --config
    another settings file (the same index, another result limit): declined, not answered."""
    assert service.address is not None
    at = layer.index(option) + 1
    if option == "--root":
        other = tmp_path / "elsewhere"
        other.mkdir()
    else:
        other = tmp_path / "other.toml"
        other.write_text(Path(layer[at]).read_text() + "[search]\nlimit = 2\n")
    argv = [*layer[:at], str(other), *layer[at + 1 :], *QUERY, "--json"]
    replies = lines_of(raw_request(service.address, request_for(argv, layer, run_env, "/")))
    assert replies[-1]["ok"] is False and "another index" in replies[-1]["decline"], replies
    assert service.served == 0


def test_the_client_answers_warm_with_the_servers_own_options(
    service: WarmServer, layer: list[str], run_env: dict[str, str]
) -> None:
    here = os.getcwd()
    reply = client.ask([*layer, *QUERY, "--json"], run_env)
    assert reply is not None and json.loads(reply["stdout"])["results"]
    assert os.getcwd() == here and service.served == 1
