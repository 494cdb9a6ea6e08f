"""A second local user, made for a test, and a squatter process running as that user.

Needs root and `useradd`; the fixture skips with the reason otherwise and removes the user
afterwards. The squatter binds a Unix socket where it is told (first making its folder, or
a symbolic link to it), answers every connection with a planted search result, and reports
how many bytes each connection sent it: what Memex must never send is any byte at all.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SYSTEM_PYTHON = "/usr/bin/python3"  # the venv's interpreter may sit where others cannot read
PLANTED = "PLANTED RESULT from another user"
SQUATTER = r"""
import json, os, select, socket, sys
path, mode, link, folder_mode = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4], 8)
folder = os.path.dirname(path)
os.makedirs(folder, exist_ok=True)
os.chmod(folder, folder_mode)
if link:
    os.makedirs(os.path.dirname(link), exist_ok=True)
    os.symlink(folder, link)
server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
server.bind(path)
os.chmod(path, 0o777)
if mode == "stale":
    server.close()
    print("ready", flush=True)
    sys.exit(0)
server.listen(64)
print("ready", flush=True)
planted = {"ok": True, "stdout": "PLANTED RESULT from another user\n", "stderr": "",
           "code": 0, "pid": 1, "served": 1}

def handle(conn):
    conn.settimeout(3)
    data = b""
    try:
        while b"\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                break
            data += chunk
        conn.sendall(json.dumps(planted).encode() + b"\n" + b"toggle\n")
    except OSError:
        pass
    print(json.dumps({"bytes": len(data)}), flush=True)
    conn.close()

while True:
    ready, _, _ = select.select([server, sys.stdin], [], [])
    if server in ready:
        handle(server.accept()[0])
    elif sys.stdin in ready:  # told to stop: every connection already made is heard first
        server.setblocking(False)
        while True:
            try:
                conn, _ = server.accept()
            except BlockingIOError:
                break
            conn.setblocking(True)
            handle(conn)
        break
"""
CLIENT = r"""
import socket, sys
sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
sock.settimeout(10)
sock.connect(sys.argv[1])
try:
    sock.sendall(sys.argv[2].encode() + b"\n")
    print(repr(sock.recv(65536)))
except OSError as exc:
    print(repr(b""), type(exc).__name__)
"""


@dataclass(frozen=True)
class User:
    """A local user other than the one running the tests."""

    name: str
    uid: int
    gid: int


@pytest.fixture(scope="module")
def other_user() -> Iterator[User]:
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("making a second local user needs root")
    if shutil.which("useradd") is None or shutil.which("userdel") is None:
        pytest.skip("useradd/userdel are not installed")
    if not os.access(SYSTEM_PYTHON, os.X_OK):
        pytest.skip(f"{SYSTEM_PYTHON} is needed to run a process as the second user")
    name = f"mxsq{uuid.uuid4().hex[:8]}"
    made = subprocess.run(
        ["useradd", "--no-create-home", "--system", "--shell", "/usr/sbin/nologin", name],
        capture_output=True,
        text=True,
    )
    if made.returncode != 0:
        pytest.skip(f"useradd failed: {made.stderr.strip()}")
    try:
        entry = pwd.getpwnam(name)
        yield User(name, entry.pw_uid, entry.pw_gid)
    finally:
        subprocess.run(["userdel", name], capture_output=True)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A world-writable folder, as a shared XDG_CACHE_HOME would be (short: socket paths)."""
    folder = Path(tempfile.mkdtemp(prefix="mxsh-", dir="/tmp"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


class Squatter:
    """A process of `user` listening on `path` (or leaving it stale) in a folder it makes
    open to all, and `link` (when given) a symbolic link it makes to that folder."""

    def __init__(
        self, user: User, path: Path, stale: bool = False, link: Path | None = None
    ) -> None:
        self.path = path
        self.child = subprocess.Popen(
            [SYSTEM_PYTHON, "-I", "-c", SQUATTER, str(path), "stale" if stale else "listen"]
            + [str(link or ""), "777"],
            user=user.uid,
            group=user.gid,
            cwd="/",
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self.child.stdout is not None
        ready = self.child.stdout.readline()
        if ready.strip() != "ready":
            self.child.kill()
            raise AssertionError(f"the squatter did not start: {self.child.communicate()}")

    def received(self) -> list[int]:
        """Stop; the number of bytes each connection sent (an empty list: none connected).
        Closing its stdin tells it to hear out the connections already made, then exit."""
        try:
            out, _err = self.child.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            self.child.kill()
            self.child.communicate()
            raise
        return [json.loads(line)["bytes"] for line in out.splitlines() if line.startswith("{")]


def start_client_as(user: User, address: Path, line: str) -> subprocess.Popen[str]:
    """A process of `user` that connects to `address`, sends `line` and prints the repr of
    what it reads back (`b''` when the connection is closed on it)."""
    return subprocess.Popen(
        [SYSTEM_PYTHON, "-I", "-c", CLIENT, str(address), line],
        user=user.uid,
        group=user.gid,
        cwd="/",
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def read_back(child: subprocess.Popen[str]) -> str:
    out, err = child.communicate(timeout=60)
    return out.strip() or err.strip().splitlines()[-1]


def connect_as(user: User, address: Path, line: str) -> str:
    """What a process of `user` reads after connecting to `address` and sending `line`."""
    return read_back(start_client_as(user, address, line))
