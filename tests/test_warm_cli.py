"""The warm `memex --search`: a running `memex watch` answers it over its socket,
with the one-shot path's exact output; anything else falls back to the one-shot path."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from engine import __version__
from engine.app_api import BackgroundServer
from engine.cli.warm import SearchService, search_server
from engine.core import Engine
from engine.settings import Settings, load_settings
from engine.warm import argv as warm_argv
from engine.warm import client, runtime, server
from engine.warm.identity import cli_settings, identity
from engine.warm.protocol import MAX_REQUEST_BYTES, PROTOCOL, receive, send
from tests.conftest import cli_args
from tests.test_cli import cli
from tests.test_indexing import write_layer

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = "import sys; from desktop.launcher import main; sys.exit(main(sys.argv[1:]))"
QUERY = ["--search", "battery scheduler status"]
ANSWERED = re.compile(r"memex: answered by the warm process (\d+) \(request (\d+)\)")


@pytest.fixture
def run_dir() -> Iterator[Path]:
    """A private runtime folder with a short path (a Unix socket path has ~100 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="mxrun-", dir="/tmp"))
    folder.chmod(0o700)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def env(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(run_dir))
    monkeypatch.delenv(client.ENV_OFF, raising=False)
    return {**os.environ, "XDG_RUNTIME_DIR": str(run_dir), client.ENV_DEBUG: "1"}


@pytest.fixture
def layer(settings_factory: Callable[..., Settings]) -> list[str]:
    """`--root/--db/--config` of a small indexed layer (hashing embedder)."""
    settings = settings_factory()
    write_layer(settings.roots[0])
    args = cli_args(settings)
    code, _, err = cli(*args, "reindex")
    assert code == 0, err
    return args


def memex(env: dict[str, str], *args: str, **extra: str) -> subprocess.CompletedProcess[bytes]:
    """The real entry point in a child process."""
    return subprocess.run(
        [sys.executable, "-c", LAUNCHER, *args],
        capture_output=True,
        cwd=ROOT,
        env={**env, **extra},
        timeout=120,
    )


def one_shot(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[bytes]:
    return memex(env, *args, **{client.ENV_OFF: "1"})


def timeless(stdout: bytes) -> bytes:
    """The output without its timings (the search's and, with --explain, each stage's),
    the one thing two runs never share."""
    stdout = re.sub(rb'"took_ms": [0-9.]+', b'"took_ms": 0', stdout)
    stdout = re.sub(rb'"ms": [0-9.]+', b'"ms": 0', stdout)
    stdout = re.sub(rb" +[0-9.]+ ms +(\d+ kept)", rb" 0 ms \1", stdout)
    return re.sub(rb"hits \xc2\xb7 \d+ ms \xc2\xb7", b"hits \xc2\xb7 0 ms \xc2\xb7", stdout)


class Watch:
    """`memex watch` in a child process, with the socket it answers on."""

    def __init__(self, env: dict[str, str], args: list[str]) -> None:
        self.log = Path(tempfile.mkstemp(prefix="mxwatch-", suffix=".log")[1])
        with self.log.open("wb") as out:
            self.child = subprocess.Popen(
                [sys.executable, "-c", LAUNCHER, *args, "watch", "--debounce", "0.2"],
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                env=env,
            )
        self.address = self._wait_for_address()

    def _wait_for_address(self) -> Path:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            found = re.search(r"answering searches at (\S+)", self.log.read_text())
            if found:
                return Path(found.group(1))
            assert self.child.poll() is None, self.log.read_text()
            time.sleep(0.05)
        raise AssertionError(f"memex watch never listened: {self.log.read_text()}")

    def ask(self, raw: bytes) -> dict[str, Any]:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(30)
            sock.connect(str(self.address))
            sock.sendall(raw)
            lines = sock.makefile("rb")
            reply = client.read_line(lines)  # a worker's note first, when it took a search
            return client.read_line(lines) if reply == server.WORKING else reply

    def status(self) -> dict[str, Any]:
        return self.ask(json.dumps({"memex": PROTOCOL, "op": "status"}).encode() + b"\n")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.child.poll() is None:
            self.child.send_signal(sig)
            self.child.wait(timeout=60)
        self.log.unlink(missing_ok=True)


@pytest.fixture
def watch(env: dict[str, str], layer: list[str]) -> Iterator[Watch]:
    running = Watch(env, layer)
    yield running
    running.stop()


def test_a_running_watch_answers_with_the_one_shot_output(
    watch: Watch, env: dict[str, str], layer: list[str], run_dir: Path
) -> None:
    assert watch.address.parent == run_dir
    assert watch.address.stat().st_mode & 0o777 == 0o600
    for extra in (["--json"], [], ["--json", "--explain"], ["--limit", "3", "--source", "note"]):
        warm = memex(env, *layer, *QUERY, *extra)
        found = ANSWERED.search(warm.stderr.decode())
        assert found and int(found.group(1)) == watch.child.pid, warm.stderr
        cold = one_shot(env, *layer, *QUERY, *extra)
        assert not ANSWERED.search(cold.stderr.decode())
        assert warm.returncode == cold.returncode == 0
        assert timeless(warm.stdout) == timeless(cold.stdout)
        assert b" 1. [" in warm.stdout or b'"results": [\n' in warm.stdout  # not empty
    assert watch.status()["served"] == 4


def test_errors_come_back_as_the_one_shot_path_gives_them(
    watch: Watch, env: dict[str, str], layer: list[str]
) -> None:
    for bad in (["--limit", "0"], ["--since", "not a date at all"], ["--mode", "nope"]):
        warm = memex(env, *layer, *QUERY, *bad)
        cold = one_shot(env, *layer, *QUERY, *bad)
        assert ANSWERED.search(warm.stderr.decode()), warm.stderr  # not a fallback
        assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
        assert ANSWERED.sub("", warm.stderr.decode()).strip() == cold.stderr.decode().strip()
        assert cold.returncode == 2


def test_a_killed_server_leaves_a_stale_socket_and_the_one_shot_path_answers(
    watch: Watch, env: dict[str, str], layer: list[str]
) -> None:
    warm = memex(env, *layer, *QUERY, "--json")
    assert ANSWERED.search(warm.stderr.decode())
    watch.stop(signal.SIGKILL)
    assert watch.address.exists()  # nobody removed it: stale
    after = memex(env, *layer, *QUERY, "--json")
    assert after.returncode == 0 and not ANSWERED.search(after.stderr.decode()), after.stderr
    assert timeless(after.stdout) == timeless(warm.stdout)
    again = Watch(env, layer)  # the next server clears the stale socket and serves
    try:
        assert ANSWERED.search(memex(env, *layer, *QUERY).stderr.decode())
    finally:
        again.stop()
    assert not again.address.exists()  # a clean stop removes it


def test_a_server_for_other_settings_or_another_index_is_not_used(
    watch: Watch, env: dict[str, str], layer: list[str], tmp_path: Path
) -> None:
    config = Path(layer[5])
    config.write_text(config.read_text().replace("[embedder]", "[search]\nlimit = 2\n[embedder]"))
    edited = memex(env, *layer, *QUERY, "--json")  # the config changed after watch started
    assert edited.returncode == 0 and not ANSWERED.search(edited.stderr.decode())
    assert len(json.loads(edited.stdout)["results"]) == 2
    other_db = tmp_path / "other.db"
    shutil.copy(layer[3], other_db)
    other = [*layer[:3], str(other_db), *layer[4:]]
    moved = memex(env, *other, *QUERY, "--json")
    assert moved.returncode == 0 and not ANSWERED.search(moved.stderr.decode())
    request = {"memex": PROTOCOL, "op": "search", "version": __version__, "token": ""}
    request |= {"identity": "0" * 64, "argv": [*layer, *QUERY], "common": {}}
    assert watch.ask(json.dumps(request).encode() + b"\n") == {
        "ok": False,
        "decline": "another index or other settings",
    }
    assert watch.status()["served"] == 0


def test_malformed_requests_get_an_error_reply_and_the_server_keeps_serving(
    watch: Watch, env: dict[str, str], layer: list[str]
) -> None:
    search = {"memex": PROTOCOL, "op": "search", "version": __version__, "token": ""}
    for raw in (
        b"garbage\n",
        b"[1, 2]\n",
        b"\xff\xfe\n",
        json.dumps({**search, "identity": 5, "argv": [], "common": {}}).encode() + b"\n",
        json.dumps({**search, "identity": "x", "argv": [1], "common": {}}).encode() + b"\n",
        json.dumps({"memex": PROTOCOL, "op": "format the disk"}).encode() + b"\n",
        b"x" * (MAX_REQUEST_BYTES + 10) + b"\n",
    ):
        reply = watch.ask(raw)
        assert reply["ok"] is False and reply["error"], reply
    old = {**search, "version": "0.0.0-old", "identity": "x", "argv": [], "common": {}}
    assert watch.ask(json.dumps(old).encode() + b"\n")["decline"] == "another version of memex"
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as quiet:  # connects, says nothing
        quiet.connect(str(watch.address))
        assert ANSWERED.search(memex(env, *layer, *QUERY).stderr.decode())
    assert watch.child.poll() is None and watch.status()["served"] == 1


def test_memex_no_warm_forces_the_one_shot_path(
    watch: Watch, env: dict[str, str], layer: list[str]
) -> None:
    forced = one_shot(env, *layer, *QUERY)
    assert forced.returncode == 0 and not ANSWERED.search(forced.stderr.decode())
    config = Path(layer[5])
    config.write_text(
        config.read_text().replace("[embedder]", "[search]\nwarm_cli = false\n[embedder]")
    )
    off = memex(env, *layer, *QUERY)
    assert off.returncode == 0 and not ANSWERED.search(off.stderr.decode())
    assert watch.status()["requests"] == 1  # only this status request reached the server


def test_a_stale_socket_file_alone_falls_back(env: dict[str, str], layer: list[str]) -> None:
    settings = cli_settings([layer[1]], layer[3], layer[5])
    address = runtime.address_for(settings.db_path, env, create=True)
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(address))  # bound, never listening, closed: what a crash leaves
    dead.close()
    assert address.exists()
    assert client.try_warm([*layer, *QUERY], env) is None


def test_the_client_imports_nothing_heavy_before_it_falls_back(
    env: dict[str, str], layer: list[str]
) -> None:
    script = (
        "import sys; from engine.warm.client import try_warm; "
        f"assert try_warm({[*layer, *QUERY]!r}) is None; "
        "heavy = ('numpy', 'onnxruntime', 'apsw', 'tokenizers', 'engine.core', 'engine.embedders'); "
        "print(sorted(m for m in heavy if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env
    )
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stderr


def test_the_desktop_server_answers_from_the_engine_it_is_given(
    env: dict[str, str], layer: list[str]
) -> None:
    settings = cli_settings([layer[1]], layer[3], layer[5])
    engine = Engine(settings)
    notices: list[str] = []
    searches = BackgroundServer(lambda: engine, settings, notices.append)
    searches.start()
    try:
        deadline = time.monotonic() + 30
        while not notices and time.monotonic() < deadline:
            time.sleep(0.01)
        assert searches.server is not None and notices == [
            f"answering searches at {searches.server.address}"
        ]
        reply = client.ask([*layer, *QUERY, "--json"], env)
        assert reply is not None and reply["code"] == 0 and reply["pid"] == os.getpid()
        assert json.loads(reply["stdout"])["results"]
    finally:
        searches.close()
        engine.close()
    assert not runtime.address_for(settings.db_path, env).exists()


def test_a_second_server_for_the_same_index_does_not_steal_the_socket(
    env: dict[str, str], layer: list[str]
) -> None:
    settings = cli_settings([layer[1]], layer[3], layer[5])
    engine = Engine(settings)
    first = search_server(lambda: engine, settings.db_path, env)
    second = search_server(lambda: engine, settings.db_path, env)
    try:
        assert first.start()
        assert not second.start() and "another process serves" in second.problem
    finally:
        second.close()
        first.close()
        engine.close()


def test_identity_follows_what_changes_results(layer: list[str], env: dict[str, str]) -> None:
    base = cli_settings([layer[1]], layer[3], layer[5])
    same = identity(base, env)
    assert identity(base.with_values(watch__polling=True), env) == same
    via_env = load_settings(layer[5], env={"MEMEX_DB": layer[3], "MEMEX_ROOT": layer[1]})
    assert identity(via_env, env) == same  # the same index and roots, named another way
    assert identity(base.with_values(search__limit=3), env) != same
    assert identity(base, {**env, "TZ": "Asia/Tokyo"}) != same
    assert identity(cli_settings([layer[1]], layer[3] + "-other", layer[5]), env) != same


@pytest.mark.parametrize(
    ("argv", "plain", "common"),
    [
        (["--db", "a.db", "--search", "x"], True, ("a.db", None)),
        (["--search", "--", "--db", "--config=c.toml"], True, (None, "c.toml")),
        (["--search=x", "--help"], False, None),
        (["--search", "x", "--he"], False, None),
        (["status", "--db", "a.db"], False, None),
        (["--search", "x", "-h"], False, None),
    ],
)
def test_the_client_reads_only_what_it_is_sure_of(
    argv: list[str], plain: bool, common: tuple[str | None, str | None] | None
) -> None:
    glued = warm_argv.glue_values(argv)
    assert warm_argv.is_plain_search(glued) is plain
    if common is not None:
        read = warm_argv.common_options(glued)
        assert read is not None and (read.db, read.config) == common


def test_a_closed_stdout_pipe_is_quiet_exit_141(monkeypatch: pytest.MonkeyPatch) -> None:
    class ClosedPipe:
        def write(self, text: str) -> int:
            raise BrokenPipeError

        def flush(self) -> None:
            raise BrokenPipeError

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    reply = {"ok": True, "stdout": "1. hit\n", "stderr": "", "code": 0}
    assert client.write_reply(reply, {}) == client.EXIT_BROKEN_PIPE == 141


def test_service_declines_commands_and_help(layer: list[str], env: dict[str, str]) -> None:
    settings = cli_settings([layer[1]], layer[3], layer[5])
    with Engine(settings) as engine:
        service = SearchService(lambda: engine, env)
        base = {"identity": identity(settings, env), "common": {"root": [layer[1]]}}
        for argv in (["status"], ["--search", "x", "--help"], ["--version"]):
            assert service({**base, "argv": argv})["ok"] is False


def test_the_service_scans_vectors_exactly_as_the_one_shot_path(
    layer: list[str], env: dict[str, str]
) -> None:
    """From 60,000 parts the app's own searches scan binary codes (recall@10 ~0.98); the
    warm `memex --search` scans exactly, so its answer is the one-shot path's (vec0)."""
    settings = cli_settings([layer[1]], layer[3], layer[5])
    with Engine(settings) as engine:
        service = SearchService(lambda: engine, env)
        argv = [*layer, *QUERY, "--json"]
        common = warm_argv.common_options(warm_argv.glue_values(argv))
        assert common is not None
        request = {"identity": identity(settings, env), "common": common.as_json(), "argv": argv}
        reply = service(request)
        assert reply["code"] == 0 and json.loads(reply["stdout"])["results"]
        assert engine.searcher().exact_vectors is True  # this thread's, as the service's
        with ThreadPoolExecutor(1) as pool:  # another reader thread: the app's fast scan
            assert pool.submit(lambda: engine.searcher().exact_vectors).result() is False


def test_ctrl_c_while_waiting_is_the_one_shot_paths_quiet_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(*_args: Any) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(client, "ask", interrupted)
    assert client.try_warm([*QUERY], {}) == client.EXIT_INTERRUPTED == 130
    assert capsys.readouterr().err == "memex: interrupted\n"


def test_the_clients_exit_codes_are_the_cli_ones() -> None:
    from engine.cli.common import EXIT_INTERRUPTED
    from engine.cli.stdio import EXIT_BROKEN_PIPE

    assert (client.EXIT_INTERRUPTED, client.EXIT_BROKEN_PIPE) == (
        EXIT_INTERRUPTED,
        EXIT_BROKEN_PIPE,
    )


def test_the_windows_design_tcp_with_a_port_file_and_a_token(
    env: dict[str, str], layer: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Windows has no Unix sockets in CPython: 127.0.0.1, a random port, a private token."""
    monkeypatch.setattr(runtime, "WINDOWS", True)
    settings = cli_settings([layer[1]], layer[3], layer[5])
    with Engine(settings) as engine:
        server = search_server(lambda: engine, settings.db_path, env)
        try:
            assert server.start() and server.address is not None
            info = json.loads(server.address.read_text())
            assert info["port"] > 0 and len(info["token"]) == 32
            reply = client.ask([*layer, *QUERY, "--json"], env)
            assert reply is not None and reply["code"] == 0 and reply["served"] == 1
            with socket.create_connection(("127.0.0.1", info["port"]), 5) as sock:
                send(sock, {"memex": PROTOCOL, "op": "status", "token": "guess"})
                assert receive(sock, 1 << 20) == {"ok": False, "error": "wrong token"}
        finally:
            server.close()
