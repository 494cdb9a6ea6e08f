"""The single-instance socket trusts only the current user: a second local user (made for
the test) who squats its folder, its socket, a stale socket or a symbolic link is sent no
command, and the app's server reads nothing from them; each refusal is one line."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from desktop.instance import InstanceServer, send, socket_name
from engine.warm.runtime import runtime_folder
from tests.second_user import (
    Squatter,
    User,
    other_user,
    read_back,
    shared,
    start_client_as,
)

__all__ = ["other_user", "shared"]  # fixtures, used by name

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="Unix sockets in folders")


@pytest.fixture
def private_run() -> Iterator[Path]:
    folder = Path(tempfile.mkdtemp(prefix="mxir-", dir="/tmp"))
    folder.chmod(0o700)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def cache_env(shared: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The cache folder in a world-writable place, and no runtime folder."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(shared))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    return dict(os.environ)


def basename(private_run: Path) -> str:
    return Path(socket_name({"XDG_RUNTIME_DIR": str(private_run)})).name


def test_a_squatted_folder_is_sent_nothing_and_not_listened_in(
    qapp: Any, other_user: User, cache_env: dict[str, str], private_run: Path
) -> None:
    path = runtime_folder(cache_env, create=False) / basename(private_run)
    squatter = Squatter(other_user, path)  # their memex/run, their socket
    try:
        name = socket_name(cache_env)  # no traceback: the name, refused below
        assert name == str(path)
        said: list[str] = []
        assert not send(name, "toggle", timeout_ms=2000, on_refused=said.append)
        [line] = said
        assert line.startswith("not using the single-instance socket: ")
        assert "belongs to another user" in line
        server = InstanceServer()
        assert not server.listen(name) and "belongs to another user" in server.error()
        server.close()
    finally:
        assert squatter.received() == []


def test_their_memex_folder_is_the_folder_named(
    qapp: Any, other_user: User, shared: Path, cache_env: dict[str, str], private_run: Path
) -> None:
    """Only `memex/` is theirs (no `run/` in it): the refusal names `memex/`, not the
    `run/` folder that was never made."""
    squatter = Squatter(other_user, shared / "memex" / "theirs.sock")
    try:
        name = socket_name(cache_env)
        assert Path(name).parent == shared / "memex" / "run"
        server = InstanceServer()
        assert not server.listen(name)
        assert server.error().startswith(f"the folder {shared / 'memex'} belongs to another user")
        server.close()
        assert not (shared / "memex" / "run").exists()
    finally:
        assert squatter.received() == []


def test_their_process_behind_our_socket_file_is_sent_no_byte(
    qapp: Any, other_user: User, shared: Path, private_run: Path
) -> None:
    name = socket_name({"XDG_RUNTIME_DIR": str(private_run)})
    squatter = Squatter(other_user, shared / "theirs" / Path(name).name)
    os.rename(squatter.path, name)
    os.chown(name, os.getuid(), os.getgid())  # the file checks pass: the peer's uid refuses
    os.chmod(name, 0o600)
    try:
        said: list[str] = []
        assert not send(name, "quit", timeout_ms=5000, on_refused=said.append)
        assert len(said) == 1 and f"runs as another user (uid {other_user.uid})" in said[0]
    finally:
        assert squatter.received() == [0]


def test_the_server_reads_nothing_from_another_user(
    qapp: Any, qtbot: Any, other_user: User, private_run: Path
) -> None:
    name = socket_name({"XDG_RUNTIME_DIR": str(private_run)})
    server = InstanceServer()
    received: list[str] = []
    server.command.connect(received.append)
    try:
        assert server.listen(name)
        private_run.chmod(0o711)  # as if the modes failed us: the uid check remains
        os.chmod(name, 0o777)
        child = start_client_as(other_user, Path(name), "quit")
        qtbot.waitUntil(lambda: server.refused == 1, timeout=30_000)
        assert read_back(child).startswith("b''")
        private_run.chmod(0o700)
        os.chmod(name, 0o700)
        assert send(name, "show")  # ours still gets through
        qtbot.waitUntil(lambda: received == ["show"], timeout=30_000)
    finally:
        server.close()


def test_a_stale_socket_of_theirs_in_our_folder_is_replaced(
    qapp: Any, qtbot: Any, other_user: User, shared: Path, private_run: Path
) -> None:
    name = socket_name({"XDG_RUNTIME_DIR": str(private_run)})
    stale = Squatter(other_user, shared / "theirs" / Path(name).name, stale=True)
    stale.received()
    os.rename(stale.path, name)
    said: list[str] = []
    assert not send(name, "toggle", on_refused=said.append)
    assert len(said) == 1 and "belongs to another user" in said[0]
    server = InstanceServer()
    received: list[str] = []
    server.command.connect(received.append)
    try:
        assert server.listen(name)
        assert os.stat(name).st_uid == os.getuid()
        assert send(name, "show")
        qtbot.waitUntil(lambda: received == ["show"], timeout=30_000)
    finally:
        server.close()


def test_a_symlinked_folder_is_sent_nothing(
    qapp: Any, other_user: User, shared: Path, cache_env: dict[str, str], private_run: Path
) -> None:
    folder = runtime_folder(cache_env, create=False)
    squatter = Squatter(other_user, shared / "elsewhere" / basename(private_run), link=folder)
    try:
        name = socket_name(cache_env)
        assert Path(name).exists() and folder.is_symlink()
        said: list[str] = []
        assert not send(name, "toggle", on_refused=said.append)
        assert len(said) == 1 and "is a symbolic link" in said[0]
        server = InstanceServer()
        assert not server.listen(name)
        server.close()
    finally:
        assert squatter.received() == []
