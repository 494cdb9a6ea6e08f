"""Local sockets trust only the current user: a second local user (made for the test) who
squats the runtime folder, the socket, a stale socket or a symbolic link gets no query, and
no answer of theirs gets through; each refusal is one line, never a traceback."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.settings import Settings
from engine.warm import client, runtime
from engine.warm.identity import cli_settings
from engine.warm.server import WarmServer
from tests.conftest import cli_args
from tests.second_user import PLANTED, Squatter, User, connect_as, other_user, shared
from tests.test_cli import cli
from tests.test_indexing import write_layer

__all__ = ["other_user", "shared"]  # fixtures, used by name

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = "import sys; from desktop.launcher import main; sys.exit(main(sys.argv[1:]))"
QUERY = ["--search", "battery scheduler status"]
REFUSED = re.compile(r"^memex: not asking the warm process: .+; answering one-shot$")
REAL = {"ok": True, "stdout": "the real answer\n", "stderr": "", "code": 0}


@pytest.fixture
def cache_env(shared: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The cache folder in a world-writable place, and no runtime folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    monkeypatch.delenv(client.ENV_OFF, raising=False)
    return dict(os.environ)


@pytest.fixture
def args(settings_factory: Callable[..., Settings]) -> list[str]:
    """`--root/--db/--config` of a layer with no index (nothing here reaches a search)."""
    return cli_args(settings_factory())


def address_of(args: list[str], env: dict[str, str]) -> Path:
    return runtime.address_for(cli_settings([args[1]], args[3], args[5]).db_path, env)


def real_server(args: list[str], env: dict[str, str]) -> WarmServer:
    db = cli_settings([args[1]], args[3], args[5]).db_path
    return WarmServer(db, lambda _request: dict(REAL), env)


def planted_elsewhere(user: User, shared: Path, address: Path) -> Squatter:
    """The other user's socket, bound in their own folder, then moved to `address` (in
    this user's private folder) as if they had got in."""
    squatter = Squatter(user, shared / "theirs" / address.name)
    os.rename(squatter.path, address)
    return squatter


def refused_once(capsys: pytest.CaptureFixture[str], why: str) -> None:
    out, err = capsys.readouterr()
    assert PLANTED not in out and out == ""
    [line] = err.splitlines()
    assert REFUSED.match(line) and why in line, line


def test_a_squatted_run_folder_gets_nothing(
    other_user: User,
    shared: Path,
    cache_env: dict[str, str],
    args: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = address_of(args, cache_env)
    squatter = Squatter(other_user, address)  # makes memex/run, listens where we would
    try:
        assert client.try_warm([*args, *QUERY], cache_env) is None
        refused_once(capsys, "belongs to another user")
        ours = real_server(args, cache_env)
        assert not ours.start()
        assert ours.problem.startswith("searches are not answered warm: the folder ")
        assert "belongs to another user" in ours.problem and "\n" not in ours.problem
        ours.close()
    finally:
        assert squatter.received() == []  # not even a connection


def test_a_squatted_memex_folder_is_not_used_by_the_server(
    other_user: User, shared: Path, cache_env: dict[str, str], args: list[str]
) -> None:
    squatter = Squatter(other_user, shared / "memex" / "theirs.sock")  # memex/ is theirs
    try:
        assert client.try_warm([*args, *QUERY], cache_env) is None  # no run folder: quiet
        ours = real_server(args, cache_env)
        assert not ours.start()
        assert f"the folder {shared / 'memex'} belongs to another user" in ours.problem
        ours.close()
        assert not (shared / "memex" / "run").exists()  # nothing of ours made in theirs
    finally:
        assert squatter.received() == []


def test_their_socket_in_our_folder_gets_nothing_and_the_server_replaces_it(
    other_user: User,
    shared: Path,
    cache_env: dict[str, str],
    args: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = address_of(args, cache_env)
    runtime.make_private_folder(address.parent)
    squatter = planted_elsewhere(other_user, shared, address)
    try:
        assert client.try_warm([*args, *QUERY], cache_env) is None
        refused_once(capsys, f"the socket {address} belongs to another user")
        ours = real_server(args, cache_env)
        try:
            assert ours.start() and ours.address == address
            reply = client.ask([*args, *QUERY], cache_env)
            assert reply is not None and reply["stdout"] == "the real answer\n"
        finally:
            ours.close()
    finally:
        assert squatter.received() == []


def test_our_socket_file_with_their_process_behind_it_gets_no_byte(
    other_user: User,
    shared: Path,
    cache_env: dict[str, str],
    args: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The file checks pass (ours, 0600); the peer's uid (SO_PEERCRED) is what refuses."""
    address = address_of(args, cache_env)
    runtime.make_private_folder(address.parent)
    squatter = planted_elsewhere(other_user, shared, address)
    os.chown(address, os.getuid(), os.getgid())
    address.chmod(0o600)
    try:
        assert client.try_warm([*args, *QUERY], cache_env) is None
        refused_once(capsys, f"runs as another user (uid {other_user.uid})")
        ours = real_server(args, cache_env)
        assert ours.start()  # theirs does not count as "another process serves this index"
        ours.close()
    finally:
        assert squatter.received() == [0, 0]  # the client and the server's probe: no byte


@pytest.mark.parametrize("where", ["their folder", "our folder"])
def test_a_stale_socket_of_theirs(
    where: str,
    other_user: User,
    shared: Path,
    cache_env: dict[str, str],
    args: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = address_of(args, cache_env)
    if where == "their folder":
        Squatter(other_user, address, stale=True).received()
    else:
        runtime.make_private_folder(address.parent)
        stale = Squatter(other_user, shared / "theirs" / address.name, stale=True)
        stale.received()
        os.rename(stale.path, address)
    assert client.try_warm([*args, *QUERY], cache_env) is None
    refused_once(capsys, "belongs to another user")
    ours = real_server(args, cache_env)
    try:
        assert ours.start() is (where == "our folder")
        if where == "our folder":  # our own folder: the stale file is cleared, we serve
            assert client.ask([*args, *QUERY], cache_env) == {
                **REAL,
                "served": 1,
                "pid": os.getpid(),
            }
    finally:
        ours.close()


@pytest.mark.parametrize("parent", ["theirs", "ours, open to all"])
def test_a_symlinked_run_folder_gets_nothing(
    parent: str,
    other_user: User,
    shared: Path,
    cache_env: dict[str, str],
    args: list[str],
    capsys: pytest.CaptureFixture[str],
) -> None:
    address = address_of(args, cache_env)
    if parent != "theirs":
        address.parent.parent.mkdir()
        address.parent.parent.chmod(0o777)
    squatter = Squatter(other_user, shared / "elsewhere" / address.name, link=address.parent)
    try:
        assert address.parent.is_symlink() and address.exists()
        assert client.try_warm([*args, *QUERY], cache_env) is None
        refused_once(capsys, "is a symbolic link")
        ours = real_server(args, cache_env)
        assert not ours.start()
        assert ("belongs to another user" if parent == "theirs" else "is a symbolic link") in (
            ours.problem
        )
        ours.close()
    finally:
        assert squatter.received() == []


def test_the_server_answers_no_other_user(
    other_user: User, shared: Path, cache_env: dict[str, str], args: list[str]
) -> None:
    ours = real_server(args, cache_env)
    assert ours.start() and ours.address is not None
    try:
        ours.address.parent.chmod(0o711)  # as if the modes failed us: the uid check remains
        ours.address.chmod(0o666)
        request = {"memex": 1, "op": "status", "token": ""}
        assert connect_as(other_user, ours.address, json.dumps(request)).startswith("b''")
        assert ours.status()["refused"] == 1 and ours.requests == 0
        ours.address.parent.chmod(0o700)
        ours.address.chmod(0o600)
        assert client.ask([*args, *QUERY], cache_env) is not None  # and still serves us
    finally:
        ours.close()


@pytest.fixture
def layer(settings_factory: Callable[..., Settings]) -> list[str]:
    """`--root/--db/--config` of a small indexed layer (hashing embedder)."""
    settings = settings_factory()
    write_layer(settings.roots[0])
    layer_args = cli_args(settings)
    code, _, err = cli(*layer_args, "reindex")
    assert code == 0, err
    return layer_args


def memex(env: dict[str, str], *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LAUNCHER, *argv],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=120,
    )


def test_memex_search_in_a_squatted_cache_answers_one_shot(
    other_user: User, shared: Path, cache_env: dict[str, str], layer: list[str]
) -> None:
    """The reported case end to end: no query reaches them, no traceback, one line why."""
    squatter = Squatter(other_user, address_of(layer, cache_env))
    try:
        warm = memex(cache_env, *layer, *QUERY, "--json")
        cold = memex({**cache_env, client.ENV_OFF: "1"}, *layer, *QUERY, "--json")
    finally:
        assert squatter.received() == []
    assert warm.returncode == cold.returncode == 0, warm.stderr
    assert PLANTED not in warm.stdout and "Traceback" not in warm.stderr
    [line] = warm.stderr.splitlines()
    assert REFUSED.match(line) and "belongs to another user" in line
    took = re.compile(r'"took_ms": [0-9.]+')
    assert took.sub("", warm.stdout) == took.sub("", cold.stdout)
    assert json.loads(warm.stdout)["results"]
