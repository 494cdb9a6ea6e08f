"""A `memex --search` that finds no warm process starts one: the next search is answered
warm with the one-shot output, the process exits when idle, and nothing starts twice, for
another user's index, or when switched off (as in every other test: tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine.settings import Settings
from engine.warm import autostart, client, runtime
from engine.warm.argv import Common
from engine.warm.identity import cli_settings, identity
from tests.conftest import cli_args
from tests.test_cli import cli
from tests.test_indexing import write_layer
from tests.test_warm_cli import ANSWERED, QUERY, ROOT, memex, one_shot, timeless

IDLE = "[search]\nwarm_idle_minutes = 0.1\n"  # 6 s: long enough for the next search to come
DEADLINE_SECONDS = 90.0


def started_pid(stderr: bytes) -> int | None:
    for line in stderr.decode().splitlines():
        prefix, _, rest = line.partition("memex: started the warm process ")
        if not prefix and rest:
            return int(rest.split()[0])
    return None


def alive(pid: int) -> bool:
    """The process exists and is not a zombie."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return "\nState:\tZ" not in status


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        time.sleep(0.05)


class Spawned:
    """The warm processes a test's searches started: at teardown, those still running are
    killed, and so is any warm process serving an index under this test's folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = str(folder)
        self.pids: list[int] = []

    def note(self, stderr: bytes) -> int:
        pid = started_pid(stderr)
        assert pid is not None, stderr
        self.pids.append(pid)
        return pid

    def kill_all(self) -> None:
        for pid in {*self.pids, *self.serving_here()}:
            if alive(pid):
                os.kill(pid, signal.SIGKILL)

    def serving_here(self) -> list[int]:
        """Warm processes whose command line names this test's folder (a search that
        started one without saying so must not leave it running either)."""
        found = []
        for entry in Path("/proc").glob("[0-9]*/cmdline"):
            try:
                words = entry.read_bytes().decode(errors="replace").split("\0")
            except OSError:
                continue
            if autostart.SERVER_MODULE in words and any(self.folder in w for w in words):
                found.append(int(entry.parent.name))
        return found


@pytest.fixture
def spawned(tmp_path: Path) -> Iterator[Spawned]:
    processes = Spawned(tmp_path)
    try:
        yield processes
    finally:
        processes.kill_all()


@pytest.fixture
def on_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The children's environment with auto-start on, as outside the tests, and a private
    runtime folder with a short path (a Unix socket path has ~100 bytes)."""
    folder = Path(tempfile.mkdtemp(prefix="mxauto-", dir="/tmp"))
    folder.chmod(0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(folder))
    monkeypatch.delenv(client.ENV_OFF, raising=False)
    env = {k: v for k, v in os.environ.items() if k != autostart.ENV_NO_AUTOSTART}
    yield {**env, client.ENV_DEBUG: "1"}
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def idle_layer(settings_factory: Callable[..., Settings]) -> list[str]:
    """`--root/--db/--config` of a small indexed layer whose warm process idles out in 6 s."""
    settings = settings_factory()
    write_layer(settings.roots[0])
    args = cli_args(settings, IDLE)
    code, _, err = cli(*args, "reindex")
    assert code == 0, err
    return args


def address_of(args: list[str], env: dict[str, str]) -> Path:
    settings = cli_settings([args[1]], args[3], args[5])
    return runtime.address_for(settings.db_path, env)


def test_a_search_starts_a_warm_process_that_answers_the_next_and_exits_when_idle(
    on_env: dict[str, str], idle_layer: list[str], spawned: Spawned
) -> None:
    first = memex(on_env, *idle_layer, *QUERY, "--json")
    pid = spawned.note(first.stderr)
    assert not ANSWERED.search(first.stderr.decode())  # the first one answered one-shot
    assert os.getsid(pid) == pid  # its own session: a Ctrl+C in the shell never reaches it
    address = address_of(idle_layer, on_env)
    wait_for(lambda: address.exists(), "the warm process listens")
    second = memex(on_env, *idle_layer, *QUERY, "--json")
    found = ANSWERED.search(second.stderr.decode())
    assert found and int(found.group(1)) == pid, second.stderr
    cold = one_shot(on_env, *idle_layer, *QUERY, "--json")
    assert second.returncode == first.returncode == cold.returncode == 0
    assert timeless(second.stdout) == timeless(cold.stdout) == timeless(first.stdout)
    assert b'"results": [\n' in second.stdout
    wait_for(lambda: not alive(pid), "the warm process exits when idle")
    assert not address.exists()  # it removed its socket
    assert not autostart.lock_held(autostart.lock_path(address))


def test_the_warm_process_follows_a_reindex_made_while_it_runs(
    on_env: dict[str, str], idle_layer: list[str], spawned: Spawned
) -> None:
    pid = spawned.note(memex(on_env, *idle_layer, *QUERY).stderr)
    address = address_of(idle_layer, on_env)
    wait_for(lambda: address.exists(), "the warm process listens")
    note = Path(idle_layer[1]) / "notes" / "pond.md"
    note.write_text("---\ntitle: Pond\n---\n# Frogs\nThe quokkafrog sings at dusk.\n")
    code, _, err = cli(*idle_layer, "reindex")  # its engine holds no writer: not blocked
    assert code == 0, err
    warm = memex(on_env, *idle_layer, "--search", "quokkafrog", "--json")
    found = ANSWERED.search(warm.stderr.decode())
    assert found and int(found.group(1)) == pid, warm.stderr
    cold = one_shot(on_env, *idle_layer, "--search", "quokkafrog", "--json")
    assert b"pond.md" in warm.stdout and timeless(warm.stdout) == timeless(cold.stdout)


def test_two_searches_at_once_leave_one_warm_process(
    on_env: dict[str, str], idle_layer: list[str], spawned: Spawned
) -> None:
    command = [sys.executable, "-m", "engine.entry", *idle_layer, *QUERY]
    pipes = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE, "cwd": ROOT, "env": on_env}
    racing = [subprocess.Popen(command, **pipes) for _ in range(2)]  # type: ignore[call-overload]
    errors = [child.communicate(timeout=120)[1] for child in racing]
    # Each found no socket; the second may have found the first's process holding the lock.
    pids = [spawned.note(err) for err in errors if started_pid(err) is not None]
    assert pids, errors
    address = address_of(idle_layer, on_env)
    wait_for(lambda: address.exists(), "a warm process listens")
    wait_for(lambda: sum(alive(p) for p in pids) == 1, "one warm process is left")
    answered = memex(on_env, *idle_layer, *QUERY)
    found = ANSWERED.search(answered.stderr.decode())
    assert found and alive(int(found.group(1))) and int(found.group(1)) in pids
    assert started_pid(answered.stderr) is None


def test_a_held_lock_or_another_identity_starts_nothing(
    on_env: dict[str, str], idle_layer: list[str]
) -> None:
    settings = cli_settings([idle_layer[1]], idle_layer[3], idle_layer[5])
    address = runtime.address_for(settings.db_path, on_env, create=True)
    lock = autostart.take_lock(autostart.lock_path(address))
    assert lock is not None
    try:
        assert autostart.lock_held(autostart.lock_path(address))
        assert autostart.take_lock(autostart.lock_path(address)) is None
        done = memex(on_env, *idle_layer, *QUERY)  # a process starting: the client starts none
        assert done.returncode == 0 and started_pid(done.stderr) is None, done.stderr
        server = serve_directly(idle_layer, identity(settings, on_env), on_env)
        assert server.returncode == 0 and not address.exists()  # it gave up: the lock
    finally:
        os.close(lock)
    server = serve_directly(idle_layer, "0" * 64, on_env)
    assert server.returncode == 0 and not address.exists()  # not the client's settings


def serve_directly(
    args: list[str], ident: str, env: dict[str, str]
) -> subprocess.CompletedProcess[bytes]:
    """`python -m engine.cli.autostart` in the foreground: it must give up at once."""
    command = [sys.executable, "-m", autostart.SERVER_MODULE, "--identity", ident, *args]
    return subprocess.run(command, capture_output=True, cwd=ROOT, env=env, timeout=120)


@pytest.mark.parametrize(
    ("variable", "config"),
    [
        ({autostart.ENV_NO_AUTOSTART: "1"}, ""),
        ({}, "[search]\nwarm_autostart = false\n"),
        ({}, "[search]\nwarm_idle_minutes = 0\n"),
        ({client.ENV_OFF: "1"}, ""),
    ],
)
def test_switched_off_nothing_starts(
    on_env: dict[str, str],
    settings_factory: Callable[..., Settings],
    variable: dict[str, str],
    config: str,
) -> None:
    settings = settings_factory()
    write_layer(settings.roots[0])
    args = cli_args(settings, config)
    assert cli(*args, "reindex")[0] == 0
    done = memex({**on_env, **variable}, *args, *QUERY)
    assert done.returncode == 0 and b" 1. [" in done.stdout
    assert started_pid(done.stderr) is None, done.stderr
    address = address_of(args, on_env)
    assert not address.exists() and not autostart.lock_path(address).exists()


def test_no_process_for_an_index_that_is_not_this_users(
    on_env: dict[str, str], idle_layer: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = cli_settings([idle_layer[1]], idle_layer[3], idle_layer[5])
    owner = os.stat(settings.db_path).st_uid
    monkeypatch.setattr(autostart, "my_uid", lambda: owner + 1)
    assert "belongs to another user" in autostart.index_problem(settings.db_path)
    common = Common([idle_layer[1]], idle_layer[3], idle_layer[5])
    assert autostart.start_server(settings, common, identity(settings, on_env), on_env) is None
    assert "no index" in autostart.index_problem(settings.db_path.with_name("none.db"))
    monkeypatch.undo()
    assert autostart.index_problem(settings.db_path) == ""


def test_the_test_suite_never_starts_one() -> None:
    assert autostart.switched_off(os.environ)


def test_an_in_process_caller_starts_nothing_unless_it_asks(
    on_env: dict[str, str], idle_layer: list[str]
) -> None:
    assert client.ask([*idle_layer, *QUERY], on_env) is None  # nothing listens: one-shot
    address = address_of(idle_layer, on_env)
    assert not autostart.lock_path(address).exists() and not address.exists()
