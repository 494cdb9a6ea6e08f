"""The warm server serves many clients: idle or slow connections hold no worker and delay no
one, a full server declines at once, and it answers only what the one-shot path would for
the client's own environment; a TCP server (Windows) must prove it holds the token."""

from __future__ import annotations

import json
import os
import shutil
import socket
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engine.cli.warm import search_server
from engine.core import Engine
from engine.settings import Settings
from engine.warm import client, intake, runtime, server
from engine.warm.identity import cli_settings, identity
from engine.warm.server import WarmServer
from engine.warm.trust import Untrusted
from tests.conftest import cli_args
from tests.test_socket_trust import QUERY, REAL, address_of, layer, real_server

__all__ = ["layer"]  # a fixture, used by name


@pytest.fixture
def args(settings_factory: Callable[..., Settings]) -> list[str]:
    """`--root/--db/--config` of a layer with no index (nothing here reaches a search)."""
    return cli_args(settings_factory())


@pytest.fixture
def run_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """A private runtime folder with a short path (a Unix socket path has ~100 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="mxrun-", dir="/tmp"))
    folder.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    monkeypatch.delenv(client.ENV_OFF, raising=False)
    yield dict(os.environ)
    shutil.rmtree(folder, ignore_errors=True)


def test_idle_connections_do_not_hold_the_server(run_env: dict[str, str], args: list[str]) -> None:
    ours = real_server(args, run_env)
    assert ours.start() and ours.address is not None
    idle: list[socket.socket] = []
    try:
        for _ in range(intake.MAX_OPEN + 10):  # more than may wait at once: the oldest go
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(str(ours.address))
            idle.append(sock)
        for _ in range(3):
            reply = client.ask([*args, *QUERY], run_env)
            assert reply is not None and reply["stdout"] == "the real answer\n"
        assert ours.served == 3
    finally:
        for sock in idle:
            sock.close()
        ours.close()


def test_a_full_server_declines_at_once_and_the_client_answers_one_shot(
    run_env: dict[str, str], args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """MAX_IN_HAND in hand: the next is declined at once (the queue's own deadline, which
    tests/test_warm_slow_clients.py covers, is set out of the way here)."""
    monkeypatch.setattr(server, "QUEUE_SECONDS", 600.0)
    monkeypatch.setattr(client, "TAKEN_TIMEOUT_SECONDS", 600.0)
    release = threading.Event()
    entered = threading.Semaphore(0)

    def slow(_request: dict[str, Any]) -> dict[str, Any]:
        entered.release()
        release.wait(60)
        return dict(REAL)

    db = cli_settings([args[1]], args[3], args[5]).db_path
    ours = WarmServer(db, slow, run_env)
    assert ours.start()
    answers: list[dict[str, Any] | None] = []
    asking = [
        threading.Thread(target=lambda: answers.append(client.ask([*args, *QUERY], run_env)))
        for _ in range(server.MAX_IN_HAND)
    ]
    try:
        for thread in asking:
            thread.start()
        for _ in range(server.WORKERS):
            assert entered.acquire(timeout=60)  # the workers are busy, the rest wait
        assert _wait(lambda: ours.in_hand == server.MAX_IN_HAND)
        assert client.ask([*args, *QUERY], run_env) is None  # "busy": one-shot answers
        assert ours.busy == 1
    finally:
        release.set()
        for thread in asking:
            thread.join(60)
        ours.close()
    assert len(answers) == server.MAX_IN_HAND and all(a is not None for a in answers)


def _wait(condition: Callable[[], bool]) -> bool:
    """True once `condition` holds (a generous bound: no timing is asserted)."""
    for _ in range(6000):
        if condition():
            return True
        time.sleep(0.01)
    return False


def test_a_key_only_in_the_clients_environment_is_answered_one_shot(
    run_env: dict[str, str], layer: list[str]
) -> None:
    config = Path(layer[5])  # the HTTP re-ranker, at a port where nothing listens
    config.write_text(
        config.read_text() + '[rerank]\nbackend = "http"\nbase_url = "http://127.0.0.1:9/rerank"\n'
    )
    settings = cli_settings([layer[1]], layer[3], layer[5])
    keyed = {**run_env, "MEMEX_RERANK_API_KEY": "sk-client-only-secret"}
    assert identity(settings, keyed) != identity(settings, run_env)
    assert "sk-client-only-secret" not in identity(settings, keyed)
    engine = Engine(settings)
    ours = search_server(lambda: engine, settings.db_path, run_env)  # the server has no key
    try:
        assert ours.start()
        assert client.ask([*layer, *QUERY], keyed) is None
        assert ours.served == 0 and ours.requests == 1  # declined: other settings
        assert client.ask([*layer, *QUERY], run_env) is not None
    finally:
        ours.close()
        engine.close()


def test_only_the_variables_this_search_reads_change_its_identity(
    settings_factory: Callable[..., Settings],
) -> None:
    """With the local embedder and no re-ranker nothing goes over the network: a proxy or
    an API key set only in the client's shell is no reason to decline; TZ still is."""
    local = settings_factory()
    base = {"HOME": "/home/me"}
    for name, value in [("https_proxy", "http://proxy:3128"), ("OPENAI_API_KEY", "sk-x")]:
        assert identity(local, {**base, name: value}) == identity(local, base)
    assert identity(local, {**base, "TZ": "Asia/Tokyo"}) != identity(local, base)
    remote = settings_factory(rerank__backend="http")
    for name in ("https_proxy", "MEMEX_RERANK_API_KEY"):
        assert identity(remote, {**base, name: "v"}) != identity(remote, base)
    assert identity(remote, {**base, "OPENAI_API_KEY": "sk-x"}) == identity(remote, base)


def test_a_tcp_server_without_the_token_is_sent_no_query(
    run_env: dict[str, str], args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows: whoever took the port of a dead server cannot prove it holds the token."""
    monkeypatch.setattr(runtime, "WINDOWS", True)
    impostor = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    impostor.bind(("127.0.0.1", 0))
    impostor.listen(1)
    address = address_of(args, run_env)
    address.write_text(json.dumps({"port": impostor.getsockname()[1], "token": "ab" * 16}))
    heard: list[bytes] = []

    def pretend() -> None:
        conn, _ = impostor.accept()
        with conn:
            conn.settimeout(10)
            heard.append(conn.recv(65536))
            conn.sendall(b'{"proof": "guess"}\n')
            heard.append(conn.recv(65536))

    thread = threading.Thread(target=pretend)
    thread.start()
    try:
        with pytest.raises(Untrusted, match="does not hold the token"):
            runtime.connect(address, 10)
    finally:
        thread.join(30)
        impostor.close()
    assert json.loads(heard[0])["op"] == "hello" and heard[1] == b""  # no request


def test_a_client_that_drips_its_line_is_cut_at_its_deadline(
    run_env: dict[str, str], args: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deadline is for the whole line, however slowly the bytes come."""
    monkeypatch.setattr(intake, "READ_DEADLINE_SECONDS", 0.5)
    ours = real_server(args, run_env)
    assert ours.start() and ours.address is not None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as drip:
            drip.settimeout(60)
            drip.connect(str(ours.address))
            closed = False
            for _ in range(600):  # one byte every 0.1 s: each within any per-read timeout
                try:
                    drip.sendall(b"{")
                except OSError:
                    closed = True
                    break
                time.sleep(0.1)
            assert closed or drip.recv(1) == b""
        assert ours.requests == 0
        assert client.ask([*args, *QUERY], run_env) is not None
    finally:
        ours.close()


def test_our_own_loose_folder_is_closed_and_a_linked_runtime_dir_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o755)
    loose.chmod(0o755)
    runtime.make_private_folder(loose)
    assert loose.stat().st_mode & 0o777 == 0o700
    real = tmp_path / "real-run"
    real.mkdir(mode=0o700)
    link = tmp_path / "run-link"
    link.symlink_to(real)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = runtime.runtime_folder({"XDG_RUNTIME_DIR": str(link)})
    assert folder == tmp_path / "cache" / "memex" / "run"
    assert runtime.runtime_folder({"XDG_RUNTIME_DIR": str(real)}) == real
    with pytest.raises(Untrusted, match="is a symbolic link"):
        runtime.check_address(link / "memex-search-x.sock")
